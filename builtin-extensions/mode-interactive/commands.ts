/**
 * The interactive mode's own `/` commands. Others (`/compact`, `/export`, `/mcp`, prompt templates, skills) are
 * extension commands and reach the session as prompts. Pickers open in place of the editor; each command also
 * takes its choice as an argument (`/model local/m1`, `/thinking high`, `/tree <id>`).
 */
import type { ThinkingLevel } from "@knightcodeai/cli/kit";
import { errorMessage } from "@knightcodeai/cli/kit";
import type { App } from "./app.js";
import { hotkeyRows, loadKeybindings } from "./keybindings.js";
import { ANYTIME, SESSION_COMMANDS } from "./session-commands.js";
import { SETTINGS_ANYTIME, settings } from "./settings-menu.js";

export { DISPLAY_SETTINGS } from "./settings-menu.js";

import { login, logout, modelItems, scopedModels } from "./model-commands.js";
import { TreePicker } from "./tree-picker.js";
import { currentEntry, findEntry, treeRows } from "./tree-view.js";

interface Builtin {
  name: string;
  description: string;
  run(app: App, args: string): Promise<void>;
}

const LEVELS: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

export const BUILTIN_COMMANDS: Builtin[] = [
  { name: "help", description: "List the commands", run: help },
  { name: "model", description: "Pick the model (or /model provider/id)", run: model },
  {
    name: "scoped-models",
    description: "Choose the models the cycling keys go through (saved)",
    run: scopedModels,
  },
  { name: "login", description: "Store a provider's API key (or /login provider)", run: login },
  { name: "logout", description: "Remove a stored provider key (or /logout provider)", run: logout },
  { name: "thinking", description: "Pick the thinking level (or /thinking high)", run: thinking },
  { name: "tree", description: "Continue from an earlier entry of this session", run: tree },
  { name: "label", description: "Label the current entry (/label @id text labels another)", run: label },
  { name: "resume", description: "Resume an earlier session of this folder", run: resume },
  { name: "new", description: "Start a new session", run: fresh },
  { name: "fork", description: "Fork a new session from one of your messages", run: fork },
  { name: "reload", description: "Reload extensions, resources and keybindings.json", run: reload },
  { name: "settings", description: "Settings you change day to day, searchable (saved)", run: settings },
  {
    name: "trust",
    description: "Trust this project's own resources (load them now), or not",
    run: trust,
  },
  { name: "hotkeys", description: "List the keys", run: hotkeys },
  ...SESSION_COMMANDS,
  { name: "quit", description: "Leave KnightCode", run: async (app) => app.quit() },
  { name: "exit", description: "Leave KnightCode", run: async (app) => app.quit() },
];

/** Runs `/name args` when it is a built-in; false when it is not (an extension command, say). */
export async function runBuiltin(app: App, name: string, args: string): Promise<boolean> {
  const command = BUILTIN_COMMANDS.find((c) => c.name === name);
  if (!command) return false;
  const anytime = ["help", "hotkeys", "quit", "exit", ...SETTINGS_ANYTIME, ...ANYTIME];
  if (!app.session.isIdle() && !anytime.includes(name)) {
    app.notice(`/${name} waits for the run to finish (esc stops it)`, "warning");
    return true;
  }
  await command.run(app, args);
  return true;
}

async function help(app: App): Promise<void> {
  const rows = [
    ...BUILTIN_COMMANDS.filter((c) => c.name !== "exit").map((c) => [`/${c.name}`, c.description] as const),
    ...app.session
      .getCommands()
      .map((c) => [`/${c.name}`, `${c.description ?? ""} (${c.owner ?? c.source})`] as const),
  ];
  const width = Math.max(...rows.map(([name]) => name.length)) + 2;
  app.notice(rows.map(([name, text]) => `${name.padEnd(width)}${text}`).join("\n"), "muted");
}

async function model(app: App, args: string): Promise<void> {
  const session = app.session;
  let chosen: string | undefined = args;
  if (!chosen) {
    const current = session.getState().model;
    const usable = session.getUsableModels();
    if (usable.length === 0) {
      app.notice(
        `No model can be used yet: /login stores a key, or add a server to ${session.agentDir}/models.json`,
        "warning",
      );
      return;
    }
    chosen = await app.ui.pick(`Model (${usable.length} can be used)`, modelItems(usable), {
      ...(current ? { initial: `${current.provider}/${current.id}` } : {}),
      filterable: true,
    });
    if (!chosen) return;
  }
  const slash = chosen.indexOf("/");
  const ok = slash > 0 && (await session.setModel(chosen.slice(0, slash), chosen.slice(slash + 1)));
  app.notice(ok ? `Model: ${chosen}` : `No model ${chosen}; /model lists them`, ok ? "muted" : "error");
}

async function thinking(app: App, args: string): Promise<void> {
  let level = args as ThinkingLevel;
  if (!args) {
    const picked = await app.ui.pick(
      "Thinking level",
      LEVELS.map((l) => ({ value: l, label: l })),
      { initial: app.session.getThinkingLevel() },
    );
    if (!picked) return;
    level = picked as ThinkingLevel;
  }
  if (!LEVELS.includes(level)) {
    app.notice(`"${args}" is not a thinking level (${LEVELS.join(", ")})`, "error");
    return;
  }
  app.session.setThinkingLevel(level);
  app.notice(`Thinking: ${app.session.getThinkingLevel()}`, "muted");
}

/**
 * `/tree` picks an entry, then asks whether to summarise the branch being left (as pi does; esc goes back to the
 * tree); `/tree <id prefix> [--summarize [instructions]]` goes to one directly.
 */
async function tree(app: App, args: string): Promise<void> {
  const manager = app.session.sessionManager;
  const [prefix = "", flag, ...rest] = args.split(/\s+/).filter(Boolean);
  let targetId: string;
  let summary: { summarize: boolean; instructions?: string };
  if (!prefix) {
    const { rows, active } = treeRows(manager, app.tui.terminal.columns - 4);
    if (rows.length === 0) {
      app.notice("The session is empty", "muted");
      return;
    }
    let initial = active;
    for (;;) {
      const picked = await pickTreeEntry(app, initial);
      if (!picked) return;
      if (picked === active) {
        app.notice("Already there", "muted");
        return;
      }
      const asked = await askSummary(app);
      if (asked) {
        targetId = picked;
        summary = asked;
        break;
      }
      initial = picked;
    }
  } else {
    if (flag !== undefined && flag !== "--summarize") {
      app.notice(`/tree takes an entry id and optionally --summarize [instructions], not "${flag}"`, "error");
      return;
    }
    const found = findEntry(manager, prefix);
    if (typeof found === "string") {
      app.notice(found, "error");
      return;
    }
    targetId = found.id;
    const instructions = rest.join(" ");
    summary = { summarize: flag !== undefined, ...(instructions ? { instructions } : {}) };
  }
  // Going back to one of your own messages continues from just before it, with its text in the editor to edit
  // and send again (sending it as it is would repeat it).
  const target = manager.getEntry(targetId);
  const prompt =
    target?.type === "message" && target.message.role === "user" && target.parentId !== null
      ? textOf(target.message.content)
      : undefined;
  const result = await app.whileSummarizing(summary.summarize, () =>
    app.session.navigateTree(prompt !== undefined ? target!.parentId! : targetId, {
      ...(summary.summarize ? { summarize: true } : {}),
      ...(summary.instructions ? { customInstructions: summary.instructions } : {}),
    }),
  );
  if (result.cancelled) {
    app.notice("Not moved: stopped, or an extension kept the session where it was", "warning");
    return;
  }
  app.showHistory();
  if (prompt !== undefined) app.editor.setText(prompt);
  const summarised = result.summaryEntry ? "; the branch you left was summarised" : "";
  // Named as the tree shows it: the leaf may be an entry the tree leaves out (a model change, say).
  const shown = treeRows(manager, 200).rows.find((r) => r.id === targetId);
  const what = shown ? `${targetId} ${oneLineText(shown.text, 80)}` : targetId;
  app.notice(
    prompt !== undefined
      ? `Navigated to just before ${what}; its text is in the editor to edit and send${summarised}`
      : `Navigated to ${what}${summarised}`,
    "muted",
  );
}

function oneLineText(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return `"${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}"`;
}

/** The tree picker in place of the editor; resolves with the picked entry, undefined on esc. */
function pickTreeEntry(app: App, initial: string | undefined): Promise<string | undefined> {
  const manager = app.session.sessionManager;
  const rows = () => ({
    rows: treeRows(manager, app.tui.terminal.columns - 4).rows,
    all: treeRows(manager, app.tui.terminal.columns - 4, true).rows,
  });
  return new Promise((resolve) => {
    const picker: TreePicker = new TreePicker(
      rows(),
      () => app.theme,
      (id) => {
        app.closeLayer(picker);
        resolve(id);
      },
      async (row) => {
        const label = await app.ui.input(
          `Label of ${row.id} (empty clears it)`,
          manager.getLabel(row.id) ?? "",
        );
        if (label === undefined) return undefined;
        app.session.setLabel(row.id, label.trim() || undefined);
        return rows();
      },
      initial,
      () => app.render(),
      app.treeFilterMode,
    );
    app.openLayer(picker);
  });
}

/** Whether to summarise the branch being left, with instructions; undefined when esc went back. */
async function askSummary(app: App): Promise<{ summarize: boolean; instructions?: string } | undefined> {
  for (;;) {
    const choice = await app.ui.pick("Summarize the branch you leave?", [
      { value: "no", label: "No summary" },
      { value: "yes", label: "Summarize", description: "its summary stays in the context" },
      {
        value: "custom",
        label: "Summarize with instructions",
        description: "say what the summary should keep",
      },
    ]);
    if (!choice) return undefined;
    if (choice !== "custom") return { summarize: choice === "yes" };
    const instructions = await app.ui.editor("Instructions for the summary");
    if (instructions !== undefined) return { summarize: true, instructions };
  }
}

function textOf(content: string | { type: string; text?: string }[]): string {
  return typeof content === "string"
    ? content
    : content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("");
}

async function label(app: App, args: string): Promise<void> {
  const manager = app.session.sessionManager;
  let text = args;
  let target = currentEntry(manager);
  if (args.startsWith("@")) {
    const [ref = "", ...words] = args.slice(1).split(/\s+/);
    const found = findEntry(manager, ref);
    if (typeof found === "string") {
      app.notice(found, "error");
      return;
    }
    target = found;
    text = words.join(" ");
  }
  if (!target) {
    app.notice("Nothing to label yet: the session has no messages", "error");
    return;
  }
  app.session.setLabel(target.id, text || undefined);
  app.notice(text ? `Labelled ${target.id} "${text}"` : `Label of ${target.id} cleared`, "muted");
}

async function resume(app: App): Promise<void> {
  const current = app.session.getState().sessionFile;
  const sessions = app.session
    .listSessions()
    .filter((s) => s.path !== current)
    .slice(0, 50);
  if (sessions.length === 0) {
    app.notice("No earlier sessions in this folder", "muted");
    return;
  }
  const picked = await app.ui.pick(
    "Resume which session?",
    sessions.map((s) => ({
      value: s.path,
      label: (s.name ?? s.firstMessage).replace(/\s+/g, " ").slice(0, 70),
      description: `${s.messageCount} messages, ${s.modified.toLocaleString()}${s.labels ? ` [${s.labels.join("] [")}]` : ""}`,
    })),
    { filterable: true },
  );
  if (!picked) return;
  const { cancelled } = await app.session.switchSession(picked);
  if (cancelled) app.notice("An extension kept this session", "warning");
  app.showHistory();
}

async function fresh(app: App): Promise<void> {
  const { cancelled } = await app.session.newSession();
  app.showHistory();
  app.notice(cancelled ? "An extension kept this session" : "New session", "muted");
}

async function fork(app: App): Promise<void> {
  const messages = app.session.sessionManager
    .getBranch()
    .filter((e) => e.type === "message" && e.message.role === "user");
  if (messages.length === 0) {
    app.notice("Nothing to fork from yet: you have sent no message", "muted");
    return;
  }
  const text = (id: string) => {
    const entry = messages.find((e) => e.id === id);
    if (entry?.type !== "message" || entry.message.role !== "user") return "";
    const content = entry.message.content;
    return typeof content === "string"
      ? content
      : content.map((c) => (c.type === "text" ? c.text : "")).join("");
  };
  const picked = await app.ui.pick(
    "Fork from which message? (it returns to the editor)",
    messages.reverse().map((e) => ({ value: e.id, label: text(e.id).replace(/\s+/g, " ").slice(0, 100) })),
  );
  if (!picked) return;
  const prompt = text(picked);
  const { cancelled } = await app.session.fork(picked);
  app.showHistory();
  if (cancelled) {
    app.notice("An extension kept this session", "warning");
    return;
  }
  app.editor.setText(prompt);
  app.notice("Forked: a new session up to that message", "muted");
}

async function reload(app: App): Promise<void> {
  if (await reloadAll(app)) app.notice("Reloaded extensions, resources and keybindings", "muted");
}

/** Reloads the session's extensions and resources and the keys; false (and said why) when it failed. */
async function reloadAll(app: App): Promise<boolean> {
  try {
    await app.session.reload();
  } catch (error) {
    app.notice(`Reload failed: ${errorMessage(error)}`, "error");
    return false;
  }
  app.keys = loadKeybindings(app.session.agentDir);
  for (const problem of app.keys.problems) app.notice(problem, "warning");
  app.checkShortcuts();
  return true;
}

/**
 * `/trust` saves a decision for this folder in trust.json, then reloads: the reload takes the saved decision, so the
 * project's extensions, settings and resources load (or are left out) in this session, without a restart.
 */
async function trust(app: App): Promise<void> {
  const cwd = app.session.cwd;
  const host = app.host;
  if (!host) {
    app.notice("This host keeps no trust decisions", "warning");
    return;
  }
  const inputs = await host.trust.protectedInputs(cwd);
  const saved = host.trust.saved(cwd);
  const now = saved
    ? `saved for ${saved.path}: ${saved.trusted ? "trusted" : "not trusted"}`
    : "no decision saved for this folder";
  const what = inputs.length ? `its own ${inputs.join(", ")}` : "nothing of its own yet";
  const picked = await app.ui.pick(`Trust ${cwd}? It has ${what} (${now}).`, [
    { value: "yes", label: "Trust and remember", description: "load the project's resources now (a reload)" },
    {
      value: "no",
      label: "Do not trust, and remember",
      description: "leave them out from now on (a reload), never ask",
    },
  ]);
  if (!picked) return;
  try {
    host.trust.save(cwd, picked === "yes");
  } catch (error) {
    app.notice(`Could not save the decision: ${errorMessage(error)}`, "error");
    return;
  }
  if (!(await reloadAll(app))) return;
  app.notice(
    picked === "yes"
      ? `Trusted: ${cwd}; its own resources are loaded`
      : `Not trusted: ${cwd}; its own resources are left out`,
    "muted",
  );
}

/** Each key once, with its one meaning: what it does while you type, then in lists and dialogs. */
async function hotkeys(app: App): Promise<void> {
  const sections = hotkeyRows(app.keys.manager, app.session.getShortcuts());
  const width = Math.max(...sections.flatMap((s) => s.rows.map(([keys]) => keys.length))) + 2;
  app.notice(
    [
      ...sections.flatMap((section) => [
        section.title,
        ...section.rows.map(([keys, text]) => `  ${keys.padEnd(width)}${text}`),
      ]),
      `Change keys in ${app.session.agentDir}/keybindings.json (binding names: /hotkeys names)`,
    ].join("\n"),
    "muted",
  );
}

/**
 * The everyday session commands pi has: `/copy` the last answer, `/session` figures, `/name`, `/clone`, `/share`
 * (here a local HTML file: KnightCode uploads nothing), `/import` a session file and `/changelog`.
 */
import { copyFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { errorMessage } from "@knightcodeai/cli/kit";
import type { App } from "./app.js";
import { osc52, writeClipboardText } from "./clipboard-text.js";

export interface SessionCommand {
  name: string;
  description: string;
  run(app: App, args: string): Promise<void>;
}

export const SESSION_COMMANDS: SessionCommand[] = [
  { name: "copy", description: "Copy the last answer to the clipboard", run: copy },
  { name: "session", description: "This session's file, ids, messages, tokens and cost", run: session },
  { name: "name", description: "Name this session (/name text; without text, asks)", run: name },
  {
    name: "clone",
    description: "Copy this session's branch into a new session and continue there",
    run: clone,
  },
  {
    name: "share",
    description: "Write the session as HTML in the temporary folder; its link goes to the clipboard",
    run: share,
  },
  {
    name: "import",
    description: "Import a session file (.jsonl) into this folder's sessions and resume it",
    run: importSession,
  },
  { name: "changelog", description: "What changed in each KnightCode version", run: changelog },
];

/** Commands of this file that may run while the agent works (they change nothing). */
export const ANYTIME = ["copy", "session", "changelog"];

/** Puts text on the clipboard, by a system tool or else by OSC 52; says which. */
async function toClipboard(app: App, text: string, what: string): Promise<void> {
  const written = await writeClipboardText(text);
  if ("tool" in written) {
    app.notice(`Copied ${what} to the clipboard`, "muted");
    return;
  }
  app.tui.terminal.write(osc52(text));
  app.notice(
    `Copied ${what} through the terminal (OSC 52): ${written.missing}; a terminal that ignores OSC 52 keeps its clipboard`,
    "muted",
  );
}

/** The text of the last assistant message of the active branch that has any. */
export function lastAnswer(app: App): string | undefined {
  const branch = app.session.sessionManager.getBranch();
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i]!;
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    const text = entry.message.content
      .map((c) => (c.type === "text" ? c.text : ""))
      .join("")
      .trim();
    if (text) return text;
  }
  return undefined;
}

async function copy(app: App): Promise<void> {
  const text = lastAnswer(app);
  if (!text) {
    app.notice("Nothing to copy: no answer yet", "muted");
    return;
  }
  await toClipboard(app, text, `the last answer (${text.length} characters)`);
}

const count = (n: number) => n.toLocaleString("en-US");

async function session(app: App): Promise<void> {
  const stats = app.session.getSessionStats();
  const state = app.session.getState();
  const t = stats.tokens;
  const context = stats.contextUsage;
  const rows: [string, string][] = [
    ["Name", state.sessionName ?? "(none; /name sets one)"],
    ["File", stats.sessionFile ?? "(not saved: --no-session)"],
    ["Session id", stats.sessionId],
    ["Current entry", app.session.sessionManager.getLeafId() ?? "(empty)"],
    ["Model", state.model ? `${state.model.provider}/${state.model.id}` : "(none)"],
    [
      "Messages",
      `${count(stats.userMessages)} yours, ${count(stats.assistantMessages)} answers, ${count(stats.toolCalls)} tool calls, ${count(stats.totalMessages)} in all`,
    ],
    [
      "Tokens",
      `${count(t.input)} in, ${count(t.output)} out, ${count(t.cacheRead)} cache read, ${count(t.cacheWrite)} cache write, ${count(t.totalTokens)} in all`,
    ],
    ["Cost", `$${stats.cost.toFixed(4)}`],
    [
      "Context",
      context
        ? `${context.tokens === null ? "?" : count(context.tokens)} of ${count(context.contextWindow)} tokens${context.percent === null ? "" : ` (${context.percent.toFixed(1)}%)`}`
        : "(no model)",
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  app.notice(rows.map(([k, v]) => `${k.padEnd(width)}${v}`).join("\n"), "info");
}

async function name(app: App, args: string): Promise<void> {
  let text: string | undefined = args.trim();
  if (!text) {
    text = (await app.ui.input("Name this session", app.session.getState().sessionName ?? ""))?.trim();
    if (text === undefined) return;
  }
  if (!text) {
    app.notice("A session name needs some text: /name my work", "error");
    return;
  }
  app.session.setSessionName(text);
  app.footer.changed();
  app.notice(`Session named "${text}"`, "muted");
}

async function clone(app: App): Promise<void> {
  const before = app.session.getState().sessionFile;
  const { cancelled } = await app.session.clone();
  app.showHistory();
  if (cancelled) {
    app.notice("An extension kept this session", "warning");
    return;
  }
  const now = app.session.getState().sessionFile;
  app.notice(
    `Cloned into a new session${now ? `: ${now}` : ""}${before ? ` (the old one stays in ${before})` : ""}`,
    "muted",
  );
}

async function share(app: App): Promise<void> {
  if (!app.session.getCommands().some((c) => c.name === "export")) {
    app.notice("/share writes the HTML export, and builtin:html-export is turned off", "error");
    return;
  }
  const path = join(tmpdir(), `knightcode-share-${app.session.getState().sessionId}.html`);
  try {
    await app.session.runCommand("export", JSON.stringify(path));
  } catch (error) {
    app.notice(`Not shared: ${errorMessage(error)}`, "error");
    return;
  }
  if (!existsSync(path)) return;
  const url = pathToFileURL(path).href;
  await toClipboard(app, url, `the link ${url}`);
  app.notice("Nothing was uploaded: send the file itself to share the session", "muted");
}

/** A session file's first line: its header, `{"type":"session",...}`. */
function sessionHeaderProblem(path: string): string | undefined {
  let first: string;
  try {
    first = readFileSync(path, "utf8").split("\n", 1)[0] ?? "";
  } catch (error) {
    return `${path} cannot be read: ${errorMessage(error)}`;
  }
  try {
    const header = JSON.parse(first) as { type?: unknown };
    if (header?.type === "session") return undefined;
  } catch {
    // said below
  }
  return `${path} is no session file: its first line is not a {"type":"session",...} header`;
}

async function importSession(app: App, args: string): Promise<void> {
  const written = args.trim().replace(/^(["'])(.*)\1$/, "$2");
  if (!written) {
    app.notice("/import needs the path of a session file: /import ~/Downloads/session.jsonl", "error");
    return;
  }
  const path = resolve(
    app.session.cwd,
    written.startsWith("~/") ? join(process.env.HOME ?? "", written.slice(2)) : written,
  );
  if (!existsSync(path) || !statSync(path).isFile()) {
    app.notice(`No file ${path}`, "error");
    return;
  }
  const problem = sessionHeaderProblem(path);
  if (problem) {
    app.notice(problem, "error");
    return;
  }
  const current = app.session.getState().sessionFile;
  if (!current) {
    app.notice(
      "This session is not saved (--no-session), so there is no sessions folder to import into",
      "error",
    );
    return;
  }
  const target = join(dirname(current), basename(path));
  if (resolve(target) !== path) {
    if (existsSync(target)) {
      app.notice(`Not imported: ${target} exists already (/resume opens it)`, "error");
      return;
    }
    copyFileSync(path, target);
  }
  const { cancelled } = await app.session.switchSession(target);
  app.showHistory();
  app.notice(
    cancelled ? "An extension kept this session" : `Imported ${path} as ${target}`,
    cancelled ? "warning" : "muted",
  );
}

/** The package's own folder: the one above this module whose package.json is KnightCode's. */
function packageRoot(): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string };
      if (pkg.name === "@knightcodeai/cli") return dir;
    } catch {
      // keep looking up
    }
  }
  return undefined;
}

async function changelog(app: App): Promise<void> {
  const root = packageRoot();
  const file = root && join(root, "CHANGELOG.md");
  let text: string;
  try {
    if (!file) throw new Error("the package folder was not found");
    text = readFileSync(file, "utf8");
  } catch (error) {
    app.notice(`No changelog: ${errorMessage(error)}`, "error");
    return;
  }
  app.notice(text.trim(), "info");
}

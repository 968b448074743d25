/**
 * `/settings`: the settings a person changes day to day, in one list you can search by typing. Each choice is
 * saved in the personal settings.json through the host's settings service (the file is read, the one key set and
 * the file replaced atomically). The display settings apply at once; the agent's (compaction, retries, ...) are
 * read when a session starts, so closing the list reloads the session once when one of them changed.
 */
import type { ThinkingLevel } from "@knightcodeai/cli/kit";
import { errorMessage } from "@knightcodeai/cli/kit";
import type { App } from "./app.js";
import { TREE_FILTERS, type TreeFilter } from "./tree-picker.js";

/** The settings.json keys of the mode's own display choices (`hideThinkingBlock` is pi's name). */
export const DISPLAY_SETTINGS = {
  theme: "theme",
  hideThinking: "hideThinkingBlock",
  expandTools: "expandToolOutput",
  editorPadding: "editorPaddingX",
  autocompleteMaxVisible: "autocompleteMaxVisible",
  terminalProgress: "terminalProgress",
} as const;

export const DOUBLE_ESCAPE_ACTIONS = ["tree", "fork", "none"] as const;
export type DoubleEscapeAction = (typeof DOUBLE_ESCAPE_ACTIONS)[number];

/** The value at a dotted key path of the merged settings. */
function at(settings: Record<string, unknown>, path: string): unknown {
  return path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], settings);
}

/**
 * The mode's display choices that pi keeps under the same names, from the merged settings; a value of the wrong
 * type (which the settings service has reported already) leaves the default.
 */
export function readDisplaySettings(settings: Record<string, unknown>): {
  showImages: boolean;
  imageWidthCells: number;
  autoResize: boolean;
  doubleEscapeAction: DoubleEscapeAction;
  treeFilterMode: TreeFilter;
  quietStartup: boolean | "header";
} {
  const width = at(settings, "terminal.imageWidthCells");
  const onEscape = at(settings, "doubleEscapeAction");
  const filter = at(settings, "treeFilterMode");
  const quiet = at(settings, "quietStartup");
  return {
    showImages: at(settings, "terminal.showImages") !== false,
    imageWidthCells:
      typeof width === "number" && Number.isInteger(width) && width >= 1 && width <= 200 ? width : 60,
    autoResize: at(settings, "images.autoResize") !== false,
    doubleEscapeAction: DOUBLE_ESCAPE_ACTIONS.includes(onEscape as DoubleEscapeAction)
      ? (onEscape as DoubleEscapeAction)
      : "tree",
    treeFilterMode: TREE_FILTERS.includes(filter as TreeFilter) ? (filter as TreeFilter) : "default",
    quietStartup: quiet === true || quiet === "header" ? quiet : false,
  };
}

/** `/settings` may open while the agent works. */
export const SETTINGS_ANYTIME = ["settings"];

type Kind =
  | { type: "boolean"; invert?: boolean }
  /** `encode` turns the picked name into the saved value (`on` into `true`, say); `decode` goes back. */
  | {
      type: "choice";
      values: () => string[];
      encode?(name: string): unknown;
      decode?(value: unknown): string;
    }
  | { type: "integer"; min: number; max?: number };

interface Setting {
  key: string;
  label: string;
  /** What it changes, shown beside its value. */
  help: string;
  kind: Kind;
  /** Read by the session when it starts: a change reloads it. */
  agent?: boolean;
  /** The value in force now. */
  read(app: App): unknown;
  /** Applies a new value to the running mode (display settings). */
  apply?(app: App, value: unknown): void;
}

const LEVELS: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

function fromSettings(key: string, fallback: unknown): (app: App) => unknown {
  return (app) => {
    const value = app.host?.settings.read(app.session.cwd).get(key);
    if (value !== undefined) return value;
    const defaults = app.host?.settings.defaults() ?? {};
    const found = key.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], defaults);
    return found ?? fallback;
  };
}

export const SETTINGS: Setting[] = [
  {
    key: DISPLAY_SETTINGS.theme,
    label: "Theme",
    help: "colours of the whole screen",
    kind: { type: "choice", values: () => [] },
    read: (app) => app.theme.name ?? "custom",
  },
  {
    key: DISPLAY_SETTINGS.hideThinking,
    label: "Show thinking",
    help: "thinking shown in full, or folded to one line (ctrl+t)",
    kind: { type: "boolean", invert: true },
    read: (app) => !app.showThinking,
    apply: (app, hide) => {
      app.showThinking = hide === false;
      app.transcript.invalidate();
    },
  },
  {
    key: DISPLAY_SETTINGS.expandTools,
    label: "Expand tool output",
    help: "tool output in full, or its first lines (ctrl+o)",
    kind: { type: "boolean" },
    read: (app) => app.toolsExpanded,
    apply: (app, on) => app.ui.setToolsExpanded(on === true),
  },
  {
    key: DISPLAY_SETTINGS.editorPadding,
    label: "Editor padding",
    help: "columns of space left and right of the text you type",
    kind: { type: "integer", min: 0, max: 3 },
    read: (app) => app.defaultEditor.getPaddingX(),
    apply: (app, n) => app.defaultEditor.setPaddingX(Number(n)),
  },
  {
    key: DISPLAY_SETTINGS.autocompleteMaxVisible,
    label: "Autocomplete rows",
    help: "how many suggestions the / and @ lists show",
    kind: { type: "integer", min: 3, max: 20 },
    read: (app) => app.autocompleteMaxVisible,
    apply: (app, n) => {
      app.autocompleteMaxVisible = Number(n);
      app.defaultEditor.setAutocompleteMaxVisible(Number(n));
    },
  },
  {
    key: DISPLAY_SETTINGS.terminalProgress,
    label: "Terminal progress",
    help: "a busy mark in the terminal's tab or title bar while the agent works (OSC 9;4)",
    kind: { type: "boolean" },
    read: (app) => app.terminalProgress,
    apply: (app, on) => {
      app.terminalProgress = on === true;
    },
  },
  {
    key: "terminal.showImages",
    label: "Show images",
    help: "images drawn in the terminal where it can (kitty, iTerm2 and others), else a line naming them",
    kind: { type: "boolean" },
    read: (app) => app.showImages,
    apply: (app, on) => {
      app.showImages = on !== false;
      app.transcript.invalidate();
    },
  },
  {
    key: "terminal.imageWidthCells",
    label: "Image width",
    help: "columns a drawn image takes at most",
    kind: { type: "integer", min: 1, max: 200 },
    read: (app) => app.imageWidthCells,
    apply: (app, n) => {
      app.imageWidthCells = n === undefined ? 60 : Number(n);
      app.transcript.invalidate();
    },
  },
  {
    key: "images.autoResize",
    label: "Auto-resize images",
    help: "pasted PNG and JPEG images over 2000x2000 pixels scaled down to fit; off sends them as they are",
    kind: { type: "boolean" },
    read: (app) => app.autoResize,
    apply: (app, on) => {
      app.autoResize = on !== false;
    },
  },
  {
    key: "images.blockImages",
    label: "Block images",
    help: 'no image reaches the model: each becomes the note "Image reading is disabled."',
    kind: { type: "boolean" },
    agent: true,
    read: fromSettings("images.blockImages", false),
  },
  {
    key: "doubleEscapeAction",
    label: "Double escape",
    help: "esc twice on an empty editor: opens /tree, /fork, or nothing",
    kind: { type: "choice", values: () => [...DOUBLE_ESCAPE_ACTIONS] },
    read: (app) => app.doubleEscapeAction,
    apply: (app, value) => {
      app.doubleEscapeAction = value as DoubleEscapeAction;
    },
  },
  {
    key: "treeFilterMode",
    label: "Tree filter",
    help: "the filter /tree opens with (ctrl+o cycles them there)",
    kind: { type: "choice", values: () => [...TREE_FILTERS] },
    read: (app) => app.treeFilterMode,
    apply: (app, value) => {
      app.treeFilterMode = value as TreeFilter;
    },
  },
  {
    key: "quietStartup",
    label: "Quiet start-up",
    help: "on hides the header and what loaded at start; header keeps the header",
    kind: {
      type: "choice",
      values: () => ["off", "on", "header"],
      encode: (name) => (name === "header" ? "header" : name === "on"),
      decode: (value) => (value === "header" ? "header" : value === true ? "on" : "off"),
    },
    read: (app) => app.quietStartup,
    apply: (app, value) => {
      app.quietStartup = value === true || value === "header" ? value : false;
    },
  },
  {
    key: "transport",
    label: "Transport",
    help: "how providers that speak several stream answers; the built-in ones use SSE and say so",
    kind: { type: "choice", values: () => ["auto", "sse", "websocket", "websocket-cached"] },
    agent: true,
    read: fromSettings("transport", "auto"),
  },
  {
    key: "compaction.enabled",
    label: "Auto-compaction",
    help: "summarise the conversation when the context fills up",
    kind: { type: "boolean" },
    agent: true,
    read: fromSettings("compaction.enabled", true),
  },
  {
    key: "compaction.reserveTokens",
    label: "Compaction reserve",
    help: "tokens kept free for the answer before compacting",
    kind: { type: "integer", min: 0 },
    agent: true,
    read: fromSettings("compaction.reserveTokens", undefined),
  },
  {
    key: "compaction.keepRecentTokens",
    label: "Compaction keeps",
    help: "tokens of recent conversation kept as they are",
    kind: { type: "integer", min: 0 },
    agent: true,
    read: fromSettings("compaction.keepRecentTokens", undefined),
  },
  {
    key: "retry.enabled",
    label: "Auto-retry",
    help: "retry a request that failed for a passing reason (rate limit, overload)",
    kind: { type: "boolean" },
    agent: true,
    read: fromSettings("retry.enabled", true),
  },
  {
    key: "retry.maxRetries",
    label: "Retries",
    help: "how many times a failed request is retried",
    kind: { type: "integer", min: 0, max: 20 },
    agent: true,
    read: fromSettings("retry.maxRetries", undefined),
  },
  {
    key: "steeringMode",
    label: "Steering mode",
    help: "messages sent while the agent works: all at the next turn, or one per turn",
    kind: { type: "choice", values: () => ["all", "one-at-a-time"] },
    agent: true,
    read: fromSettings("steeringMode", "all"),
  },
  {
    key: "followUpMode",
    label: "Follow-up mode",
    help: "follow-ups queued for after the run: all at once, or one per turn",
    kind: { type: "choice", values: () => ["all", "one-at-a-time"] },
    agent: true,
    read: fromSettings("followUpMode", "all"),
  },
  {
    key: "cacheWarming.enabled",
    label: "Cache warming",
    help: "keep the provider's prompt cache warm while you think",
    kind: { type: "boolean" },
    agent: true,
    read: fromSettings("cacheWarming.enabled", false),
  },
  {
    key: "doomLoop.enabled",
    label: "Loop guard",
    help: "stop a run that repeats the same tool call",
    kind: { type: "boolean" },
    agent: true,
    read: fromSettings("doomLoop.enabled", true),
  },
  {
    key: "defaultThinkingLevel",
    label: "Default thinking",
    help: "the thinking level new sessions start with",
    kind: { type: "choice", values: () => LEVELS },
    agent: true,
    read: fromSettings("defaultThinkingLevel", "off"),
  },
  {
    key: "enableSkillCommands",
    label: "Skill commands",
    help: "skills as /skill:name commands",
    kind: { type: "boolean" },
    agent: true,
    read: fromSettings("enableSkillCommands", true),
  },
  {
    key: "defaultProjectTrust",
    label: "Project trust",
    help: "whether a folder's own .knightcode resources load: ask, always, never",
    kind: { type: "choice", values: () => ["ask", "always", "never"] },
    agent: true,
    read: fromSettings("defaultProjectTrust", "ask"),
  },
  {
    key: "codemode.timeoutMs",
    label: "Codemode timeout",
    help: "milliseconds a codemode script may run",
    kind: { type: "integer", min: 1 },
    agent: true,
    read: fromSettings("codemode.timeoutMs", undefined),
  },
];

function shown(setting: Setting, value: unknown): string {
  if (setting.kind.type === "boolean") {
    const on = setting.kind.invert ? value === false : value === true;
    return on ? "on" : "off";
  }
  if (setting.kind.type === "choice" && setting.kind.decode) return setting.kind.decode(value);
  return value === undefined ? "default" : String(value);
}

/**
 * Saves one key in the personal settings.json; false (and why, said) when it could not be saved. A file that is
 * not valid JSON is left as it is.
 */
function save(app: App, key: string, value: unknown): boolean {
  if (!app.host) {
    app.notice("Not saved: this host keeps no settings", "warning");
    return false;
  }
  try {
    app.host.settings.write({ scope: "global", key, value });
    return true;
  } catch (error) {
    app.notice(`Not saved: ${errorMessage(error)}`, "error");
    return false;
  }
}

/** Asks for the new value of one setting; undefined when esc went back. */
async function ask(app: App, setting: Setting, now: unknown): Promise<{ value: unknown } | undefined> {
  const kind = setting.kind;
  if (kind.type === "boolean") {
    const on = kind.invert ? now === false : now === true;
    return { value: kind.invert ? on : !on };
  }
  if (kind.type === "choice") {
    const values = setting.key === "theme" ? app.ui.getAllThemes().map((t) => t.name) : kind.values();
    const current = kind.decode ? kind.decode(now) : now;
    const picked = await app.ui.pick(
      setting.label,
      values.map((v) => ({ value: v, label: v })),
      typeof current === "string" ? { initial: current } : {},
    );
    if (picked === undefined) return undefined;
    return { value: kind.encode ? kind.encode(picked) : picked };
  }
  for (;;) {
    const range = kind.max === undefined ? `${kind.min} or more` : `${kind.min} to ${kind.max}`;
    const typed = await app.ui.input(`${setting.label} (${range}; empty: the default)`, String(now ?? ""));
    if (typed === undefined) return undefined;
    if (typed.trim() === "") return { value: undefined };
    const n = Number(typed.trim());
    if (Number.isInteger(n) && n >= kind.min && (kind.max === undefined || n <= kind.max))
      return { value: n };
    app.notice(`${setting.label} takes a whole number from ${range}, not "${typed.trim()}"`, "error");
  }
}

export async function settings(app: App): Promise<void> {
  const where = app.host ? app.host.settings.read().paths.global : undefined;
  let agentChanged = false;
  let last: string | undefined;
  for (;;) {
    const picked = await app.ui.pick(
      `Settings${where ? ` (saved in ${where})` : " (not saved by this host)"} · type to search`,
      SETTINGS.map((s) => ({
        value: s.key,
        label: `${s.label}: ${shown(s, s.read(app))}`,
        description: `${s.help}${s.agent ? " (reloads)" : ""}`,
      })),
      { filterable: true, maxVisible: 12, ...(last ? { initial: last } : {}) },
    );
    if (!picked) break;
    last = picked;
    const setting = SETTINGS.find((s) => s.key === picked)!;
    const answer = await ask(app, setting, setting.read(app));
    if (!answer) continue;
    if (setting.key === "theme") {
      const result = app.ui.setTheme(String(answer.value));
      if (!result.success) {
        app.notice(result.error ?? "The theme could not be set", "error");
        continue;
      }
    }
    setting.apply?.(app, answer.value);
    if (save(app, setting.key, answer.value) && setting.agent) agentChanged = true;
    app.render();
  }
  if (!agentChanged) return;
  if (!app.session.isIdle()) {
    app.notice("Saved; the agent's settings apply after this run with /reload", "muted");
    return;
  }
  try {
    await app.session.reload();
    app.notice("Reloaded: the new settings apply", "muted");
  } catch (error) {
    app.notice(`Saved, but the reload failed: ${errorMessage(error)}`, "error");
  }
}

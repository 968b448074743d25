/** A minimal `ctx` for sessions whose plugins provide no context factory, and the staleness guard. */
import type { ExtensionContext, ExtensionUIContext, UITheme } from "../api/context.js";
import { MissingServiceError, StaleContextError } from "../errors.js";

interface RuntimeView {
  readonly cwd: string;
  readonly mode: ExtensionContext["mode"];
}

const same = (text: string) => text;
const plain = (_token: string, text: string) => text;
const noop = () => {};

/** A theme without colour: a session that draws nothing has no terminal to colour for. */
export const plainTheme: UITheme = Object.freeze({
  name: "plain",
  fg: plain,
  bg: plain,
  ...Object.fromEntries(["bold", "italic", "underline", "inverse", "strikethrough"].map((m) => [m, same])),
} as UITheme);

const answers = {
  select: async () => undefined,
  confirm: async () => false,
  input: async () => undefined,
  editor: async () => undefined,
  custom: async () => undefined,
  getEditorText: () => "",
  getEditorComponent: () => undefined,
  onTerminalInput: () => noop,
  theme: plainTheme,
  getAllThemes: () => [],
  getTheme: () => undefined,
  setTheme: () => ({ success: false, error: "This session has no UI to theme" }),
  getToolsExpanded: () => false,
};

/** What a UI draws or sets: every other method of `ctx.ui`, each a no-op without a UI. */
const surfaces = [
  ...["notify", "setStatus", "setWidget", "setTitle", "setWorkingMessage", "setWorkingVisible"],
  ...["setWorkingIndicator", "setHiddenThinkingLabel", "setFooter", "setHeader", "setEditorText"],
  ...["pasteToEditor", "setEditorComponent", "setToolsExpanded"],
];
type Surface = Exclude<keyof ExtensionUIContext, keyof typeof answers>;

/** The UI of a session without one: dialogs answer "no" at once, surfaces are no-ops, the theme is plain. */
export const headlessUI: ExtensionUIContext = Object.freeze({
  ...(Object.fromEntries(surfaces.map((name) => [name, noop])) as Record<Surface, () => void>),
  ...answers,
});

export function createFallbackContext(runtime: RuntimeView): ExtensionContext {
  const missing = (what: string) => () => {
    throw new MissingServiceError(
      `ctx.${what} needs a context plugin (core.context), which this session lacks`,
    );
  };
  return {
    cwd: runtime.cwd,
    mode: runtime.mode,
    hasUI: false,
    ui: headlessUI,
    get sessionManager(): never {
      return missing("sessionManager")();
    },
    get modelRegistry(): never {
      return missing("modelRegistry")();
    },
    model: undefined,
    thinkingLevel: undefined,
    signal: undefined,
    isIdle: () => true,
    isProjectTrusted: () => false,
    hasPendingMessages: () => false,
    abort: () => {},
    shutdown: missing("shutdown"),
    getContextUsage: () => undefined,
    compact: missing("compact"),
    getSystemPrompt: () => "",
  };
}

/** Wraps a context so that any use after its runtime generation ended throws a clear error. */
export function guardContext<T extends object>(ctx: T, isLive: () => boolean, what: string): T {
  return new Proxy(ctx, {
    get(target, property, receiver) {
      if (!isLive()) throw new StaleContextError(what);
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * The test kit's `ctx.ui`: it shows nothing and records everything, so a test can assert what an extension asked
 * of the UI. Component widgets, headers and footers are rendered once at 80 columns into lines; terminal input is
 * fed with `terminalInput()`. Its theme always writes colour (whatever NO_COLOR says), so assertions are stable.
 */
import type {
  DialogOptions,
  EditorFactory,
  ExtensionUIContext,
  FooterFactory,
  NotifyLevel,
  TerminalInputHandler,
  UIComponentFactory,
  UITheme,
  WorkingIndicatorOptions,
} from "../../kernel/index.js";
import { ThemeSelection } from "../../plugins/kit/theme.js";
import { isWidgetView, viewToLines } from "../../plugins/kit/views.js";

export type DialogAnswer = string | boolean | undefined;

/** What the extensions did with `ctx.ui`. */
export interface TestUIRecord {
  notifications: { message: string; level: NotifyLevel }[];
  status: Map<string, string>;
  /** Widgets by key: their lines, or what a component widget rendered at 80 columns. */
  widgets: Map<string, string[]>;
  /** Every call, in order, with its arguments (`{ method: "setTitle", args: ["Build"] }`). */
  calls: { method: string; args: unknown[] }[];
  title: string | undefined;
  workingMessage: string | undefined;
  workingVisible: boolean;
  workingIndicator: WorkingIndicatorOptions | undefined;
  hiddenThinkingLabel: string | undefined;
  /** The custom header and footer rendered at 80 columns, while one is set. */
  header: string[] | undefined;
  footer: string[] | undefined;
  editorText: string;
  editorComponent: EditorFactory | undefined;
  toolsExpanded: boolean;
  /** Sends raw terminal input to the `onTerminalInput` listeners; returns the data left after them, or undefined when one consumed it. */
  terminalInput(data: string): string | undefined;
}

const WIDTH = 80;

export function createTestUI(ask: (kind: string, title: string, opts?: DialogOptions) => DialogAnswer): {
  ui: ExtensionUIContext;
  record: TestUIRecord;
} {
  const themes = new ThemeSelection("dark", { color: true });
  const listeners = new Set<TerminalInputHandler>();
  const host = { requestRender() {} };
  const record: TestUIRecord = {
    notifications: [],
    status: new Map(),
    widgets: new Map(),
    calls: [],
    title: undefined,
    workingMessage: undefined,
    workingVisible: true,
    workingIndicator: undefined,
    hiddenThinkingLabel: undefined,
    header: undefined,
    footer: undefined,
    editorText: "",
    editorComponent: undefined,
    toolsExpanded: false,
    terminalInput(data) {
      let rest = data;
      for (const listener of [...listeners]) {
        const result = listener(rest);
        if (result?.consume) return undefined;
        if (typeof result?.data === "string") rest = result.data;
      }
      return rest;
    },
  };
  const render = (factory: UIComponentFactory) => factory(host, themes.theme).render(WIDTH);
  const footerData = {
    getGitBranch: () => null,
    getExtensionStatuses: () => new Map(record.status),
    getAvailableProviderCount: () => 1,
    onBranchChange: () => () => {},
  };
  const ui: ExtensionUIContext = {
    select: async (title, choices, opts) => {
      const answer = ask("select", title, opts);
      return typeof answer === "string" && choices.includes(answer) ? answer : undefined;
    },
    confirm: async (title, _message, opts) => ask("confirm", title, opts) === true,
    input: async (title, _placeholder, opts) => {
      const answer = ask("input", title, opts);
      return typeof answer === "string" ? answer : undefined;
    },
    editor: async (title, _prefill, opts) => {
      const answer = ask("editor", title, opts);
      return typeof answer === "string" ? answer : undefined;
    },
    notify: (message, level = "info") => {
      record.notifications.push({ message, level });
    },
    setStatus: (key, text) => {
      if (text === undefined) record.status.delete(key);
      else record.status.set(key, text);
    },
    setWidget: (key, content) => {
      if (content === undefined) record.widgets.delete(key);
      else
        record.widgets.set(
          key,
          typeof content === "function"
            ? render(content)
            : isWidgetView(content)
              ? viewToLines(content.view)
              : content,
        );
    },
    setTitle: (title) => {
      record.title = title;
    },
    setWorkingMessage: (message) => {
      record.workingMessage = message;
    },
    setWorkingVisible: (visible) => {
      record.workingVisible = visible;
    },
    setWorkingIndicator: (options) => {
      record.workingIndicator = options;
    },
    setHiddenThinkingLabel: (label) => {
      record.hiddenThinkingLabel = label;
    },
    setHeader: (factory) => {
      record.header = factory ? render(factory) : undefined;
    },
    setFooter: (factory: FooterFactory | undefined) => {
      record.footer = factory ? factory(host, themes.theme, footerData).render(WIDTH) : undefined;
    },
    setEditorText: (text) => {
      record.editorText = text;
    },
    getEditorText: () => record.editorText,
    pasteToEditor: (text) => {
      record.editorText += text;
    },
    setEditorComponent: (factory) => {
      record.editorComponent = factory;
    },
    getEditorComponent: () => record.editorComponent,
    onViewEvent: () => () => {},
    onTerminalInput: (handler) => {
      listeners.add(handler);
      return () => {
        listeners.delete(handler);
      };
    },
    get theme(): UITheme {
      return themes.theme;
    },
    getAllThemes: () => themes.all(),
    getTheme: (name) => themes.get(name),
    setTheme: (theme) => themes.set(theme),
    getToolsExpanded: () => record.toolsExpanded,
    setToolsExpanded: (expanded) => {
      record.toolsExpanded = expanded;
    },
    custom: async () => undefined,
  };
  // Record every method call before it runs, so a test sees the order of calls across methods.
  const recorded = new Proxy(ui, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        record.calls.push({ method: property, args });
        return value.apply(target, args);
      };
    },
  });
  return { ui: recorded, record };
}

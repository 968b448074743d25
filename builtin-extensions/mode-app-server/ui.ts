/**
 * A thread's `ctx.ui`. Dialogs become `ui/dialog` server requests (the thread routes them to a subscriber);
 * statuses, title, working message and widgets are the thread's extension UI, kept here so a resume gets it whole
 * (`ui` of the result) and changes go out as `ui/state` and `ui/widget`. Text is stripped of ANSI escapes, kept on
 * one line and cut to 200 code points; widget lines keep their spacing. What only a terminal draws (component
 * widgets, custom(), header, footer, raw input, the working indicator) draws nothing and logs one line per method
 * per thread load.
 */
import {
  type DialogOptions,
  type EditorFactory,
  type ExtensionUIContext,
  findControl,
  isWidgetView,
  type NotifyLevel,
  type QuestionsRequest,
  type QuestionsUI,
  ThemedUI,
  type UIComponentFactory,
  type UserAnswer,
  type ViewEvent,
  type ViewNode,
  viewProblem,
  type WidgetOptions,
  type WidgetView,
} from "@knightcodeai/cli/kit";
import { invalidParams } from "./errors.js";

export const TEXT_MAX_CODE_POINTS = 200;
export const KEY_MAX_CHARS = 128;
export const WIDGET_MAX_BYTES = 16 * 1024;
export const MAX_WIDGETS = 16;
export const MAX_STATUSES = 50;

export type DialogKind = "select" | "confirm" | "input" | "editor";

export interface UiHost {
  /**
   * Asks a subscriber with the server request `method` (`ui/dialog` with `kind` among the fields, or
   * `item/toolCall/requestUserInput`); resolves with its reply, or undefined when cancelled, dismissed with `{}` or
   * nobody can answer.
   */
  dialog(
    method: "ui/dialog" | "item/toolCall/requestUserInput",
    fields: Record<string, unknown>,
    opts: DialogOptions | undefined,
  ): Promise<Record<string, unknown> | undefined>;
  notify(method: "ui/notify" | "ui/state" | "ui/widget", params: Record<string, unknown>): void;
  warn(message: string): void;
  /** One stderr line, for what draws only in a terminal. */
  log(message: string): void;
}

export interface UiSnapshot {
  statuses: { key: string; text: string }[];
  title?: string;
  workingMessage?: string;
  workingVisible: boolean;
  widgets: ({ key: string } & Widget)[];
}

type Widget = { placement: "aboveEditor" | "belowEditor" } & ({ lines: string[] } | { view: ViewNode });

/** Every string of a view without ANSI escapes (its spacing kept). */
function cleanView(node: ViewNode): ViewNode {
  return JSON.parse(JSON.stringify(node), (_key, value: unknown) =>
    typeof value === "string" ? stripAnsi(value) : value,
  ) as ViewNode;
}

// CSI, OSC and two-character escapes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** One line, no escapes, at most 200 code points. */
export function cleanText(text: string): string {
  const flat = stripAnsi(String(text)).replace(/[\r\n\t]+/g, " ");
  const points = [...flat];
  return points.length > TEXT_MAX_CODE_POINTS ? points.slice(0, TEXT_MAX_CODE_POINTS).join("") : flat;
}

function validKey(key: unknown): key is string {
  return typeof key === "string" && key.length >= 1 && key.length <= KEY_MAX_CHARS;
}

export class ThreadUi extends ThemedUI implements ExtensionUIContext, QuestionsUI {
  private readonly statuses = new Map<string, string>();
  private title: string | undefined;
  private workingMessage: string | undefined;
  private workingVisible = true;
  /** In the order they were last set. */
  private readonly widgets = new Map<string, Widget>();
  private readonly viewHandlers = new Set<(event: ViewEvent) => void | Promise<void>>();
  /** Views are sent to the client as they are; the SDK leaves them to this UI. */
  readonly drawsViews = true;
  private readonly logged = new Set<string>();
  private readonly refused = new Set<string>();

  constructor(private readonly host: UiHost) {
    super();
  }

  snapshot(): UiSnapshot {
    const widgets = [...this.widgets].map(([key, w]) => ({ key, ...w }));
    return {
      statuses: [...this.statuses]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, text]) => ({ key, text })),
      ...(this.title !== undefined ? { title: this.title } : {}),
      ...(this.workingMessage !== undefined ? { workingMessage: this.workingMessage } : {}),
      workingVisible: this.workingVisible,
      widgets: [
        ...widgets.filter((w) => w.placement === "aboveEditor"),
        ...widgets.filter((w) => w.placement === "belowEditor"),
      ],
    };
  }

  /** `/reload`: everything the old extensions showed goes, with one `ui/state` and a removal per widget. */
  clear(): void {
    this.statuses.clear();
    this.title = undefined;
    this.workingMessage = undefined;
    this.workingVisible = true;
    this.sendState();
    for (const key of [...this.widgets.keys()]) {
      this.widgets.delete(key);
      this.host.notify("ui/widget", { key });
    }
    this.logged.clear();
    this.refused.clear();
    // The old extensions' handlers go with them.
    this.viewHandlers.clear();
  }

  private sendState(): void {
    const { widgets: _widgets, ...state } = this.snapshot();
    this.host.notify("ui/state", state);
  }

  private refuse(key: string, message: string): void {
    if (this.refused.has(key)) return;
    this.refused.add(key);
    this.host.warn(message);
  }

  private terminalOnly(method: string): void {
    if (this.logged.has(method)) return;
    this.logged.add(method);
    this.host.log(`ctx.ui.${method}() draws only in the terminal; the app-server draws nothing`);
  }

  private ask(
    kind: DialogKind,
    fields: Record<string, unknown>,
    opts: DialogOptions | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    return this.host.dialog("ui/dialog", { kind, ...fields }, opts);
  }

  /** `ask_user`'s questions in one `item/toolCall/requestUserInput`; `{}` dismisses them. */
  async askQuestions(
    request: QuestionsRequest,
    opts?: DialogOptions,
  ): Promise<Record<string, UserAnswer> | undefined> {
    const reply = await this.host.dialog(
      "item/toolCall/requestUserInput",
      {
        itemId: request.toolCallId,
        questions: request.questions.map((q) => ({
          id: q.id,
          text: stripAnsi(q.text),
          options: q.options.map((o) => ({
            label: o.label,
            ...(o.description !== undefined ? { description: stripAnsi(o.description) } : {}),
          })),
        })),
      },
      opts,
    );
    const answers = reply?.answers;
    if (reply === undefined) return undefined;
    return typeof answers === "object" && answers !== null && !Array.isArray(answers)
      ? (answers as Record<string, UserAnswer>)
      : {};
  }

  async select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined> {
    const reply = await this.ask("select", { title: cleanText(title), options: options.map(String) }, opts);
    const value = reply?.value;
    return typeof value === "string" && options.includes(value) ? value : undefined;
  }

  async confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean> {
    const reply = await this.ask(
      "confirm",
      { title: cleanText(title), ...(message !== undefined ? { message: stripAnsi(message) } : {}) },
      opts,
    );
    return reply?.confirmed === true;
  }

  async input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined> {
    const reply = await this.ask(
      "input",
      {
        title: cleanText(title),
        ...(placeholder !== undefined ? { placeholder: cleanText(placeholder) } : {}),
      },
      opts,
    );
    return typeof reply?.value === "string" ? reply.value : undefined;
  }

  async editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined> {
    const reply = await this.ask(
      "editor",
      { title: cleanText(title), ...(prefill !== undefined ? { prefill } : {}) },
      opts,
    );
    return typeof reply?.value === "string" ? reply.value : undefined;
  }

  notify(message: string, level: NotifyLevel = "info"): void {
    const known = level === "warning" || level === "error" ? level : "info";
    this.host.notify("ui/notify", { message: stripAnsi(String(message)), level: known });
  }

  setStatus(key: string, text: string | undefined): void {
    if (!validKey(key)) {
      this.refuse(
        String(key),
        `Status key "${String(key).slice(0, 40)}" must have 1 to ${KEY_MAX_CHARS} characters`,
      );
      return;
    }
    if (text === undefined) {
      if (!this.statuses.delete(key)) return;
    } else {
      if (!this.statuses.has(key) && this.statuses.size >= MAX_STATUSES) {
        this.refuse(key, `Status "${key}" refused: a thread shows at most ${MAX_STATUSES} statuses`);
        return;
      }
      const clean = cleanText(text);
      if (this.statuses.get(key) === clean) return;
      this.statuses.set(key, clean);
    }
    this.sendState();
  }

  setWidget(
    key: string,
    content: string[] | UIComponentFactory | WidgetView | undefined,
    options?: WidgetOptions,
  ): void {
    const problem = this.widgetProblem(key, content);
    if (problem) {
      this.refuse(String(key), problem);
      return;
    }
    if (typeof content === "function") {
      this.terminalOnly("setWidget(component)");
      return;
    }
    if (content === undefined) {
      if (this.widgets.delete(key)) this.host.notify("ui/widget", { key });
      return;
    }
    const body = isWidgetView(content)
      ? { view: cleanView(content.view) }
      : { lines: (content as string[]).map((line) => stripAnsi(String(line)).replace(/[\r\n]+/g, " ")) };
    if (Buffer.byteLength(JSON.stringify(body), "utf8") > WIDGET_MAX_BYTES) {
      this.refuse(key, `Widget "${key}" refused: a widget holds at most ${WIDGET_MAX_BYTES / 1024} KiB`);
      return;
    }
    const placement = options?.placement === "belowEditor" ? "belowEditor" : "aboveEditor";
    // Set again, it moves to the end of its placement.
    this.widgets.delete(key);
    this.widgets.set(key, { placement, ...body });
    this.host.notify("ui/widget", { key, placement, ...body });
  }

  onViewEvent(handler: (event: ViewEvent) => void | Promise<void>): () => void {
    this.viewHandlers.add(handler);
    return () => this.viewHandlers.delete(handler);
  }

  /**
   * `ui/event`: a press or change in widget `widgetKey`'s view reaches every handler; one that fails becomes a
   * warning. A widget or control that is gone reaches nobody. A value that does not fit the control is refused.
   */
  async viewEvent(widgetKey: string, id: string, value: string | boolean | undefined): Promise<void> {
    const widget = this.widgets.get(widgetKey);
    const control = widget && "view" in widget ? findControl(widget.view, id) : undefined;
    if (!control) return;
    const misfit =
      control.type === "button"
        ? value !== undefined && "a button takes no value"
        : control.type === "toggle"
          ? typeof value !== "boolean" && "a toggle takes true or false"
          : typeof value !== "string"
            ? `a ${control.type} takes a string`
            : control.type === "select" &&
              !control.options.includes(value) &&
              "the value is not one of its options";
    if (misfit)
      throw invalidParams(`Control "${id}" of widget "${widgetKey}": ${misfit}`, { reason: "value" });
    const event: ViewEvent = { widgetKey, id, ...(value !== undefined ? { value } : {}) };
    for (const handler of [...this.viewHandlers]) {
      try {
        await handler({ ...event });
      } catch (error) {
        this.host.warn(
          `A view event handler failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }

  private widgetProblem(key: unknown, content: unknown): string | undefined {
    if (!validKey(key))
      return `Widget key "${String(key).slice(0, 40)}" must have 1 to ${KEY_MAX_CHARS} characters`;
    if (isWidgetView(content)) {
      const problem = viewProblem(content.view);
      if (problem) return `Widget "${key}" refused: ${problem}`;
    } else if (content !== undefined && typeof content !== "function" && !Array.isArray(content))
      return `Widget "${key}": give lines of text or {view}`;
    if (
      content !== undefined &&
      typeof content !== "function" &&
      !this.widgets.has(key) &&
      this.widgets.size >= MAX_WIDGETS
    )
      return `Widget "${key}" refused: a thread shows at most ${MAX_WIDGETS} widgets`;
    return undefined;
  }

  setTitle(title: string): void {
    const clean = cleanText(title);
    this.title = clean === "" ? undefined : clean;
    this.sendState();
  }

  setWorkingMessage(message?: string): void {
    this.workingMessage = message === undefined ? undefined : cleanText(message);
    this.sendState();
  }

  setWorkingVisible(visible: boolean): void {
    if (this.workingVisible === Boolean(visible)) return;
    this.workingVisible = Boolean(visible);
    this.sendState();
  }

  // Editor access does nothing: the client owns its editor.
  setEditorText(_text: string): void {}
  getEditorText(): string {
    return "";
  }
  pasteToEditor(_text: string): void {}

  setWorkingIndicator(): void {
    this.terminalOnly("setWorkingIndicator");
  }
  setHiddenThinkingLabel(): void {
    this.terminalOnly("setHiddenThinkingLabel");
  }
  setFooter(): void {
    this.terminalOnly("setFooter");
  }
  setHeader(): void {
    this.terminalOnly("setHeader");
  }
  setEditorComponent(_factory: EditorFactory | undefined): void {
    this.terminalOnly("setEditorComponent");
  }
  getEditorComponent(): EditorFactory | undefined {
    return undefined;
  }
  onTerminalInput(): () => void {
    this.terminalOnly("onTerminalInput");
    return () => {};
  }
  async custom<T>(): Promise<T | undefined> {
    this.terminalOnly("custom");
    return undefined;
  }
}

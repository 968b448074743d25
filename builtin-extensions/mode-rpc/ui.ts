/**
 * The extension UI sub-protocol. Dialogs (`select`, `confirm`, `input`, `editor`) go out as `extension_ui_request`
 * records with an id and wait for the client's `extension_ui_response` (or their timeout, or the end of input);
 * status surfaces go out fire-and-forget. What RPC cannot show (custom components) answers at once with
 * `undefined` and a warning notification, so an extension never waits forever. A widget given as a component
 * factory is rendered once to lines; what only a terminal draws (footer, header, editor component, working
 * indicator, raw input) is a no-op here. The theme is real: it returns ANSI-styled strings for widget lines.
 */
import { randomUUID } from "node:crypto";
import {
  type DialogOptions,
  type EditorFactory,
  type ExtensionUIContext,
  errorMessage,
  type NotifyLevel,
  ThemedUI,
  type UIComponentFactory,
  type WidgetOptions,
} from "@knightcodeai/cli/kit";

/** The width a component widget is rendered at: RPC has no terminal to ask. */
export const RPC_WIDGET_WIDTH = 80;

type Resolver = (response: Record<string, unknown> | undefined) => void;

export class RpcUI extends ThemedUI implements ExtensionUIContext {
  private readonly waiting = new Map<string, Resolver>();
  private inputClosed = false;
  private editorText = "";

  constructor(private readonly write: (record: unknown) => void) {
    super();
  }

  /** A client's answer to a dialog. Unknown ids are ignored (the dialog may have timed out). */
  answer(message: Record<string, unknown>): void {
    const id = typeof message.id === "string" ? message.id : "";
    const resolve = this.waiting.get(id);
    if (!resolve) return;
    this.waiting.delete(id);
    resolve(message);
  }

  /** No more answers can arrive: open dialogs resolve as cancelled. */
  closeInput(): void {
    this.inputClosed = true;
    for (const [id, resolve] of this.waiting) {
      this.waiting.delete(id);
      resolve(undefined);
    }
  }

  async select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined> {
    const response = await this.dialog("select", { title, options }, opts);
    const value = response?.value;
    return typeof value === "string" && options.includes(value) ? value : undefined;
  }

  async confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean> {
    const response = await this.dialog(
      "confirm",
      { title, ...(message !== undefined ? { message } : {}) },
      opts,
    );
    return response?.confirmed === true || response?.value === true;
  }

  async input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined> {
    const response = await this.dialog(
      "input",
      { title, ...(placeholder !== undefined ? { placeholder } : {}) },
      opts,
    );
    return typeof response?.value === "string" ? response.value : undefined;
  }

  async editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined> {
    const response = await this.dialog(
      "editor",
      { title, ...(prefill !== undefined ? { prefill } : {}) },
      opts,
    );
    return typeof response?.value === "string" ? response.value : undefined;
  }

  notify(message: string, level: NotifyLevel = "info"): void {
    this.fire("notify", { message, notifyType: level });
  }

  setStatus(key: string, text: string | undefined): void {
    this.fire("setStatus", { statusKey: key, statusText: text ?? null });
  }

  setWidget(key: string, content: string[] | UIComponentFactory | undefined, options?: WidgetOptions): void {
    const lines = typeof content === "function" ? this.renderWidget(key, content) : content;
    if (lines === null) return;
    if (lines !== undefined && !Array.isArray(lines)) {
      this.notify(`Widget "${key}": give lines of text or a component factory`, "warning");
      return;
    }
    this.fire("setWidget", {
      widgetKey: key,
      widgetLines: lines ?? null,
      widgetPlacement: options?.placement ?? "aboveEditor",
    });
  }

  /** Lines from one render of a component widget, or null (and a warning) when the component fails outside a terminal. */
  private renderWidget(key: string, factory: UIComponentFactory): string[] | null {
    try {
      const component = factory({ requestRender() {} }, this.themes.theme);
      const lines = component.render(RPC_WIDGET_WIDTH);
      component.dispose?.();
      return lines;
    } catch (error) {
      this.notify(`Widget "${key}" could not be drawn over RPC: ${errorMessage(error)}`, "warning");
      return null;
    }
  }

  setTitle(title: string): void {
    this.fire("setTitle", { title });
  }

  setWorkingMessage(message?: string): void {
    this.fire("setWorkingMessage", { message: message ?? null });
  }

  setEditorText(text: string): void {
    this.editorText = text;
    this.fire("set_editor_text", { text });
  }

  getEditorText(): string {
    return this.editorText;
  }

  /** RPC has no paste handling of its own: the text becomes the client's editor text. */
  pasteToEditor(text: string): void {
    this.setEditorText(text);
  }

  // What only a terminal draws: documented no-ops over RPC (docs/extensions.md).
  setWorkingVisible(_visible: boolean): void {}
  setWorkingIndicator(): void {}
  setHiddenThinkingLabel(): void {}
  setFooter(): void {}
  setHeader(): void {}
  setEditorComponent(_factory: EditorFactory | undefined): void {}

  getEditorComponent(): EditorFactory | undefined {
    return undefined;
  }

  /** RPC draws no views (a view widget arrives as its text lines), so no view event ever comes. */
  onViewEvent(): () => void {
    return () => {};
  }
  onTerminalInput(): () => void {
    return () => {};
  }

  async custom<T>(): Promise<T | undefined> {
    this.notify(
      "ctx.ui.custom() needs the interactive terminal; in RPC mode it returns undefined",
      "warning",
    );
    return undefined;
  }

  private fire(method: string, fields: Record<string, unknown>): void {
    this.write({ type: "extension_ui_request", id: randomUUID(), method, ...fields });
  }

  private dialog(
    method: string,
    fields: Record<string, unknown>,
    opts: DialogOptions = {},
  ): Promise<Record<string, unknown> | undefined> {
    if (this.inputClosed || opts.signal?.aborted) return Promise.resolve(undefined);
    const id = randomUUID();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (response: Record<string, unknown> | undefined) => {
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
        this.waiting.delete(id);
        resolve(response?.cancelled === true ? undefined : response);
      };
      const onAbort = () => finish(undefined);
      this.waiting.set(id, finish);
      if (opts.timeout !== undefined && opts.timeout > 0)
        timer = setTimeout(() => finish(undefined), opts.timeout);
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      this.write({
        type: "extension_ui_request",
        id,
        method,
        ...fields,
        ...(opts.timeout !== undefined ? { timeout: opts.timeout } : {}),
      });
    });
  }
}

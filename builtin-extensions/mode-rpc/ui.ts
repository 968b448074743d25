/**
 * The extension UI sub-protocol. Dialogs (`select`, `confirm`, `input`, `editor`) go out as `extension_ui_request`
 * records with an id and wait for the client's `extension_ui_response` (or their timeout, or the end of input);
 * status surfaces go out fire-and-forget. What RPC cannot show (custom components) answers at once with
 * `undefined` and a warning notification, so an extension never waits forever.
 */
import { randomUUID } from "node:crypto";
import type { DialogOptions, ExtensionUIContext, NotifyLevel, WidgetOptions } from "@knightcodeai/cli/kit";

type Resolver = (response: Record<string, unknown> | undefined) => void;

export class RpcUI implements ExtensionUIContext {
  private readonly waiting = new Map<string, Resolver>();
  private inputClosed = false;
  private editorText = "";

  constructor(private readonly write: (record: unknown) => void) {}

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

  setWidget(key: string, lines: string[] | undefined, options?: WidgetOptions): void {
    if (lines !== undefined && !Array.isArray(lines)) {
      this.notify(`Widget "${key}": RPC shows widgets as lines of text only`, "warning");
      return;
    }
    this.fire("setWidget", {
      widgetKey: key,
      widgetLines: lines ?? null,
      widgetPlacement: options?.placement ?? "aboveEditor",
    });
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

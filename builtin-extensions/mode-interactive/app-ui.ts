/**
 * `ctx.ui` in the full terminal UI: dialogs in place of the editor, statuses in the footer, widgets above and
 * below the editor, headers, footers and editors extensions supply, custom components in place of the editor or
 * as overlays with focus, the working row, and themes.
 */
import type {
  DialogOptions,
  EditorFactory,
  ExtensionUIContext,
  FooterFactory,
  NotifyLevel,
  TerminalInputHandler,
  UIComponent,
  UIComponentFactory,
  UIEditorComponent,
  UITheme,
  WidgetOptions,
  WorkingIndicatorOptions,
} from "@knightcodeai/cli/kit";
import { errorMessage } from "@knightcodeai/cli/kit";
import type { Component, OverlayHandle, OverlayOptions, SelectItem } from "@knightcodeai/cli/tui";
import { getEditorTheme } from "@knightcodeai/cli/tui";
import type { App } from "./app.js";
import { confirmDialog, editorDialog, inputDialog, selectDialog } from "./dialogs.js";
import { Fitted } from "./transcript.js";

interface CustomOptions {
  overlay?: boolean;
  overlayOptions?: OverlayOptions | (() => OverlayOptions);
  onHandle?: (handle: OverlayHandle) => void;
}

type CustomFactory<T> = (
  tui: App["tui"],
  theme: UITheme,
  keybindings: unknown,
  done: (result: T) => void,
) => UIComponent | Promise<UIComponent>;

export class AppUI implements ExtensionUIContext {
  private readonly inputHandlers = new Set<TerminalInputHandler>();
  private readonly widgets = new Map<
    string,
    { component: Component; placement: "aboveEditor" | "belowEditor" }
  >();
  private readonly closers = new Set<() => void>();
  private editorFactory: EditorFactory | undefined;
  private customFooter: Component | undefined;
  private customHeader: Component | undefined;

  constructor(private readonly app: App) {}

  /** Raw keys for `onTerminalInput` listeners; `undefined` when one consumed the key. */
  terminalInput(data: string): string | undefined {
    for (const handler of [...this.inputHandlers]) {
      try {
        const result = handler(data);
        if (result?.consume) return undefined;
        if (typeof result?.data === "string") data = result.data;
      } catch (error) {
        this.notify(`A terminal input listener failed: ${errorMessage(error)}`, "error");
      }
    }
    return data;
  }

  /** Dismisses every open dialog and component (the person quit). */
  closeAll(): void {
    for (const close of [...this.closers]) close();
  }

  /**
   * Shows a component over the editor until `finish` runs, a timeout passes or the signal aborts; resolves with
   * what `finish` got, or `fallback`.
   */
  private dialog<T>(
    build: (finish: (value: T) => void) => Component,
    fallback: T,
    opts: DialogOptions = {},
  ): Promise<T> {
    if (opts.signal?.aborted) return Promise.resolve(fallback);
    return new Promise<T>((resolve) => {
      let component: Component | undefined;
      let timer: NodeJS.Timeout | undefined;
      const finish = (value: T) => {
        if (!this.closers.delete(close)) return;
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener("abort", close);
        if (component) this.app.closeLayer(component);
        resolve(value);
      };
      const close = () => finish(fallback);
      this.closers.add(close);
      component = build(finish);
      if (opts.timeout) timer = setTimeout(close, opts.timeout);
      opts.signal?.addEventListener("abort", close, { once: true });
      this.app.openLayer(component);
    });
  }

  /** A list dialog with values, descriptions and a preselected item, for the mode's own pickers. */
  pick(
    title: string,
    items: SelectItem[],
    options: { initial?: string; filterable?: boolean; maxVisible?: number } = {},
  ): Promise<string | undefined> {
    return this.dialog<string | undefined>(
      (finish) => selectDialog(() => this.theme, title, items, finish, options),
      undefined,
    );
  }

  select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined> {
    const items = options.map((o) => ({ value: o, label: o }));
    return this.dialog<string | undefined>(
      (finish) => selectDialog(() => this.theme, title, items, finish, { filterable: options.length > 10 }),
      undefined,
      opts,
    );
  }

  confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean> {
    return this.dialog((finish) => confirmDialog(() => this.theme, title, message, finish), false, opts);
  }

  input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined> {
    return this.dialog<string | undefined>(
      (finish) => inputDialog(() => this.theme, title, placeholder, finish),
      undefined,
      opts,
    );
  }

  /** A line input that shows dots, not what is typed (an API key). */
  secret(title: string, hint?: string): Promise<string | undefined> {
    return this.dialog<string | undefined>(
      (finish) => inputDialog(() => this.theme, title, hint, finish, { secret: true }),
      undefined,
    );
  }

  editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined> {
    return this.dialog<string | undefined>(
      (finish) => editorDialog(this.app.tui, () => this.theme, title, prefill, finish),
      undefined,
      opts,
    );
  }

  notify(message: string, level: NotifyLevel = "info"): void {
    this.app.notice(message, level);
  }

  setStatus(key: string, text: string | undefined): void {
    if (text === undefined) this.app.footerState.statuses.delete(key);
    else this.app.footerState.statuses.set(key, text);
    this.app.footer.changed();
    this.app.render();
  }

  setWidget(key: string, content: string[] | UIComponentFactory | undefined, options?: WidgetOptions): void {
    const old = this.widgets.get(key);
    if (old) (old.component as { dispose?(): void }).dispose?.();
    this.widgets.delete(key);
    if (content !== undefined) {
      const component = this.build(`widget "${key}"`, () =>
        typeof content === "function"
          ? new Fitted(content(this.app.tui, this.theme))
          : new Fitted({ render: () => content, invalidate() {} }),
      );
      if (component) this.widgets.set(key, { component, placement: options?.placement ?? "aboveEditor" });
    }
    this.app.above.clear();
    this.app.below.clear();
    for (const { component, placement } of this.widgets.values())
      (placement === "belowEditor" ? this.app.below : this.app.above).addChild(component);
    this.app.render();
  }

  setHeader(factory: UIComponentFactory | undefined): void {
    (this.customHeader as { dispose?(): void } | undefined)?.dispose?.();
    this.customHeader = factory
      ? this.build("header", () => new Fitted(factory(this.app.tui, this.theme)))
      : undefined;
    this.app.setHeader(this.customHeader);
  }

  setFooter(factory: FooterFactory | undefined): void {
    (this.customFooter as { dispose?(): void } | undefined)?.dispose?.();
    this.customFooter = factory
      ? this.build("footer", () => new Fitted(factory(this.app.tui, this.theme, this.app.footerState)))
      : undefined;
    this.app.footerSlot.clear();
    this.app.footerSlot.addChild(this.customFooter ?? this.app.footer);
    this.app.render();
  }

  /** Runs an extension's factory; a throwing one is reported and leaves the mode's own part in place. */
  private build(what: string, make: () => Component): Component | undefined {
    try {
      return make();
    } catch (error) {
      this.notify(`The ${what} could not be drawn: ${errorMessage(error)}`, "error");
      return undefined;
    }
  }

  setTitle(title: string): void {
    this.app.tui.terminal.setTitle(title);
  }

  setWorkingMessage(message?: string): void {
    this.app.working.message = message;
    this.app.render();
  }

  setWorkingVisible(visible: boolean): void {
    this.app.working.visible = visible;
    this.app.render();
  }

  setWorkingIndicator(options?: WorkingIndicatorOptions): void {
    this.app.working.setIndicator(options);
  }

  setHiddenThinkingLabel(label?: string): void {
    this.app.hiddenThinkingLabel = label ?? "Thinking…";
    this.app.transcript.invalidate();
    this.app.render();
  }

  setEditorText(text: string): void {
    this.app.editor.setText(text);
    this.app.render();
  }

  getEditorText(): string {
    return this.app.editor.getText();
  }

  pasteToEditor(text: string): void {
    // As a bracketed paste, so a large one becomes the editor's placeholder as a typed paste would.
    this.app.editor.handleInput(`\x1b[200~${text}\x1b[201~`);
    this.app.render();
  }

  setEditorComponent(factory: EditorFactory | undefined): void {
    const editor = factory
      ? this.build("editor", () => {
          const made = factory(this.app.tui, getEditorTheme(this.theme), this.app.keys.manager);
          if (typeof made?.getText !== "function" || typeof made.setText !== "function")
            throw new Error("an editor component needs getText() and setText()");
          return made;
        })
      : undefined;
    this.editorFactory = editor ? factory : undefined;
    this.app.replaceEditor((editor as (UIEditorComponent & Component) | undefined) ?? this.app.defaultEditor);
  }

  getEditorComponent(): EditorFactory | undefined {
    return this.editorFactory;
  }

  /** The terminal draws a view widget as text lines (the SDK converts it), so no view event ever comes. */
  onViewEvent(): () => void {
    return () => {};
  }

  onTerminalInput(handler: TerminalInputHandler): () => void {
    this.inputHandlers.add(handler);
    return () => {
      this.inputHandlers.delete(handler);
    };
  }

  get theme(): UITheme {
    return this.app.themes.theme;
  }

  getAllThemes(): { name: string; path: string | undefined }[] {
    const all = this.app.themes.all();
    const current = this.app.themes.theme as UITheme & { sourcePath?: string };
    if (current.name && !all.some((t) => t.name === current.name))
      all.push({ name: current.name, path: current.sourcePath });
    return all;
  }

  getTheme(name: string): UITheme | undefined {
    return this.app.themes.get(name);
  }

  setTheme(theme: string | UITheme): { success: boolean; error?: string } {
    return this.app.themes.set(theme);
  }

  getToolsExpanded(): boolean {
    return this.app.toolsExpanded;
  }

  setToolsExpanded(expanded: boolean): void {
    this.app.toolsExpanded = expanded;
    this.app.transcript.invalidate();
    this.app.render();
  }

  /**
   * A component with the keys until it calls `done`: in place of the editor, or over the screen with
   * `{overlay: true}` (`overlayOptions` place it, `onHandle` gets the handle to hide or refocus it).
   */
  async custom<T>(factory: unknown, options?: Record<string, unknown>): Promise<T | undefined> {
    if (typeof factory !== "function") throw new TypeError("ctx.ui.custom() needs a factory function");
    const make = factory as CustomFactory<T>;
    const opts = (options ?? {}) as CustomOptions;
    return new Promise<T | undefined>((resolve, reject) => {
      let component: Component | undefined;
      let handle: OverlayHandle | undefined;
      let settled = false;
      const finish = (value: T | undefined) => {
        if (settled) return;
        settled = true;
        this.closers.delete(close);
        if (handle) handle.hide();
        else if (component) this.app.closeLayer(component);
        (component as { dispose?(): void } | undefined)?.dispose?.();
        this.app.render();
        resolve(value);
      };
      const close = () => finish(undefined);
      this.closers.add(close);
      Promise.resolve()
        .then(() => make(this.app.tui, this.theme, this.app.keys.manager, (result) => finish(result)))
        .then((made) => {
          if (settled) return;
          component = new Fitted(made);
          if (opts.overlay) {
            const placement =
              typeof opts.overlayOptions === "function" ? opts.overlayOptions() : opts.overlayOptions;
            handle = this.app.tui.showOverlay(component, placement);
            opts.onHandle?.(handle);
            this.app.render();
          } else {
            this.app.openLayer(component);
          }
        })
        .catch((error: unknown) => {
          this.closers.delete(close);
          settled = true;
          reject(error);
        });
    });
  }
}

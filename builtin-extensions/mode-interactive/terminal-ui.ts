/**
 * `ctx.ui` in the terminal: dialogs ask on the input line (a number for select, y/n for confirm, a line for input,
 * lines up to a single "." for the editor); notifications and status are printed. Answers come through `ask`,
 * which the controller connects to its line reader.
 *
 * This mode prints line after line; it keeps nothing fixed on screen. So a component widget or header is rendered
 * once, at the terminal's width, and printed; a footer, an editor component, the working indicator and the hidden
 * thinking label are remembered but not drawn (the full terminal UI draws them); terminal-input listeners see each
 * key the terminal sends but cannot take it from the line reader.
 */
import {
  type DialogOptions,
  type EditorFactory,
  type ExtensionUIContext,
  errorMessage,
  type FooterFactory,
  type NotifyLevel,
  type TerminalInputHandler,
  ThemedUI,
  type UIComponentFactory,
  type WidgetOptions,
  type WorkingIndicatorOptions,
} from "@knightcodeai/cli/kit";
import { DetachedUI } from "@knightcodeai/cli/tui";
import { bold, cyan, dim, red } from "./view.js";

export type Ask = (question: string, opts?: DialogOptions) => Promise<string | undefined>;

export class TerminalUI extends ThemedUI implements ExtensionUIContext {
  private editorText = "";
  private readonly inputHandlers = new Set<TerminalInputHandler>();
  private workingVisible = true;
  private editorFactory: EditorFactory | undefined;
  /** What extensions set that this mode does not draw; kept for the full terminal UI and for inspection. */
  readonly undrawn: {
    footer?: FooterFactory;
    workingIndicator?: WorkingIndicatorOptions;
    hiddenThinkingLabel?: string;
  } = {};

  constructor(
    private readonly write: (text: string) => void,
    private readonly ask: Ask,
    private readonly columns: () => number = () => 80,
  ) {
    super();
  }

  /** Raw key data from the terminal, for the `onTerminalInput` listeners. */
  terminalInput(data: string): void {
    for (const handler of [...this.inputHandlers]) {
      try {
        const result = handler(data);
        if (result?.consume) return;
        if (typeof result?.data === "string") data = result.data;
      } catch (error) {
        this.notify(`A terminal input listener failed: ${errorMessage(error)}`, "error");
      }
    }
  }

  async select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined> {
    const list = options.map((o, i) => `  ${cyan(String(i + 1))}. ${o}`).join("\n");
    const answer = await this.ask(`${bold(title)}\n${list}\nChoose 1-${options.length}: `, opts);
    const index = Number(answer?.trim()) - 1;
    return Number.isInteger(index) && index >= 0 && index < options.length ? options[index] : undefined;
  }

  async confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean> {
    const answer = await this.ask(`${bold(title)}${message ? ` ${message}` : ""} [y/N] `, opts);
    return /^y(es)?$/i.test(answer?.trim() ?? "");
  }

  async input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined> {
    return this.ask(`${bold(title)}${placeholder ? dim(` (${placeholder})`) : ""}: `, opts);
  }

  async editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined> {
    this.write(
      `${bold(title)} ${dim('(end with a line that has only ".")')}\n${prefill ? `${prefill}\n` : ""}`,
    );
    const lines: string[] = [];
    for (;;) {
      const line = await this.ask("", opts);
      if (line === undefined) return undefined;
      if (line === ".") return lines.join("\n");
      lines.push(line);
    }
  }

  notify(message: string, level: NotifyLevel = "info"): void {
    this.write(`${level === "error" ? red("✖") : level === "warning" ? red("!") : cyan("ℹ")} ${message}\n`);
  }

  setStatus(key: string, text: string | undefined): void {
    if (text !== undefined) this.write(dim(`[${key}] ${text}\n`));
  }

  setWidget(key: string, content: string[] | UIComponentFactory | undefined, _options?: WidgetOptions): void {
    const lines = typeof content === "function" ? this.renderOnce(key, content) : content;
    if (lines?.length) this.write(`${dim(`┌ ${key}`)}\n${lines.map((l) => `${dim("│")} ${l}`).join("\n")}\n`);
  }

  setHeader(factory: UIComponentFactory | undefined): void {
    const lines = factory ? this.renderOnce("header", factory) : undefined;
    if (lines?.length) this.write(`${lines.join("\n")}\n`);
  }

  setFooter(factory: FooterFactory | undefined): void {
    this.undrawn.footer = factory;
  }

  private renderOnce(key: string, factory: UIComponentFactory): string[] | undefined {
    try {
      const component = factory(new DetachedUI({ columns: this.columns(), rows: 24 }), this.themes.theme);
      // Printed lines have nothing to overwrite: the padding some components add to the width goes.
      const lines = component.render(Math.max(20, this.columns())).map((line) => line.trimEnd());
      component.dispose?.();
      return lines;
    } catch (error) {
      this.notify(`"${key}" could not be drawn in this terminal mode: ${errorMessage(error)}`, "warning");
      return undefined;
    }
  }

  setTitle(title: string): void {
    this.write(`\x1b]0;${title}\x07`);
  }

  setWorkingMessage(message?: string): void {
    if (message && this.workingVisible) this.write(dim(`${message}\n`));
  }

  setWorkingVisible(visible: boolean): void {
    this.workingVisible = visible;
  }

  setWorkingIndicator(options?: WorkingIndicatorOptions): void {
    this.undrawn.workingIndicator = options;
  }

  setHiddenThinkingLabel(label?: string): void {
    this.undrawn.hiddenThinkingLabel = label;
  }

  setEditorText(text: string): void {
    this.editorText = text;
  }

  getEditorText(): string {
    return this.editorText;
  }

  pasteToEditor(text: string): void {
    this.editorText += text;
  }

  setEditorComponent(factory: EditorFactory | undefined): void {
    this.editorFactory = factory;
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

  async custom<T>(): Promise<T | undefined> {
    this.notify("This extension needs the full terminal UI, which this version does not have yet", "warning");
    return undefined;
  }
}

/**
 * `ctx.ui` in the terminal: dialogs ask on the input line (a number for select, y/n for confirm, a line for input,
 * lines up to a single "." for the editor); notifications and status are printed. Answers come through `ask`,
 * which the controller connects to its line reader.
 */
import type { DialogOptions, ExtensionUIContext, NotifyLevel, WidgetOptions } from "@knightcodeai/cli/kit";
import { bold, cyan, dim, red } from "./view.js";

export type Ask = (question: string, opts?: DialogOptions) => Promise<string | undefined>;

export class TerminalUI implements ExtensionUIContext {
  private editorText = "";

  constructor(
    private readonly write: (text: string) => void,
    private readonly ask: Ask,
  ) {}

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

  setWidget(key: string, lines: string[] | undefined, _options?: WidgetOptions): void {
    if (lines?.length) this.write(`${dim(`┌ ${key}`)}\n${lines.map((l) => `${dim("│")} ${l}`).join("\n")}\n`);
  }

  setTitle(title: string): void {
    this.write(`\x1b]0;${title}\x07`);
  }

  setWorkingMessage(message?: string): void {
    if (message) this.write(dim(`${message}\n`));
  }

  setEditorText(text: string): void {
    this.editorText = text;
  }

  getEditorText(): string {
    return this.editorText;
  }

  async custom<T>(): Promise<T | undefined> {
    this.notify("This extension needs the full terminal UI, which this version does not have yet", "warning");
    return undefined;
  }
}

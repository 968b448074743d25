/**
 * Editor: multi-line text input. Printable keys insert, enter submits (shift+enter or alt+enter starts a new
 * line), backspace/delete, arrows, home/end (ctrl+a/ctrl+e), ctrl+u/ctrl+k delete to the line's start/end, ctrl+w
 * or alt+backspace delete a word, a bracketed paste inserts its text, and up/down on an empty editor walk the
 * history. It renders a border line, the text with the cursor, and a border line. Minimal next to the full
 * terminal UI's editor: no autocomplete, undo or kill ring yet.
 */
import type { UIEditorComponent, UIEditorTheme, UIHost } from "../../../kernel/index.js";
import { CURSOR_MARKER, type Focusable } from "./component.js";
import { decodeKittyPrintable, matchesKey } from "./keys.js";
import type { SelectListTheme } from "./select-list.js";
import { graphemeWidth, tokens, truncateToWidth, visibleWidth } from "./width.js";

export interface EditorTheme extends UIEditorTheme {
  selectList: SelectListTheme;
}

export interface EditorOptions {
  paddingX?: number;
  autocompleteMaxVisible?: number;
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

export class Editor implements UIEditorComponent, Focusable {
  focused = false;
  borderColor: (text: string) => string;
  onSubmit?: (text: string) => void;
  onChange?: (text: string) => void;
  disableSubmit = false;
  protected tui: UIHost;
  private lines: string[] = [""];
  private line = 0;
  private col = 0;
  private paddingX: number;
  private autocompleteMaxVisible: number;
  private history: string[] = [];
  private historyIndex = -1;
  private pasteBuffer: string | undefined;

  constructor(tui: UIHost, theme: EditorTheme, options: EditorOptions = {}) {
    this.tui = tui;
    this.borderColor = theme?.borderColor ?? ((text: string) => text);
    this.paddingX = options.paddingX ?? 0;
    this.autocompleteMaxVisible = options.autocompleteMaxVisible ?? 5;
  }

  getPaddingX(): number {
    return this.paddingX;
  }

  setPaddingX(padding: number): void {
    this.paddingX = Math.max(0, padding);
  }

  getAutocompleteMaxVisible(): number {
    return this.autocompleteMaxVisible;
  }

  setAutocompleteMaxVisible(maxVisible: number): void {
    this.autocompleteMaxVisible = maxVisible;
  }

  /** Autocomplete is the full terminal UI's; a provider set here is accepted and not consulted yet. */
  setAutocompleteProvider(_provider: unknown): void {}

  isShowingAutocomplete(): boolean {
    return false;
  }

  addToHistory(text: string): void {
    if (text.trim() && this.history[0] !== text) this.history.unshift(text);
  }

  getText(): string {
    return this.lines.join("\n");
  }

  getExpandedText(): string {
    return this.getText();
  }

  getLines(): string[] {
    return [...this.lines];
  }

  getCursor(): { line: number; col: number } {
    return { line: this.line, col: this.col };
  }

  setText(text: string): void {
    this.lines = text.replace(/\r\n?/g, "\n").split("\n");
    this.line = this.lines.length - 1;
    this.col = this.lines[this.line]!.length;
    this.changed();
  }

  insertTextAtCursor(text: string): void {
    const normalized = text.replace(/\r\n?/g, "\n");
    const current = this.lines[this.line]!;
    const parts = `${current.slice(0, this.col)}${normalized}${current.slice(this.col)}`.split("\n");
    const tailLength = current.length - this.col;
    this.lines.splice(this.line, 1, ...parts);
    this.line += parts.length - 1;
    this.col = this.lines[this.line]!.length - tailLength;
    this.changed();
  }

  invalidate(): void {}

  render(width: number): string[] {
    const border = this.borderColor("─".repeat(Math.max(1, width)));
    const pad = " ".repeat(this.paddingX);
    const inner = Math.max(1, width - this.paddingX * 2);
    const body = this.lines.map((text, i) => {
      if (i !== this.line || !this.focused) return pad + truncateToWidth(text, inner);
      const before = text.slice(0, this.col);
      const at = [...text.slice(this.col)][0] ?? " ";
      const after = text.slice(this.col + (at === " " && this.col >= text.length ? 0 : at.length));
      return `${pad}${before}${CURSOR_MARKER}\x1b[7m${at}\x1b[27m${after}`;
    });
    return [border, ...body, border];
  }

  handleInput(data: string): void {
    if (this.pasteBuffer !== undefined || data.startsWith(PASTE_START)) {
      this.takePaste(data);
      return;
    }
    if (matchesKey(data, "shift+enter") || matchesKey(data, "alt+enter") || data === "\n") {
      this.insertTextAtCursor("\n");
    } else if (matchesKey(data, "enter")) {
      this.submit();
    } else if (matchesKey(data, "backspace") || matchesKey(data, "ctrl+h")) {
      this.backspace();
    } else if (matchesKey(data, "delete") || (matchesKey(data, "ctrl+d") && this.getText() !== "")) {
      this.deleteForward();
    } else if (matchesKey(data, "left") || matchesKey(data, "ctrl+b")) {
      this.moveHorizontally(-1);
    } else if (matchesKey(data, "right") || matchesKey(data, "ctrl+f")) {
      this.moveHorizontally(1);
    } else if (matchesKey(data, "up")) {
      this.moveVertically(-1);
    } else if (matchesKey(data, "down")) {
      this.moveVertically(1);
    } else if (matchesKey(data, "home") || matchesKey(data, "ctrl+a")) {
      this.col = 0;
    } else if (matchesKey(data, "end") || matchesKey(data, "ctrl+e")) {
      this.col = this.lines[this.line]!.length;
    } else if (matchesKey(data, "ctrl+u")) {
      this.lines[this.line] = this.lines[this.line]!.slice(this.col);
      this.col = 0;
      this.changed();
    } else if (matchesKey(data, "ctrl+k")) {
      this.lines[this.line] = this.lines[this.line]!.slice(0, this.col);
      this.changed();
    } else if (matchesKey(data, "ctrl+w") || matchesKey(data, "alt+backspace")) {
      this.deleteWordBackwards();
    } else if (this.isPrintable(data)) {
      this.insertTextAtCursor(data);
    } else {
      const typed = decodeKittyPrintable(data);
      if (typed !== undefined) this.insertTextAtCursor(typed);
    }
  }

  private isPrintable(data: string): boolean {
    if (data.includes("\x1b")) return false;
    for (const token of tokens(data)) if (graphemeWidth(token.text) === 0) return false;
    return data.length > 0;
  }

  private takePaste(data: string): void {
    this.pasteBuffer = (this.pasteBuffer ?? "") + data;
    const end = this.pasteBuffer.indexOf(PASTE_END);
    if (end < 0) return;
    const text = this.pasteBuffer.slice(PASTE_START.length, end);
    const rest = this.pasteBuffer.slice(end + PASTE_END.length);
    this.pasteBuffer = undefined;
    this.insertTextAtCursor(text.replace(/\t/g, "    "));
    if (rest) this.handleInput(rest);
  }

  private submit(): void {
    if (this.disableSubmit) return;
    const text = this.getText();
    this.historyIndex = -1;
    this.lines = [""];
    this.line = 0;
    this.col = 0;
    this.onChange?.("");
    this.onSubmit?.(text);
  }

  private backspace(): void {
    if (this.col > 0) {
      const current = this.lines[this.line]!;
      const before = [...current.slice(0, this.col)];
      const removed = before.pop() ?? "";
      this.lines[this.line] = before.join("") + current.slice(this.col);
      this.col -= removed.length;
    } else if (this.line > 0) {
      const current = this.lines.splice(this.line, 1)[0]!;
      this.line--;
      this.col = this.lines[this.line]!.length;
      this.lines[this.line] += current;
    } else return;
    this.changed();
  }

  private deleteForward(): void {
    const current = this.lines[this.line]!;
    if (this.col < current.length) {
      const next = [...current.slice(this.col)][0]!;
      this.lines[this.line] = current.slice(0, this.col) + current.slice(this.col + next.length);
    } else if (this.line < this.lines.length - 1) {
      this.lines[this.line] = current + this.lines.splice(this.line + 1, 1)[0]!;
    } else return;
    this.changed();
  }

  private deleteWordBackwards(): void {
    const current = this.lines[this.line]!;
    const before = current.slice(0, this.col).replace(/\S+\s*$|\s+$/, "");
    this.lines[this.line] = before + current.slice(this.col);
    this.col = before.length;
    this.changed();
  }

  private moveHorizontally(step: -1 | 1): void {
    const current = this.lines[this.line]!;
    if (step < 0 && this.col > 0) this.col -= [...current.slice(0, this.col)].pop()!.length;
    else if (step > 0 && this.col < current.length) this.col += [...current.slice(this.col)][0]!.length;
    else if (step < 0 && this.line > 0) {
      this.line--;
      this.col = this.lines[this.line]!.length;
    } else if (step > 0 && this.line < this.lines.length - 1) {
      this.line++;
      this.col = 0;
    }
  }

  private moveVertically(step: -1 | 1): void {
    const target = this.line + step;
    if (target >= 0 && target < this.lines.length) {
      const column = visibleWidth(this.lines[this.line]!.slice(0, this.col));
      this.line = target;
      this.col = this.columnToIndex(this.lines[target]!, column);
      return;
    }
    // Past the first or last line: walk the history (newest first), as a shell does.
    const next = this.historyIndex - step;
    if (next < -1 || next >= this.history.length) return;
    if (this.historyIndex === -1 && this.getText() !== "") return;
    this.historyIndex = next;
    this.setText(next === -1 ? "" : this.history[next]!);
  }

  private columnToIndex(text: string, column: number): number {
    let width = 0;
    let index = 0;
    for (const ch of text) {
      if (width >= column) break;
      width += visibleWidth(ch);
      index += ch.length;
    }
    return index;
  }

  private changed(): void {
    this.onChange?.(this.getText());
    this.tui.requestRender();
  }
}

/**
 * Input: a one-line text field. Typing inserts, enter calls `onSubmit`, escape `onEscape`; left/right, home/end
 * (ctrl+a/ctrl+e), backspace/delete, ctrl+u/ctrl+k/ctrl+w delete, a bracketed paste inserts its first line's worth
 * with newlines as spaces. When the value is wider than the line it scrolls to keep the cursor in view.
 */
import { type Component, CURSOR_MARKER, type Focusable } from "./component.js";
import { decodeKittyPrintable, matchesKey } from "./keys.js";
import { graphemeWidth, tokens, visibleWidth } from "./width.js";

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

export class Input implements Component, Focusable {
  focused = false;
  onSubmit?: (value: string) => void;
  onEscape?: () => void;
  private value = "";
  private cursor = 0;
  private paste: string | undefined;

  getValue(): string {
    return this.value;
  }

  setValue(value: string): void {
    this.value = value.replace(/[\r\n]+/g, " ");
    this.cursor = this.value.length;
  }

  invalidate(): void {}

  handleInput(data: string): void {
    if (this.paste !== undefined || data.startsWith(PASTE_START)) {
      this.paste = (this.paste ?? "") + data;
      const end = this.paste.indexOf(PASTE_END);
      if (end < 0) return;
      this.insert(this.paste.slice(PASTE_START.length, end).replace(/[\r\n\t]+/g, " "));
      this.paste = undefined;
      return;
    }
    if (matchesKey(data, "enter")) this.onSubmit?.(this.value);
    else if (matchesKey(data, "escape")) this.onEscape?.();
    else if (matchesKey(data, "backspace")) {
      if (this.cursor === 0) return;
      const removed = [...this.value.slice(0, this.cursor)].pop()!;
      this.value = this.value.slice(0, this.cursor - removed.length) + this.value.slice(this.cursor);
      this.cursor -= removed.length;
    } else if (matchesKey(data, "delete")) {
      const next = [...this.value.slice(this.cursor)][0];
      if (next) this.value = this.value.slice(0, this.cursor) + this.value.slice(this.cursor + next.length);
    } else if (matchesKey(data, "left")) {
      if (this.cursor > 0) this.cursor -= [...this.value.slice(0, this.cursor)].pop()!.length;
    } else if (matchesKey(data, "right")) {
      const next = [...this.value.slice(this.cursor)][0];
      if (next) this.cursor += next.length;
    } else if (matchesKey(data, "home") || matchesKey(data, "ctrl+a")) this.cursor = 0;
    else if (matchesKey(data, "end") || matchesKey(data, "ctrl+e")) this.cursor = this.value.length;
    else if (matchesKey(data, "ctrl+u")) {
      this.value = this.value.slice(this.cursor);
      this.cursor = 0;
    } else if (matchesKey(data, "ctrl+k")) this.value = this.value.slice(0, this.cursor);
    else if (matchesKey(data, "ctrl+w") || matchesKey(data, "alt+backspace")) {
      const before = this.value.slice(0, this.cursor).replace(/\S+\s*$|\s+$/, "");
      this.value = before + this.value.slice(this.cursor);
      this.cursor = before.length;
    } else if (!data.includes("\x1b") && [...tokens(data)].every((t) => graphemeWidth(t.text) > 0))
      this.insert(data);
    else {
      const typed = decodeKittyPrintable(data);
      if (typed !== undefined) this.insert(typed);
    }
  }

  render(width: number): string[] {
    const prompt = "> ";
    const room = Math.max(1, width - prompt.length);
    let start = 0;
    // Scroll so the cursor (and one cell for it) fits.
    while (visibleWidth(this.value.slice(start, this.cursor)) >= room)
      start += [...this.value.slice(start)][0]!.length;
    const before = this.value.slice(start, this.cursor);
    const at = [...this.value.slice(this.cursor)][0] ?? " ";
    let after = this.value.slice(this.cursor + (this.cursor < this.value.length ? at.length : 0));
    const used = visibleWidth(before) + graphemeWidth(at);
    while (after && used + visibleWidth(after) > room) after = [...after].slice(0, -1).join("");
    const cursor = this.focused ? `${CURSOR_MARKER}\x1b[7m${at}\x1b[27m` : at === " " && !after ? "" : at;
    return [`${prompt}${before}${cursor}${after}`];
  }

  private insert(text: string): void {
    this.value = this.value.slice(0, this.cursor) + text + this.value.slice(this.cursor);
    this.cursor += text.length;
  }
}

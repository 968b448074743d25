/**
 * Dialogs shown in place of the editor: a choice from a list, yes or no, a line of text, several lines of text.
 * Each has a title between two rules and a hint line; Escape dismisses it. `done` runs once with the answer
 * (`undefined` when dismissed).
 */
import type { UITheme } from "@knightcodeai/cli/kit";
import {
  asTUI,
  type Component,
  Editor,
  type Focusable,
  fuzzyFilter,
  getEditorTheme,
  getSelectListTheme,
  Input,
  matchesKey,
  type SelectItem,
  SelectList,
  type TUISurface,
  truncateToWidth,
  wrapTextWithAnsi,
} from "@knightcodeai/cli/tui";

/** A titled frame around a body component; keys go to the body. */
export class Framed implements Component, Focusable {
  private isFocused = false;

  constructor(
    private readonly theme: () => UITheme,
    private readonly title: string,
    public body: Component,
    private readonly hint: string,
    private readonly onKey?: (data: string) => boolean,
  ) {}

  get focused(): boolean {
    return this.isFocused;
  }

  set focused(value: boolean) {
    this.isFocused = value;
    if ("focused" in this.body) (this.body as Component & Focusable).focused = value;
  }

  invalidate(): void {
    this.body.invalidate();
  }

  handleInput(data: string): void {
    if (this.onKey?.(data)) return;
    this.body.handleInput?.(data);
  }

  render(width: number): string[] {
    const t = this.theme();
    const rule = t.fg("borderAccent", "─".repeat(Math.max(1, width)));
    const title = wrapTextWithAnsi(t.bold(this.title), Math.max(10, width - 1)).map((l) => ` ${l}`);
    return [
      rule,
      ...title,
      ...this.body.render(width),
      truncateToWidth(t.fg("dim", ` ${this.hint}`), width),
      rule,
    ].map((line) => truncateToWidth(line, width));
  }
}

export function selectDialog(
  theme: () => UITheme,
  title: string,
  items: SelectItem[],
  done: (value: string | undefined) => void,
  options: { maxVisible?: number; initial?: string; filterable?: boolean } = {},
): Framed {
  const list = (shown: SelectItem[]): Component => {
    if (shown.length === 0)
      return { invalidate() {}, render: () => [theme().fg("muted", `  nothing matches "${filter}"`)] };
    const made = new SelectList(shown, options.maxVisible ?? 10, getSelectListTheme(theme()));
    made.onSelect = (item) => done(item.value);
    made.onCancel = () => done(undefined);
    return made;
  };
  let filter = "";
  const first = list(items);
  const initial = options.initial ? items.findIndex((i) => i.value === options.initial) : -1;
  if (initial >= 0) (first as SelectList).setSelectedIndex(initial);
  // Typing narrows the list (fuzzy, on the labels); backspace widens it again.
  const typed = options.filterable
    ? (data: string) => {
        if (matchesKey(data, "backspace")) filter = filter.slice(0, -1);
        else if (data.length === 1 && data >= " " && data !== "\x7f") filter += data;
        else if (frame.body instanceof SelectList || !matchesKey(data, "escape")) return false;
        else {
          done(undefined);
          return true;
        }
        frame.body = list(filter ? fuzzyFilter(items, filter, (i) => i.label) : items);
        return true;
      }
    : undefined;
  const hint = `↑↓ move · enter selects · esc cancels${options.filterable ? " · type to filter" : ""}`;
  const frame = new Framed(theme, title, first, hint, typed);
  return frame;
}

export function confirmDialog(
  theme: () => UITheme,
  title: string,
  message: string | undefined,
  done: (value: boolean) => void,
): Framed {
  const list = new SelectList(
    [
      { value: "yes", label: "Yes" },
      { value: "no", label: "No" },
    ],
    2,
    getSelectListTheme(theme()),
  );
  list.onSelect = (item) => done(item.value === "yes");
  list.onCancel = () => done(false);
  const keys = (data: string) => {
    if (data === "y" || data === "Y") done(true);
    else if (data === "n" || data === "N") done(false);
    else return false;
    return true;
  };
  return new Framed(theme, message ? `${title}\n${message}` : title, list, "y/n · enter · esc cancels", keys);
}

export function inputDialog(
  theme: () => UITheme,
  title: string,
  placeholder: string | undefined,
  done: (value: string | undefined) => void,
  options: { secret?: boolean } = {},
): Framed {
  const input = new Input();
  input.onSubmit = (value) => done(value);
  input.onEscape = () => done(undefined);
  const hint = `${placeholder ? `${placeholder} · ` : ""}enter submits · esc cancels`;
  return new Framed(theme, title, options.secret ? new Masked(input) : input, hint);
}

/** A line input that shows a dot for each character typed (an API key), never the text. */
class Masked implements Component, Focusable {
  constructor(private readonly input: Input) {}

  get focused(): boolean {
    return this.input.focused;
  }

  set focused(value: boolean) {
    this.input.focused = value;
  }

  handleInput(data: string): void {
    this.input.handleInput(data);
  }

  invalidate(): void {}

  render(width: number): string[] {
    const typed = this.input.getValue().length;
    const dots = "•".repeat(Math.min(typed, Math.max(0, width - 12)));
    return [` > ${dots}${typed > 0 ? ` (${typed})` : ""}`];
  }
}

export function editorDialog(
  tui: TUISurface,
  theme: () => UITheme,
  title: string,
  prefill: string | undefined,
  done: (value: string | undefined) => void,
): Framed {
  const editor = new Editor(asTUI(tui), getEditorTheme(theme()));
  if (prefill) editor.setText(prefill);
  editor.onSubmit = (value) => done(value);
  const onEscape = (data: string) => {
    if (!matchesKey(data, "escape") || editor.isShowingAutocomplete()) return false;
    done(undefined);
    return true;
  };
  return new Framed(theme, title, editor, "enter submits · shift+enter new line · esc cancels", onEscape);
}

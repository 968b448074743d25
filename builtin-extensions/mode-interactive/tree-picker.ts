/**
 * The `/tree` picker: the session's entries, searchable by typing, with pi's filters (ctrl+o cycles: the
 * conversation, the conversation without tool results, only your messages, only labelled entries, everything
 * including model and thinking changes, labels and extension data; `treeFilterMode` picks the first), folding (alt+left folds the entry's
 * branch, alt+right unfolds it) and labels edited in place (shift+l). It resolves with the picked entry.
 */
import type { UITheme } from "@knightcodeai/cli/kit";
import { type Component, matchesKey, truncateToWidth } from "@knightcodeai/cli/tui";
import type { TreeRow } from "./tree-view.js";

/** pi's names (the `treeFilterMode` setting takes them). */
export const TREE_FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"] as const;
export type TreeFilter = (typeof TREE_FILTERS)[number];

const FILTER_NAMES: Record<TreeFilter, string> = {
  default: "conversation",
  "no-tools": "no tool results",
  "user-only": "your messages",
  "labeled-only": "labelled",
  all: "everything",
};

/** The rows the tree shows, and the rows with every entry (the `all` filter). */
export interface TreePickerRows {
  rows: TreeRow[];
  all: TreeRow[];
}

const VISIBLE = 15;

export class TreePicker implements Component {
  private search = "";
  private filter: TreeFilter;
  private readonly folded = new Set<string>();
  private selected: string | undefined;
  focused = false;

  constructor(
    private rows: TreePickerRows,
    private readonly theme: () => UITheme,
    private readonly done: (id: string | undefined) => void,
    /** shift+l on an entry: asks for its label and gives back the rows drawn again. */
    private readonly editLabel: (row: TreeRow) => Promise<TreePickerRows | undefined>,
    initial: string | undefined,
    private readonly redraw: () => void,
    filter: TreeFilter = "default",
  ) {
    this.filter = filter;
    this.selected = initial ?? rows.rows.at(-1)?.id;
  }

  /** Rows the filter, the search and the folds leave. */
  private shown(): TreeRow[] {
    const rows = this.filter === "all" ? this.rows.all : this.rows.rows;
    const byId = new Map(rows.map((r) => [r.id, r]));
    const hidden = (row: TreeRow): boolean => {
      for (let p = row.parent; p !== undefined; p = byId.get(p)?.parent) if (this.folded.has(p)) return true;
      return false;
    };
    const words = this.search.toLowerCase().split(/\s+/).filter(Boolean);
    return rows.filter((row) => {
      if (this.filter === "no-tools" && row.kind === "tool") return false;
      if (this.filter === "user-only" && row.kind !== "user") return false;
      if (this.filter === "labeled-only" && !row.labeled) return false;
      if (words.length > 0) {
        const text = `${row.id} ${row.line}`.toLowerCase();
        return words.every((w) => text.includes(w));
      }
      return !hidden(row);
    });
  }

  invalidate(): void {}

  handleInput(data: string): void {
    const shown = this.shown();
    const index = Math.max(
      0,
      shown.findIndex((r) => r.id === this.selected),
    );
    const move = (to: number) => {
      if (shown.length === 0) return;
      this.selected = shown[Math.max(0, Math.min(shown.length - 1, to))]!.id;
    };
    if (matchesKey(data, "escape")) {
      if (!this.search) {
        this.done(undefined);
        return;
      }
      this.search = "";
    } else if (matchesKey(data, "enter")) {
      if (shown.length > 0) {
        this.done(shown[index]!.id);
        return;
      }
    } else if (matchesKey(data, "up")) move(index - 1);
    else if (matchesKey(data, "down")) move(index + 1);
    else if (matchesKey(data, "pageUp")) move(index - VISIBLE);
    else if (matchesKey(data, "pageDown")) move(index + VISIBLE);
    else if (matchesKey(data, "ctrl+o"))
      this.filter = TREE_FILTERS[(TREE_FILTERS.indexOf(this.filter) + 1) % TREE_FILTERS.length]!;
    else if (matchesKey(data, "alt+left") || matchesKey(data, "ctrl+left")) {
      const row = shown[index];
      if (row?.hasChildren) this.folded.add(row.id);
    } else if (matchesKey(data, "alt+right") || matchesKey(data, "ctrl+right")) {
      const row = shown[index];
      if (row) this.folded.delete(row.id);
    } else if (matchesKey(data, "shift+l")) {
      const row = shown[index];
      if (row)
        void this.editLabel(row).then((rows) => {
          if (rows) this.rows = rows;
          this.redraw();
        });
      return;
    } else if (matchesKey(data, "backspace")) this.search = this.search.slice(0, -1);
    else if (data.length === 1 && data >= " " && data !== "\x7f") this.search += data;
    else return;
    this.redraw();
  }

  render(width: number): string[] {
    const t = this.theme();
    const shown = this.shown();
    const index = shown.findIndex((r) => r.id === this.selected);
    const start = Math.max(0, Math.min(index - Math.floor(VISIBLE / 2), shown.length - VISIBLE));
    const rule = t.fg("borderAccent", "─".repeat(Math.max(1, width)));
    const folds = this.folded.size > 0 ? ` · ${this.folded.size} folded` : "";
    const lines = [
      rule,
      ` ${t.bold("Continue from which entry?")} ${t.fg("dim", `(${FILTER_NAMES[this.filter]}${folds})`)}`,
      ` ${t.fg("dim", "search:")} ${this.search}${this.focused ? "▏" : ""}`,
    ];
    if (shown.length === 0)
      lines.push(t.fg("muted", `  nothing matches${this.search ? ` "${this.search}"` : ""}`));
    for (const row of shown.slice(start, start + VISIBLE)) {
      const mark = row.id === this.selected ? t.fg("accent", "→ ") : "  ";
      const fold = this.folded.has(row.id) ? t.fg("dim", " ▸ folded") : "";
      lines.push(`${mark}${row.line}${fold}`);
    }
    lines.push(
      t.fg(
        "dim",
        " ↑↓ move · enter selects · type to search · ctrl+o filter · alt+←/→ fold/unfold · shift+l label · esc",
      ),
      rule,
    );
    return lines.map((line) => truncateToWidth(line, width));
  }
}

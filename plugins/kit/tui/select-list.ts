/** SelectList: a scrolling list to pick one item from with the arrow keys, enter and escape. */
import type { Component } from "./component.js";
import { fuzzyFilter } from "./fuzzy.js";
import { matchesKey } from "./keys.js";
import { truncateToWidth, visibleWidth } from "./width.js";

export interface SelectItem {
  value: string;
  label: string;
  description?: string;
}

export interface SelectListTheme {
  selectedPrefix: (text: string) => string;
  selectedText: (text: string) => string;
  description: (text: string) => string;
  scrollInfo: (text: string) => string;
  noMatch: (text: string) => string;
}

export interface SelectListLayoutOptions {
  minPrimaryColumnWidth?: number;
  maxPrimaryColumnWidth?: number;
}

export class SelectList implements Component {
  private filteredItems: SelectItem[];
  private selectedIndex = 0;
  onSelect?: (item: SelectItem) => void;
  onCancel?: () => void;
  onSelectionChange?: (item: SelectItem) => void;

  constructor(
    private readonly items: SelectItem[],
    private readonly maxVisible: number,
    private readonly theme: SelectListTheme,
    private readonly layout: SelectListLayoutOptions = {},
  ) {
    this.filteredItems = [...items];
  }

  /** Keeps the items that fuzzy-match `filter` (on the label, else the value), best first. */
  setFilter(filter: string): void {
    this.filteredItems = fuzzyFilter(this.items, filter, (item) => item.label || item.value);
    this.selectedIndex = 0;
  }

  setSelectedIndex(index: number): void {
    this.selectedIndex = Math.max(0, Math.min(index, this.filteredItems.length - 1));
  }

  getSelectedItem(): SelectItem | null {
    return this.filteredItems[this.selectedIndex] ?? null;
  }

  invalidate(): void {}

  render(width: number): string[] {
    if (this.filteredItems.length === 0) return [this.theme.noMatch(truncateToWidth("  No matches", width))];
    const visible = Math.max(1, this.maxVisible);
    const start = Math.max(
      0,
      Math.min(this.selectedIndex - Math.floor(visible / 2), this.filteredItems.length - visible),
    );
    const shown = this.filteredItems.slice(start, start + visible);
    const labelWidth = Math.min(
      this.layout.maxPrimaryColumnWidth ?? 32,
      Math.max(this.layout.minPrimaryColumnWidth ?? 0, ...shown.map((i) => visibleWidth(i.label || i.value))),
    );
    const lines = shown.map((item, i) =>
      this.renderItem(item, start + i === this.selectedIndex, width, labelWidth),
    );
    if (this.filteredItems.length > visible) {
      const info = `  (${this.selectedIndex + 1}/${this.filteredItems.length})`;
      lines.push(this.theme.scrollInfo(truncateToWidth(info, width)));
    }
    return lines;
  }

  handleInput(keyData: string): void {
    const count = this.filteredItems.length;
    if (matchesKey(keyData, "up") || matchesKey(keyData, "ctrl+p")) {
      if (count) this.move(this.selectedIndex === 0 ? count - 1 : this.selectedIndex - 1);
    } else if (matchesKey(keyData, "down") || matchesKey(keyData, "ctrl+n")) {
      if (count) this.move(this.selectedIndex === count - 1 ? 0 : this.selectedIndex + 1);
    } else if (matchesKey(keyData, "pageUp")) {
      this.move(Math.max(0, this.selectedIndex - this.maxVisible));
    } else if (matchesKey(keyData, "pageDown")) {
      this.move(Math.min(count - 1, this.selectedIndex + this.maxVisible));
    } else if (matchesKey(keyData, "enter")) {
      const item = this.getSelectedItem();
      if (item) this.onSelect?.(item);
    } else if (matchesKey(keyData, "escape") || matchesKey(keyData, "ctrl+c")) {
      this.onCancel?.();
    }
  }

  private move(index: number): void {
    if (index < 0 || index === this.selectedIndex) return;
    this.selectedIndex = index;
    const item = this.getSelectedItem();
    if (item) this.onSelectionChange?.(item);
  }

  private renderItem(item: SelectItem, selected: boolean, width: number, labelWidth: number): string {
    const prefix = selected ? "→ " : "  ";
    const label = truncateToWidth(item.label || item.value, labelWidth, "…", !!item.description);
    const room = width - 2 - labelWidth - 2;
    const description = item.description && room > 4 ? `  ${truncateToWidth(item.description, room)}` : "";
    const text = truncateToWidth(label, width - 2);
    if (selected)
      return (
        this.theme.selectedPrefix(prefix) +
        this.theme.selectedText(text) +
        this.theme.description(description)
      );
    return prefix + text + this.theme.description(description);
  }
}

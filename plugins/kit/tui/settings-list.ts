/**
 * SettingsList: settings with their current values. Up and down choose a setting, enter or space cycles its
 * value (or opens its submenu), escape cancels; with search on, typed text filters the list.
 */
import type { Component } from "./component.js";
import { fuzzyFilter } from "./fuzzy.js";
import { matchesKey, parseKey } from "./keys.js";
import { truncateToWidth, visibleWidth } from "./width.js";

export interface SettingItem {
  id: string;
  label: string;
  description?: string;
  currentValue: string;
  values?: string[];
  submenu?: (currentValue: string, done: (selectedValue?: string) => void) => Component;
}

export interface SettingsListTheme {
  label: (text: string, selected: boolean) => string;
  value: (text: string, selected: boolean) => string;
  description: (text: string) => string;
  cursor: string;
  hint: (text: string) => string;
}

export interface SettingsListOptions {
  enableSearch?: boolean;
}

export class SettingsList implements Component {
  private filteredItems: SettingItem[];
  private selectedIndex = 0;
  private search = "";
  private submenu: { component: Component; item: SettingItem } | undefined;

  constructor(
    private readonly items: SettingItem[],
    private readonly maxVisible: number,
    private readonly theme: SettingsListTheme,
    private readonly onChange: (id: string, newValue: string) => void,
    private readonly onCancel: () => void,
    private readonly options: SettingsListOptions = {},
  ) {
    this.filteredItems = [...items];
  }

  updateValue(id: string, newValue: string): void {
    const item = this.items.find((i) => i.id === id);
    if (item) item.currentValue = newValue;
  }

  invalidate(): void {
    this.submenu?.component.invalidate();
  }

  render(width: number): string[] {
    if (this.submenu) return this.submenu.component.render(width);
    const lines: string[] = [];
    if (this.options.enableSearch) lines.push(truncateToWidth(`Search: ${this.search}`, width));
    if (this.filteredItems.length === 0) {
      lines.push(this.theme.hint(truncateToWidth("  No matching settings", width)));
      return lines;
    }
    const visible = Math.max(1, this.maxVisible);
    const start = Math.max(
      0,
      Math.min(this.selectedIndex - Math.floor(visible / 2), this.filteredItems.length - visible),
    );
    const shown = this.filteredItems.slice(start, start + visible);
    const labelWidth = Math.min(30, Math.max(...shown.map((i) => visibleWidth(i.label))));
    shown.forEach((item, i) => {
      const selected = start + i === this.selectedIndex;
      const cursor = selected ? this.theme.cursor : " ".repeat(visibleWidth(this.theme.cursor));
      const label = truncateToWidth(item.label, labelWidth, "…", true);
      const room = Math.max(1, width - visibleWidth(cursor) - labelWidth - 2);
      const value = truncateToWidth(item.currentValue, room);
      lines.push(`${cursor}${this.theme.label(label, selected)}  ${this.theme.value(value, selected)}`);
    });
    const current = this.filteredItems[this.selectedIndex];
    if (current?.description)
      lines.push("", this.theme.description(truncateToWidth(current.description, width)));
    lines.push("", this.theme.hint(truncateToWidth("↑↓ choose · enter change · esc close", width)));
    return lines;
  }

  handleInput(data: string): void {
    if (this.submenu) {
      this.submenu.component.handleInput?.(data);
      return;
    }
    const count = this.filteredItems.length;
    if (matchesKey(data, "up")) {
      if (count) this.selectedIndex = this.selectedIndex === 0 ? count - 1 : this.selectedIndex - 1;
    } else if (matchesKey(data, "down")) {
      if (count) this.selectedIndex = this.selectedIndex === count - 1 ? 0 : this.selectedIndex + 1;
    } else if (matchesKey(data, "enter") || (matchesKey(data, "space") && !this.options.enableSearch)) {
      this.activate();
    } else if (matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) {
      this.onCancel();
    } else if (this.options.enableSearch && matchesKey(data, "backspace")) {
      this.applyFilter(this.search.slice(0, -1));
    } else if (this.options.enableSearch && [...data].length === 1 && data >= " " && parseKey(data)) {
      this.applyFilter(this.search + data);
    }
  }

  private activate(): void {
    const item = this.filteredItems[this.selectedIndex];
    if (!item) return;
    if (item.submenu) {
      const done = (value?: string) => {
        this.submenu = undefined;
        if (value !== undefined) {
          item.currentValue = value;
          this.onChange(item.id, value);
        }
      };
      this.submenu = { component: item.submenu(item.currentValue, done), item };
      return;
    }
    if (!item.values?.length) return;
    const next = item.values[(item.values.indexOf(item.currentValue) + 1) % item.values.length]!;
    item.currentValue = next;
    this.onChange(item.id, next);
  }

  private applyFilter(search: string): void {
    this.search = search;
    this.filteredItems = fuzzyFilter(this.items, search, (i) => i.label);
    this.selectedIndex = 0;
  }
}

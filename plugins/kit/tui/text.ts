/** Text, TruncatedText, Spacer and DynamicBorder: the leaf components. */
import type { Component } from "./component.js";
import { truncateToWidth, visibleWidth, wrapTextWithAnsi } from "./width.js";

/** Pads a line with spaces to `width` columns, so a background colour covers the whole row. */
export function padLine(line: string, width: number): string {
  return line + " ".repeat(Math.max(0, width - visibleWidth(line)));
}

/** Wrapped text with horizontal and vertical padding, and an optional background for every line. */
export class Text implements Component {
  private cache: { width: number; lines: string[] } | undefined;

  constructor(
    private text = "",
    private paddingX = 1,
    private paddingY = 1,
    private customBgFn?: (text: string) => string,
  ) {}

  setText(text: string): void {
    this.text = text;
    this.cache = undefined;
  }

  setCustomBgFn(customBgFn?: (text: string) => string): void {
    this.customBgFn = customBgFn;
    this.cache = undefined;
  }

  invalidate(): void {
    this.cache = undefined;
  }

  render(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const lines: string[] = [];
    if (this.text.trim()) {
      const inner = Math.max(1, width - this.paddingX * 2);
      const margin = " ".repeat(this.paddingX);
      const blank = " ".repeat(Math.max(0, width));
      const body = wrapTextWithAnsi(this.text.replace(/\t/g, "   "), inner).map((l) => margin + l + margin);
      for (let i = 0; i < this.paddingY; i++) lines.push(blank);
      lines.push(...body);
      for (let i = 0; i < this.paddingY; i++) lines.push(blank);
    }
    const bg = this.customBgFn;
    const out = bg ? lines.map((l) => bg(padLine(l, width))) : lines;
    this.cache = { width, lines: out };
    return out;
  }
}

/** Text cut to one line per input line (the first only), never wrapped. */
export class TruncatedText implements Component {
  constructor(
    private readonly text: string,
    private readonly paddingX = 0,
    private readonly paddingY = 0,
  ) {}

  invalidate(): void {}

  render(width: number): string[] {
    const margin = " ".repeat(this.paddingX);
    const firstLine = this.text.split("\n")[0] ?? "";
    const line = margin + truncateToWidth(firstLine, Math.max(1, width - this.paddingX * 2));
    const blank = Array.from({ length: this.paddingY }, () => "");
    return [...blank, line, ...blank];
  }
}

/** Empty lines. */
export class Spacer implements Component {
  constructor(private lines = 1) {}

  setLines(lines: number): void {
    this.lines = lines;
  }

  invalidate(): void {}

  render(_width: number): string[] {
    return Array.from({ length: Math.max(0, this.lines) }, () => "");
  }
}

/** A horizontal rule as wide as the space it is given. */
export class DynamicBorder implements Component {
  constructor(private readonly color: (text: string) => string = (text) => text) {}

  invalidate(): void {}

  render(width: number): string[] {
    return [this.color("─".repeat(Math.max(1, width)))];
  }
}

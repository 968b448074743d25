/**
 * DynamicBorder: a `─` rule as wide as the space it is given. pi's coding agent offers it to extensions beside
 * pi-tui's components; pi-tui itself has none.
 */
import type { Component } from "@mariozechner/pi-tui";

export class DynamicBorder implements Component {
  constructor(private readonly color: (text: string) => string = (text) => text) {}

  invalidate(): void {}

  render(width: number): string[] {
    return [this.color("─".repeat(Math.max(1, width)))];
  }
}

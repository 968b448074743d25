/** Box: a container with padding and an optional background. */
import type { Component } from "./component.js";
import { padLine } from "./text.js";

export class Box implements Component {
  children: Component[] = [];

  constructor(
    private paddingX = 1,
    private paddingY = 1,
    private bgFn?: (text: string) => string,
  ) {}

  addChild(component: Component): void {
    this.children.push(component);
  }

  removeChild(component: Component): void {
    const index = this.children.indexOf(component);
    if (index >= 0) this.children.splice(index, 1);
  }

  clear(): void {
    this.children = [];
  }

  setBgFn(bgFn?: (text: string) => string): void {
    this.bgFn = bgFn;
  }

  invalidate(): void {
    for (const child of this.children) child.invalidate();
  }

  render(width: number): string[] {
    const inner = Math.max(1, width - this.paddingX * 2);
    const margin = " ".repeat(this.paddingX);
    const body = this.children
      .flatMap((c) => c.render(inner))
      .map((l) => margin + padLine(l, inner) + margin);
    if (body.length === 0) return [];
    const blank = " ".repeat(Math.max(0, width));
    const rows = [...Array(this.paddingY).fill(blank), ...body, ...Array(this.paddingY).fill(blank)];
    const bg = this.bgFn;
    return bg ? rows.map((l) => bg(padLine(l, width))) : rows;
  }
}

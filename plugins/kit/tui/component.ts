/**
 * The component model: a component turns a width into lines and may take key input. Containers stack their
 * children. Nothing here touches a terminal, so components render the same in a test, over RPC or on screen.
 */
import type { UIComponent, UIHost } from "../../../kernel/index.js";

export type Component = UIComponent;

/** A component that shows where the cursor is: it writes CURSOR_MARKER at that spot while `focused`. */
export interface Focusable {
  focused: boolean;
}

export function isFocusable(component: Component | null | undefined): component is Component & Focusable {
  return !!component && "focused" in component;
}

/** Marks the cursor position inside a rendered line; the terminal UI moves the hardware cursor there. */
export const CURSOR_MARKER = "\x1b_pi:c\x07";

/** Stacks its children's lines top to bottom. */
export class Container implements Component {
  children: Component[] = [];

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

  invalidate(): void {
    for (const child of this.children) child.invalidate();
  }

  render(width: number): string[] {
    return this.children.flatMap((child) => child.render(width));
  }
}

/**
 * What components get as `tui` where nothing is drawn live: render requests are counted (tests read the count)
 * and otherwise ignored. The full terminal UI replaces it.
 */
export class DetachedUI implements UIHost {
  renderRequests = 0;
  constructor(readonly terminal: { columns: number; rows: number } = { columns: 80, rows: 24 }) {}

  requestRender(): void {
    this.renderRequests++;
  }
}

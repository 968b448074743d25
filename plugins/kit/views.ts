/**
 * Declarative views (`ViewNode`): the check a host runs before sending one to a client, and the text lines a host
 * that draws no views shows instead. A view is data: text, stacks, lists and a few controls (button, toggle,
 * select, text field), each control with an id unique in its view.
 */
import type { ViewNode } from "../../kernel/index.js";

export const VIEW_MAX_DEPTH = 8;
const ID_MAX_CHARS = 128;
const TONES = new Set(["normal", "muted", "success", "warning", "error"]);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first problem of a would-be view, or undefined when it is a valid one. */
export function viewProblem(view: unknown): string | undefined {
  const ids = new Set<string>();
  const check = (node: unknown, path: string, depth: number): string | undefined => {
    if (!isObject(node)) return `${path} is not an object`;
    const str = (key: string, optional = false) =>
      node[key] === undefined && optional
        ? undefined
        : typeof node[key] === "string"
          ? undefined
          : `${path}.${key} must be a string`;
    const control = () => {
      if (typeof node.id !== "string" || node.id.length < 1 || node.id.length > ID_MAX_CHARS)
        return `${path}.id must have 1 to ${ID_MAX_CHARS} characters`;
      if (ids.has(node.id)) return `${path}.id "${node.id}" is used twice`;
      ids.add(node.id);
      return undefined;
    };
    const nested = (key: string) => {
      const children = node[key];
      if (!Array.isArray(children)) return `${path}.${key} must be a list`;
      if (depth > VIEW_MAX_DEPTH) return `${path} nests deeper than ${VIEW_MAX_DEPTH} levels`;
      for (const [i, child] of children.entries()) {
        const problem = check(child, `${path}.${key}[${i}]`, depth + 1);
        if (problem) return problem;
      }
      return undefined;
    };
    switch (node.type) {
      case "text":
        if (node.tone !== undefined && !TONES.has(String(node.tone)))
          return `${path}.tone is not a known tone`;
        return str("text");
      case "stack":
        if (node.direction !== undefined && node.direction !== "vertical" && node.direction !== "horizontal")
          return `${path}.direction must be "vertical" or "horizontal"`;
        return nested("children");
      case "list":
        return nested("items");
      case "button":
        return control() ?? str("label");
      case "toggle":
        return (
          control() ??
          str("label") ??
          (typeof node.value === "boolean" ? undefined : `${path}.value must be true or false`)
        );
      case "select": {
        const problem = control() ?? str("label", true) ?? str("value", true);
        if (problem) return problem;
        if (!Array.isArray(node.options) || !node.options.every((o) => typeof o === "string"))
          return `${path}.options must be a list of strings`;
        if (node.value !== undefined && !node.options.includes(node.value as string))
          return `${path}.value is not one of its options`;
        return undefined;
      }
      case "textField":
        return control() ?? str("label", true) ?? str("value", true) ?? str("placeholder", true);
      default:
        return `${path}.type ${JSON.stringify(node.type)} is not a view node type`;
    }
  };
  return check(view, "view", 1);
}

/** The control with this id in a view, if any. */
export function findControl(view: ViewNode, id: string): ViewNode | undefined {
  switch (view.type) {
    case "stack":
      for (const child of view.children) {
        const found = findControl(child, id);
        if (found) return found;
      }
      return undefined;
    case "list":
      for (const item of view.items) {
        const found = findControl(item, id);
        if (found) return found;
      }
      return undefined;
    case "text":
      return undefined;
    default:
      return view.id === id ? view : undefined;
  }
}

/** A view as plain text lines, for a host that draws no views. */
export function viewToLines(view: ViewNode): string[] {
  switch (view.type) {
    case "text":
      return view.text.split("\n");
    case "stack":
      return view.direction === "horizontal"
        ? [view.children.map((child) => viewToLines(child).join(" ")).join("  ")]
        : view.children.flatMap(viewToLines);
    case "list":
      return view.items.flatMap((item) =>
        viewToLines(item).map((line, i) => (i === 0 ? `• ${line}` : `  ${line}`)),
      );
    case "button":
      return [`[ ${view.label} ]`];
    case "toggle":
      return [`[${view.value ? "x" : " "}] ${view.label}`];
    case "select":
      return [`${view.label ?? view.id}: ${view.value ?? "(none)"}`];
    case "textField":
      return [`${view.label ?? view.id}: ${view.value ?? ""}`];
  }
}

/** Whether `setWidget` was given a view (`{view}`) rather than lines or a component. */
export function isWidgetView(content: unknown): content is { view: ViewNode } {
  return isObject(content) && "view" in content;
}

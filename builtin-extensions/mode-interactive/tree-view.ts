/**
 * `/tree` as lines: the session's entries with their ids, labels and the active position, indented only where the
 * conversation branches (a long linear chat stays flat). Entries a person would not recognise as a step of the
 * conversation (labels, model and thinking changes, extension data) are left out; their children hang from the
 * nearest shown entry above them.
 */
import type { ReadonlySessionManager, SessionEntry } from "@knightcodeai/cli/kit";
import { cyan, dim } from "./view.js";

interface Node {
  entry: SessionEntry;
  children: Node[];
}

const SHOWN = new Set(["message", "custom_message", "branch_summary", "compaction"]);

/** The tree, one line per shown entry; the entry the next message continues from is marked `← active`. */
export function treeLines(manager: ReadonlySessionManager, width = 80): string[] {
  return treeRows(manager, width).rows.map((row) => row.line);
}

/** The tree's lines with the entry each one shows, and the active entry (for the `/tree` picker). */
export function treeRows(
  manager: ReadonlySessionManager,
  width = 80,
  /** Every entry, the ones a person would not recognise as a step of the conversation too (`/tree`'s `all`). */
  everything = false,
): { rows: TreeRow[]; active: string | undefined } {
  const entries = manager.getEntries();
  // Parents precede children in the file, so one pass finds each entry's nearest shown ancestor.
  const shownAncestor = new Map<string, Node | null>();
  const roots: Node[] = [];
  for (const entry of entries) {
    const parent = entry.parentId === null ? null : (shownAncestor.get(entry.parentId) ?? null);
    if (!everything && !SHOWN.has(entry.type)) {
      shownAncestor.set(entry.id, parent);
      continue;
    }
    const node: Node = { entry, children: [] };
    (parent ? parent.children : roots).push(node);
    shownAncestor.set(entry.id, node);
  }
  const leaf = manager.getLeafId();
  const active = leaf === null ? undefined : shownAncestor.get(leaf)?.entry.id;

  const rows: TreeRow[] = [];
  const parents = new Map<Node, string | undefined>();
  const line = (node: Node, prefix: string) => {
    const label = manager.getLabel(node.entry.id);
    const mark = node.entry.id === active ? cyan("  ← active") : "";
    const tag = label ? ` ${cyan(`[${label}]`)}` : "";
    const room = Math.max(20, width - prefix.length - 9 - (label ? label.length + 3 : 0) - (mark ? 10 : 0));
    rows.push({
      id: node.entry.id,
      line: `${prefix}${dim(node.entry.id)} ${oneLine(entryText(node.entry), room)}${tag}${mark}`,
      text: entryText(node.entry),
      kind: kindOf(node.entry),
      labeled: label !== undefined,
      parent: parents.get(node),
      hasChildren: node.children.length > 0,
    });
    for (const child of node.children) parents.set(child, node.entry.id);
  };
  // A chain continues at the same indentation; only a branch point indents its children.
  const chain = (start: Node, first: string, rest: string) => {
    let node = start;
    line(node, first);
    while (node.children.length === 1) {
      node = node.children[0]!;
      line(node, rest);
    }
    node.children.forEach((child, i) => {
      const last = i === node.children.length - 1;
      chain(child, `${rest}${last ? "└─ " : "├─ "}`, `${rest}${last ? "   " : "│  "}`);
    });
  };
  if (roots.length === 1) chain(roots[0]!, "", "");
  else
    roots.forEach((root, i) => {
      const last = i === roots.length - 1;
      chain(root, last ? "└─ " : "├─ ", last ? "   " : "│  ");
    });
  return { rows, active };
}

/** One line of the tree, with what the `/tree` picker filters and folds by. */
export interface TreeRow {
  id: string;
  line: string;
  /** The entry as text, without the tree's indentation, id, label and marks. */
  text: string;
  kind: "user" | "assistant" | "tool" | "other";
  labeled: boolean;
  /** The shown entry it hangs from. */
  parent: string | undefined;
  hasChildren: boolean;
}

function kindOf(entry: SessionEntry): TreeRow["kind"] {
  if (entry.type !== "message") return "other";
  const role = entry.message.role;
  return role === "user"
    ? "user"
    : role === "assistant"
      ? "assistant"
      : role === "toolResult"
        ? "tool"
        : "other";
}

/** The entry whose id starts with `prefix`; an error message when none or several do. */
export function findEntry(manager: ReadonlySessionManager, prefix: string): SessionEntry | string {
  const matches = manager.getEntries().filter((e) => e.id.startsWith(prefix));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) return `No entry starts with "${prefix}"; /tree lists them`;
  return `"${prefix}" matches ${matches.length} entries (${matches
    .slice(0, 4)
    .map((e) => e.id)
    .join(", ")}${matches.length > 4 ? ", …" : ""}); type more of the id`;
}

/** The latest shown entry of the active branch: what `/label` without an id labels. */
export function currentEntry(manager: ReadonlySessionManager): SessionEntry | undefined {
  return manager.getBranch().findLast((e) => SHOWN.has(e.type));
}

function entryText(entry: SessionEntry): string {
  switch (entry.type) {
    case "message": {
      const message = entry.message;
      if (message.role === "assistant") {
        const text = textOf(message.content);
        const calls = message.content.flatMap((c) =>
          c.type === "toolCall" ? [`[${c.name}${callSummary(c.arguments)}]`] : [],
        );
        return `assistant: ${[text, ...calls].filter(Boolean).join(" ") || "(no text)"}`;
      }
      if (message.role === "toolResult")
        return `${message.isError ? "failed" : "result"}: ${message.toolName} ${oneLine(textOf(message.content), 60)}`;
      if (message.role === "user") return `user: ${shortPrompt(textOf(message.content))}`;
      return `${message.role}: ${textOf((message as { content?: unknown }).content)}`;
    }
    case "custom_message":
      return `${entry.customType}: ${textOf(entry.content)}`;
    case "branch_summary":
      return `branch summary: ${entry.summary}`;
    case "compaction":
      return `compaction: ${entry.summary}`;
    default: {
      // Bookkeeping (shown by `/tree`'s `all` filter): its type and its main field.
      const record = entry as unknown as Record<string, unknown>;
      const detail =
        entry.type === "model_change"
          ? `${String(record.provider)}/${String(record.modelId)}`
          : ["thinkingLevel", "label", "customType", "name"]
              .map((k) => record[k])
              .find((v) => typeof v === "string");
      return `${entry.type}${detail ? `: ${oneLine(String(detail), 60)}` : ""}`;
    }
  }
}

/** `: ls -la` for a call: its command, path or query, the way a person would name it. */
function callSummary(args: unknown): string {
  const record = (args && typeof args === "object" ? args : {}) as Record<string, unknown>;
  for (const key of ["command", "path", "file_path", "pattern", "query", "url", "code"]) {
    const value = record[key];
    if (typeof value === "string" && value.trim()) return `: ${oneLine(value, 60)}`;
  }
  return "";
}

/** A prompt as typed: attached files (`@file`) by their path, a skill run by its name. */
function shortPrompt(text: string): string {
  const skill = /^<skill name="([^"]*)"[^>]*>[\s\S]*?<\/skill>(?:\n\n)?/.exec(text);
  const rest = skill ? text.slice(skill[0].length) : text;
  const files = rest.replace(/<file name="([^"]+)">\n[\s\S]*?\n<\/file>(?:\n\n)?/g, (_m, name: string) =>
    rest.includes(`@${name}`) ? "" : `@${name} `,
  );
  return `${skill ? `[skill] ${skill[1]} ` : ""}${files}`;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is { type: "text"; text: string } => part?.type === "text")
    .map((part) => part.text)
    .join(" ");
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

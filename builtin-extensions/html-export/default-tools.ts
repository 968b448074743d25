/**
 * How the export draws a tool call and its result when no renderer draws it to HTML: the core tools get a form of
 * their own (the command of `bash`, the path of `read`, the diff of `edit`), every other tool its name and its
 * arguments as JSON.
 */
import type { ToolResultMessage } from "@knightcodeai/cli/kit";
import { escapeHtml, image, json, textBlock } from "./html.js";

/** Lines of output shown before the rest folds away. */
const VISIBLE_LINES = 20;

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function head(name: string, detail?: string): string {
  return `<span class="tool-name">${escapeHtml(name)}</span>${detail ? ` <span class="tool-arg">${escapeHtml(detail)}</span>` : ""}`;
}

/** A unified diff (or old/new text) with its added and removed lines marked. */
export function diffBlock(diff: string): string {
  const lines = diff.split("\n").map((line) => {
    const kind = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
    return `<span class="diff-${kind}">${escapeHtml(line)}</span>`;
  });
  return `<pre class="diff">${lines.join("\n")}</pre>`;
}

export function defaultCall(name: string, args: Record<string, unknown>): string {
  const path = str(args.path);
  switch (name) {
    case "bash":
      if (str(args.command) === undefined) break;
      return `<pre class="command">$ ${escapeHtml(str(args.command)!)}</pre>${
        typeof args.timeout === "number" ? `<p class="note">timeout ${args.timeout} s</p>` : ""
      }`;
    case "read": {
      if (path === undefined) break;
      const offset = typeof args.offset === "number" ? args.offset : undefined;
      const limit = typeof args.limit === "number" ? args.limit : undefined;
      const range =
        offset !== undefined || limit !== undefined
          ? ` (lines ${offset ?? 1}${limit !== undefined ? `–${(offset ?? 1) + limit - 1}` : "–"})`
          : "";
      return head(name, `${path}${range}`);
    }
    case "write":
      if (path === undefined || str(args.content) === undefined) break;
      return `${head(name, path)}${textBlock(str(args.content)!, "text", VISIBLE_LINES)}`;
    case "edit": {
      if (path === undefined || !Array.isArray(args.edits)) break;
      // The result carries the real diff; the call shows what was asked.
      const edits = (args.edits as unknown[]).map((e) => {
        const item = (e ?? {}) as Record<string, unknown>;
        const old = (str(item.oldText) ?? "").split("\n").map((l) => `-${l}`);
        const now = (str(item.newText) ?? "").split("\n").map((l) => `+${l}`);
        return [...old, ...now].join("\n");
      });
      return `${head(name, path)}<details class="more"><summary>${edits.length} replacement${
        edits.length === 1 ? "" : "s"
      }</summary>${edits.map(diffBlock).join("")}</details>`;
    }
    case "ls":
      return head(name, path ?? ".");
    case "find":
    case "grep":
      if (str(args.pattern) === undefined) break;
      return head(name, `${str(args.pattern)}${path !== undefined ? ` in ${path}` : ""}`);
  }
  const text = json(args);
  return `${head(name)}${text === "{}" ? "" : textBlock(text, "args", VISIBLE_LINES)}`;
}

export function defaultResult(result: Pick<ToolResultMessage, "toolName" | "content" | "details">): string {
  const details = (result.details ?? {}) as Record<string, unknown>;
  if (result.toolName === "edit" && typeof details.diff === "string" && details.diff !== "") {
    return diffBlock(details.diff);
  }
  const parts: string[] = [];
  const text = result.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");
  if (text !== "") parts.push(textBlock(text, "output", VISIBLE_LINES));
  for (const c of result.content) {
    if (c.type === "image") parts.push(image(c.mimeType, c.data));
  }
  return parts.length > 0 ? parts.join("") : `<p class="note">(no output)</p>`;
}

/**
 * How a KnightCode tool call looks to an ACP client: its kind (the client's icon), a title, the files it touches
 * (for "follow along"), and its result as tool call content.
 */
import { isAbsolute, resolve } from "node:path";
import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { ToolResult } from "@knightcodeai/cli/kit";

const KINDS: Record<string, ToolKind> = {
  read: "read",
  ls: "read",
  write: "edit",
  edit: "edit",
  bash: "execute",
  grep: "search",
  find: "search",
  tool_search: "search",
  web_fetch: "fetch",
  ask_user: "other",
};

export function toolKind(toolName: string): ToolKind {
  return KINDS[toolName] ?? "other";
}

const str = (value: unknown) => (typeof value === "string" ? value : undefined);

/** One line, at most `max` characters. */
function oneLine(text: string, max = 120): string {
  const line = text.split("\n", 1)[0]!.trim();
  const cut = line.length > max ? `${line.slice(0, max - 1)}…` : line;
  return text.includes("\n") ? `${cut} …` : cut;
}

export function toolTitle(toolName: string, args: Record<string, unknown>): string {
  const path = str(args.path);
  switch (toolName) {
    case "bash":
      return str(args.command) ? oneLine(str(args.command)!) : "bash";
    case "read":
      return path ? `Read ${path}` : "Read";
    case "write":
      return path ? `Write ${path}` : "Write";
    case "edit":
      return path ? `Edit ${path}` : "Edit";
    case "ls":
      return `List ${path ?? "."}`;
    case "grep":
    case "find":
      return `${toolName} ${oneLine(str(args.pattern) ?? "")}${path ? ` in ${path}` : ""}`.trim();
    default:
      return toolName;
  }
}

/** The absolute path a core tool's `path` argument names (as the tools resolve it), or undefined. */
export function toolPath(cwd: string, args: Record<string, unknown>): string | undefined {
  let path = str(args.path)?.trim();
  if (!path) return undefined;
  if (path.startsWith("@")) path = path.slice(1);
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}

export function toolLocations(
  toolName: string,
  cwd: string,
  args: Record<string, unknown>,
): ToolCallLocation[] {
  const path = toolPath(cwd, args);
  if (!path) return [];
  const offset = toolName === "read" && typeof args.offset === "number" ? args.offset : undefined;
  return [{ path, ...(offset !== undefined ? { line: offset } : {}) }];
}

/** A tool result's text and images as tool call content. */
export function resultContent(result: Pick<ToolResult, "content"> | undefined): ToolCallContent[] {
  const content: ToolCallContent[] = [];
  for (const part of result?.content ?? []) {
    if (part.type === "text" && part.text !== "") {
      content.push({ type: "content", content: { type: "text", text: part.text } });
    } else if (part.type === "image") {
      content.push({ type: "content", content: { type: "image", data: part.data, mimeType: part.mimeType } });
    }
  }
  return content;
}

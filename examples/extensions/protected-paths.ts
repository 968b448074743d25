/**
 * Keeps `write` and `edit` away from protected folders and files.
 *
 * Shows: a fail-closed `tool_call` gate. A path is resolved against the session folder and blocked when any of its
 * parts is one of `PROTECTED` (`.git`, `node_modules`, `.env`), wherever it sits. A path that is not a non-empty
 * string, or that cannot be resolved, is blocked too: when in doubt, say no.
 */
import { realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import type { ExtensionAPI } from "@knightcodeai/cli";

export const PROTECTED = [".git", "node_modules", ".env"];
const GUARDED_TOOLS = new Set(["write", "edit"]);

/** The longest existing ancestor resolved through symlinks, plus the rest of the path. */
function realish(path: string): string {
  let head = path;
  const tail: string[] = [];
  for (;;) {
    try {
      return resolve(realpathSync(head), ...tail.reverse());
    } catch {
      const parent = dirname(head);
      if (parent === head) return path;
      tail.push(head.slice(parent.length).replace(/^[\\/]+/, ""));
      head = parent;
    }
  }
}

/** Why `rawPath` is refused, or `undefined` when it may be written. */
export function protectedReason(rawPath: unknown, cwd: string): string | undefined {
  if (typeof rawPath !== "string" || rawPath.trim() === "" || rawPath.includes("\0")) {
    return "the path is missing or malformed";
  }
  try {
    const path = rawPath.startsWith("@") ? rawPath.slice(1) : rawPath;
    const absolute = realish(resolve(cwd, path));
    const base = realish(resolve(cwd));
    const rel = relative(base, absolute);
    const parts = isAbsolute(rel) ? absolute.split(sep) : rel.split(sep);
    const hit = parts.find((part) => PROTECTED.includes(part));
    return hit ? `${rawPath} is inside the protected "${hit}"` : undefined;
  } catch (error) {
    return `the path could not be checked (${(error as Error).message})`;
  }
}

export default function (knightcode: ExtensionAPI) {
  knightcode.on("tool_call", (event, ctx) => {
    if (!GUARDED_TOOLS.has(event.toolName)) return undefined;
    const reason = protectedReason(event.input.path, ctx.cwd);
    return reason ? { block: true, reason: `Blocked ${event.toolName}: ${reason}` } : undefined;
  });
}

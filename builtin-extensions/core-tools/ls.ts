/**
 * ls: the entries of one folder, as they are on disk (ignore files are not read): sorted alphabetically without
 * regard to case, folders (and links to folders) with a trailing `/`, dotfiles included.
 */
import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { formatSize, DEFAULT_MAX_BYTES as MAX_BYTES } from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import type { CoreTool } from "./core-tool.js";
import { resolveToolPath, toolCwd } from "./paths.js";
import { limitBytes, type TruncationInfo, withNotices } from "./search-format.js";
import { throwIfAborted } from "./search-walk.js";

export const DEFAULT_LS_LIMIT = 500;

const lsSchema = Type.Object({
  path: Type.Optional(
    Type.String({
      description: "Folder to list, relative to the working folder (default: the working folder)",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `Maximum number of entries to return (default ${DEFAULT_LS_LIMIT})`,
    }),
  ),
});

export type LsToolInput = Static<typeof lsSchema>;

export interface LsToolDetails {
  /** Entries returned (at most `limit`). */
  count: number;
  /** The folder has more entries than `limit`. */
  entryLimitReached?: boolean;
  /** The output was cut at 50 KB. */
  truncation?: TruncationInfo;
}

/** Everything `ls` does to the file system, so a sandbox or a remote machine can take its place (pi's). */
export interface LsOperations {
  exists(absolutePath: string): Promise<boolean> | boolean;
  /** Follows symbolic links (a link to a folder is listed as a folder); rejects when the entry is missing. */
  stat(absolutePath: string): Promise<{ isDirectory(): boolean }> | { isDirectory(): boolean };
  /** The names in a folder. */
  readdir(absolutePath: string): Promise<string[]> | string[];
}

export interface LsToolOptions {
  /** Default: the local file system. */
  operations?: LsOperations;
}

export function createLocalLsOperations(): LsOperations {
  return { exists: (path) => existsSync(path), stat: (path) => stat(path), readdir: (path) => readdir(path) };
}

/** Case-insensitive order, ties broken by the exact name so the order never depends on the file system. */
function compareNames(a: string, b: string): number {
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The `ls` tool. `cwd` is the folder relative paths resolve against; without it, the session's working folder at
 * each call.
 */
export function createLsTool(
  cwd?: string,
  options: LsToolOptions = {},
): CoreTool<typeof lsSchema, LsToolDetails> {
  const ops = options.operations ?? createLocalLsOperations();
  const isDirectory = async (path: string) => {
    try {
      return (await ops.stat(path)).isDirectory();
    } catch {
      return false;
    }
  };
  return {
    name: "ls",
    label: "ls",
    description: [
      "List the entries of a folder (default: the working folder), sorted alphabetically without regard to case.",
      "Folders end with '/'; dotfiles are included; ignore files such as .gitignore are not applied (it lists what is there).",
      `Returns at most \`limit\` entries (default ${DEFAULT_LS_LIMIT}) and ${formatSize(MAX_BYTES)}.`,
    ].join(" "),
    promptSnippet: "ls: list a folder's entries (folders end with '/')",
    annotations: {
      title: "List folder",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    parameters: lsSchema,
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      throwIfAborted(signal);
      const dir = resolveToolPath(toolCwd(cwd, ctx), params.path ?? ".");
      if (!(await ops.exists(dir))) throw new Error(`Path not found: ${params.path ?? dir}`);
      if (!(await isDirectory(dir))) throw new Error(`Not a directory: ${params.path ?? dir}`);
      const limit = params.limit ?? DEFAULT_LS_LIMIT;

      const entries = [...(await ops.readdir(dir))];
      entries.sort(compareNames);
      const shown = entries.slice(0, limit);
      const names = await Promise.all(
        shown.map(async (name) => ((await isDirectory(join(dir, name))) ? `${name}/` : name)),
      );
      throwIfAborted(signal);
      if (names.length === 0)
        return { content: [{ type: "text", text: "(empty directory)" }], details: { count: 0 } };

      const entryLimitReached = entries.length > limit;
      const { text, truncation } = limitBytes(names.join("\n"));
      const notices: string[] = [];
      if (entryLimitReached) {
        notices.push(
          `${limit} entries limit reached (${entries.length} in total). Use limit=${limit * 2} for more, or use find to search by pattern`,
        );
      }
      if (truncation) {
        notices.push(
          `${formatSize(MAX_BYTES)} output limit reached (${truncation.keptLines} of ${truncation.totalLines} entries shown)`,
        );
      }
      const details: LsToolDetails = {
        count: names.length,
        ...(entryLimitReached ? { entryLimitReached: true } : {}),
        ...(truncation ? { truncation } : {}),
      };
      return { content: [{ type: "text", text: withNotices(text, notices) }], details };
    },
  };
}

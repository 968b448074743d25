/**
 * `write`: creates or replaces a whole file. Parent folders are created; the write is atomic (a temporary file
 * renamed over the target) and serialised with other mutations of the same file.
 */
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { withFileMutationQueue } from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import type { CoreTool } from "./core-tool.js";
import { displayPath, fileErrorMessage, writeFileAtomic } from "./file-io.js";
import { resolveToolPath, toolCwd } from "./paths.js";

const WriteParams = Type.Object({
  path: Type.String({ description: "Path of the file to write, relative to the working folder or absolute" }),
  content: Type.String({ description: "The complete new content of the file" }),
});

export type WriteParams = Static<typeof WriteParams>;

export interface WriteDetails {
  /** The absolute path written. */
  path: string;
  bytes: number;
  /** True when the file did not exist before; present when the operations say (the local ones do). */
  created?: boolean;
}

/** Everything `write` does to the file system, so a sandbox or a remote machine can take its place (pi's). */
export interface WriteOperations {
  /** Creates or replaces the file; may report whether it created it. */
  writeFile(absolutePath: string, content: string): Promise<void | { created: boolean }>;
  /** Creates the folder and its missing parents. */
  mkdir(dir: string): Promise<void>;
}

export interface WriteToolOptions {
  /** Default: the local file system, with atomic writes. */
  operations?: WriteOperations;
}

/** The local file system: atomic replacement that keeps an existing file's mode. */
export function createLocalWriteOperations(): WriteOperations {
  return {
    writeFile: (path, content) => writeFileAtomic(path, content),
    mkdir: async (dir) => {
      await mkdir(dir, { recursive: true });
    },
  };
}

/**
 * The `write` tool. `cwd` is the folder relative paths resolve against; without it, the session's working folder
 * at each call.
 */
export function createWriteTool(
  cwd?: string,
  options: WriteToolOptions = {},
): CoreTool<typeof WriteParams, WriteDetails> {
  const ops = options.operations ?? createLocalWriteOperations();
  return {
    name: "write",
    label: "Write",
    description: [
      "Write a file: create it, or replace its whole content. Missing parent folders are created.",
      "The content is written exactly as given. To change part of an existing file, use edit instead;",
      "read an existing file before replacing it.",
    ].join(" "),
    promptSnippet: "write: create a file or replace its whole content (creates parent folders)",
    promptGuidelines: [
      "Prefer edit for changes to existing files; use write for new files or complete rewrites.",
    ],
    annotations: {
      title: "Write file",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    parameters: WriteParams,
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      signal?.throwIfAborted();
      const shown = displayPath(params.path);
      const path = resolveToolPath(toolCwd(cwd, ctx), params.path);
      const bytes = Buffer.byteLength(params.content, "utf8");
      const written = await withFileMutationQueue(path, async () => {
        signal?.throwIfAborted();
        try {
          await ops.mkdir(dirname(path));
          return await ops.writeFile(path, params.content);
        } catch (error) {
          const message = fileErrorMessage(error, shown, "write");
          throw message ? new Error(message) : error;
        }
      });
      return {
        content: [{ type: "text", text: `Wrote ${bytes} bytes to ${shown}` }],
        details: { path, bytes, ...(written ? { created: written.created } : {}) },
      };
    },
  };
}

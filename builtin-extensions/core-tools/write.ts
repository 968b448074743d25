/**
 * `write`: creates or replaces a whole file. Parent folders are created; the write is atomic (a temporary file
 * renamed over the target) and serialised with other mutations of the same file.
 */
import { type ToolDefinition, withFileMutationQueue } from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import { displayPath, fileErrorMessage, writeFileAtomic } from "./file-io.js";
import { resolveToolPath } from "./paths.js";

const WriteParams = Type.Object({
  path: Type.String({ description: "Path of the file to write, relative to the working folder or absolute" }),
  content: Type.String({ description: "The complete new content of the file" }),
});

export type WriteParams = Static<typeof WriteParams>;

export interface WriteDetails {
  /** The absolute path written. */
  path: string;
  bytes: number;
  /** True when the file did not exist before. */
  created: boolean;
}

export function createWriteTool(): ToolDefinition<typeof WriteParams, WriteDetails> {
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
      const path = resolveToolPath(ctx.cwd, params.path);
      const bytes = Buffer.byteLength(params.content, "utf8");
      const { created } = await withFileMutationQueue(path, async () => {
        signal?.throwIfAborted();
        try {
          return await writeFileAtomic(path, params.content);
        } catch (error) {
          const message = fileErrorMessage(error, shown, "write");
          throw message ? new Error(message) : error;
        }
      });
      return {
        content: [{ type: "text", text: `Wrote ${bytes} bytes to ${shown}` }],
        details: { path, bytes, created },
      };
    },
  };
}

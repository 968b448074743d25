/**
 * `read`: a text file with line numbers (`cat -n` style), a window of it with offset/limit, or an image.
 * At most 2,000 lines or 50 KB reach the model; the notice says exactly how to read on.
 */
import { readFile, stat } from "node:fs/promises";
import type { ImageContent, TextContent, ToolDefinition } from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import {
  detectImage,
  displayPath,
  fileErrorMessage,
  looksBinary,
  MAX_IMAGE_BYTES,
  readHead,
} from "./file-io.js";
import { readLineWindow } from "./file-lines.js";
import { resolveToolPath } from "./paths.js";
import { formatSize, MAX_BYTES, MAX_LINES, truncateHead } from "./truncate.js";

const ReadParams = Type.Object({
  path: Type.String({ description: "Path of the file to read, relative to the working folder or absolute" }),
  offset: Type.Optional(
    Type.Integer({ minimum: 1, description: "Line number to start reading from (1-based); default 1" }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `Maximum number of lines to read; at most ${MAX_LINES} are shown`,
    }),
  ),
});

export type ReadParams = Static<typeof ReadParams>;

export interface ReadTruncation {
  /** Which limit cut the output. */
  limit: "lines" | "bytes";
  /** The lines shown (1-based, inclusive); `lastLine < firstLine` when not even one line fit. */
  firstLine: number;
  lastLine: number;
  /** Where the next read should start. */
  nextOffset: number;
}

export interface ReadDetails {
  /** The absolute path read. */
  path: string;
  /** Lines in the file (0 for an image). */
  totalLines: number;
  truncation?: ReadTruncation;
  image?: { mimeType: string; bytes: number };
}

/** The gutter of `cat -n`: the number right-aligned in six columns, then a tab. */
const numbered = (n: number, line: string) => `${String(n).padStart(6)}\t${line}`;

/** Models sometimes send numbers as strings ("10"); accept those before validation. */
function prepareArguments(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const args = { ...(raw as Record<string, unknown>) };
  for (const key of ["offset", "limit"]) {
    const value = args[key];
    if (typeof value === "string" && /^\s*\d+\s*$/.test(value)) args[key] = Number(value);
    if (value === null) delete args[key];
  }
  return args;
}

export function createReadTool(): ToolDefinition<typeof ReadParams, ReadDetails> {
  return {
    name: "read",
    label: "Read",
    description: [
      "Read a file from the file system. Text comes back with line numbers in the style of `cat -n`",
      "(the number, a tab, then the line exactly as it is in the file; the number is not part of the file).",
      `At most ${MAX_LINES} lines or ${formatSize(MAX_BYTES)} are returned per call; when the output is cut, a`,
      "notice at the end says which offset to use to continue. Use offset (1-based line) and limit to read a part",
      "of a large file. Images (PNG, JPEG, GIF, WebP) are returned as images. Binary files and directories cannot",
      "be read (use ls to list a directory).",
    ].join(" "),
    promptSnippet: "read: read a text file (with line numbers) or an image; offset/limit for large files",
    promptGuidelines: [
      "Read a file before editing it, and use the text exactly as shown (without the line-number gutter) in edit.",
      "For large files, read the part you need with offset and limit instead of reading everything.",
    ],
    annotations: {
      title: "Read file",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    parameters: ReadParams,
    prepareArguments,
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      signal?.throwIfAborted();
      const shown = displayPath(params.path);
      const path = resolveToolPath(ctx.cwd, params.path);
      const fail = (error: unknown): never => {
        const message = fileErrorMessage(error, shown, "read");
        throw message ? new Error(message) : error;
      };

      const info = await stat(path).catch(fail);
      if (info.isDirectory()) {
        throw new Error(`${shown} is a directory, not a file; use ls to list its contents`);
      }
      if (!info.isFile()) throw new Error(`${shown} is not a regular file; read cannot show it`);
      const head = await readHead(path).catch(fail);

      const mimeType = detectImage(head);
      if (mimeType) {
        if (info.size > MAX_IMAGE_BYTES) {
          throw new Error(
            `${shown} is an image of ${formatSize(info.size)}; read returns images up to ${formatSize(MAX_IMAGE_BYTES)}. Make a smaller copy first (for example with a resize command in bash).`,
          );
        }
        const data = await readFile(path, signal ? { signal } : {}).catch(fail);
        const content: (TextContent | ImageContent)[] = [
          { type: "text", text: `Read image file ${shown} [${mimeType}, ${formatSize(data.length)}]` },
          { type: "image", data: data.toString("base64"), mimeType },
        ];
        return { content, details: { path, totalLines: 0, image: { mimeType, bytes: data.length } } };
      }
      if (looksBinary(head)) {
        throw new Error(`${shown} is a binary file (${formatSize(info.size)}); read cannot show it`);
      }

      const offset = params.offset ?? 1;
      const wanted = Math.min(params.limit ?? Number.POSITIVE_INFINITY, MAX_LINES + 1);
      const window = await readLineWindow(path, {
        start: offset,
        maxLines: wanted,
        maxBytes: MAX_BYTES,
        ...(signal ? { signal } : {}),
      }).catch(fail);
      const { totalLines } = window;

      if (totalLines === 0) {
        if (offset > 1) throw new Error(`Offset ${offset} is beyond the end of ${shown}, which is empty`);
        return { content: [{ type: "text", text: `[${shown} is empty]` }], details: { path, totalLines } };
      }
      if (offset > totalLines) {
        throw new Error(
          `Offset ${offset} is beyond the end of ${shown}, which has ${totalLines} line${totalLines === 1 ? "" : "s"}`,
        );
      }

      const cut = truncateHead(
        window.lines.map((line, i) => numbered(offset + i, line)).join("\n"),
        MAX_LINES,
        MAX_BYTES,
      );
      const lastShown = offset + cut.keptLines - 1;

      if (cut.limit === "bytes" && cut.keptLines === 0) {
        const size = formatSize(window.lineBytes[0] ?? 0);
        const next = offset < totalLines ? ` Continue after it with offset=${offset + 1}.` : "";
        const text =
          `[Line ${offset} of ${shown} is ${size}, more than the ${formatSize(MAX_BYTES)} read can show. ` +
          `Read part of it with bash, e.g. \`sed -n '${offset}{p;q}' ${quote(path)} | head -c ${MAX_BYTES}\`.${next}]`;
        return {
          content: [{ type: "text", text }],
          details: {
            path,
            totalLines,
            truncation: { limit: "bytes", firstLine: offset, lastLine: offset - 1, nextOffset: offset + 1 },
          },
        };
      }

      let text = cut.text;
      let truncation: ReadTruncation | undefined;
      if (cut.truncated && lastShown < totalLines) {
        const limitText = cut.limit === "bytes" ? ` (${formatSize(MAX_BYTES)} limit)` : "";
        text += `\n\n[Showing lines ${offset}-${lastShown} of ${totalLines}${limitText}. Use offset=${lastShown + 1} to continue.]`;
        truncation = {
          limit: cut.limit ?? "lines",
          firstLine: offset,
          lastLine: lastShown,
          nextOffset: lastShown + 1,
        };
      } else if (lastShown < totalLines) {
        const more = totalLines - lastShown;
        text += `\n\n[${more} more line${more === 1 ? "" : "s"} in the file. Use offset=${lastShown + 1} to continue.]`;
      }
      return {
        content: [{ type: "text", text }],
        details: { path, totalLines, ...(truncation ? { truncation } : {}) },
      };
    },
  };
}

/** Single-quotes a path for a shell command when it needs it. */
function quote(path: string): string {
  return /^[\w./-]+$/.test(path) ? path : `'${path.replace(/'/g, "'\\''")}'`;
}

/**
 * `read`: a text file with line numbers (`cat -n` style), a window of it with offset/limit, or an image.
 * At most 2,000 lines or 50 KB reach the model; the notice says exactly how to read on.
 */
import { constants, createReadStream } from "node:fs";
import { access, readFile, stat } from "node:fs/promises";
import {
  formatSize,
  type ImageContent,
  DEFAULT_MAX_BYTES as MAX_BYTES,
  DEFAULT_MAX_LINES as MAX_LINES,
  type TextContent,
  truncateHead,
} from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import type { CoreTool } from "./core-tool.js";
import {
  detectImage,
  displayPath,
  fileErrorMessage,
  looksBinary,
  MAX_IMAGE_BYTES,
  SNIFF_BYTES,
} from "./file-io.js";
import { readLineWindow } from "./file-lines.js";
import { resolveToolPath, toolCwd } from "./paths.js";

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

/**
 * Everything `read` does to the file system, so a sandbox or a remote machine can take its place (pi's
 * `ReadOperations`, plus two optional methods the local file system offers so large files are never held whole).
 */
export interface ReadOperations {
  /** The whole file. */
  readFile(absolutePath: string): Promise<Buffer>;
  /** Rejects when the file cannot be read (with an `ENOENT`/`EACCES` code for the usual message). */
  access(absolutePath: string): Promise<void>;
  /** An image's MIME type, or null/undefined for other files; without it, read sniffs the first bytes. */
  detectImageMimeType?(absolutePath: string): Promise<string | null | undefined>;
  /** The kind and size of the entry, so directories and oversized images are refused before reading. */
  stat?(absolutePath: string): Promise<{ isFile(): boolean; isDirectory(): boolean; size: number }>;
  /** The file's bytes from `start` to `end` (inclusive, as `fs.createReadStream`), in chunks. */
  createReadStream?(
    absolutePath: string,
    options: { start?: number; end?: number; signal?: AbortSignal },
  ): AsyncIterable<Buffer>;
}

export interface ReadToolOptions {
  /** Default: the local file system. */
  operations?: ReadOperations;
}

/** The local file system, streamed. */
export function createLocalReadOperations(): ReadOperations {
  return {
    readFile: (path) => readFile(path),
    access: (path) => access(path, constants.R_OK),
    stat: (path) => stat(path),
    createReadStream: (path, options) =>
      createReadStream(path, {
        highWaterMark: 256 * 1024,
        ...(options.start !== undefined ? { start: options.start } : {}),
        ...(options.end !== undefined ? { end: options.end } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      }),
  };
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

/** Files up to this size are read whole (one read); larger ones stream, so they are never held whole. */
const WHOLE_FILE_BYTES = 256 * 1024;

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

/**
 * The `read` tool. `cwd` is the folder relative paths resolve against; without it, the session's working folder
 * at each call.
 */
export function createReadTool(
  cwd?: string,
  options: ReadToolOptions = {},
): CoreTool<typeof ReadParams, ReadDetails> {
  const ops = options.operations ?? createLocalReadOperations();
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
      const path = resolveToolPath(toolCwd(cwd, ctx), params.path);
      const fail = (error: unknown): never => {
        const message = fileErrorMessage(error, shown, "read");
        throw message ? new Error(message) : error;
      };

      await ops.access(path).catch(fail);
      let size: number | undefined;
      if (ops.stat) {
        const info = await ops.stat(path).catch(fail);
        if (info.isDirectory()) {
          throw new Error(`${shown} is a directory, not a file; use ls to list its contents`);
        }
        if (!info.isFile()) throw new Error(`${shown} is not a regular file; read cannot show it`);
        size = info.size;
      }
      // Without a stream the operations can only give the whole file, which then serves every step below; so does
      // a file small enough to hold (one read instead of opening it twice for a stream).
      const whole =
        ops.createReadStream && (size === undefined || size > WHOLE_FILE_BYTES)
          ? undefined
          : await ops.readFile(path).catch(fail);
      const head = whole
        ? whole.subarray(0, SNIFF_BYTES)
        : await collect(ops.createReadStream!(path, { start: 0, end: SNIFF_BYTES - 1 })).catch(fail);
      size ??= whole!.length;

      const detected = ops.detectImageMimeType
        ? await ops.detectImageMimeType(path).catch(fail)
        : detectImage(head);
      const mimeType = detected?.startsWith("image/") ? detected : undefined;
      if (mimeType) {
        if (size > MAX_IMAGE_BYTES) {
          throw new Error(
            `${shown} is an image of ${formatSize(size)}; read returns images up to ${formatSize(MAX_IMAGE_BYTES)}. Make a smaller copy first (for example with a resize command in bash).`,
          );
        }
        const data = whole ?? (await ops.readFile(path).catch(fail));
        const content: (TextContent | ImageContent)[] = [
          { type: "text", text: `Read image file ${shown} [${mimeType}, ${formatSize(data.length)}]` },
          { type: "image", data: data.toString("base64"), mimeType },
        ];
        return { content, details: { path, totalLines: 0, image: { mimeType, bytes: data.length } } };
      }
      if (looksBinary(head)) {
        throw new Error(`${shown} is a binary file (${formatSize(size)}); read cannot show it`);
      }

      const offset = params.offset ?? 1;
      const wanted = Math.min(params.limit ?? Number.POSITIVE_INFINITY, MAX_LINES + 1);
      const chunks = whole ? [whole] : ops.createReadStream!(path, signal ? { signal } : {});
      const window = await readLineWindow(chunks, {
        start: offset,
        maxLines: wanted,
        maxBytes: MAX_BYTES,
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

      const cut = truncateHead(window.lines.map((line, i) => numbered(offset + i, line)).join("\n"), {
        maxLines: MAX_LINES,
        maxBytes: MAX_BYTES,
      });
      const lastShown = offset + cut.outputLines - 1;

      if (cut.truncatedBy === "bytes" && cut.outputLines === 0) {
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

      let text = cut.content;
      let truncation: ReadTruncation | undefined;
      if (cut.truncated && lastShown < totalLines) {
        const limitText = cut.truncatedBy === "bytes" ? ` (${formatSize(MAX_BYTES)} limit)` : "";
        text += `\n\n[Showing lines ${offset}-${lastShown} of ${totalLines}${limitText}. Use offset=${lastShown + 1} to continue.]`;
        truncation = {
          limit: cut.truncatedBy ?? "lines",
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

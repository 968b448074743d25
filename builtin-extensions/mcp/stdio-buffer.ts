/**
 * Reading a stdio MCP server's output, one JSON-RPC message per line, in place of the SDK's own reader. The SDK's
 * reader holds at most 10 MB of unread output and, past that, throws, which closes the transport: one large tool
 * result ("MCP error -32000: Connection closed") took the whole server down with it. This one collects a line
 * as a list of chunks (joined once, at its end, rather than copied on every chunk), takes messages up to
 * `maxMessageBytes`, and skips a longer one without keeping it: its byte count and its id (read from the
 * line's first and last bytes, where JSON-RPC writers put `id`) become an error answer to the request that
 * asked for it, so the caller hears why and the connection stays open.
 */
import { formatSize } from "@knightcodeai/cli/kit";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

/**
 * One message (a line) above this is dropped; the request it answers fails instead. Reading one takes a few times
 * its size in memory (the bytes, the string, the parsed object), so the bound is well above a 50 MB result but
 * far below what would strain the process.
 */
export const MAX_MCP_MESSAGE_BYTES = 64 * 1024 * 1024;
/** The JSON-RPC error code of the answer that stands in for a dropped message (implementation-defined range). */
export const MESSAGE_TOO_LARGE_CODE = -32090;
/** How many bytes of a skipped line's start and end are kept to find its id. */
const EDGE_BYTES = 512;

export interface MessageBufferOptions {
  maxMessageBytes: number;
  /** Parses one line (the SDK's `deserializeMessage`); what it throws reaches the transport's `onerror`. */
  parse(line: string): JSONRPCMessage;
}

/** What `StdioClientTransport` calls on its read buffer. */
export class MessageBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Set while skipping a line that outgrew the limit. */
  private skipped: { bytes: number; head: Buffer; tail: Buffer } | undefined;
  private queue: (JSONRPCMessage | Error)[] = [];

  constructor(private readonly options: MessageBufferOptions) {}

  append(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      this.add(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  /** The next message read, `null` when none is complete; a line that failed to parse is thrown. */
  readMessage(): JSONRPCMessage | null {
    const next = this.queue.shift();
    if (next instanceof Error) throw next;
    return next ?? null;
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
    this.skipped = undefined;
    this.queue = [];
  }

  private add(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipped) {
      this.skipped.bytes += piece.length;
      this.skipped.tail = lastBytes(Buffer.concat([this.skipped.tail, lastBytes(piece)]));
      return;
    }
    if (this.size + piece.length > this.options.maxMessageBytes) {
      const head = Buffer.concat(this.chunks, this.size).subarray(0, EDGE_BYTES);
      this.skipped = {
        bytes: this.size + piece.length,
        head: Buffer.concat([head, piece.subarray(0, EDGE_BYTES)]).subarray(0, EDGE_BYTES),
        tail: lastBytes(Buffer.concat([...this.chunks.slice(-1), piece].map((b) => lastBytes(b)))),
      };
      this.chunks = [];
      this.size = 0;
      return;
    }
    this.chunks.push(piece);
    this.size += piece.length;
  }

  private endLine(): void {
    const skipped = this.skipped;
    if (skipped) {
      this.skipped = undefined;
      this.queue.push(this.tooLarge(skipped.bytes, skipped.head, skipped.tail));
      return;
    }
    const line = Buffer.concat(this.chunks, this.size).toString("utf8").replace(/\r$/, "");
    this.chunks = [];
    this.size = 0;
    if (line.trim() === "") return;
    try {
      this.queue.push(this.options.parse(line));
    } catch (error) {
      this.queue.push(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** The error answer for a dropped line, or, when its id cannot be found, an error for the transport. */
  private tooLarge(bytes: number, head: Buffer, tail: Buffer): JSONRPCMessage | Error {
    const message = `the answer was ${formatSize(bytes)}, over the ${formatSize(this.options.maxMessageBytes)} limit for one MCP message, so it was dropped`;
    const id = messageId(head.toString("utf8"), tail.toString("utf8"));
    if (id === undefined) return new Error(`An MCP message without a readable id was dropped: ${message}`);
    return {
      jsonrpc: "2.0",
      id,
      error: { code: MESSAGE_TOO_LARGE_CODE, message, data: { bytes, limit: this.options.maxMessageBytes } },
    };
  }
}

/**
 * The top-level `id` of a JSON-RPC response from its first and last bytes: `{"jsonrpc":"2.0","id":…` at the start
 * (Python and most writers), or `…,"id":…}` as the very end (the TypeScript SDK puts `result` first). Only a
 * response is worth answering: a request or notification that large is dropped without a stand-in.
 */
export function messageId(head: string, tail: string): RequestId | undefined {
  const value = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
  const atStart = new RegExp(
    String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}\s*,\s*"(?:result|error)"`,
  ).exec(head);
  const atEnd = /^\s*\{\s*"(?:result|error)"/.test(head)
    ? new RegExp(String.raw`[,{]\s*"id"\s*:\s*${value}\s*\}\s*$`).exec(tail)
    : null;
  const found = atStart?.[1] ?? atEnd?.[1];
  if (found === undefined) return undefined;
  return JSON.parse(found) as RequestId;
}

function lastBytes(buffer: Buffer): Buffer {
  return buffer.length <= EDGE_BYTES ? buffer : buffer.subarray(buffer.length - EDGE_BYTES);
}

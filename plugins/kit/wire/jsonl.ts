/**
 * Strict JSONL framing (RPC mode and the app-server): records end at LF only (an optional CR before it is dropped). Unicode line and paragraph
 * separators inside JSON strings are not record breaks, which is why Node's readline cannot be used here.
 *
 * Lines are split as bytes (an LF byte never occurs inside a multi-byte UTF-8 sequence) and decoded one line at a
 * time, so a line longer than the cap is never held whole: once it passes the cap its bytes are dropped until the
 * next LF and the reader reports its size instead. Invalid UTF-8 decodes to U+FFFD and is left to the JSON parser.
 */
import { RPC_MAX_FRAME_BYTES } from "./frames.js";

/** One line of input, or the size of a line that was too long to read. */
export type JsonlItem = { line: string } | { tooLong: number };

export class JsonlReader {
  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly maxBytes = RPC_MAX_FRAME_BYTES,
  ) {}

  /** Yields complete lines (and over-long ones as their size) until end of input or until the signal aborts. */
  async *lines(signal?: AbortSignal): AsyncGenerator<JsonlItem> {
    // Bytes of the current line so far; `dropped` counts them instead once the line passed the cap.
    let parts: Buffer[] = [];
    let held = 0;
    let dropped = -1;
    const chunks = this.input[Symbol.asyncIterator]();
    const aborted = new Promise<IteratorResult<unknown>>((resolve) => {
      if (signal?.aborted) resolve({ done: true, value: undefined });
      signal?.addEventListener("abort", () => resolve({ done: true, value: undefined }), { once: true });
    });
    const finish = (): JsonlItem => {
      const item: JsonlItem =
        dropped >= 0 ? { tooLong: dropped } : { line: decodeLine(Buffer.concat(parts, held)) };
      parts = [];
      held = 0;
      dropped = -1;
      return item;
    };
    const take = (piece: Buffer) => {
      if (dropped >= 0) dropped += piece.length;
      else if (held + piece.length > this.maxBytes) {
        dropped = held + piece.length;
        parts = [];
        held = 0;
      } else if (piece.length > 0) {
        parts.push(piece);
        held += piece.length;
      }
    };
    for (;;) {
      const next = await Promise.race([chunks.next(), aborted]);
      if (next.done) break;
      const value = next.value as Buffer | string;
      const chunk = typeof value === "string" ? Buffer.from(value, "utf8") : value;
      let start = 0;
      let newline = chunk.indexOf(10, start);
      while (newline >= 0) {
        take(chunk.subarray(start, newline));
        yield finish();
        start = newline + 1;
        newline = chunk.indexOf(10, start);
      }
      take(chunk.subarray(start));
    }
    // A last record without its LF still counts (a client may close stdin right after writing it).
    if ((held > 0 || dropped >= 0) && !signal?.aborted) {
      const item = finish();
      if (!("line" in item) || item.line.trim() !== "") yield item;
    }
  }
}

function decodeLine(bytes: Buffer): string {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
  return bytes.toString("utf8", 0, end);
}

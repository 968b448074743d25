/**
 * Strict JSONL framing: records end at LF only (an optional CR before it is dropped). Unicode line and paragraph
 * separators inside JSON strings are not record breaks, which is why Node's readline cannot be used here.
 */
import { StringDecoder } from "node:string_decoder";

export class JsonlReader {
  constructor(private readonly input: NodeJS.ReadableStream) {}

  /** Yields complete lines until end of input or until the signal aborts. */
  async *lines(signal?: AbortSignal): AsyncGenerator<string> {
    const decoder = new StringDecoder("utf8");
    let buffer = "";
    const chunks = this.input[Symbol.asyncIterator]();
    const aborted = new Promise<IteratorResult<unknown>>((resolve) => {
      if (signal?.aborted) resolve({ done: true, value: undefined });
      signal?.addEventListener("abort", () => resolve({ done: true, value: undefined }), { once: true });
    });
    for (;;) {
      const next = await Promise.race([chunks.next(), aborted]);
      if (next.done) break;
      const chunk = next.value as Buffer | string;
      buffer += typeof chunk === "string" ? chunk : decoder.write(chunk);
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        yield line.endsWith("\r") ? line.slice(0, -1) : line;
        newline = buffer.indexOf("\n");
      }
    }
    buffer += decoder.end();
    // A last record without its LF still counts (a client may close stdin right after writing it).
    if (buffer.trim() !== "" && !signal?.aborted) yield buffer.endsWith("\r") ? buffer.slice(0, -1) : buffer;
  }
}

/**
 * A small Server-Sent Events reader for Chat Completions streams. Its own, not the SDK's, because the provider
 * must see what the SDK's reader hides: the `[DONE]` terminator (a stream that just stops is incomplete), a
 * malformed event (reported as an error without the SDK logging to the console), and the `error:` field older
 * llama.cpp servers send for a failure mid-stream (`error: {"code":500,"message":"…","type":"server_error"}`).
 */

export interface SseMessage {
  /** The `event:` name, when the server sent one. */
  event?: string;
  /** The `data:` lines joined with newlines, or the value of an `error:` line. */
  data: string;
  /** `error` when the message came from an `error:` line (llama.cpp), else `data`. */
  field: "data" | "error";
}

/** Splits a byte stream into SSE messages. Comments (`: keep-alive`) and unknown fields are skipped. */
export class SseDecoder {
  private readonly text = new TextDecoder();
  private buffer = "";
  private data: string[] = [];
  private error: string | undefined;
  private event: string | undefined;

  /** Feeds bytes; returns the messages they complete. */
  push(bytes: Uint8Array): SseMessage[] {
    this.buffer += this.text.decode(bytes, { stream: true });
    return this.drain(false);
  }

  /**
   * The end of the stream. A last message without its blank line is kept only when its data is complete
   * (`[DONE]` or parseable JSON): a message cut off by a dropped connection must not look like a malformed one.
   */
  end(): SseMessage[] {
    this.buffer += this.text.decode();
    const messages = this.drain(true);
    const last = this.take();
    if (last && isComplete(last.data)) messages.push(last);
    return messages;
  }

  private drain(final: boolean): SseMessage[] {
    const messages: SseMessage[] = [];
    for (;;) {
      const match = /\r\n|\n|\r/.exec(this.buffer);
      if (!match) break;
      // A lone \r at the end of the buffer may be the first half of \r\n.
      if (!final && match[0] === "\r" && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const message = this.line(line);
      if (message) messages.push(message);
    }
    if (final && this.buffer) {
      const message = this.line(this.buffer);
      this.buffer = "";
      if (message) messages.push(message);
    }
    return messages;
  }

  private line(line: string): SseMessage | undefined {
    if (line === "") return this.take();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") this.data.push(value);
    else if (name === "event") this.event = value;
    else if (name === "error") this.error = value;
    return undefined;
  }

  private take(): SseMessage | undefined {
    const { data, error, event } = this;
    this.data = [];
    this.error = undefined;
    this.event = undefined;
    if (error !== undefined) return { field: "error", data: error, ...(event ? { event } : {}) };
    if (data.length === 0) return undefined;
    return { field: "data", data: data.join("\n"), ...(event ? { event } : {}) };
  }
}

function isComplete(data: string): boolean {
  if (data.trim() === "[DONE]") return true;
  try {
    JSON.parse(data);
    return true;
  } catch {
    return false;
  }
}

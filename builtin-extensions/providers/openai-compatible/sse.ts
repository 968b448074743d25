/**
 * A small Server-Sent Events reader for Chat Completions streams. Its own, not the SDK's, because the provider
 * must see what the SDK's reader hides: the `[DONE]` terminator (a stream that just stops is incomplete), a
 * malformed event (reported as an error without the SDK logging to the console), and the `error:` field older
 * llama.cpp servers send for a failure mid-stream (`error: {"code":500,"message":"…","type":"server_error"}`).
 */
import { SseLineSplitter } from "@knightcodeai/cli/kit";

export interface SseMessage {
  /** The `event:` name, when the server sent one. */
  event?: string;
  /** The `data:` lines joined with newlines, or the value of an `error:` line. */
  data: string;
  /** `error` when the message came from an `error:` line (llama.cpp), else `data`. */
  field: "data" | "error";
}

/**
 * Splits a byte stream into SSE messages. Comments (`: keep-alive`) and unknown fields are skipped. The kit's
 * SseLineSplitter finds the lines (linear in the bytes, an event capped at SSE_MAX_EVENT_BYTES); each line is
 * decoded once, when it is complete.
 */
export class SseDecoder {
  private readonly text = new TextDecoder("utf-8", { ignoreBOM: true });
  private readonly splitter: SseLineSplitter;
  private first = true;
  private data: string[] = [];
  private error: string | undefined;
  private event: string | undefined;
  private messages: SseMessage[] = [];
  private sawData = false;

  constructor(maxEventBytes?: number) {
    this.splitter = new SseLineSplitter(maxEventBytes);
  }

  /**
   * Feeds bytes; returns the messages they complete, and whether they carried anything but comments and blank
   * lines (a keep-alive comment must not count as a sign of life, data arriving must).
   */
  push(bytes: Uint8Array): { messages: SseMessage[]; data: boolean } {
    this.sawData = false;
    this.splitter.push(bytes, (line, comment) => this.line(line, comment));
    const data = this.sawData || this.splitter.dataPending;
    return { messages: this.takeMessages(), data };
  }

  /**
   * The end of the stream. A last message without its blank line is kept only when its data is complete
   * (`[DONE]` or parseable JSON): a message cut off by a dropped connection must not look like a malformed one.
   */
  end(): SseMessage[] {
    this.splitter.end((line, comment) => this.line(line, comment));
    const messages = this.takeMessages();
    const last = this.take();
    if (last && isComplete(last.data)) messages.push(last);
    return messages;
  }

  private takeMessages(): SseMessage[] {
    const messages = this.messages;
    this.messages = [];
    return messages;
  }

  private line(bytes: Uint8Array, comment: boolean): void {
    if (bytes.length === 0) {
      this.first = false;
      const message = this.take();
      if (message) this.messages.push(message);
      return;
    }
    const first = this.first;
    this.first = false;
    if (comment) return;
    this.sawData = true;
    let line = this.text.decode(bytes);
    // A byte order mark may open the stream, nowhere else.
    if (first && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "data") this.data.push(value);
    else if (name === "event") this.event = value;
    else if (name === "error") this.error = value;
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

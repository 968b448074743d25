/**
 * Writes JSON-mode records to stdout and keeps what waits for a slow reader small. Stdout on a pipe is
 * asynchronous: a model streaming a tool call's arguments makes one `message_update` per delta (a few bytes each,
 * hundreds of thousands of them), and a reader slower than that would otherwise leave every record queued in
 * memory (a 10 MB argument held over 500 MB). While stdout has not drained, a delta record that follows a delta of
 * the same type for the same content block is merged into it: the deltas are appended and the later cumulative
 * `usage` kept, which is exactly what a reader reconstructing the stream would have made of the two (json.md). The
 * queue so holds about the bytes of the content, and the stream stays delta-only with the same fields. Records are
 * written with the kit's safe serialiser: a value an extension put in an event that JSON cannot write is replaced,
 * never a crash of the stream.
 */
import { stringifySafely } from "@knightcodeai/cli/kit";

/** One wire record, as `toJsonEvent` builds it. */
export type JsonRecord = { type: string; [field: string]: unknown };

const DELTAS = new Set(["text_delta", "thinking_delta", "toolcall_delta"]);

interface DeltaRecord {
  type: "message_update";
  usage: unknown;
  assistantMessageEvent: { type: string; contentIndex: number; delta: string };
}

export class RecordWriter {
  /** Serialised records waiting for stdout to drain, oldest first from `head`. */
  private queued: string[] = [];
  private head = 0;
  /** The last delta record while stdout is congested: later deltas of its block are merged into it. */
  private open: DeltaRecord | undefined;
  private congested = false;
  private closed = false;
  private readonly emptied: Array<() => void> = [];

  constructor(private readonly out: NodeJS.WritableStream) {
    // A reader that went away (EPIPE) never drains: what is queued can be dropped, and nobody waits for it.
    const close = () => {
      this.closed = true;
      this.queued = [];
      this.head = 0;
      this.open = undefined;
      this.settle();
    };
    out.once("close", close);
    out.once("error", close);
  }

  write(record: JsonRecord): void {
    if (this.closed) return;
    if (!this.congested) {
      if (!this.out.write(`${stringifySafely(record).text}\n`)) this.waitForDrain();
      return;
    }
    const delta = asDelta(record);
    const open = this.open;
    if (
      delta &&
      open &&
      open.assistantMessageEvent.type === delta.assistantMessageEvent.type &&
      open.assistantMessageEvent.contentIndex === delta.assistantMessageEvent.contentIndex
    ) {
      open.assistantMessageEvent.delta += delta.assistantMessageEvent.delta;
      open.usage = delta.usage;
      return;
    }
    this.closeOpen();
    // Serialised now: the objects of a record (a message, a tool result) may change after the event.
    if (delta) this.open = { ...delta, assistantMessageEvent: { ...delta.assistantMessageEvent } };
    else this.queued.push(`${stringifySafely(record).text}\n`);
  }

  /** Settles once every record written so far has been handed to stdout (or stdout closed). */
  flushed(): Promise<void> {
    if (!this.congested || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.emptied.push(resolve));
  }

  private waitForDrain(): void {
    this.congested = true;
    this.out.once("drain", () => this.drain());
  }

  private drain(): void {
    if (this.closed) return;
    this.closeOpen();
    while (this.head < this.queued.length) {
      const line = this.queued[this.head]!;
      this.queued[this.head++] = "";
      if (!this.out.write(line)) {
        this.compact();
        this.out.once("drain", () => this.drain());
        return;
      }
    }
    this.queued = [];
    this.head = 0;
    this.congested = false;
    this.settle();
  }

  private closeOpen(): void {
    if (!this.open) return;
    this.queued.push(`${stringifySafely(this.open).text}\n`);
    this.open = undefined;
  }

  /** Drops the written part of the queue once it is the larger part, so draining stays linear. */
  private compact(): void {
    if (this.head * 2 < this.queued.length) return;
    this.queued = this.queued.slice(this.head);
    this.head = 0;
  }

  private settle(): void {
    for (const resolve of this.emptied.splice(0)) resolve();
  }
}

function asDelta(record: JsonRecord): DeltaRecord | undefined {
  if (record.type !== "message_update") return undefined;
  const event = record.assistantMessageEvent as { type?: unknown; contentIndex?: unknown; delta?: unknown };
  return DELTAS.has(event?.type as string) &&
    typeof event.contentIndex === "number" &&
    typeof event.delta === "string"
    ? (record as unknown as DeltaRecord)
    : undefined;
}

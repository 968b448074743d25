/**
 * Writes JSON-mode records to stdout and keeps both the output and what waits for a slow reader proportional to the
 * content. A model streaming a tool call's arguments makes one `message_update` per delta: a few bytes of argument
 * each, but every record also carries the cumulative `usage` (about 250 bytes in all), so one record per 4-byte
 * delta made a 2 MB `write` call 48 MB of output, and a reader slower than that would also leave every record queued
 * in memory (a 10 MB argument held over 500 MB).
 *
 * So, past the first 64 delta records of a content block, deltas that come together are merged: a delta record is
 * held until the end of the current turn of the event loop (all the deltas of one read from the provider's socket
 * come in one turn), and a delta of the same type for the same block that follows it is merged into it: the deltas
 * are appended and the later cumulative `usage` kept, which is exactly what a reader reconstructing the stream would
 * have made of the two (json.md). The held record is written at the end of the turn, before any other record, or,
 * while stdout has not drained, once it drains (while it has not, every delta is merged from the first). A short
 * answer, or a model streaming at its usual pace, still gets one record per delta; a long burst gets one record per
 * read. The stream stays delta-only with the same fields.
 * Records are written with the kit's safe serialiser: a value an extension put in an event that JSON cannot write
 * is replaced, never a crash of the stream.
 */
import { stringifySafely } from "@knightcodeai/cli/kit";

/** One wire record, as `toJsonEvent` builds it. */
export type JsonRecord = { type: string; [field: string]: unknown };

const DELTAS = new Set(["text_delta", "thinking_delta", "toolcall_delta"]);
/** Delta records of one content block always written one by one; after them, deltas that come together are merged. */
const SEPARATE_RECORDS = 64;

interface DeltaRecord {
  type: "message_update";
  usage: unknown;
  assistantMessageEvent: { type: string; contentIndex: number; delta: string };
}

export class RecordWriter {
  /** Serialised records waiting for stdout to drain, oldest first from `head`. */
  private queued: string[] = [];
  private head = 0;
  /** The last delta record, not written yet: later deltas of its block are merged into it. */
  private open: DeltaRecord | undefined;
  /** Writes `open` at the end of this turn of the event loop, unless stdout is congested by then. */
  private release: NodeJS.Immediate | undefined;
  /** The content block (`<event type>:<index>`) of the latest delta, and the records written for it one by one. */
  private block: string | undefined;
  private blockRecords = 0;
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
    if (!delta) {
      if (record.type === "message_start") this.block = undefined;
      this.emit(`${stringifySafely(record).text}\n`);
      return;
    }
    const block = `${delta.assistantMessageEvent.type}:${delta.assistantMessageEvent.contentIndex}`;
    if (block !== this.block) {
      this.block = block;
      this.blockRecords = 0;
    }
    this.release ??= setImmediate(() => {
      this.release = undefined;
      if (!this.congested) this.closeOpen();
    });
    if (!this.congested && this.blockRecords < SEPARATE_RECORDS) {
      this.blockRecords++;
      this.emit(`${stringifySafely(record).text}\n`);
      return;
    }
    // Copied now: the objects of an event may change after it.
    this.open = { ...delta, assistantMessageEvent: { ...delta.assistantMessageEvent } };
  }

  /** Settles once every record written so far has been handed to stdout (or stdout closed). */
  flushed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (!this.congested) this.closeOpen();
    if (!this.congested) return Promise.resolve();
    return new Promise((resolve) => this.emptied.push(resolve));
  }

  /** Writes one serialised record, or queues it while stdout has not drained. */
  private emit(line: string): void {
    if (this.congested) this.queued.push(line);
    else if (!this.out.write(line)) this.waitForDrain();
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
    const line = `${stringifySafely(this.open).text}\n`;
    this.open = undefined;
    this.emit(line);
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

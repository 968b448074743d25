/**
 * Server-Sent Events framing, linear in the bytes received and with a cap on one event's size. A server that sends
 * one 60 MB line (or never ends an event) must fail the request promptly with a clear error, not keep the process
 * copying and re-scanning a growing buffer: each byte here is looked at once, the bytes of a line are copied once
 * (when the line ends), and an event larger than the cap ends the request with a StreamLineTooLongError.
 *
 * Two users: the openai-completions provider reads its stream with SseLineSplitter, and the SDK-based providers
 * (Anthropic, OpenAI) hand their SDK a body passed through `guardSseBody`, which enforces the same cap and passes
 * the bytes on in whole lines, so the SDK's own reader never re-scans a partial line.
 */

/**
 * The most bytes one SSE event may take: its lines, from the first to the blank line that ends it. A real event is
 * far smaller (a model's whole output is a few MB at most, and streams send it in many small events).
 */
export const SSE_MAX_EVENT_BYTES = 16 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;

/** A stream event (one line, or several up to the blank line) over the cap; the request runner names the server. */
export class StreamLineTooLongError extends Error {
  constructor(readonly limit: number) {
    super(
      `an event stream line (or one event's lines together) longer than ${formatLimit(limit)}, so KnightCode ` +
        "stopped reading the answer. A server that sends this much in one event is misbehaving; check the " +
        "server or proxy at this address.",
    );
    this.name = new.target.name;
  }
}

function formatLimit(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/**
 * Splits SSE bytes into lines at CR, LF or CRLF (an LF or CR byte never occurs inside a multi-byte UTF-8 sequence,
 * so bytes can be split before they are decoded).
 */
export class SseLineSplitter {
  /** The unfinished line's bytes, when lines are kept. */
  private parts: Uint8Array[] = [];
  /** Bytes of the unfinished line. */
  private held = 0;
  /** Bytes of the current event's finished lines, terminators included. */
  private eventBytes = 0;
  /** The unfinished line starts with ":" (a comment); undefined while it has no byte yet. */
  private comment: boolean | undefined;
  /** The last chunk ended with CR: an LF first in the next one belongs to it. */
  private afterCr = false;

  constructor(
    private readonly maxEventBytes = SSE_MAX_EVENT_BYTES,
    /** False when only where lines end matters (the bytes are passed on as they are): nothing is held. */
    private readonly keepLines = true,
  ) {}

  /**
   * Feeds bytes. Calls `line` with each line they complete (its bytes without the terminator; empty when lines
   * are not kept) and returns the offset in `bytes` just past the last line terminator, 0 when there is none.
   * Throws StreamLineTooLongError when the current event passes the cap.
   */
  push(bytes: Uint8Array, line: (bytes: Uint8Array, comment: boolean) => void = () => {}): number {
    let start = 0;
    let lastEnd = 0;
    if (this.afterCr && bytes.length > 0) {
      this.afterCr = false;
      if (bytes[0] === LF) start = lastEnd = 1;
    }
    let lf = bytes.indexOf(LF, start);
    let cr = bytes.indexOf(CR, start);
    while (lf !== -1 || cr !== -1) {
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      this.take(bytes, start, end);
      const ended = this.finishLine();
      line(ended.bytes, ended.comment);
      start = end + 1;
      if (bytes[end] === CR) {
        if (start === bytes.length) this.afterCr = true;
        else if (bytes[start] === LF) start++;
      }
      lastEnd = start;
      if (lf !== -1 && lf < start) lf = bytes.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = bytes.indexOf(CR, start);
    }
    this.take(bytes, start, bytes.length);
    return lastEnd;
  }

  /** The end of the stream: the unfinished line, if any, as a last line. */
  end(line: (bytes: Uint8Array, comment: boolean) => void = () => {}): void {
    this.afterCr = false;
    if (this.held === 0) return;
    const ended = this.finishLine();
    line(ended.bytes, ended.comment);
  }

  /** Bytes of an unfinished line that is not a comment are waiting: a long event is on its way. */
  get dataPending(): boolean {
    return this.held > 0 && this.comment === false;
  }

  private take(bytes: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    if (this.comment === undefined) this.comment = bytes[from] === COLON;
    this.held += to - from;
    if (this.eventBytes + this.held > this.maxEventBytes) {
      this.parts = [];
      throw new StreamLineTooLongError(this.maxEventBytes);
    }
    // Views into the chunks, joined into one buffer (one copy) when the line is complete.
    if (this.keepLines) this.parts.push(bytes.subarray(from, to));
  }

  private finishLine(): { bytes: Uint8Array; comment: boolean } {
    const bytes = this.keepLines ? join(this.parts, this.held) : EMPTY;
    const comment = this.comment === true;
    // A blank line ends the event.
    this.eventBytes = this.held === 0 ? 0 : this.eventBytes + this.held + 1;
    this.parts = [];
    this.held = 0;
    this.comment = undefined;
    return { bytes, comment };
  }
}

const EMPTY = new Uint8Array(0);

function join(parts: Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const joined = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

/**
 * An SSE response body for an SDK's reader: the same bytes, in chunks that end where a line ends (a line's bytes
 * are held until it is complete, then passed on in one piece), and an error once an event passes the cap. The
 * SDKs' readers append each chunk to what they hold and search it again from the start; whole lines keep that
 * linear.
 */
export function guardSseBody(
  body: ReadableStream<Uint8Array>,
  maxEventBytes = SSE_MAX_EVENT_BYTES,
): ReadableStream<Uint8Array> {
  const splitter = new SseLineSplitter(maxEventBytes, false);
  const reader = body.getReader();
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          if (heldBytes > 0) controller.enqueue(join(held, heldBytes));
          held = [];
          controller.close();
          return;
        }
        let end: number;
        try {
          end = splitter.push(value);
        } catch (error) {
          held = [];
          await reader.cancel(error).catch(() => {});
          controller.error(error);
          return;
        }
        if (end === 0) {
          held.push(value);
          heldBytes += value.length;
          continue;
        }
        held.push(value.subarray(0, end));
        controller.enqueue(join(held, heldBytes + end));
        held = end < value.length ? [value.slice(end)] : [];
        heldBytes = value.length - end;
        return;
      }
    },
    cancel(reason) {
      held = [];
      return reader.cancel(reason);
    },
  });
}

/**
 * `fetch` for an SDK client: an event-stream answer's body goes through `guardSseBody`; everything else (error
 * answers, JSON) is the answer as it came.
 */
export function guardedSseFetch(
  fetchImpl: typeof fetch = globalThis.fetch,
  maxEventBytes = SSE_MAX_EVENT_BYTES,
): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (!response.body || !/text\/event-stream/i.test(response.headers.get("content-type") ?? "")) {
      return response;
    }
    const guarded = new Response(guardSseBody(response.body, maxEventBytes), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // SDKs name the address in their errors and logs; a constructed Response has none.
    Object.defineProperty(guarded, "url", { value: response.url });
    return guarded;
  };
}

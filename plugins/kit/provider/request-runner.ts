/**
 * The request lifecycle every provider goes through, so the provider hooks run in one order, aborts and silences
 * end a request the same way, and each failure means the same thing whichever wire API a model speaks:
 *
 *   1. abort pre-check (an aborted signal ends the request before anything runs);
 *   2. `refuse()`: what makes the request impossible (no key, no endpoint), before any hook;
 *   3. build the payload; `before_provider_request` handlers may change or replace it, and must leave an object;
 *   4. `before_provider_headers` handlers change the configured headers;
 *   5. send; `after_provider_response` sees the status and headers of every answer, error answers included;
 *   6. for each raw event: `provider_stream_event`, then the provider normalises it into the AssistantMessageWriter.
 *
 * A provider describes only what is specific to its API in a ProviderWire. `runProviderRequest` returns the stream
 * at once, never throws, and ends the stream exactly once.
 */
import type {
  AssistantMessageStream,
  ProviderHooks,
  ProviderStreamRequest,
  ProviderWaitingNotice,
} from "../../../kernel/index.js";
import { AssistantMessageWriter } from "./assistant-writer.js";
import {
  classifyTransportError,
  InvalidPayloadError,
  MalformedEventError,
  type ProviderFailure,
  ProviderRequestError,
} from "./errors.js";
import { requestSecrets } from "./redact.js";
import { StreamLineTooLongError } from "./sse-lines.js";

/** The provider's answer to the request. */
export interface WireAnswer {
  status: number;
  headers: Record<string, string>;
  /** What an error answer means: the request ends with it once `after_provider_response` has seen the status. */
  failure?: ProviderFailure;
  /** The parsed raw events of the answer, in stream order. */
  events?: AsyncIterable<unknown> | Iterable<unknown>;
}

export interface WireSend {
  payload: Record<string, unknown>;
  headers: Record<string, string>;
  /** Aborts on the user's abort, on the idle timeout and when the request ends (releasing the connection). */
  signal: AbortSignal;
  /**
   * Marks the stream alive when data arrives that does not complete an event yet (part of a long event). Each
   * event counts on its own; keep-alive comments and blank lines must not be reported, or a server that sends only
   * those would hold the request open forever.
   */
  alive(): void;
}

/** What is specific to one wire API. One wire serves one request, so it may keep per-request state. */
export interface ProviderWire {
  /** The provider as messages name it ("OpenAI", "anthropic", a models.json provider's name). */
  readonly name: string;
  /** The address requests go to, for messages about unreachable servers. */
  readonly endpoint?: string;
  /** The longest silence, before the answer and between two events; no limit when absent. */
  readonly timeoutMs?: number;
  /** A reason the request cannot be made at all; checked before any hook runs. */
  refuse?(): ProviderFailure | undefined;
  /** The wire payload. A throw fails the request with `bad_request`. */
  buildPayload(): Record<string, unknown>;
  /**
   * Sends the request. Resolves with the answer, an HTTP error answer included (as `failure`); rejects only when no
   * answer came. Throw a ProviderRequestError to end the request with a failure of your own.
   */
  send(request: WireSend): Promise<WireAnswer>;
  /** Normalises one raw event into the writer; throws MalformedEventError for an event of an unexpected shape. */
  handle(event: unknown): void;
  /** The events ran out and the message is not finished. By default that is a `network` failure. */
  end?(): void;
}

const ABORTED = "Request was aborted";

/** A provider hook (an extension's handler behind it) failed: not the provider's fault, reported as such. */
class HookError extends Error {
  constructor(
    readonly event: string,
    override readonly cause: unknown,
  ) {
    super(`A ${event} handler failed: ${messageOf(cause)}`);
  }
}

/** Where the request was when something failed; it decides what a thrown error means. */
type Stage = "prepare" | "send" | "stream" | "handle";

/**
 * Runs one provider request: the `streamSimple` of a provider is `(request) => runProviderRequest(request,
 * (writer) => wire)`. The wire is created with the writer its normaliser writes into.
 */
export function runProviderRequest(
  request: ProviderStreamRequest,
  createWire: (writer: AssistantMessageWriter) => ProviderWire,
): AssistantMessageStream {
  const writer = new AssistantMessageWriter(request.model, { secrets: requestSecrets(request) });
  let wire: ProviderWire;
  try {
    wire = createWire(writer);
  } catch (error) {
    writer.fail("unknown", `${request.model.provider} provider failed: ${messageOf(error)}`);
    return writer.stream;
  }
  // The lifecycle keeps only these parts of the request: the request itself would keep its messages (the whole
  // conversation) reachable until the stream ends.
  const { hooks, signal, headers } = request;
  drive(wire, writer, hooks, signal, headers)
    .catch((error: unknown) => {
      writer.fail("unknown", `${wire.name} provider failed: ${messageOf(error)}`);
    })
    .finally(() => {
      writer.fail("unknown", `${wire.name}: the request ended without a result`);
    });
  return writer.stream;
}

async function drive(
  wire: ProviderWire,
  writer: AssistantMessageWriter,
  hooks: ProviderHooks,
  signal: AbortSignal | undefined,
  configuredHeaders: Record<string, string> | undefined,
): Promise<void> {
  if (signal?.aborted) {
    writer.fail("aborted", ABORTED);
    return;
  }
  const refused = wire.refuse?.();
  if (refused) {
    fail(writer, refused);
    return;
  }
  const controller = new AbortController();
  const idle = wire.timeoutMs
    ? new IdleTimer(wire.timeoutMs, controller, (waitedMs) => hooks.waiting?.(waitingNotice(wire, waitedMs)))
    : undefined;
  // The stream ends at once on an abort, even while a handler or the server keeps the request waiting.
  const onAbort = () => {
    writer.fail("aborted", ABORTED);
    controller.abort();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  let stage: Stage = "prepare";
  try {
    let built: Record<string, unknown>;
    try {
      built = wire.buildPayload();
    } catch (error) {
      throw new ProviderRequestError(
        "bad_request",
        `Could not build the request for ${wire.name}: ${messageOf(error)}`,
      );
    }
    const payload = await hook("before_provider_request", () => hooks.payload(built));
    if (writer.isFinished) return;
    if (!isRecord(payload)) throw new InvalidPayloadError(payload);
    const headers = await hook("before_provider_headers", () => hooks.headers({ ...configuredHeaders }));
    if (writer.isFinished) return;
    writer.addSecrets(requestSecrets({ headers }));

    stage = "send";
    idle?.touch();
    const answer = await wire.send({
      payload,
      headers,
      signal: controller.signal,
      alive: () => idle?.touch(),
    });
    if (writer.isFinished) return;
    idle?.touch();
    await hook("after_provider_response", () => hooks.response(answer.status, answer.headers));
    if (writer.isFinished) return;
    if (answer.failure) {
      fail(writer, answer.failure);
      return;
    }

    stage = "stream";
    for await (const event of answer.events ?? []) {
      if (writer.isFinished) break;
      idle?.touch();
      await hook("provider_stream_event", () => hooks.streamEvent(event));
      if (writer.isFinished) break;
      stage = "handle";
      wire.handle(event);
      stage = "stream";
      if (writer.isFinished) break;
    }
    if (writer.isFinished) return;
    // SDK streams end quietly when their signal aborts: the silence or the abort, not the server, ended this one.
    if (idle?.fired) fail(writer, timedOut(wire));
    else if (wire.end) wire.end();
    else writer.fail("network", `${wire.name}: the stream ended before the response was complete`);
  } catch (error) {
    if (writer.isFinished) return;
    fail(writer, describe(error, wire, stage, idle?.fired ?? false, signal));
  } finally {
    idle?.stop();
    signal?.removeEventListener("abort", onAbort);
    // Releases the connection when the body was not read to its end (an error event, a malformed event).
    controller.abort();
  }
}

function describe(
  error: unknown,
  wire: ProviderWire,
  stage: Stage,
  idleFired: boolean,
  signal: AbortSignal | undefined,
): ProviderFailure {
  if (signal?.aborted) return { kind: "aborted", message: ABORTED };
  if (idleFired) return timedOut(wire);
  if (error instanceof ProviderRequestError) return error.failure;
  if (error instanceof HookError) return { kind: "unknown", message: error.message };
  if (error instanceof StreamLineTooLongError) {
    return { kind: "unknown", message: `${wire.name} sent ${error.message}` };
  }
  if (error instanceof MalformedEventError) {
    return { kind: "unknown", message: `${wire.name} sent a malformed stream event: ${error.message}` };
  }
  if (stage === "handle") {
    return {
      kind: "unknown",
      message: `${wire.name}: a stream event could not be handled: ${messageOf(error)}`,
    };
  }
  if (error instanceof SyntaxError) {
    // SDKs parse each event's JSON and throw what JSON.parse threw.
    return {
      kind: "unknown",
      message: `${wire.name} sent a malformed stream event (not valid JSON): ${error.message}`,
    };
  }
  return classifyTransportError(error, wire.name, signal, {
    ...(wire.endpoint ? { endpoint: wire.endpoint } : {}),
    streaming: stage === "stream",
  });
}

/** How often a request that hears nothing says it is still waiting: every 30 s, or 4 times per timeout if shorter. */
export function waitingNoticeInterval(timeoutMs: number): number {
  return Math.min(WAITING_NOTICE_MS, Math.max(1, Math.floor(timeoutMs / 4)));
}

const WAITING_NOTICE_MS = 30_000;

function waitingNotice(wire: ProviderWire, waitedMs: number): ProviderWaitingNotice {
  const timeoutMs = wire.timeoutMs ?? 0;
  return {
    provider: wire.name,
    waitedMs,
    timeoutMs,
    message:
      `${wire.name} has sent nothing for ${seconds(waitedMs)}; still waiting (the request times out after ` +
      `${seconds(timeoutMs)} of silence; compat.timeoutMs sets the limit)`,
  };
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

function timedOut(wire: ProviderWire): ProviderFailure {
  return {
    kind: "timeout",
    message:
      `${wire.name} sent nothing for ${(wire.timeoutMs ?? 0) / 1000}s, so the request timed out ` +
      "(compat.timeoutMs sets the limit)",
  };
}

async function hook<T>(event: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // The session's hooks refuse an invalid payload with a ProviderRequestError naming the extension.
    if (error instanceof ProviderRequestError) throw error;
    throw new HookError(event, error);
  }
}

function fail(writer: AssistantMessageWriter, failure: ProviderFailure): void {
  writer.fail(failure.kind, failure.message, failure.retryAfterMs);
}

/**
 * Aborts the request's controller when nothing arrived for `ms`, and says every so often meanwhile that the
 * request is still waiting; `touch()` starts the wait again. A touch only notes the time (it comes with every
 * event, hundreds of thousands of them for a long tool call); the one timer looks at it when it fires.
 */
class IdleTimer {
  private timer: NodeJS.Timeout | undefined;
  private since = 0;
  private nextNotice = 0;
  private readonly every: number;
  fired = false;

  constructor(
    private readonly ms: number,
    private readonly controller: AbortController,
    private readonly waiting: (waitedMs: number) => void,
  ) {
    this.every = waitingNoticeInterval(ms);
  }

  touch(): void {
    this.since = Date.now();
    this.nextNotice = this.since + this.every;
    if (!this.timer) this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    const deadline = this.since + this.ms;
    const next = this.every < this.ms ? Math.min(deadline, this.nextNotice) : deadline;
    this.timer = setTimeout(() => this.check(), Math.max(0, next - Date.now()));
    this.timer.unref?.();
  }

  private check(): void {
    this.timer = undefined;
    const now = Date.now();
    const waited = now - this.since;
    if (waited >= this.ms) {
      this.fired = true;
      this.controller.abort(new Error(`no answer for ${this.ms}ms`));
      return;
    }
    if (this.every < this.ms && now >= this.nextNotice) {
      this.nextNotice = now + this.every;
      try {
        this.waiting(waited);
      } catch {
        // A notice is a courtesy: failing to show one must not end the request.
      }
    }
    this.schedule();
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

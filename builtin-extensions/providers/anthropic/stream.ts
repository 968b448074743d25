/**
 * `streamSimple` for the `anthropic-messages` API: sends the request with the official SDK (imported on first use),
 * calls the provider hooks, and normalises the raw stream events into the assistant message.
 */
import type Anthropic from "@anthropic-ai/sdk";
import {
  type AssistantMessageStream,
  AssistantMessageWriter,
  classifyHttpError,
  classifyTransportError,
  type ProviderErrorKind,
  type ProviderStreamRequest,
} from "@knightcodeai/cli/kit";
import { buildPayload } from "./convert.js";

export const ANTHROPIC_PROVIDER = "anthropic";
export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
export const ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY";
/** Without an answer (headers, then each event) for this long, the request fails with "timeout". */
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

type Sdk = typeof import("@anthropic-ai/sdk");

let sdk: Promise<Sdk> | undefined;
/** One client per (baseUrl, apiKey). */
const clients = new Map<string, Anthropic>();

async function client(baseUrl: string, apiKey: string): Promise<{ sdk: Sdk; client: Anthropic }> {
  sdk ??= import("@anthropic-ai/sdk");
  const module = await sdk;
  const key = `${baseUrl}\n${apiKey}`;
  let existing = clients.get(key);
  if (!existing) {
    existing = new module.Anthropic({
      apiKey,
      baseURL: baseUrl,
      maxRetries: 0, // the agent loop retries
      // The SDK logs malformed events to the console before throwing; the error message says it all.
      ...(process.env.ANTHROPIC_LOG ? {} : { logLevel: "off" as const }),
    });
    clients.set(key, existing);
  }
  return { sdk: module, client: existing };
}

/** Streams one response. Returns at once; never throws; the stream always ends. */
export function streamAnthropic(request: ProviderStreamRequest): AssistantMessageStream {
  const writer = new AssistantMessageWriter(request.model);
  run(request, writer)
    .catch((error: unknown) => {
      writer.fail("unknown", `${request.model.provider} provider failed: ${messageOf(error)}`);
    })
    .finally(() => {
      writer.fail("unknown", `${request.model.provider} provider ended without a result`);
    });
  return writer.stream;
}

function keyHint(provider: string): string {
  return provider === ANTHROPIC_PROVIDER
    ? `Set ${ANTHROPIC_KEY_ENV} or add a key to <agentDir>/auth.json`
    : `Set the apiKey of "${provider}" in <agentDir>/models.json or add a key to <agentDir>/auth.json`;
}

async function run(request: ProviderStreamRequest, writer: AssistantMessageWriter): Promise<void> {
  const provider = request.model.provider;
  const userSignal = request.signal;
  if (userSignal?.aborted) {
    writer.fail("aborted", "Request was aborted");
    return;
  }
  if (!request.apiKey) {
    writer.fail("auth", `No API key for ${provider}. ${keyHint(provider)}.`);
    return;
  }
  const payload = buildPayload(request);
  const replaced = await request.hooks.payload(payload);
  const body = isRecord(replaced) ? replaced : payload;
  const headers = await request.hooks.headers({ ...request.headers });

  const timeoutMs = positive(request.compat?.timeoutMs) ?? DEFAULT_TIMEOUT_MS;
  const idle = new IdleTimer(timeoutMs);
  const signal = userSignal ? AbortSignal.any([userSignal, idle.signal]) : idle.signal;
  let loaded: Sdk | undefined;
  const normaliser = new Normaliser(writer);
  try {
    const connection = await client(baseUrlOf(request.baseUrl), request.apiKey);
    loaded = connection.sdk;
    idle.start();
    const { data: stream, response } = await connection.client.messages
      .create({ ...body, stream: true } as unknown as Anthropic.MessageCreateParamsStreaming, {
        headers,
        signal,
        timeout: timeoutMs,
        maxRetries: 0,
      })
      .withResponse();
    idle.touch();
    await request.hooks.response(response.status, Object.fromEntries(response.headers.entries()));
    for await (const event of stream) {
      idle.touch();
      await request.hooks.streamEvent(event);
      if (normaliser.handle(event as unknown)) break;
    }
    if (writer.isFinished) return;
    if (idle.fired) writer.fail("timeout", `${provider} sent nothing for ${timeoutMs / 1000}s`);
    else if (userSignal?.aborted) writer.fail("aborted", "Request was aborted");
    else writer.fail("network", `${provider}: the stream ended before the response was complete`);
  } catch (error) {
    if (writer.isFinished) return;
    const failure = await describe(error, request, loaded, idle.fired, timeoutMs);
    writer.fail(failure.kind, failure.message, failure.retryAfterMs);
  } finally {
    idle.stop();
  }
}

interface Failure {
  kind: ProviderErrorKind;
  message: string;
  retryAfterMs?: number;
}

async function describe(
  error: unknown,
  request: ProviderStreamRequest,
  sdk: Sdk | undefined,
  timedOut: boolean,
  timeoutMs: number,
): Promise<Failure> {
  const provider = request.model.provider;
  if (error instanceof MalformedEvent) {
    return { kind: "unknown", message: `${provider} sent a malformed stream event: ${error.message}` };
  }
  if (error instanceof SyntaxError) {
    return {
      kind: "unknown",
      message: `${provider} sent a malformed stream event (invalid JSON): ${error.message}`,
    };
  }
  const transport =
    !sdk ||
    !(error instanceof sdk.APIError) ||
    error instanceof sdk.APIUserAbortError ||
    error instanceof sdk.APIConnectionError;
  if (transport) {
    if (timedOut && !request.signal?.aborted) {
      return { kind: "timeout", message: `${provider} did not answer within ${timeoutMs / 1000}s` };
    }
    return classifyTransportError(error, provider, request.signal);
  }
  const apiError = error as InstanceType<Sdk["APIError"]>;
  const detail = apiError.apiMessage ?? bodyText(apiError.error) ?? apiError.message;
  if (typeof apiError.status === "number") {
    return classifyHttpError({
      status: apiError.status,
      body: detail,
      ...(apiError.headers ? { headers: apiError.headers } : {}),
      provider,
      keyHint: keyHint(provider),
      ...(apiError.type ? { errorType: apiError.type } : {}),
    });
  }
  // An `error` event inside a stream that had started (HTTP 200).
  await request.hooks.streamEvent(apiError.error ?? { type: "error", error: { message: apiError.message } });
  return streamErrorFailure(provider, apiError.type ?? undefined, detail);
}

const OVERFLOW = /prompt is too long|context[ _-]?(length|window)|too many tokens|input is too long/i;

/** The kind of a streamed `{"type":"error","error":{"type":...}}` event. */
export function streamErrorFailure(provider: string, type: string | undefined, detail: string): Failure {
  const text = `${provider} stream error${type ? ` (${type})` : ""}: ${detail}`;
  switch (type) {
    case "overloaded_error":
      return { kind: "overloaded", message: text };
    case "api_error":
      return { kind: "overloaded", message: text };
    case "rate_limit_error":
      return { kind: "rate_limit", message: text };
    case "authentication_error":
    case "permission_error":
      return { kind: "auth", message: `${text}. ${keyHint(provider)}` };
    case "request_too_large":
      return { kind: "context_overflow", message: text };
    case "timeout_error":
      return { kind: "timeout", message: text };
    case "invalid_request_error":
      return { kind: OVERFLOW.test(detail) ? "context_overflow" : "bad_request", message: text };
    case "not_found_error":
    case "billing_error":
      return { kind: "bad_request", message: text };
    default:
      return { kind: "unknown", message: text };
  }
}

/** A stream event that is valid JSON but not what the Messages API sends. */
export class MalformedEvent extends Error {}

type BlockKind = "text" | "thinking" | "tool" | "ignored";

/** Turns raw Messages API stream events into writer calls. `handle` returns true at `message_stop`. */
export class Normaliser {
  private readonly blocks = new Map<
    number,
    { kind: BlockKind; index: number; input?: unknown; json: boolean }
  >();
  private stopReason: string | undefined;

  constructor(private readonly writer: AssistantMessageWriter) {}

  handle(event: unknown): boolean {
    if (!isRecord(event) || typeof event.type !== "string") {
      throw new MalformedEvent(`expected an object with a "type", got ${preview(event)}`);
    }
    const writer = this.writer;
    switch (event.type) {
      case "message_start": {
        const message = event.message;
        if (!isRecord(message))
          throw new MalformedEvent(`message_start without a message: ${preview(event)}`);
        writer.start();
        this.usage(message.usage);
        return false;
      }
      case "content_block_start": {
        const index = this.index(event);
        const block = event.content_block;
        if (!isRecord(block) || typeof block.type !== "string") {
          throw new MalformedEvent(`content_block_start without a content_block: ${preview(event)}`);
        }
        this.start(index, block);
        return false;
      }
      case "content_block_delta": {
        const index = this.index(event);
        const delta = event.delta;
        if (!isRecord(delta) || typeof delta.type !== "string") {
          throw new MalformedEvent(`content_block_delta without a delta: ${preview(event)}`);
        }
        this.delta(index, delta);
        return false;
      }
      case "content_block_stop": {
        const block = this.block(this.index(event));
        this.stop(block);
        return false;
      }
      case "message_delta": {
        const delta = event.delta;
        if (isRecord(delta) && typeof delta.stop_reason === "string") this.stopReason = delta.stop_reason;
        this.usage(event.usage);
        return false;
      }
      case "message_stop":
        writer.done(stopReason(this.stopReason));
        return true;
      case "error": {
        // The SDK turns `event: error` into an exception; this is the same event sent as a data-only line.
        const error = isRecord(event.error) ? event.error : {};
        const type = typeof error.type === "string" ? error.type : undefined;
        const failure = streamErrorFailure(
          writer.message.provider,
          type,
          typeof error.message === "string" ? error.message : "unknown error",
        );
        writer.fail(failure.kind, failure.message);
        return true;
      }
      default:
        return false; // ping and event types this provider does not know
    }
  }

  private index(event: Record<string, unknown>): number {
    if (typeof event.index !== "number") throw new MalformedEvent(`${event.type} without an index`);
    return event.index;
  }

  private block(index: number) {
    const block = this.blocks.get(index);
    if (!block) throw new MalformedEvent(`content block ${index} was never started`);
    return block;
  }

  private start(index: number, block: Record<string, unknown>): void {
    const writer = this.writer;
    switch (block.type) {
      case "text": {
        const at = writer.textStart();
        this.blocks.set(index, { kind: "text", index: at, json: false });
        if (typeof block.text === "string") writer.textDelta(at, block.text);
        return;
      }
      case "thinking": {
        const at = writer.thinkingStart();
        this.blocks.set(index, { kind: "thinking", index: at, json: false });
        if (typeof block.thinking === "string") writer.thinkingDelta(at, block.thinking);
        if (typeof block.signature === "string" && block.signature)
          writer.thinkingSignature(at, block.signature);
        return;
      }
      case "redacted_thinking": {
        const at = writer.thinkingStart();
        this.blocks.set(index, { kind: "thinking", index: at, json: false });
        if (typeof block.data !== "string") throw new MalformedEvent("redacted_thinking without data");
        writer.thinkingSignature(at, block.data, { redacted: true });
        return;
      }
      case "tool_use": {
        if (typeof block.id !== "string" || typeof block.name !== "string") {
          throw new MalformedEvent(`tool_use block without an id and a name: ${preview(block)}`);
        }
        const at = writer.toolCallStart(block.id, block.name);
        this.blocks.set(index, { kind: "tool", index: at, input: block.input, json: false });
        return;
      }
      default:
        // Server tools and their results: nothing to run here, nothing to send back.
        this.blocks.set(index, { kind: "ignored", index: -1, json: false });
    }
  }

  private delta(index: number, delta: Record<string, unknown>): void {
    const block = this.block(index);
    const writer = this.writer;
    const expect = (kind: BlockKind, field: string): string => {
      if (block.kind !== kind) throw new MalformedEvent(`${delta.type} for a ${block.kind} block`);
      const value = delta[field];
      if (value === undefined) return "";
      if (typeof value !== "string") throw new MalformedEvent(`${delta.type} whose ${field} is not a string`);
      return value;
    };
    if (block.kind === "ignored") return;
    switch (delta.type) {
      case "text_delta":
        writer.textDelta(block.index, expect("text", "text"));
        return;
      case "thinking_delta":
        writer.thinkingDelta(block.index, expect("thinking", "thinking"));
        return;
      case "signature_delta": {
        const signature = expect("thinking", "signature");
        if (signature) writer.thinkingSignature(block.index, signature);
        return;
      }
      case "input_json_delta": {
        const json = expect("tool", "partial_json");
        if (json) block.json = true;
        writer.toolCallDelta(block.index, json);
        return;
      }
      default:
        return; // citations and future delta types
    }
  }

  private stop(block: { kind: BlockKind; index: number; input?: unknown; json: boolean }): void {
    const writer = this.writer;
    if (block.kind === "text") writer.textEnd(block.index);
    else if (block.kind === "thinking") writer.thinkingEnd(block.index);
    else if (block.kind === "tool") {
      const input = !block.json && isRecord(block.input) ? block.input : undefined;
      writer.toolCallEnd(block.index, input && Object.keys(input).length > 0 ? input : undefined);
    }
  }

  private usage(raw: unknown): void {
    if (!isRecord(raw)) return;
    const number = (value: unknown) => (typeof value === "number" ? value : undefined);
    const update = {
      input: number(raw.input_tokens),
      output: number(raw.output_tokens),
      cacheRead: number(raw.cache_read_input_tokens),
      cacheWrite: number(raw.cache_creation_input_tokens),
    };
    this.writer.usage(
      Object.fromEntries(Object.entries(update).filter(([, value]) => value !== undefined)) as Record<
        string,
        number
      >,
    );
  }
}

function stopReason(reason: string | undefined): "stop" | "length" | "toolUse" {
  switch (reason) {
    case "tool_use":
      return "toolUse";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    default:
      return "stop"; // end_turn, stop_sequence, pause_turn, refusal
  }
}

/** A timer that aborts its signal when nothing arrived for `ms`; `touch()` restarts it. */
class IdleTimer {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  fired = false;

  constructor(private readonly ms: number) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  start(): void {
    this.touch();
  }

  touch(): void {
    this.stop();
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort(new Error("timed out"));
    }, this.ms);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The SDK appends `/v1/messages`: a configured `.../v1` (a common way to write it) would double it. */
function baseUrlOf(configured: string | undefined): string {
  const url = (configured || ANTHROPIC_BASE_URL).replace(/\/+$/, "");
  return url.replace(/\/v1$/, "") || ANTHROPIC_BASE_URL;
}

function bodyText(body: unknown): string | undefined {
  if (typeof body === "string") return body || undefined;
  if (!isRecord(body)) return undefined;
  const error = body.error;
  if (isRecord(error) && typeof error.message === "string") return error.message;
  if (typeof body.message === "string") return body.message;
  return undefined;
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

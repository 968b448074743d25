/**
 * `streamSimple` for the `anthropic-messages` API: the kit's request runner drives the request (hooks, abort,
 * timeout, failures); this file sends it with the official SDK (imported on first use) and normalises the raw
 * stream events into the assistant message.
 */
import type Anthropic from "@anthropic-ai/sdk";
import {
  type AssistantMessageStream,
  type AssistantMessageWriter,
  agentFilePath,
  classifyHttpError,
  classifyStreamError,
  guardedSseFetch,
  MalformedEventError,
  type ProviderStreamRequest,
  type ProviderWire,
  runProviderRequest,
} from "@knightcodeai/cli/kit";
import { claudeCodeToolNames, type ToolNames } from "./claude-code-names.js";
import { buildPayload } from "./convert.js";
import { ANTHROPIC_BASE_URL, ANTHROPIC_KEY_ENV, ANTHROPIC_PROVIDER } from "./models.js";

/** Without an answer (headers, then each event) for this long, the request fails with "timeout". */
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

type Sdk = typeof import("@anthropic-ai/sdk");

let sdk: Promise<Sdk> | undefined;
/**
 * `compat.keyHeader` (Cloudflare AI Gateway's `cf-aig-authorization`): the key goes as `Bearer <key>` in that header,
 * and neither `x-api-key` nor `Authorization` is sent (a null value removes a header the SDK would send).
 */
function keyHeaders(request: ProviderStreamRequest, headers: Record<string, string>) {
  const name = request.compat?.keyHeader;
  if (typeof name !== "string" || !name) return headers;
  return { ...headers, "x-api-key": null, authorization: null, [name]: `Bearer ${request.apiKey}` };
}

/** One client per (baseUrl, apiKey). */
const clients = new Map<string, Anthropic>();

async function client(
  baseUrl: string,
  apiKey: string,
  bearer: boolean,
): Promise<{ sdk: Sdk; client: Anthropic }> {
  sdk ??= import("@anthropic-ai/sdk");
  const module = await sdk;
  const key = `${baseUrl}\n${apiKey}\n${bearer}`;
  let existing = clients.get(key);
  if (!existing) {
    existing = new module.Anthropic({
      // A subscription's access token goes as `Authorization: Bearer`, an API key as `x-api-key`.
      ...(bearer ? { apiKey: null, authToken: apiKey } : { apiKey }),
      baseURL: baseUrl,
      maxRetries: 0, // the agent loop retries
      // Caps one stream event's size and hands the SDK whole lines, so its reader stays linear.
      fetch: guardedSseFetch(),
      // The SDK logs malformed events to the console before throwing; the error message says it all.
      ...(process.env.ANTHROPIC_LOG ? {} : { logLevel: "off" as const }),
    });
    clients.set(key, existing);
  }
  return { sdk: module, client: existing };
}

/** Streams one response. Returns at once; never throws; the stream always ends. */
export function streamAnthropic(request: ProviderStreamRequest): AssistantMessageStream {
  const effective = subscriptionRequest(withKeyHeader(withSessionAffinity(request)));
  return runProviderRequest(effective, (writer) => anthropicWire(effective, writer));
}

/**
 * compat `xApiKeyHeader` (set on the named Messages providers, which pi reaches with `x-api-key`): the API key also
 * goes as `x-api-key`, beside the `Authorization: Bearer` the SDK sends, for endpoints that read only the header
 * Anthropic's documentation names. Never for a sign-in's token.
 */
function withKeyHeader(request: ProviderStreamRequest): ProviderStreamRequest {
  if (request.compat?.xApiKeyHeader !== true || !request.apiKey || isSubscription(request)) return request;
  return { ...request, headers: { "x-api-key": request.apiKey, ...request.headers } };
}

/** compat `sendSessionAffinityHeaders`: the session id as `x-session-affinity`, unless the configuration sets it. */
function withSessionAffinity(request: ProviderStreamRequest): ProviderStreamRequest {
  if (request.compat?.sendSessionAffinityHeaders !== true || !request.sessionId) return request;
  return { ...request, headers: { "x-session-affinity": request.sessionId, ...request.headers } };
}

/** The first system block a Claude subscription's requests must carry. */
export const CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude.";
/** The betas a subscription's access token needs. */
export const SUBSCRIPTION_BETAS = ["claude-code-20250219", "oauth-2025-04-20"];
/** The Claude Code release a subscription's requests name in their `user-agent`, as Claude Code's own do. */
export const CLAUDE_CLI_VERSION = "2.1.251";

const isSubscription = (request: ProviderStreamRequest) => request.credential?.type === "oauth";

/** A request with a Claude subscription's token: the betas it needs added to any configured ones. */
function subscriptionRequest(request: ProviderStreamRequest): ProviderStreamRequest {
  if (!isSubscription(request)) return request;
  const headers = { ...request.headers };
  const name = Object.keys(headers).find((h) => h.toLowerCase() === "anthropic-beta");
  const configured = name ? headers[name]!.split(",").map((b) => b.trim()) : [];
  if (name) delete headers[name];
  headers["anthropic-beta"] = [...new Set([...SUBSCRIPTION_BETAS, ...configured.filter(Boolean)])].join(",");
  // Claude Code's own headers, unless the configuration sets them.
  const has = (header: string) => Object.keys(headers).some((h) => h.toLowerCase() === header);
  if (!has("user-agent")) headers["user-agent"] = `claude-cli/${CLAUDE_CLI_VERSION}`;
  if (!has("x-app")) headers["x-app"] = "cli";
  return { ...request, headers };
}

/**
 * The Messages API body; with a subscription, its system prompt starts with the identity line and its tools (and
 * the past calls of them) carry Claude Code's names (claude-code-names.ts).
 */
function payloadFor(request: ProviderStreamRequest, names: ToolNames | undefined): Record<string, unknown> {
  const payload = buildPayload(request);
  if (!isSubscription(request) || !names) return { ...payload };
  payload.system = [{ type: "text", text: CLAUDE_CODE_IDENTITY }, ...(payload.system ?? [])];
  for (const tool of payload.tools ?? []) tool.name = names.toWire(tool.name);
  if (payload.tool_choice?.type === "tool") payload.tool_choice.name = names.toWire(payload.tool_choice.name);
  for (const message of payload.messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) if (block.type === "tool_use") block.name = names.toWire(block.name);
  }
  return { ...payload };
}

function keyHint(request: ProviderStreamRequest): string {
  const provider = request.model.provider;
  const auth = agentFilePath(request, "auth.json");
  if (isSubscription(request))
    return `Sign in again with \`knightcode login ${provider}\` (or /login in the terminal UI)`;
  return provider === ANTHROPIC_PROVIDER
    ? `Set ${ANTHROPIC_KEY_ENV}, or add a key to ${auth} (/login in the terminal UI)`
    : `Set the apiKey of "${provider}" in ${agentFilePath(request, "models.json")}, or add a key to ${auth} (/login in the terminal UI)`;
}

/** The Messages API as a ProviderWire: the SDK sends the request, the Normaliser reads the events. */
function anthropicWire(request: ProviderStreamRequest, writer: AssistantMessageWriter): ProviderWire {
  const provider = request.model.provider;
  const baseUrl = baseUrlOf(request.baseUrl);
  const timeoutMs = positive(request.compat?.timeoutMs) ?? DEFAULT_TIMEOUT_MS;
  const names = isSubscription(request) ? claudeCodeToolNames(request.tools) : undefined;
  const normaliser = new Normaliser(writer, keyHint(request), names?.fromWire);
  return {
    name: provider,
    endpoint: baseUrl,
    timeoutMs,
    refuse: () =>
      request.apiKey
        ? undefined
        : { kind: "auth", message: `No API key for ${provider}. ${keyHint(request)}.` },
    buildPayload: () => payloadFor(request, names),
    async send({ payload, headers, signal }) {
      const { sdk, client: anthropic } = await client(baseUrl, request.apiKey!, isSubscription(request));
      try {
        const { data, response } = await anthropic.messages
          .create({ ...payload, stream: true } as unknown as Anthropic.MessageCreateParamsStreaming, {
            headers: keyHeaders(request, headers),
            signal,
            timeout: timeoutMs,
            maxRetries: 0,
          })
          .withResponse();
        return {
          status: response.status,
          headers: Object.fromEntries(response.headers.entries()),
          events: errorsAsEvents(sdk, data),
        };
      } catch (error) {
        if (!(error instanceof sdk.APIError) || typeof error.status !== "number") throw error;
        return {
          status: error.status,
          headers: error.headers ? Object.fromEntries(error.headers.entries()) : {},
          failure: classifyHttpError({
            status: error.status,
            body: error.apiMessage ?? bodyText(error.error) ?? error.message,
            ...(error.headers ? { headers: error.headers } : {}),
            provider,
            keyHint: keyHint(request),
            ...(error.type ? { errorType: error.type } : {}),
          }),
        };
      }
    },
    handle: (event) => normaliser.handle(event),
  };
}

/**
 * The SDK turns an `event: error` into an exception; this gives it back as the event it was, so the stream event
 * hook sees it and the Normaliser reports it like the same event sent as a data-only line.
 */
async function* errorsAsEvents(sdk: Sdk, stream: AsyncIterable<unknown>): AsyncIterable<unknown> {
  try {
    yield* stream;
  } catch (error) {
    const streamed =
      error instanceof sdk.APIError &&
      !(error instanceof sdk.APIConnectionError) &&
      error.status === undefined;
    if (!streamed) throw error;
    yield error.error ?? { type: "error", error: { message: error.message } };
  }
}

type BlockKind = "text" | "thinking" | "tool" | "ignored";

/** Turns raw Messages API stream events into writer calls; `message_stop` and `error` finish the message. */
export class Normaliser {
  private readonly blocks = new Map<
    number,
    { kind: BlockKind; index: number; input?: unknown; json: boolean }
  >();
  private stopReason: string | undefined;

  constructor(
    private readonly writer: AssistantMessageWriter,
    /** How to fix a refused key, for an error the stream carries. */
    private readonly keyHint = "Set the provider's key",
    /** The tool a called name stands for, where the request renamed its tools. */
    private readonly toolName: (name: string) => string = (name) => name,
  ) {}

  handle(event: unknown): void {
    if (!isRecord(event) || typeof event.type !== "string") {
      throw new MalformedEventError(`expected an object with a "type", got ${preview(event)}`);
    }
    const writer = this.writer;
    switch (event.type) {
      case "message_start": {
        const message = event.message;
        if (!isRecord(message))
          throw new MalformedEventError(`message_start without a message: ${preview(event)}`);
        writer.start();
        this.usage(message.usage);
        return;
      }
      case "content_block_start": {
        const index = this.index(event);
        const block = event.content_block;
        if (!isRecord(block) || typeof block.type !== "string") {
          throw new MalformedEventError(`content_block_start without a content_block: ${preview(event)}`);
        }
        this.start(index, block);
        return;
      }
      case "content_block_delta": {
        const index = this.index(event);
        const delta = event.delta;
        if (!isRecord(delta) || typeof delta.type !== "string") {
          throw new MalformedEventError(`content_block_delta without a delta: ${preview(event)}`);
        }
        this.delta(index, delta);
        return;
      }
      case "content_block_stop": {
        const block = this.block(this.index(event));
        this.stop(block);
        return;
      }
      case "message_delta": {
        const delta = event.delta;
        if (isRecord(delta) && typeof delta.stop_reason === "string") this.stopReason = delta.stop_reason;
        this.usage(event.usage);
        return;
      }
      case "message_stop":
        writer.done(stopReason(this.stopReason));
        return;
      case "error": {
        // Sent as a data-only line, or given back by errorsAsEvents after the SDK threw it.
        const error = isRecord(event.error) ? event.error : {};
        const type = typeof error.type === "string" ? error.type : undefined;
        const failure = classifyStreamError({
          provider: writer.message.provider,
          ...(type ? { type } : {}),
          message: typeof error.message === "string" ? error.message : "unknown error",
          keyHint: this.keyHint,
        });
        writer.fail(failure.kind, failure.message, failure.retryAfterMs);
        return;
      }
      default:
        return; // ping and event types this provider does not know
    }
  }

  private index(event: Record<string, unknown>): number {
    if (typeof event.index !== "number") throw new MalformedEventError(`${event.type} without an index`);
    return event.index;
  }

  private block(index: number) {
    const block = this.blocks.get(index);
    if (!block) throw new MalformedEventError(`content block ${index} was never started`);
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
        if (typeof block.data !== "string") throw new MalformedEventError("redacted_thinking without data");
        writer.thinkingSignature(at, block.data, { redacted: true });
        return;
      }
      case "tool_use": {
        if (typeof block.id !== "string" || typeof block.name !== "string") {
          throw new MalformedEventError(`tool_use block without an id and a name: ${preview(block)}`);
        }
        const at = writer.toolCallStart(block.id, this.toolName(block.name));
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
      if (block.kind !== kind) throw new MalformedEventError(`${delta.type} for a ${block.kind} block`);
      const value = delta[field];
      if (value === undefined) return "";
      if (typeof value !== "string")
        throw new MalformedEventError(`${delta.type} whose ${field} is not a string`);
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

/**
 * The `openai-completions` wire API: OpenAI's Chat Completions, as local servers (Ollama, llama.cpp's server,
 * vLLM, LM Studio) and many hosted endpoints implement it. It has no models of its own: a custom provider in
 * `<agentDir>/models.json` names `"api": "openai-completions"` with its `baseUrl`, and the model registry sends
 * that provider's requests here with its endpoint, key, headers and compat options.
 *
 * The official `openai` SDK sends the request (loaded on the first request, never at startup); its own retries
 * are off, because the agent loop retries. The event stream is read by `SseDecoder` (see sse.ts for why).
 */
import {
  type AssistantMessageStream,
  AssistantMessageWriter,
  classifyTransportError,
  type ProviderConfig,
  type ProviderStreamRequest,
} from "@knightcodeai/cli/kit";
import type OpenAI from "openai";
import { resolveCompat } from "./compat.js";
import { buildPayload } from "./convert.js";
import { errorDetails, httpFailure, streamFailure } from "./errors.js";
import { SseDecoder, type SseMessage } from "./sse.js";

export const OPENAI_COMPLETIONS_API = "openai-completions";
/** The name the implementation is registered under; custom providers reach it through its `api`. */
export const OPENAI_COMPLETIONS_PROVIDER = "openai-completions";
/**
 * The key sent when none is configured. Local servers (Ollama, llama.cpp, vLLM without --api-key, LM Studio)
 * ignore it, but the SDK refuses to build a client without one.
 */
export const PLACEHOLDER_API_KEY = "not-needed";

const ABORTED_MESSAGE = "Request was aborted";

type OpenAIModule = typeof import("openai");
let sdk: Promise<OpenAIModule> | undefined;
const clients = new Map<string, OpenAI>();

/**
 * The body of each HTTP error answer, by its Headers object (which the SDK hands to the error it throws). The SDK
 * keeps only the `error` field of a JSON body; servers that answer `{"detail": …}` or `{"object": "error", …}`
 * would lose their message without this.
 */
const errorBodies = new WeakMap<Headers, string>();

const recordingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (!response.ok) {
    try {
      errorBodies.set(response.headers, await response.clone().text());
    } catch {
      // the SDK reads the body itself and reports what it can
    }
  }
  return response;
};

function clientFor(module: OpenAIModule, baseURL: string, apiKey: string): OpenAI {
  const key = `${baseURL}\n${apiKey}`;
  let client = clients.get(key);
  if (!client) {
    client = new module.OpenAI({
      baseURL,
      apiKey,
      // The SDK would otherwise read these from OPENAI_* variables and send them to a foreign endpoint.
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
      maxRetries: 0,
      logLevel: "off",
      fetch: recordingFetch,
    });
    clients.set(key, client);
  }
  return client;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function headersObject(headers: Headers | undefined): Record<string, string> {
  return headers ? Object.fromEntries(headers.entries()) : {};
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The innermost cause of a transport error (the SDK wraps fetch's error, which wraps the socket's). */
function rootCause(error: unknown): { code?: string; message: string } {
  let current = error as { cause?: unknown; code?: unknown; message?: unknown } | undefined;
  let code: string | undefined;
  let message = errorText(error);
  for (let depth = 0; current && depth < 6; depth++) {
    if (typeof current.code === "string" && !code) code = current.code;
    if (typeof current.message === "string" && current.message) message = current.message;
    current = current.cause as typeof current;
  }
  return code ? { code, message } : { message };
}

function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

interface ToolCallState {
  id: string;
  name: string;
  /** Argument text received before the call could start (its name had not arrived yet). */
  buffered: string;
  block?: number;
  ended: boolean;
}

/**
 * Turns Chat Completions chunks into writer calls: `delta.reasoning_content`/`delta.reasoning` into thinking,
 * `delta.content` into text, `delta.tool_calls[]` into one tool-call block per `index` (parallel calls may
 * interleave), `usage` into the writer's usage. Text and thinking alternate in one open block at a time.
 */
class ChunkNormaliser {
  private open: { kind: "text" | "thinking"; index: number } | undefined;
  private readonly calls = new Map<number, ToolCallState>();
  private readonly order: ToolCallState[] = [];
  private lastCallKey: number | undefined;
  private spareKey = -1;
  private finishReason: string | undefined;

  constructor(
    private readonly writer: AssistantMessageWriter,
    private readonly provider: string,
  ) {}

  /** Handles one parsed chunk; returns what is wrong with it when its shape is unexpected. */
  chunk(raw: unknown): string | undefined {
    if (!isRecord(raw)) return `expected a JSON object, got ${preview(JSON.stringify(raw) ?? String(raw))}`;
    if (raw.usage !== undefined && raw.usage !== null) {
      if (!isRecord(raw.usage)) return "`usage` is not an object";
      this.usage(raw.usage);
    }
    const choices = raw.choices;
    if (choices === undefined || choices === null) return undefined;
    if (!Array.isArray(choices)) return "`choices` is not an array";
    const choice = choices.find((c) => isRecord(c) && (c.index === undefined || c.index === 0)) ?? choices[0];
    if (choice === undefined) return undefined;
    if (!isRecord(choice)) return "a choice is not an object";
    const delta = choice.delta;
    if (delta !== undefined && delta !== null) {
      if (!isRecord(delta)) return "`delta` is not an object";
      const problem = this.delta(delta);
      if (problem) return problem;
    }
    if (typeof choice.finish_reason === "string" && choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      this.closeBlocks();
    }
    return undefined;
  }

  private delta(delta: Record<string, unknown>): string | undefined {
    // llama.cpp and DeepSeek send `reasoning_content`, vLLM and OpenRouter `reasoning`; some send both alike.
    const reasoning =
      typeof delta.reasoning_content === "string" && delta.reasoning_content
        ? delta.reasoning_content
        : typeof delta.reasoning === "string"
          ? delta.reasoning
          : "";
    if (reasoning) this.append("thinking", reasoning);
    const content = delta.content;
    if (typeof content === "string") this.append("text", content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (isRecord(part) && part.type === "text" && typeof part.text === "string")
          this.append("text", part.text);
      }
    } else if (content !== undefined && content !== null) return "`delta.content` is not a string";
    if (typeof delta.refusal === "string") this.append("text", delta.refusal);
    const toolCalls = delta.tool_calls;
    if (toolCalls === undefined || toolCalls === null) return undefined;
    if (!Array.isArray(toolCalls)) return "`delta.tool_calls` is not an array";
    for (const [position, call] of toolCalls.entries()) {
      if (!isRecord(call)) return "a tool call delta is not an object";
      this.toolCall(call, position);
    }
    return undefined;
  }

  private append(kind: "text" | "thinking", delta: string): void {
    if (!delta) return;
    if (this.open?.kind !== kind) {
      this.closeOpen();
      this.open = { kind, index: kind === "text" ? this.writer.textStart() : this.writer.thinkingStart() };
    }
    if (kind === "text") this.writer.textDelta(this.open.index, delta);
    else this.writer.thinkingDelta(this.open.index, delta);
  }

  private closeOpen(): void {
    if (!this.open) return;
    if (this.open.kind === "text") this.writer.textEnd(this.open.index);
    else this.writer.thinkingEnd(this.open.index);
    this.open = undefined;
  }

  private toolCall(call: Record<string, unknown>, position: number): void {
    const fn = isRecord(call.function) ? call.function : {};
    const id = typeof call.id === "string" && call.id ? call.id : undefined;
    let key: number;
    if (typeof call.index === "number") key = call.index;
    else if (id) {
      // Servers that omit `index` (it is required by the API, but not everyone sends it): match by id.
      const known = [...this.calls.entries()].find(([, state]) => state.id === id);
      key = known ? known[0] : Math.max(-1, ...this.calls.keys()) + 1;
    } else key = this.lastCallKey ?? position;
    let state = this.calls.get(key);
    if (state && id && state.id && state.id !== id) {
      // A server that reuses one index for several calls: a new id starts a new call.
      this.endCall(state);
      this.calls.set(this.spareKey--, state);
      state = undefined;
    }
    if (!state) {
      state = { id: id ?? "", name: "", buffered: "", ended: false };
      this.calls.set(key, state);
      this.order.push(state);
    }
    this.lastCallKey = key;
    if (id && !state.id) state.id = id;
    // Later chunks may repeat the name (some servers do); only the first one counts.
    if (state.block === undefined && typeof fn.name === "string") state.name += fn.name;
    const args =
      typeof fn.arguments === "string"
        ? fn.arguments
        : isRecord(fn.arguments)
          ? JSON.stringify(fn.arguments)
          : "";
    if (state.block === undefined) {
      state.buffered += args;
      if (state.name) this.startCall(state);
    } else if (args) this.writer.toolCallDelta(state.block, args);
  }

  private startCall(state: ToolCallState): void {
    this.closeOpen();
    if (!state.id) state.id = `call_${Date.now().toString(36)}_${this.order.indexOf(state)}`;
    state.block = this.writer.toolCallStart(state.id, state.name);
    if (state.buffered) this.writer.toolCallDelta(state.block, state.buffered);
    state.buffered = "";
  }

  private endCall(state: ToolCallState): void {
    if (state.ended) return;
    if (state.block === undefined) this.startCall(state);
    state.ended = true;
    this.writer.toolCallEnd(state.block!);
  }

  private closeBlocks(): void {
    this.closeOpen();
    for (const state of this.order) this.endCall(state);
  }

  private usage(usage: Record<string, unknown>): void {
    const prompt = numberOf(usage.prompt_tokens);
    const completion = numberOf(usage.completion_tokens);
    const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
    // prompt_tokens includes the cached part (OpenAI: prompt_tokens_details.cached_tokens; DeepSeek: hit tokens).
    const cached = numberOf(details.cached_tokens) ?? numberOf(usage.prompt_cache_hit_tokens);
    this.writer.usage({
      ...(prompt !== undefined ? { input: Math.max(0, prompt - (cached ?? 0)) } : {}),
      ...(completion !== undefined ? { output: completion } : {}),
      ...(cached !== undefined ? { cacheRead: cached } : {}),
    });
  }

  /** The stream is over: `[DONE]` arrived (`terminated`), or the body just ended. */
  finish(terminated: boolean): void {
    const reason = this.finishReason;
    if (!reason && !terminated) {
      this.writer.fail("network", `${this.provider}: the stream ended before the response was complete`);
      return;
    }
    this.closeBlocks();
    const hasToolCalls = this.order.length > 0;
    switch (reason) {
      case "length":
        this.writer.done("length");
        return;
      case "content_filter":
        this.writer.fail(
          "unknown",
          `${this.provider} stopped the answer: its content filter blocked the output`,
        );
        return;
      case "error":
        this.writer.fail("unknown", `${this.provider} ended the answer with finish_reason "error"`);
        return;
      default:
        // tool_calls, function_call, stop (Ollama says "stop" after tool calls too), eos, or none before [DONE].
        this.writer.done(hasToolCalls ? "toolUse" : "stop");
    }
  }
}

/**
 * How to fix a refused key. A custom provider has no fixed environment variable: models.json names the key or
 * the variable that holds it, and auth.json can hold one too.
 */
function keyHintFor(provider: string): string {
  return (
    `Set the apiKey of "${provider}" in <agentDir>/models.json (a key, or the name of an environment variable ` +
    `holding one) or add a key for "${provider}" to <agentDir>/auth.json.`
  );
}

/** Streams one Chat Completions response. Never throws; the stream always ends. */
export function streamOpenAICompletions(request: ProviderStreamRequest): AssistantMessageStream {
  const writer = new AssistantMessageWriter(request.model);
  run(request, writer).catch((error: unknown) => {
    writer.fail(
      "unknown",
      `${request.model.provider}: the openai-completions provider failed: ${errorText(error)}`,
    );
  });
  return writer.stream;
}

async function run(request: ProviderStreamRequest, writer: AssistantMessageWriter): Promise<void> {
  const provider = request.model.provider;
  const signal = request.signal;
  const keyHint = keyHintFor(provider);
  const compat = resolveCompat(provider, request.compat);
  if (signal?.aborted) {
    writer.fail("aborted", ABORTED_MESSAGE);
    return;
  }
  const baseUrl = request.baseUrl?.trim();
  if (!baseUrl) {
    writer.fail(
      "bad_request",
      `Provider "${provider}" has no baseUrl. The openai-completions API needs the server's address: set ` +
        `"baseUrl" for "${provider}" in <agentDir>/models.json, e.g. "http://127.0.0.1:8080/v1".`,
    );
    return;
  }
  if (!/^https?:\/\/[^/]/i.test(baseUrl) || !URL.canParse(baseUrl)) {
    writer.fail(
      "bad_request",
      `The baseUrl of "${provider}" (${JSON.stringify(baseUrl)}) is not an http(s) URL; set it in ` +
        '<agentDir>/models.json, e.g. "http://127.0.0.1:8080/v1".',
    );
    return;
  }

  // One controller for the whole request: the caller's abort and the idle timeout both end it.
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, compat.timeoutMs);
  };
  let phase: "prepare" | "request" | "stream" = "prepare";
  try {
    const built = buildPayload(request, compat);
    const replaced = await request.hooks.payload(built);
    const payload = isRecord(replaced) ? replaced : built;
    const headers = await request.hooks.headers({ ...request.headers });
    sdk ??= import("openai");
    const module = await sdk;
    if (signal?.aborted) {
      writer.fail("aborted", ABORTED_MESSAGE);
      return;
    }
    const client = clientFor(module, baseUrl, request.apiKey || PLACEHOLDER_API_KEY);
    phase = "request";
    let response: Response;
    try {
      // `stream: true` is the one field a handler cannot take away: the answer is read as an event stream.
      const body = {
        ...payload,
        stream: true,
      } as unknown as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
      response = await client.chat.completions
        .create(body, { headers, signal: controller.signal, timeout: compat.timeoutMs, maxRetries: 0 })
        .asResponse();
    } catch (error) {
      if (error instanceof module.APIError && typeof error.status === "number") {
        const responseHeaders = error.headers as Headers | undefined;
        await request.hooks.response(error.status, headersObject(responseHeaders));
        const body =
          (responseHeaders && errorBodies.get(responseHeaders)) ??
          (error.error === undefined ? undefined : JSON.stringify({ error: error.error }));
        const failure = httpFailure({
          status: error.status,
          body,
          headers: responseHeaders,
          provider,
          keyHint,
        });
        const message =
          error.status === 404
            ? `${failure.message.replace(/[.\s]+$/, "")}. Check the model id and the baseUrl "${baseUrl}" ` +
              "(OpenAI-compatible servers usually serve the API under /v1)."
            : failure.message;
        writer.fail(failure.kind, message, failure.retryAfterMs);
        return;
      }
      throw error;
    }
    await request.hooks.response(response.status, headersObject(response.headers));
    phase = "stream";
    writer.start();
    arm();
    await readBody(request, response, writer, arm);
  } catch (error) {
    if (writer.isFinished) return;
    if (timedOut) {
      writer.fail(
        "timeout",
        `${provider} sent nothing for ${Math.round(compat.timeoutMs / 1000)}s, so the request timed out ` +
          "(compat.timeoutMs in models.json sets the limit)",
      );
    } else if (phase === "prepare" && !signal?.aborted) {
      writer.fail("unknown", `${provider}: preparing the request failed: ${errorText(error)}`);
    } else {
      const failure = classifyTransportError(error, provider, signal);
      if (failure.kind !== "network") writer.fail(failure.kind, failure.message);
      else {
        const { code, message } = rootCause(error);
        const detail = `${code ? `${code}: ` : ""}${message}`;
        writer.fail(
          "network",
          phase === "stream"
            ? `The connection to ${provider} was lost before the response was complete (${detail})`
            : /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/.test(code ?? "")
              ? `Could not reach ${provider} at ${baseUrl} (${detail}). Is the server running?`
              : `The request to ${provider} at ${baseUrl} failed (${detail})`,
        );
      }
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    // Releases the connection when the body was not read to its end (an error chunk, a malformed event).
    controller.abort();
    if (!writer.isFinished) writer.fail("unknown", `${provider}: the response ended without a result`);
  }
}

/** Reads the event stream (or, from a server that ignored `stream: true`, one JSON completion). */
async function readBody(
  request: ProviderStreamRequest,
  response: Response,
  writer: AssistantMessageWriter,
  arm: () => void,
): Promise<void> {
  const provider = request.model.provider;
  const keyHint = keyHintFor(provider);
  const normaliser = new ChunkNormaliser(writer, provider);
  const type = response.headers.get("content-type") ?? "";
  if (/text\/html/i.test(type)) {
    writer.fail(
      "bad_request",
      `${provider} answered with a web page, not an event stream: check its baseUrl "${request.baseUrl}" ` +
        "(OpenAI-compatible servers usually serve the API under /v1)",
    );
    return;
  }

  /** Handles one parsed event; true when the message is finished (done or failed). */
  const event = async (raw: unknown, fromErrorField: boolean): Promise<boolean> => {
    await request.hooks.streamEvent(raw);
    const details = errorDetails(raw) ?? (fromErrorField ? errorDetails({ error: raw }) : undefined);
    if (details || fromErrorField) {
      const failure = streamFailure(details ?? {}, provider, keyHint);
      writer.fail(failure.kind, failure.message, failure.retryAfterMs);
      return true;
    }
    const problem = normaliser.chunk(raw);
    if (problem) {
      writer.fail("unknown", `${provider} sent a stream event of an unexpected shape: ${problem}`);
      return true;
    }
    return false;
  };

  if (/application\/json/i.test(type) && !/event-stream/i.test(type)) {
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      writer.fail(
        "unknown",
        `${provider} answered with invalid JSON instead of an event stream: ${preview(text)}`,
      );
      return;
    }
    if (await event(completionAsChunk(parsed), false)) return;
    normaliser.finish(true);
    return;
  }

  const message = async (sse: SseMessage): Promise<boolean> => {
    if (sse.field === "data" && sse.data.trim() === "[DONE]") {
      normaliser.finish(true);
      return true;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(sse.data);
    } catch {
      writer.fail("unknown", `${provider} sent a malformed stream event (not JSON): ${preview(sse.data)}`);
      return true;
    }
    return event(parsed, sse.field === "error" || sse.event === "error");
  };

  if (!response.body) {
    normaliser.finish(false);
    return;
  }
  const decoder = new SseDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      arm();
      for (const sse of decoder.push(value)) if (await message(sse)) return;
    }
    for (const sse of decoder.end()) if (await message(sse)) return;
    normaliser.finish(false);
  } finally {
    reader.releaseLock();
  }
}

/** A non-streamed completion, as one chunk (a server that ignored `stream: true`). Other JSON passes through. */
function completionAsChunk(body: unknown): unknown {
  if (!isRecord(body) || !Array.isArray(body.choices)) return body;
  return {
    ...body,
    choices: body.choices.map((choice: unknown) => {
      if (!isRecord(choice) || !isRecord(choice.message)) return choice;
      const { message, ...rest } = choice;
      const toolCalls = Array.isArray(message.tool_calls)
        ? message.tool_calls.map((call: unknown, index: number) =>
            isRecord(call) ? { index, ...call } : call,
          )
        : message.tool_calls;
      return { ...rest, delta: { ...message, tool_calls: toolCalls } };
    }),
  };
}

/** The provider configuration: the `openai-completions` API, no models of its own. */
export function openaiCompletionsProviderConfig(): ProviderConfig {
  return { api: OPENAI_COMPLETIONS_API, streamSimple: streamOpenAICompletions };
}

/**
 * The `openai-completions` wire API: OpenAI's Chat Completions, as local servers (Ollama, llama.cpp's server,
 * vLLM, LM Studio) and many hosted endpoints implement it. It has no models of its own: a custom provider in
 * `<agentDir>/models.json` names `"api": "openai-completions"` with its `baseUrl`, and the model registry sends
 * that provider's requests here with its endpoint, key, headers and compat options.
 *
 * The kit's request runner drives the request (hooks, abort, timeout, failures). The request is one POST sent with
 * Node's own `http`/`https` modules: the official SDK and `fetch` (undici) cost about 0.35 s and 55 MB on the first
 * request of a process, more than the whole rest of a short run, and a Chat Completions request needs neither. No
 * retries happen here, because the agent loop retries. The event stream is read by `SseDecoder` (see sse.ts).
 */

import {
  type AssistantMessageStream,
  type AssistantMessageWriter,
  agentFilePath,
  headerRecord,
  MalformedEventError,
  type ProviderConfig,
  ProviderRequestError,
  type ProviderStreamRequest,
  type ProviderWire,
  postRequest,
  readBodyText,
  runProviderRequest,
  VERSION,
} from "@knightcodeai/cli/kit";
import { type ResolvedCompat, resolveCompat } from "./compat.js";
import { buildPayload } from "./convert.js";
import { errorDetails, httpFailure, streamFailure } from "./errors.js";
import { OPENAI_COMPLETIONS_API } from "./names.js";
import { SseDecoder, type SseMessage } from "./sse.js";

/**
 * The key sent when none is configured. Local servers (Ollama, llama.cpp, vLLM without --api-key, LM Studio)
 * ignore it, but the SDK refuses to build a client without one.
 */
export const PLACEHOLDER_API_KEY = "not-needed";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
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
    this.writer.start();
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
function keyHintFor(request: ProviderStreamRequest): string {
  const provider = request.model.provider;
  return (
    `Set the apiKey of "${provider}" in ${agentFilePath(request, "models.json")} (a key, or the name of an environment ` +
    `variable holding one), or add a key for "${provider}" to ${agentFilePath(request, "auth.json")} (/login in the terminal UI).`
  );
}

/** Streams one Chat Completions response. Never throws; the stream always ends. */
export interface CompletionsOptions {
  /** Where problems with a provider's `compat` settings are reported; Node's process warnings by default. */
  warn?(message: string): void;
}

export function streamOpenAICompletions(
  request: ProviderStreamRequest,
  options: CompletionsOptions = {},
): AssistantMessageStream {
  const warn = options.warn ?? ((message: string) => process.emitWarning(message));
  const compat = resolveCompat(request.model.provider, request.compat, warn);
  // The affinity header goes with the configured ones, so before_provider_headers handlers see it.
  const affinity = compat.sendSessionAffinityHeaders && request.sessionId;
  const sent = affinity
    ? { ...request, headers: { "x-session-affinity": request.sessionId!, ...request.headers } }
    : request;
  return runProviderRequest(sent, (writer) => completionsWire(sent, writer, compat));
}

/** Chat Completions as a ProviderWire: the SDK sends the request, SseDecoder and ChunkNormaliser read the answer. */
function completionsWire(
  request: ProviderStreamRequest,
  writer: AssistantMessageWriter,
  compat: ResolvedCompat,
): ProviderWire {
  const provider = request.model.provider;
  const keyHint = keyHintFor(request);
  const baseUrl = request.baseUrl?.trim() ?? "";
  const normaliser = new ChunkNormaliser(writer, provider);
  /** `[DONE]` arrived, or the whole completion as one JSON body: the answer is complete. */
  let terminated = false;
  /** The event being handled came from an `error:` line (older llama.cpp servers), not a `data:` line. */
  let fromErrorLine = false;

  /** The parsed events of an SSE body; stops at `[DONE]`. */
  async function* sseEvents(body: AsyncIterable<Uint8Array>, alive: () => void): AsyncIterable<unknown> {
    const decoder = new SseDecoder();
    const parse = (sse: SseMessage): unknown => {
      try {
        return JSON.parse(sse.data);
      } catch {
        throw new MalformedEventError(`not JSON: ${preview(sse.data)}`);
      }
    };
    const chunks = (async function* () {
      for await (const chunk of body) {
        const { messages, data } = decoder.push(chunk);
        // Part of a long event counts as a sign of life; a keep-alive comment does not, or a server that only
        // sends comments would hold the request open forever.
        if (data) alive();
        yield messages;
      }
      yield decoder.end();
    })();
    for await (const messages of chunks) {
      for (const sse of messages) {
        if (sse.field === "data" && sse.data.trim() === "[DONE]") {
          terminated = true;
          return;
        }
        const event = parse(sse);
        fromErrorLine = sse.field === "error" || sse.event === "error";
        yield event;
      }
    }
  }

  return {
    name: provider,
    endpoint: baseUrl,
    timeoutMs: compat.timeoutMs,
    refuse() {
      if (!baseUrl) {
        return {
          kind: "bad_request",
          message:
            `Provider "${provider}" has no baseUrl. The openai-completions API needs the server's address: set ` +
            `"baseUrl" for "${provider}" in ${agentFilePath(request, "models.json")}, e.g. "http://127.0.0.1:8080/v1".`,
        };
      }
      if (!/^https?:\/\/[^/]/i.test(baseUrl) || !URL.canParse(baseUrl)) {
        return {
          kind: "bad_request",
          message:
            `The baseUrl of "${provider}" (${JSON.stringify(baseUrl)}) is not an http(s) URL; set it in ` +
            `${agentFilePath(request, "models.json")}, e.g. "http://127.0.0.1:8080/v1".`,
        };
      }
      return undefined;
    },
    buildPayload: () => ({ ...buildPayload(request, compat) }),
    async send({ payload, headers, signal, alive }) {
      let url: URL;
      try {
        url = new URL(`${baseUrl.replace(/\/+$/, "")}/chat/completions`);
      } catch {
        throw new ProviderRequestError(
          "bad_request",
          `The baseUrl of "${provider}" is not a URL: "${baseUrl}"`,
        );
      }
      // `stream: true` is the one field a handler cannot take away: the answer is read as an event stream.
      const body = JSON.stringify({ ...payload, stream: true });
      const response = await postRequest(
        url,
        body,
        {
          "content-type": "application/json",
          accept: "application/json",
          "user-agent": `knightcode/${VERSION}`,
          ...(compat.keyHeader
            ? { [compat.keyHeader]: `Bearer ${request.apiKey || PLACEHOLDER_API_KEY}` }
            : { authorization: `Bearer ${request.apiKey || PLACEHOLDER_API_KEY}` }),
          ...headers,
        },
        signal,
      );
      const status = response.statusCode ?? 0;
      const answer = { status, headers: headerRecord(response.headers) };
      if (status >= 400) {
        const failure = httpFailure({
          status,
          body: await readBodyText(response),
          headers: answer.headers,
          provider,
          keyHint,
        });
        if (status === 404) {
          failure.message =
            `${failure.message.replace(/[.\s]+$/, "")}. Check the model id and the baseUrl "${baseUrl}" ` +
            "(OpenAI-compatible servers usually serve the API under /v1).";
        }
        return { ...answer, failure };
      }
      const type = answer.headers["content-type"] ?? "";
      if (/text\/html/i.test(type)) {
        response.destroy();
        return {
          ...answer,
          failure: {
            kind: "bad_request",
            message:
              `${provider} answered with a web page, not an event stream: check its baseUrl "${baseUrl}" ` +
              "(OpenAI-compatible servers usually serve the API under /v1)",
          },
        };
      }
      if (/application\/json/i.test(type) && !/event-stream/i.test(type)) {
        // A server that ignored `stream: true` and answered one JSON completion.
        const text = await readBodyText(response);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new MalformedEventError(`invalid JSON instead of an event stream: ${preview(text)}`);
        }
        terminated = true;
        return { ...answer, events: [completionAsChunk(parsed)] };
      }
      return { ...answer, events: sseEvents(response, alive) };
    },
    handle(raw) {
      const details = errorDetails(raw) ?? (fromErrorLine ? errorDetails({ error: raw }) : undefined);
      if (details || fromErrorLine) {
        const failure = streamFailure(details ?? {}, provider, keyHint);
        writer.fail(failure.kind, failure.message, failure.retryAfterMs);
        return;
      }
      const problem = normaliser.chunk(raw);
      if (problem) throw new MalformedEventError(problem);
    },
    end: () => normaliser.finish(terminated),
  };
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
export function openaiCompletionsProviderConfig(options: CompletionsOptions = {}): ProviderConfig {
  return {
    api: OPENAI_COMPLETIONS_API,
    streamSimple: (request) => streamOpenAICompletions(request, options),
  };
}

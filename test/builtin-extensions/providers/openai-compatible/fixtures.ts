/**
 * Chat Completions streams in the wire format servers really send (shapes checked against recorded OpenAI
 * fixtures, llama.cpp's server source and OpenRouter's documentation):
 *
 *   data: {"id":"chatcmpl-…","object":"chat.completion.chunk","created":…,"model":"…","system_fingerprint":"fp_…",
 *          "choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,
 *          "finish_reason":null}],"usage":null}
 *   data: {… "choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null}
 *   data: {… "choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}
 *   data: {… "choices":[],"usage":{"prompt_tokens":…,"completion_tokens":…,"total_tokens":…,
 *          "prompt_tokens_details":{"cached_tokens":…,"audio_tokens":0},"completion_tokens_details":{…}}}
 *   data: [DONE]
 *
 * Tool calls: the first delta of a call carries `index`, `id`, `type` and `function.name` with empty arguments;
 * later deltas carry only `index` and `function.arguments` pieces. A failure mid-stream is a data event with an
 * `error` object (OpenAI: `{"error":{"message":"…","type":"server_error"}}`); older llama.cpp servers write an
 * `error:` line instead of `data:`.
 */

import type { ServerResponse } from "node:http";
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageStream,
  ModelInfo,
  ProviderHooks,
  ProviderStreamRequest,
} from "@knightcodeai/cli";
import type { SseEvent } from "../../../helpers/sse-server.js";

export const CHUNK_ID = "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG";
const CREATED = 1741570283;
const WIRE_MODEL = "gpt-4o-2024-08-06";
const FINGERPRINT = "fp_eb9dce56a8";

export function chunk(
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  extra: Record<string, unknown> = {},
): SseEvent {
  return {
    data: {
      id: CHUNK_ID,
      object: "chat.completion.chunk",
      created: CREATED,
      model: WIRE_MODEL,
      service_tier: "default",
      system_fingerprint: FINGERPRINT,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      usage: null,
      ...extra,
    },
  };
}

export const roleChunk = (): SseEvent => chunk({ role: "assistant", content: "", refusal: null });
export const textChunks = (...pieces: string[]): SseEvent[] => pieces.map((content) => chunk({ content }));
export const finishChunk = (reason: string): SseEvent => chunk({}, reason);

export function usageChunk(prompt: number, completion: number, cached = 0): SseEvent {
  return {
    data: {
      id: CHUNK_ID,
      object: "chat.completion.chunk",
      created: CREATED,
      model: WIRE_MODEL,
      service_tier: "default",
      system_fingerprint: FINGERPRINT,
      choices: [],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
    },
  };
}

export const DONE: SseEvent = { data: "[DONE]" };

/** A whole text answer. */
export function textStream(text: string, usage: [number, number, number?] = [12, 5]): SseEvent[] {
  const pieces = text.match(/.{1,4}/gs) ?? [];
  return [
    roleChunk(),
    ...textChunks(...pieces),
    finishChunk("stop"),
    usageChunk(usage[0], usage[1], usage[2]),
    DONE,
  ];
}

/** The first delta of a tool call, then its arguments in pieces of `size` characters. */
export function toolCallChunks(index: number, id: string, name: string, args: unknown, size = 3): SseEvent[] {
  const json = JSON.stringify(args);
  const pieces = json.match(new RegExp(`.{1,${size}}`, "gs")) ?? [];
  return [
    chunk({
      ...(index === 0 ? { role: "assistant", content: null } : {}),
      tool_calls: [{ index, id, type: "function", function: { name, arguments: "" } }],
    }),
    ...pieces.map((piece) => chunk({ tool_calls: [{ index, function: { arguments: piece } }] })),
  ];
}

/** A tool-call answer: one call, finish_reason tool_calls, usage, [DONE]. */
export function toolCallStream(id: string, name: string, args: unknown): SseEvent[] {
  return [...toolCallChunks(0, id, name, args), finishChunk("tool_calls"), usageChunk(30, 12), DONE];
}

/** Writes SSE events with control over the raw bytes (for `error:` lines and malformed data). */
export function writeRaw(res: ServerResponse, lines: string[]): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const line of lines) res.write(line);
  res.end();
}

export const MODEL: ModelInfo = {
  provider: "local",
  id: "qwen3-coder",
  api: "openai-completions",
  contextWindow: 32_768,
  maxTokens: 4096,
  reasoning: false,
};

export const REASONING_MODEL: ModelInfo = { ...MODEL, id: "qwq-32b", reasoning: true };

export type HookCall =
  | { hook: "payload"; payload: any }
  | { hook: "headers"; headers: Record<string, string> }
  | { hook: "response"; status: number; headers: Record<string, string> }
  | { hook: "streamEvent"; data: any };

/** Hooks that record every call; `payload`/`headers` may change what is sent. */
export function recordingHooks(
  options: {
    payload?: (payload: any) => unknown;
    headers?: (headers: Record<string, string>) => Record<string, string>;
  } = {},
): {
  hooks: ProviderHooks;
  calls: HookCall[];
  of<K extends HookCall["hook"]>(hook: K): Extract<HookCall, { hook: K }>[];
} {
  const calls: HookCall[] = [];
  const hooks: ProviderHooks = {
    async payload(payload) {
      calls.push({ hook: "payload", payload: structuredClone(payload) });
      return options.payload ? options.payload(payload) : payload;
    },
    async headers(headers) {
      calls.push({ hook: "headers", headers: { ...headers } });
      return options.headers ? options.headers(headers) : headers;
    },
    async response(status, headers) {
      calls.push({ hook: "response", status, headers });
    },
    async streamEvent(data) {
      calls.push({ hook: "streamEvent", data });
    },
  };
  return {
    hooks,
    calls,
    of: <K extends HookCall["hook"]>(hook: K) =>
      calls.filter((c): c is Extract<HookCall, { hook: K }> => c.hook === hook),
  };
}

export function baseRequest(
  baseUrl: string,
  hooks: ProviderHooks,
  overrides: Partial<ProviderStreamRequest> = {},
): ProviderStreamRequest {
  return {
    model: MODEL,
    systemPrompt: "You are a test assistant.",
    messages: [{ role: "user", content: "Hello", timestamp: 1 }],
    tools: [],
    baseUrl,
    hooks,
    ...overrides,
  };
}

/** Every event and the final message; fails the test instead of hanging. */
export async function collect(
  stream: AssistantMessageStream,
  timeoutMs = 5000,
): Promise<{ events: AssistantMessageEvent[]; result: AssistantMessage; types: string[] }> {
  const events: AssistantMessageEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream did not end within ${timeoutMs}ms`)), timeoutMs);
  });
  try {
    await Promise.race([
      (async () => {
        for await (const event of stream) events.push(event);
      })(),
      timeout,
    ]);
    const result = await Promise.race([stream.result(), timeout]);
    return { events, result, types: events.map((e) => e.type) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The providers under the conformance suite, each with a driver that turns one abstract answer (a text, parallel
 * tool calls, a 429, a dropped connection, ...) into that provider's own wire: an SSE stream or an error body from
 * a local 127.0.0.1 server in the API's real format, or a step for the scripted provider. The suite states each case
 * once; a target says here which cases it cannot express and why.
 */
import type { ServerResponse } from "node:http";
import type {
  AssistantMessageStream,
  ModelInfo,
  ProviderHooks,
  ProviderStreamRequest,
} from "@knightcodeai/cli";
import { streamAnthropic } from "../../../../builtin-extensions/providers/anthropic/index.js";
import { streamGoogle } from "../../../../builtin-extensions/providers/google/index.js";
import { streamOpenAIResponses } from "../../../../builtin-extensions/providers/openai/index.js";
import { streamOpenAICompletions } from "../../../../builtin-extensions/providers/openai-compatible/index.js";
import {
  chunkText,
  codeSteps,
  type ScriptStep,
  scriptedProviderConfig,
} from "../../../../builtin-extensions/scripted-provider/index.js";
import {
  type RecordedRequest,
  type SseEvent,
  startTestServer,
  writeCommentsForever,
  writeHugeLine,
  writeJsonError,
  writeSse,
} from "../../../helpers/sse-server.js";
import * as anthropic from "../anthropic/wire.js";
import * as gemini from "../google/wire.js";
import { ResponsesWire } from "../openai/responses-wire.js";
import * as completions from "../openai-compatible/fixtures.js";

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
}

export interface ToolCallAnswer {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** What the provider is made to answer, independent of its wire format. */
export type Answer =
  | { kind: "text"; pieces: string[]; usage?: Usage }
  /** The first text piece arrives, then nothing while the connection stays open. */
  | { kind: "stall"; pieces: string[] }
  | { kind: "thinking"; thinking: string[]; text: string[] }
  | { kind: "tools"; calls: ToolCallAnswer[] }
  | { kind: "error"; status: 401 | 429 | 500; message: string; retryAfterSeconds?: number }
  | { kind: "overflow"; message: string }
  /** The connection drops after the first `keep` text pieces arrived. */
  | { kind: "drop"; pieces: string[]; keep: number }
  /** A stream event whose data is not JSON. */
  | { kind: "malformed" }
  /** The answer starts, then nothing comes while the connection stays open. */
  | { kind: "silent" }
  /** The answer starts, then only keep-alive comments come while the connection stays open. */
  | { kind: "comments" }
  /** The answer starts, then one data line of this many MB that never ends, then the connection closes. */
  | { kind: "huge line"; megabytes: number };

export type CaseName =
  | "text"
  | "thinking"
  | "parallel tool calls split across deltas"
  | "usage"
  | "abort mid-stream"
  | "abort before the request"
  | "401 unauthorized"
  | "429 rate limited"
  | "500 server error"
  | "context overflow"
  | "dropped connection"
  | "malformed event"
  | "hook order"
  | "handler changes reach the wire"
  | "non-object payload"
  | "failing hook handler"
  | "idle timeout"
  | "waiting notices"
  | "keep-alive comments only"
  | "a huge line and a closed connection"
  | "a 401 that repeats the key"
  | "credentials in the baseUrl";

export interface Driver {
  /** Prepares the answer to the next request. */
  serve(answer: Answer): void;
  /** `userinfo` (`user:password`) goes into the server's address, as a baseUrl may carry it. */
  stream(
    hooks: ProviderHooks,
    overrides?: Partial<ProviderStreamRequest>,
    options?: { userinfo?: string },
  ): AssistantMessageStream;
  /** What reached the server, or undefined when the provider has no wire to observe. */
  readonly sent: RecordedRequest[] | undefined;
  close(): Promise<void>;
}

export interface Target {
  /** The wire API. */
  name: string;
  /** Cases this provider cannot express, with the reason. Every other case runs. */
  cannot: Partial<Record<CaseName, string>>;
  open(): Promise<Driver>;
}

function base(model: ModelInfo, hooks: ProviderHooks): ProviderStreamRequest {
  return {
    model,
    systemPrompt: "You are tested.",
    messages: [{ role: "user", content: "Hello", timestamp: 1 }],
    tools: [],
    hooks,
  };
}

/** A network target: a local server answering whatever `respond` makes of the next answer. */
async function networkDriver(
  respond: (answer: Answer, res: ServerResponse) => void | Promise<void>,
  stream: (
    url: string,
    hooks: ProviderHooks,
    overrides: Partial<ProviderStreamRequest>,
  ) => AssistantMessageStream,
): Promise<Driver> {
  const server = await startTestServer();
  return {
    serve(answer) {
      server.respond((_req, res) => respond(answer, res));
    },
    stream: (hooks, overrides = {}, options = {}) =>
      stream(
        options.userinfo ? server.url.replace("://", `://${options.userinfo}@`) : server.url,
        hooks,
        overrides,
      ),
    sent: server.requests,
    close: () => server.close(),
  };
}

function retryAfter(seconds: number | undefined): Record<string, string> {
  return seconds ? { "retry-after": String(seconds) } : {};
}

/** Writes these events of a stream, then keeps the connection open without a word. */
function writeThenHold(res: ServerResponse, events: SseEvent[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const event of events) {
    const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
    res.write(`${event.event ? `event: ${event.event}\n` : ""}data: ${data}\n\n`);
  }
}

const ANTHROPIC_MODEL: ModelInfo = {
  provider: "anthropic",
  api: "anthropic-messages",
  id: "claude-haiku-4-5",
  contextWindow: 200_000,
  maxTokens: 64_000,
  reasoning: true,
};

const anthropicTarget: Target = {
  name: "anthropic-messages",
  cannot: {},
  open: () =>
    networkDriver(
      (answer, res) => {
        const model = ANTHROPIC_MODEL.id;
        switch (answer.kind) {
          case "text": {
            const usage = answer.usage;
            return writeSse(res, [
              anthropic.messageStart(model, usage ? { input: usage.input, cacheRead: usage.cacheRead } : {}),
              ...anthropic.textBlock(0, answer.pieces),
              anthropic.messageDelta("end_turn", usage ? { output: usage.output } : {}),
              anthropic.messageStop(),
            ]);
          }
          case "thinking":
            return writeSse(res, [
              anthropic.messageStart(model),
              ...anthropic.thinkingBlock(0, answer.thinking, "sig-conformance"),
              ...anthropic.textBlock(1, answer.text),
              anthropic.messageDelta("end_turn"),
              anthropic.messageStop(),
            ]);
          case "tools":
            return writeSse(res, [
              anthropic.messageStart(model),
              ...answer.calls.flatMap((call, index) =>
                anthropic.toolUseBlock(
                  index,
                  call.id,
                  call.name,
                  anthropic.pieces(JSON.stringify(call.args), 4),
                ),
              ),
              anthropic.messageDelta("tool_use"),
              anthropic.messageStop(),
            ]);
          case "error": {
            const type = { 401: "authentication_error", 429: "rate_limit_error", 500: "api_error" }[
              answer.status
            ];
            const headers = retryAfter(answer.retryAfterSeconds);
            return anthropic.writeApiError(res, answer.status, type, answer.message, headers);
          }
          case "overflow":
            return anthropic.writeApiError(res, 400, "invalid_request_error", answer.message);
          case "drop":
            return writeSse(
              res,
              [anthropic.messageStart(model), ...anthropic.textBlock(0, answer.pieces)],
              // message_start and content_block_start come first, then `keep` deltas.
              { dropAfter: 2 + answer.keep, delayMs: 20 },
            );
          case "malformed":
            return writeSse(res, [
              anthropic.messageStart(model),
              { event: "content_block_start", data: "{not json" },
            ]);
          case "stall":
            // content_block_start and the first delta
            return writeThenHold(res, [
              anthropic.messageStart(model),
              ...anthropic.textBlock(0, answer.pieces).slice(0, 2),
            ]);
          case "silent":
            return writeThenHold(res, [anthropic.messageStart(model)]);
          case "comments":
            return writeCommentsForever(res, [anthropic.messageStart(model)]);
          case "huge line":
            return writeHugeLine(res, [anthropic.messageStart(model)], answer.megabytes);
        }
      },
      (url, hooks, overrides) =>
        streamAnthropic({
          ...base(ANTHROPIC_MODEL, hooks),
          apiKey: "sk-ant-conformance",
          baseUrl: url,
          ...overrides,
        }),
    ),
};

const OPENAI_MODEL: ModelInfo = {
  provider: "openai",
  api: "openai-responses",
  id: "gpt-6.2-sol",
  contextWindow: 1_050_000,
  maxTokens: 128_000,
  reasoning: true,
};

const openaiTarget: Target = {
  name: "openai-responses",
  cannot: {},
  open: () =>
    networkDriver(
      (answer, res) => {
        switch (answer.kind) {
          case "text": {
            const usage = answer.usage;
            const wire = new ResponsesWire()
              .created()
              .text(answer.pieces)
              .completed(
                usage
                  ? {
                      // input_tokens counts the cached tokens too
                      input_tokens: usage.input + usage.cacheRead,
                      cached_tokens: usage.cacheRead,
                      output_tokens: usage.output,
                    }
                  : undefined,
              );
            return writeSse(res, wire.events);
          }
          case "thinking":
            return writeSse(
              res,
              new ResponsesWire()
                .created()
                .reasoning([answer.thinking], "enc-conformance")
                .text(answer.text)
                .completed().events,
            );
          case "tools": {
            const wire = new ResponsesWire().created();
            for (const call of answer.calls)
              wire.functionCall(call.id, call.name, anthropic.pieces(JSON.stringify(call.args), 4));
            return writeSse(res, wire.completed().events);
          }
          case "error": {
            const code = { 401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error" }[
              answer.status
            ];
            const headers = retryAfter(answer.retryAfterSeconds);
            return writeJsonError(
              res,
              answer.status,
              { error: { message: answer.message, type: "invalid_request_error", param: null, code } },
              headers,
            );
          }
          case "overflow":
            return writeJsonError(res, 400, {
              error: {
                message: answer.message,
                type: "invalid_request_error",
                param: "input",
                code: "context_length_exceeded",
              },
            });
          case "drop": {
            const wire = new ResponsesWire().created().text(answer.pieces).completed();
            // created, in_progress, output_item.added and content_part.added come first, then `keep` deltas.
            return writeSse(res, wire.events, { dropAfter: 4 + answer.keep, delayMs: 20 });
          }
          case "malformed": {
            const wire = new ResponsesWire().created();
            wire.events.push({
              event: "response.output_text.delta",
              data: '{"type":"response.output_text.delta","delta":"oo',
            });
            return writeSse(res, wire.events);
          }
          case "stall":
            // created, in_progress, output_item.added, content_part.added and the first delta
            return writeThenHold(res, new ResponsesWire().created().text(answer.pieces).events.slice(0, 5));
          case "silent":
            return writeThenHold(res, new ResponsesWire().created().events.slice(0, 1));
          case "comments":
            return writeCommentsForever(res, new ResponsesWire().created().events.slice(0, 1));
          case "huge line":
            return writeHugeLine(res, new ResponsesWire().created().events.slice(0, 1), answer.megabytes);
        }
      },
      (url, hooks, overrides) =>
        streamOpenAIResponses({
          ...base(OPENAI_MODEL, hooks),
          apiKey: "sk-conformance",
          baseUrl: `${url}/v1`,
          ...overrides,
        }),
    ),
};

const completionsTarget: Target = {
  name: "openai-completions",
  cannot: {},
  open: () =>
    networkDriver(
      (answer, res) => {
        switch (answer.kind) {
          case "text": {
            const usage = answer.usage;
            return writeSse(res, [
              completions.roleChunk(),
              ...completions.textChunks(...answer.pieces),
              completions.finishChunk("stop"),
              ...(usage
                ? [completions.usageChunk(usage.input + usage.cacheRead, usage.output, usage.cacheRead)]
                : []),
              completions.DONE,
            ]);
          }
          case "thinking":
            return writeSse(res, [
              completions.roleChunk(),
              ...answer.thinking.map((piece) => completions.chunk({ reasoning_content: piece })),
              ...completions.textChunks(...answer.text),
              completions.finishChunk("stop"),
              completions.DONE,
            ]);
          case "tools":
            return writeSse(res, [
              ...answer.calls.flatMap((call, index) =>
                completions.toolCallChunks(index, call.id, call.name, call.args),
              ),
              completions.finishChunk("tool_calls"),
              completions.DONE,
            ]);
          case "error": {
            const code = { 401: "invalid_api_key", 429: "rate_limit_exceeded", 500: null }[answer.status];
            const headers = retryAfter(answer.retryAfterSeconds);
            return writeJsonError(
              res,
              answer.status,
              { error: { message: answer.message, type: "invalid_request_error", code } },
              headers,
            );
          }
          case "overflow":
            return writeJsonError(res, 400, {
              error: {
                message: answer.message,
                type: "invalid_request_error",
                code: "context_length_exceeded",
              },
            });
          case "drop":
            return writeSse(res, [completions.roleChunk(), ...completions.textChunks(...answer.pieces)], {
              dropAfter: 1 + answer.keep,
              delayMs: 20,
            });
          case "malformed":
            return completions.writeRaw(res, [
              `data: ${JSON.stringify(completions.roleChunk().data)}\n\n`,
              'data: {"choices":[{"delta":{"content":"oops"\n\n',
            ]);
          case "stall":
            return writeThenHold(res, [
              completions.roleChunk(),
              ...completions.textChunks(answer.pieces[0]!),
            ]);
          case "silent":
            return writeThenHold(res, [completions.roleChunk()]);
          case "comments":
            return writeCommentsForever(res, [completions.roleChunk()]);
          case "huge line":
            return writeHugeLine(res, [completions.roleChunk()], answer.megabytes);
        }
      },
      (url, hooks, overrides) =>
        streamOpenAICompletions({
          ...base(completions.MODEL, hooks),
          baseUrl: `${url}/v1`,
          ...overrides,
        }),
    ),
};

const GEMINI_MODEL: ModelInfo = {
  provider: "google",
  api: "google-generative-ai",
  id: "gemini-2.5-flash",
  contextWindow: 1_048_576,
  maxTokens: 65_536,
  reasoning: true,
};

/** Gemini's SSE events as the helpers in conformance write them (`data:` lines only). */
const geminiEvents = (chunks: unknown[]): SseEvent[] => chunks.map((data) => ({ data }));

const googleTarget: Target = {
  name: "google-generative-ai",
  cannot: {
    "parallel tool calls split across deltas":
      "Gemini sends each functionCall whole, its args an object in one part: there are no argument deltas to split (google/stream.test.ts covers parallel calls)",
    "handler changes reach the wire":
      "the Gemini body has no `stream` field (the URL asks for the stream) and refuses unknown ones; google/stream.test.ts checks that a handler's payload and headers reach the wire",
  },
  open: () =>
    networkDriver(
      (answer, res) => {
        const code = { 401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL" } as const;
        switch (answer.kind) {
          case "text": {
            const usage = answer.usage;
            return gemini.writeGemini(
              res,
              gemini.textChunks(
                answer.pieces,
                usage
                  ? {
                      prompt: usage.input + usage.cacheRead,
                      candidates: usage.output,
                      cached: usage.cacheRead,
                    }
                  : undefined,
              ),
            );
          }
          case "thinking":
            return gemini.writeGemini(res, [
              ...answer.thinking.map((text) => gemini.chunk([{ text, thought: true }])),
              ...gemini.textChunks(answer.text),
            ]);
          case "tools":
            return gemini.writeGemini(res, [
              gemini.chunk(
                answer.calls.map((call) => ({
                  functionCall: { id: call.id, name: call.name, args: call.args },
                })),
                { finishReason: "STOP" },
              ),
            ]);
          case "error":
            return gemini.writeGoogleError(
              res,
              answer.status,
              code[answer.status],
              answer.message,
              [],
              retryAfter(answer.retryAfterSeconds),
            );
          case "overflow":
            return gemini.writeGoogleError(res, 400, "INVALID_ARGUMENT", answer.message);
          case "drop":
            return gemini.writeGemini(
              res,
              answer.pieces.map((text) => gemini.chunk([{ text }])),
              { dropAfter: answer.keep, delayMs: 20 },
            );
          case "malformed":
            return gemini.writeGemini(res, [gemini.chunk([{ text: "ok" }]), '{"candidates": [{"content"']);
          case "stall":
            return gemini.writeGemini(res, [gemini.chunk([{ text: answer.pieces[0]! }])], { hold: true });
          case "silent":
            return writeThenHold(res, []);
          case "comments":
            return writeCommentsForever(res, []);
          case "huge line":
            return writeHugeLine(res, geminiEvents([gemini.chunk([{ text: "" }])]), answer.megabytes);
        }
      },
      (url, hooks, overrides) =>
        streamGoogle({
          ...base(GEMINI_MODEL, hooks),
          apiKey: "gm-conformance",
          baseUrl: url,
          ...overrides,
        }),
    ),
};

const SCRIPTED_MODEL: ModelInfo = {
  provider: "scripted",
  api: "scripted",
  id: "scripted",
  contextWindow: 200_000,
  maxTokens: 32_000,
  reasoning: true,
};

/**
 * The scripted provider's step for an answer; its chunking (2–6 characters) splits every block into deltas. It has
 * no HTTP: error answers and the dropped connection are error steps of the kind the network providers classify
 * them as, with the same status and retry-after, so the cases check what the runner and writer make of them.
 */
function scriptedStep(answer: Answer): ScriptStep {
  switch (answer.kind) {
    case "text":
      return {
        text: answer.pieces.join(""),
        ...(answer.usage ? { usage: answer.usage } : {}),
      };
    case "stall":
      return { text: answer.pieces.join(""), chunkDelayMs: 60_000 };
    case "thinking":
      return { thinking: answer.thinking.join(""), text: answer.text.join("") };
    case "tools":
      return {
        toolCalls: answer.calls.map((call) => ({ id: call.id, name: call.name, arguments: call.args })),
      };
    case "error": {
      const kind = ({ 401: "auth", 429: "rate_limit", 500: "overloaded" } as const)[answer.status];
      return {
        error: {
          kind,
          status: answer.status,
          message: answer.message,
          ...(answer.retryAfterSeconds ? { retryAfterMs: answer.retryAfterSeconds * 1000 } : {}),
        },
      };
    }
    case "overflow":
      return { error: { kind: "context_overflow", status: 400, message: answer.message } };
    case "drop": {
      // Cut after the chunks that hold the first `keep` pieces (the provider chunks the text its own way).
      const kept = answer.pieces.slice(0, answer.keep).join("").length;
      let chunks = 0;
      for (let length = 0; length < kept; chunks++)
        length += chunkText(answer.pieces.join(""))[chunks]!.length;
      return {
        text: answer.pieces.join(""),
        error: { kind: "network", message: "the connection was lost", afterChunks: chunks },
      };
    }
    case "malformed":
    case "silent":
    case "comments":
    case "huge line":
      throw new Error(`the scripted provider cannot answer "${answer.kind}"`);
  }
}

const scriptedTarget: Target = {
  name: "scripted",
  cannot: {
    "malformed event": "a script is validated before it streams; there is no wire to corrupt",
    "idle timeout": "no network and no timeout: a script's delays are part of the answer",
    "keep-alive comments only": "no wire: a script has no comments to send",
    "waiting notices": "no network and no timeout: nothing to wait for",
    "a huge line and a closed connection": "no wire: a script is validated before it streams",
    "a 401 that repeats the key": "no key: nothing is sent anywhere",
    "credentials in the baseUrl": "no baseUrl: nothing is sent anywhere",
    "handler changes reach the wire":
      "no wire to observe (a replaced payload's scriptedStep and system are tested in scripted-provider.test.ts)",
  },
  async open() {
    let step: ScriptStep = { text: "unset" };
    return {
      serve(answer) {
        step = scriptedStep(answer);
      },
      // A fresh provider per request, so each request answers with the step served for it.
      stream: (hooks, overrides = {}) =>
        scriptedProviderConfig(codeSteps([step])).streamSimple!({
          ...base(SCRIPTED_MODEL, hooks),
          ...overrides,
        }),
      sent: undefined,
      close: async () => {},
    };
  },
};

export const TARGETS: readonly Target[] = [
  anthropicTarget,
  openaiTarget,
  completionsTarget,
  googleTarget,
  scriptedTarget,
];

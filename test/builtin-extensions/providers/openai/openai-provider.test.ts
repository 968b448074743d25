/**
 * builtin:openai against a local server that answers in the Responses API's wire format: streamSimple driven
 * directly with recording hooks, and through real sessions (models.json pointing the provider at the server).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentSessionHandle,
  type AssistantMessage,
  type AssistantMessageEvent,
  type AssistantMessageStream,
  createAgentSession,
  createStandardKernel,
  defineTool,
  type ExtensionAPI,
  type ExtensionFactory,
  type LlmMessage,
  type ModelInfo,
  type ProviderConfig,
  type ProviderHooks,
  type ProviderStreamRequest,
  type SessionEvent,
  type ThinkingLevel,
} from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import openaiProvider, {
  buildPayload,
  DEFAULT_TIMEOUT_MS,
  OPENAI_MODELS,
  openaiProviderConfig,
  parseReasoningSignature,
  reasoningEffort,
  streamOpenAIResponses,
  strictSchema,
} from "../../../../builtin-extensions/providers/openai/index.js";
import { PI_MODELS } from "../../../../builtin-extensions/providers/openai/pi-models.generated.js";
import { sessionInternals } from "../../../../hosts/sdk/session-internals.js";
import {
  type RecordedRequest,
  startTestServer,
  type TestServer,
  writeJsonError,
  writeSse,
} from "../../../helpers/sse-server.js";
import { pieces, ResponsesWire } from "./responses-wire.js";

const MODEL: ModelInfo = {
  provider: "openai",
  id: "gpt-6.2-sol",
  name: "GPT-6.2 Sol",
  api: "openai-responses",
  contextWindow: 1_050_000,
  maxTokens: 128_000,
  reasoning: true,
  cost: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
};

const PLAIN_MODEL: ModelInfo = {
  provider: "openai",
  id: "gpt-4.1-mini",
  api: "openai-responses",
  contextWindow: 1_000_000,
  maxTokens: 32_768,
  reasoning: false,
};

type HookCall =
  | { hook: "payload"; payload: Record<string, unknown> }
  | { hook: "headers"; headers: Record<string, string> }
  | { hook: "response"; status: number; headers: Record<string, string> }
  | { hook: "streamEvent"; data: Record<string, unknown> };

function recordingHooks(
  options: {
    payload?: (payload: Record<string, unknown>) => unknown;
    headers?: (headers: Record<string, string>) => Record<string, string>;
    log?: string[];
  } = {},
) {
  const calls: HookCall[] = [];
  const hooks: ProviderHooks = {
    async payload(payload) {
      calls.push({ hook: "payload", payload: structuredClone(payload) as Record<string, unknown> });
      return options.payload ? options.payload(payload as Record<string, unknown>) : payload;
    },
    async headers(headers) {
      calls.push({ hook: "headers", headers: { ...headers } });
      return options.headers ? options.headers(headers) : headers;
    },
    async response(status, headers) {
      calls.push({ hook: "response", status, headers });
    },
    async streamEvent(data) {
      const event = data as Record<string, unknown>;
      calls.push({ hook: "streamEvent", data: event });
      options.log?.push(`raw:${event.type}:${typeof event.delta === "string" ? event.delta : ""}`);
    },
  };
  return { calls, hooks, events: () => calls.filter((c) => c.hook === "streamEvent").map((c) => c.data) };
}

function user(text: string): LlmMessage {
  return { role: "user", content: text, timestamp: 1 };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
    }),
  ]);
}

async function collect(stream: AssistantMessageStream, log?: string[]) {
  const events: AssistantMessageEvent[] = [];
  await withTimeout(
    (async () => {
      for await (const event of stream) {
        events.push(event);
        log?.push(`event:${event.type}:${"delta" in event ? event.delta : ""}`);
      }
    })(),
    8000,
    "the stream",
  );
  return { events, result: await withTimeout(stream.result(), 1000, "result()") };
}

function types(events: AssistantMessageEvent[]): string[] {
  return events.map((e) => e.type);
}

function deltas(
  events: AssistantMessageEvent[],
  type: "text_delta" | "thinking_delta" | "toolcall_delta",
  index?: number,
) {
  return events
    .filter((e) => e.type === type && (index === undefined || e.contentIndex === index))
    .map((e) => (e as { delta: string }).delta);
}

function textOf(message: AssistantMessage): string {
  return message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

function body(request: RecordedRequest): Record<string, any> {
  return request.body as Record<string, any>;
}

const WEATHER_TOOL = {
  name: "get_weather",
  description: "Current weather of a city",
  parameters: Type.Object({
    city: Type.String(),
    unit: Type.Optional(Type.Union([Type.Literal("c"), Type.Literal("f")])),
  }),
};

describe("builtin-extensions/providers/openai", () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    await server.close();
  });

  function request(overrides: Partial<ProviderStreamRequest> = {}): ProviderStreamRequest {
    return {
      model: MODEL,
      systemPrompt: "You are terse.",
      messages: [user("Say hello")],
      tools: [],
      apiKey: "sk-test-key",
      baseUrl: `${server.url}/v1`,
      hooks: recordingHooks().hooks,
      ...overrides,
    };
  }

  function replay(wire: ResponsesWire, options: Parameters<typeof writeSse>[2] = {}) {
    server.respond((_req, res) => writeSse(res, wire.events, options));
  }

  describe("registration", () => {
    it("registers provider openai with the openai-responses api, the env key name and the catalogue", () => {
      const registered = new Map<string, ProviderConfig>();
      openaiProvider({
        registerProvider: (name: string, config: ProviderConfig) => registered.set(name, config),
      } as unknown as ExtensionAPI);
      expect([...registered.keys()]).to.deep.equal(["openai"]);
      const config = registered.get("openai")!;
      expect(config).to.include({ api: "openai-responses", apiKey: "OPENAI_API_KEY" });
      expect(config.baseUrl).to.equal("https://api.openai.com/v1");
      expect(config.streamSimple).to.be.a("function");
      const own = config.models!.slice(0, OPENAI_MODELS.length);
      expect(own.map((m) => m.id)).to.deep.equal([
        "gpt-6.2-sol",
        "gpt-6.2-astra",
        "gpt-6.1-sol",
        "gpt-6-luna",
      ]);
      for (const model of own) {
        expect(model.reasoning, model.id).to.equal(true);
        expect(model.contextWindow).to.equal(1_050_000);
        expect(model.maxTokens).to.equal(128_000);
        expect(model.cost!.cacheWrite).to.equal(model.cost!.input * 1.25);
        expect(model.cost!.cacheRead).to.be.below(model.cost!.input);
      }
      expect(own).to.deep.equal(OPENAI_MODELS);
      expect(openaiProviderConfig().models).to.deep.equal(config.models);
      // Then pi-ai's OpenAI models it does not list itself, so a model a pi user chose is found.
      const more = config.models!.slice(OPENAI_MODELS.length);
      expect(more).to.deep.equal(PI_MODELS.filter((m) => !OPENAI_MODELS.some((o) => o.id === m.id)));
      expect(more.map((m) => m.id)).to.include.members(["gpt-5.5", "gpt-4o", "o3"]);
      expect(more.find((m) => m.id === "gpt-4o")).to.include({ contextWindow: 128_000 });
      expect(DEFAULT_TIMEOUT_MS).to.equal(600_000);
    });
  });

  describe("streaming", () => {
    it("streams plain text, calls every hook in order and reports usage with cached tokens split out", async () => {
      const wire = new ResponsesWire()
        .created()
        .text(pieces("Hello there, friend."))
        .completed({ input_tokens: 1200, cached_tokens: 1000, output_tokens: 9 });
      replay(wire);
      const log: string[] = [];
      const recorder = recordingHooks({ log });
      const { events, result } = await collect(
        streamOpenAIResponses(request({ hooks: recorder.hooks, headers: { "x-team": "core" } })),
        log,
      );

      expect(result.stopReason, result.errorMessage).to.equal("stop");
      expect(textOf(result)).to.equal("Hello there, friend.");
      expect(types(events)).to.deep.equal([
        "start",
        "text_start",
        ...pieces("Hello there, friend.").map(() => "text_delta"),
        "text_end",
        "done",
      ]);
      expect(deltas(events, "text_delta")).to.deep.equal(pieces("Hello there, friend."));
      expect(result).to.include({ api: "openai-responses", provider: "openai", model: "gpt-6.2-sol" });
      expect(result.usage).to.include({
        input: 200,
        output: 9,
        cacheRead: 1000,
        cacheWrite: 0,
        totalTokens: 1209,
      });
      expect(result.usage.cost.input).to.be.closeTo((200 * 2) / 1e6, 1e-12);
      expect(result.usage.cost.cacheRead).to.be.closeTo((1000 * 0.1) / 1e6, 1e-12);
      expect(result.usage.cost.output).to.be.closeTo((9 * 10) / 1e6, 1e-12);

      // What the server received.
      expect(server.requests).to.have.length(1);
      const sent = server.requests[0]!;
      expect(sent.method).to.equal("POST");
      expect(sent.path).to.equal("/v1/responses");
      expect(sent.headers.authorization).to.equal("Bearer sk-test-key");
      expect(sent.headers["x-team"]).to.equal("core");
      expect(body(sent)).to.deep.equal({
        model: "gpt-6.2-sol",
        instructions: "You are terse.",
        input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Say hello" }] }],
        max_output_tokens: 128_000,
        include: ["reasoning.encrypted_content"],
        store: false,
        stream: true,
      });

      // Hooks: payload, headers, response, then every raw event in order, each before it is normalised.
      const kinds = recorder.calls.map((c) => c.hook);
      expect(kinds.slice(0, 3)).to.deep.equal(["payload", "headers", "response"]);
      expect(recorder.calls[1]).to.deep.equal({ hook: "headers", headers: { "x-team": "core" } });
      const response = recorder.calls[2] as Extract<HookCall, { hook: "response" }>;
      expect(response.status).to.equal(200);
      expect(response.headers["content-type"]).to.equal("text/event-stream");
      expect(recorder.events()).to.deep.equal(wire.events.map((e) => e.data));
      for (const delta of pieces("Hello there, friend.")) {
        const raw = log.indexOf(`raw:response.output_text.delta:${delta}`);
        const normalised = log.indexOf(`event:text_delta:${delta}`);
        expect(raw, delta).to.be.greaterThan(-1);
        expect(normalised, delta).to.be.greaterThan(raw);
      }
    });

    it("sends what a payload handler returns, and the headers a headers handler returns", async () => {
      replay(new ResponsesWire().created().text(["ok"]).completed());
      const recorder = recordingHooks({
        payload: (payload) => ({ ...payload, max_output_tokens: 77, metadata: { origin: "hook" } }),
        headers: (headers) => ({ ...headers, "x-added-by-hook": "1" }),
      });
      const { result } = await collect(
        streamOpenAIResponses(request({ hooks: recorder.hooks, maxTokens: 500 })),
      );
      expect(result.stopReason, result.errorMessage).to.equal("stop");
      expect((recorder.calls[0] as { payload: Record<string, unknown> }).payload.max_output_tokens).to.equal(
        500,
      );
      const sent = body(server.requests[0]!);
      expect(sent.max_output_tokens).to.equal(77);
      expect(sent.metadata).to.deep.equal({ origin: "hook" });
      expect(server.requests[0]!.headers["x-added-by-hook"]).to.equal("1");
    });

    it("streams reasoning summaries as thinking with the encrypted item as signature, and sends it back next time", async () => {
      const summary = [pieces("**Planning** I should greet."), pieces("Keep it short.")];
      replay(
        new ResponsesWire()
          .created()
          .reasoning(summary, "gAAAAABfinal-encrypted==", "rs_abc123")
          .text(pieces("Hi!"))
          .completed({ input_tokens: 50, output_tokens: 120, reasoning_tokens: 100 }),
      );
      const { events, result } = await collect(streamOpenAIResponses(request({ thinkingLevel: "high" })));
      expect(result.stopReason, result.errorMessage).to.equal("stop");
      expect(types(events).filter((t) => !t.endsWith("_delta"))).to.deep.equal([
        "start",
        "thinking_start",
        "thinking_end",
        "text_start",
        "text_end",
        "done",
      ]);
      expect(deltas(events, "thinking_delta", 0).join("")).to.equal(
        "**Planning** I should greet.\n\nKeep it short.",
      );
      const thinking = result.content[0]!;
      expect(thinking.type).to.equal("thinking");
      if (thinking.type !== "thinking") return;
      expect(thinking.thinking).to.equal("**Planning** I should greet.\n\nKeep it short.");
      expect(JSON.parse(thinking.thinkingSignature!)).to.deep.equal({
        id: "rs_abc123",
        encrypted_content: "gAAAAABfinal-encrypted==",
        summary: [
          { type: "summary_text", text: "**Planning** I should greet." },
          { type: "summary_text", text: "Keep it short." },
        ],
      });
      expect(body(server.requests[0]!).reasoning).to.deep.equal({ effort: "high", summary: "auto" });

      // The next request carries the reasoning item forward, before the message it led to.
      replay(new ResponsesWire().created().text(["Again."]).completed());
      const foreign: AssistantMessage = {
        ...result,
        provider: "anthropic",
        api: "anthropic-messages",
        model: "claude-x",
        content: [
          { type: "thinking", thinking: "their thoughts", thinkingSignature: "EqQBCkgIARABGAIiQL" },
          { type: "text", text: "From elsewhere." },
        ],
      };
      const second = await collect(
        streamOpenAIResponses(
          request({
            thinkingLevel: "high",
            messages: [user("Say hello"), result, user("Again"), foreign, user("Once more")],
          }),
        ),
      );
      expect(second.result.stopReason, second.result.errorMessage).to.equal("stop");
      expect(body(server.requests[1]!).input).to.deep.equal([
        { type: "message", role: "user", content: [{ type: "input_text", text: "Say hello" }] },
        {
          type: "reasoning",
          id: "rs_abc123",
          encrypted_content: "gAAAAABfinal-encrypted==",
          summary: [
            { type: "summary_text", text: "**Planning** I should greet." },
            { type: "summary_text", text: "Keep it short." },
          ],
        },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "Hi!", annotations: [] }],
          status: "completed",
        },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Again" }] },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "From elsewhere.", annotations: [] }],
          status: "completed",
        },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Once more" }] },
      ]);
      expect(body(server.requests[1]!)).to.include({ store: false });
      expect(body(server.requests[1]!).include).to.deep.equal(["reasoning.encrypted_content"]);
    });

    it("streams parallel tool calls whose argument JSON is split across many deltas", async () => {
      const argsA = pieces('{"city":"Paris","unit":"c"}', [1, 2, 3]);
      const argsB = pieces('{"city":"Tōkyō"}', [2, 1]);
      replay(
        new ResponsesWire()
          .created()
          .functionCall("call_A1", "get_weather", argsA)
          .functionCall("call_B2", "get_weather", argsB)
          .completed({ input_tokens: 80, output_tokens: 30 }),
      );
      const { events, result } = await collect(streamOpenAIResponses(request({ tools: [WEATHER_TOOL] })));
      expect(result.stopReason, result.errorMessage).to.equal("toolUse");
      expect(result.content).to.deep.equal([
        { type: "toolCall", id: "call_A1", name: "get_weather", arguments: { city: "Paris", unit: "c" } },
        { type: "toolCall", id: "call_B2", name: "get_weather", arguments: { city: "Tōkyō" } },
      ]);
      expect(deltas(events, "toolcall_delta", 0)).to.deep.equal(argsA);
      expect(deltas(events, "toolcall_delta", 1)).to.deep.equal(argsB);
      expect(
        events.filter((e) => e.type === "toolcall_end").map((e) => (e as { toolCall: unknown }).toolCall),
      ).to.deep.equal(result.content);
      expect(body(server.requests[0]!).tools).to.deep.equal([
        {
          type: "function",
          name: "get_weather",
          description: "Current weather of a city",
          parameters: {
            type: "object",
            properties: {
              city: { type: "string" },
              unit: {
                anyOf: [
                  { const: "c", type: "string" },
                  { const: "f", type: "string" },
                ],
              },
            },
            required: ["city"],
          },
          strict: false,
        },
      ]);
      expect(body(server.requests[0]!)).to.not.have.property("tool_choice");

      // Tool results go back as function_call_output items after the calls (images as input_image parts).
      replay(new ResponsesWire().created().text(["Sunny and clear."]).completed());
      const second = await collect(
        streamOpenAIResponses(
          request({
            tools: [WEATHER_TOOL],
            messages: [
              user("Weather in Paris and Tokyo?"),
              result,
              {
                role: "toolResult",
                toolCallId: "call_A1",
                toolName: "get_weather",
                content: [{ type: "text", text: "18°C, sunny" }],
                isError: false,
                timestamp: 2,
              },
              {
                role: "toolResult",
                toolCallId: "call_B2",
                toolName: "get_weather",
                content: [
                  { type: "text", text: "radar:" },
                  { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
                ],
                isError: false,
                timestamp: 3,
              },
            ],
          }),
        ),
      );
      expect(second.result.stopReason, second.result.errorMessage).to.equal("stop");
      expect(body(server.requests[1]!).input).to.deep.equal([
        {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "Weather in Paris and Tokyo?" }],
        },
        {
          type: "function_call",
          call_id: "call_A1",
          name: "get_weather",
          arguments: '{"city":"Paris","unit":"c"}',
        },
        { type: "function_call", call_id: "call_B2", name: "get_weather", arguments: '{"city":"Tōkyō"}' },
        { type: "function_call_output", call_id: "call_A1", output: "18°C, sunny" },
        {
          type: "function_call_output",
          call_id: "call_B2",
          output: [
            { type: "input_text", text: "radar:" },
            { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
          ],
        },
      ]);
    });

    it("sends user images as data URLs and gives an interrupted call a placeholder output", async () => {
      replay(new ResponsesWire().created().text(["Seen."]).completed());
      const interrupted: AssistantMessage = {
        role: "assistant",
        content: [{ type: "toolCall", id: "call_lost", name: "get_weather", arguments: { city: "Oslo" } }],
        api: "openai-responses",
        provider: "openai",
        model: "gpt-6.2-sol",
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "aborted",
        timestamp: 2,
      };
      await collect(
        streamOpenAIResponses(
          request({
            messages: [
              {
                role: "user",
                content: [
                  { type: "text", text: "What is this?" },
                  { type: "image", data: "R0lGOD==", mimeType: "image/gif" },
                ],
                timestamp: 1,
              },
              interrupted,
              user("Never mind"),
            ],
          }),
        ),
      );
      expect(body(server.requests[0]!).input).to.deep.equal([
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            { type: "input_image", image_url: "data:image/gif;base64,R0lGOD==", detail: "auto" },
          ],
        },
        { type: "function_call", call_id: "call_lost", name: "get_weather", arguments: '{"city":"Oslo"}' },
        {
          type: "function_call_output",
          call_id: "call_lost",
          output: "No result: the call was interrupted before the tool ran.",
        },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Never mind" }] },
      ]);
    });

    it("forces a tool with tool_choice and declares it strict, with a schema strict mode accepts", async () => {
      replay(
        new ResponsesWire()
          .created()
          .functionCall("call_1", "get_weather", ['{"city":', '"Rome","unit":null}'])
          .completed(),
      );
      const { result } = await collect(
        streamOpenAIResponses(
          request({
            model: PLAIN_MODEL,
            tools: [WEATHER_TOOL],
            toolChoice: { name: "get_weather" },
            temperature: 0,
          }),
        ),
      );
      expect(result.stopReason, result.errorMessage).to.equal("toolUse");
      const sent = body(server.requests[0]!);
      expect(sent.tool_choice).to.deep.equal({ type: "function", name: "get_weather" });
      expect(sent.temperature).to.equal(0);
      expect(sent).to.not.have.property("include");
      expect(sent).to.not.have.property("reasoning");
      expect(sent.tools[0]).to.deep.equal({
        type: "function",
        name: "get_weather",
        description: "Current weather of a city",
        parameters: {
          type: "object",
          properties: {
            city: { type: "string" },
            unit: {
              anyOf: [
                {
                  anyOf: [
                    { const: "c", type: "string" },
                    { const: "f", type: "string" },
                  ],
                },
                { type: "null" },
              ],
            },
          },
          required: ["city", "unit"],
          additionalProperties: false,
        },
        strict: true,
      });
    });

    it("leaves temperature out for reasoning models unless compat says the endpoint takes it", async () => {
      replay(new ResponsesWire().created().text(["a"]).completed());
      await collect(streamOpenAIResponses(request({ temperature: 0.2 })));
      await collect(
        streamOpenAIResponses(request({ temperature: 0.2, compat: { supportsTemperature: true } })),
      );
      expect(body(server.requests[0]!)).to.not.have.property("temperature");
      expect(body(server.requests[1]!).temperature).to.equal(0.2);
    });

    it("ends with length when the output limit cut the response", async () => {
      replay(
        new ResponsesWire()
          .created()
          .text(pieces("This answer goes on and on"))
          .incomplete("max_output_tokens"),
      );
      const { result } = await collect(streamOpenAIResponses(request({ maxTokens: 16 })));
      expect(result.stopReason, result.errorMessage).to.equal("length");
      expect(textOf(result)).to.equal("This answer goes on and on");
      expect(body(server.requests[0]!).max_output_tokens).to.equal(16);
    });
  });

  describe("errors", () => {
    it("fails with auth naming OPENAI_API_KEY when there is no key, without sending anything", async () => {
      const { events, result } = await collect(streamOpenAIResponses(request({ apiKey: undefined })));
      expect(types(events)).to.deep.equal(["error"]);
      expect(result).to.include({ stopReason: "error", errorKind: "auth" });
      expect(result.errorMessage).to.contain("OPENAI_API_KEY");
      expect(server.requests).to.have.length(0);
    });

    it("maps a 429 to rate_limit with the server's retry-after-ms, after calling the response hook", async () => {
      server.respond((_req, res) =>
        writeJsonError(
          res,
          429,
          {
            error: {
              message:
                "Rate limit reached for gpt-6.2-sol on tokens per min (TPM). Please try again in 30ms.",
              type: "tokens",
              param: null,
              code: "rate_limit_exceeded",
            },
          },
          { "retry-after-ms": "30", "x-request-id": "req_1" },
        ),
      );
      const recorder = recordingHooks();
      const { result } = await collect(streamOpenAIResponses(request({ hooks: recorder.hooks })));
      expect(result).to.include({ stopReason: "error", errorKind: "rate_limit", retryAfterMs: 30 });
      expect(result.errorMessage).to.contain("Rate limit reached");
      const response = recorder.calls.find((c) => c.hook === "response") as Extract<
        HookCall,
        { hook: "response" }
      >;
      expect(response.status).to.equal(429);
      expect(response.headers["x-request-id"]).to.equal("req_1");
      expect(server.requests).to.have.length(1); // the SDK did not retry
    });

    it("does not treat an exhausted quota (429 insufficient_quota) as retryable", async () => {
      server.respond((_req, res) =>
        writeJsonError(res, 429, {
          error: {
            message: "You exceeded your current quota, please check your plan and billing details.",
            type: "insufficient_quota",
            param: null,
            code: "insufficient_quota",
          },
        }),
      );
      const { result } = await collect(streamOpenAIResponses(request()));
      expect(result).to.include({ stopReason: "error", errorKind: "bad_request" });
      expect(result.errorMessage).to.contain("You exceeded your current quota");
      expect(result.retryAfterMs).to.equal(undefined);
    });

    it("maps 401 to auth with the key hint", async () => {
      server.respond((_req, res) =>
        writeJsonError(res, 401, {
          error: {
            message: "Incorrect API key provided: sk-test-key.",
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        }),
      );
      const { result } = await collect(streamOpenAIResponses(request()));
      expect(result).to.include({ stopReason: "error", errorKind: "auth" });
      expect(result.errorMessage).to.contain("Incorrect API key provided").and.contain("OPENAI_API_KEY");
    });

    it("maps context_length_exceeded to context_overflow and shows the provider's message on other 400s", async () => {
      server.respondInOrder(
        (_req, res) =>
          writeJsonError(res, 400, {
            error: {
              message: "Your input exceeds the limit of this model. Please adjust your input and try again.",
              type: "invalid_request_error",
              param: "input",
              code: "context_length_exceeded",
            },
          }),
        (_req, res) =>
          writeJsonError(res, 400, {
            error: {
              message:
                "Invalid value: 'mega'. Supported values are: 'low', 'medium', 'high', 'xhigh' and 'max'.",
              type: "invalid_request_error",
              param: "reasoning.effort",
              code: "invalid_value",
            },
          }),
      );
      const overflow = await collect(streamOpenAIResponses(request()));
      expect(overflow.result).to.include({ stopReason: "error", errorKind: "context_overflow" });
      expect(overflow.result.errorMessage).to.contain("Your input exceeds the limit");
      const bad = await collect(streamOpenAIResponses(request()));
      expect(bad.result).to.include({ stopReason: "error", errorKind: "bad_request" });
      expect(bad.result.errorMessage).to.contain("Invalid value: 'mega'").and.contain("(400)");
    });

    it("maps an overloaded error event mid-stream, keeping the text so far", async () => {
      const wire = new ResponsesWire().created();
      wire.text(pieces("Partial ans"));
      wire.error("server_is_overloaded", "Our servers are currently overloaded. Please try again later.");
      // the text item above completed; a second message is cut by the error
      replay(wire);
      const recorder = recordingHooks();
      const { result } = await collect(streamOpenAIResponses(request({ hooks: recorder.hooks })));
      expect(result).to.include({ stopReason: "error", errorKind: "overloaded" });
      expect(result.errorMessage).to.contain("overloaded").and.contain("Please try again later");
      expect(textOf(result)).to.equal("Partial ans");
      expect(recorder.events().at(-1)).to.include({ type: "error", code: "server_is_overloaded" });
    });

    it("also understands an error event that nests its error object (which the SDK throws)", async () => {
      const wire = new ResponsesWire().created().text(["So far"]);
      wire.events.push({
        event: "error",
        data: {
          type: "error",
          sequence_number: 99,
          error: { type: "service_unavailable_error", code: "server_is_overloaded", message: "Slow down." },
        },
      });
      replay(wire);
      const { result } = await collect(streamOpenAIResponses(request()));
      expect(result).to.include({ stopReason: "error", errorKind: "overloaded" });
      expect(result.errorMessage).to.contain("Slow down.");
      expect(textOf(result)).to.equal("So far");
    });

    it("maps response.failed with a server error to overloaded and a rate limit to rate_limit", async () => {
      server.respondInOrder(
        (_req, res) =>
          writeSse(
            res,
            new ResponsesWire()
              .created()
              .text(["Half"])
              .failed("server_error", "The server had an error while processing your request.").events,
          ),
        (_req, res) =>
          writeSse(
            res,
            new ResponsesWire()
              .created()
              .failed("rate_limit_exceeded", "Rate limit reached. Please try again in 1.5s.").events,
          ),
      );
      const first = await collect(streamOpenAIResponses(request()));
      expect(first.result).to.include({ stopReason: "error", errorKind: "overloaded" });
      expect(textOf(first.result)).to.equal("Half");
      const second = await collect(streamOpenAIResponses(request()));
      expect(second.result).to.include({ stopReason: "error", errorKind: "rate_limit", retryAfterMs: 1500 });
    });

    it("reports a connection dropped mid-stream as a network error", async () => {
      const wire = new ResponsesWire().created().text(pieces("This will be cut off")).completed();
      replay(wire, { dropAfter: 7, delayMs: 10 });
      const { result } = await collect(streamOpenAIResponses(request()));
      expect(result).to.include({ stopReason: "error", errorKind: "network" });
      expect(textOf(result)).to.equal(pieces("This will be cut off").slice(0, 3).join(""));
      expect(result.errorMessage).to.contain("was lost before the response was complete");
    });

    it("reports a stream that ends without its terminal event", async () => {
      const wire = new ResponsesWire().created().text(["Unfinished"]);
      replay(wire);
      const { result } = await collect(streamOpenAIResponses(request()));
      expect(result).to.include({ stopReason: "error", errorKind: "network" });
      expect(result.errorMessage).to.contain("the stream ended before the response was complete");
    });

    it("fails with unknown on an event that is not valid JSON", async () => {
      const wire = new ResponsesWire().created();
      wire.events.push({
        event: "response.output_text.delta",
        data: '{"type":"response.output_text.delta","delta":"oo',
      });
      replay(wire);
      const { result } = await collect(streamOpenAIResponses(request()));
      expect(result).to.include({ stopReason: "error", errorKind: "unknown" });
      expect(result.errorMessage).to.contain("not valid JSON");
    });

    it("fails with unknown on an event of an unexpected shape", async () => {
      const wire = new ResponsesWire().created();
      wire.events.push({
        event: "response.output_text.delta",
        data: {
          type: "response.output_text.delta",
          sequence_number: 2,
          item_id: "msg_1",
          output_index: 0,
          delta: 42,
        },
      });
      wire.completed();
      replay(wire);
      const { result } = await collect(streamOpenAIResponses(request()));
      expect(result).to.include({ stopReason: "error", errorKind: "unknown" });
      expect(result.errorMessage).to.contain("malformed stream event").and.contain("delta");
    });

    it("ends a stalled stream at once with aborted when the signal aborts", async () => {
      const wire = new ResponsesWire()
        .created()
        .text(pieces("A slow answer that takes a long time to arrive"))
        .completed();
      // After the first text delta the server sends nothing more and keeps the connection: only the abort can end
      // the stream, so the bound below can be loose (a loaded machine) and still fails a stream that waits.
      const firstText = wire.events.findIndex((e) => e.event === "response.output_text.delta");
      replay(wire, { stallAfter: firstText + 1 });
      const controller = new AbortController();
      const stream = streamOpenAIResponses(request({ signal: controller.signal }));
      let abortedAt = 0;
      const events: AssistantMessageEvent[] = [];
      await withTimeout(
        (async () => {
          for await (const event of stream) {
            events.push(event);
            if (event.type === "text_delta" && !abortedAt) {
              abortedAt = Date.now();
              controller.abort();
            }
          }
        })(),
        5000,
        "the aborted stream",
      );
      const result = await stream.result();
      expect(Date.now() - abortedAt).to.be.below(2000);
      expect(result.stopReason).to.equal("aborted");
      expect(result.errorKind).to.equal("aborted");
      expect(events.at(-1)!.type).to.equal("error");
      expect(textOf(result)).to.equal(pieces("A slow answer that takes a long time to arrive")[0]);
    });

    it("fails with aborted at once when the signal is already aborted", async () => {
      const controller = new AbortController();
      controller.abort();
      const { result } = await collect(streamOpenAIResponses(request({ signal: controller.signal })));
      expect(result.stopReason).to.equal("aborted");
      expect(server.requests).to.have.length(0);
    });

    it("times out (compat.timeoutMs) when no answer comes, and when a stream falls silent", async () => {
      server.respondInOrder(
        () => new Promise<void>(() => {}), // never answers
        (_req, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          const [first] = new ResponsesWire().created().events;
          res.write(`event: ${first!.event}\ndata: ${JSON.stringify(first!.data)}\n\n`);
          // then silence
        },
      );
      const started = Date.now();
      const noAnswer = await collect(streamOpenAIResponses(request({ compat: { timeoutMs: 150 } })));
      expect(noAnswer.result).to.include({ stopReason: "error", errorKind: "timeout" });
      const silent = await collect(streamOpenAIResponses(request({ compat: { timeoutMs: 150 } })));
      expect(silent.result).to.include({ stopReason: "error", errorKind: "timeout" });
      expect(Date.now() - started).to.be.below(3000);
    });

    it("reports a throwing hook handler as unknown, without blaming the network", async () => {
      const recorder = recordingHooks({
        headers: () => {
          throw new Error("vault locked");
        },
      });
      const { result } = await collect(streamOpenAIResponses(request({ hooks: recorder.hooks })));
      expect(result).to.include({ stopReason: "error", errorKind: "unknown" });
      expect(result.errorMessage).to.contain("before_provider_headers").and.contain("vault locked");
      expect(server.requests).to.have.length(0);
    });

    it("reports a refused connection as a network error", async () => {
      const { result } = await collect(streamOpenAIResponses(request({ baseUrl: "http://127.0.0.1:1/v1" })));
      expect(result).to.include({ stopReason: "error", errorKind: "network" });
    });
  });

  describe("conversions", () => {
    it("maps thinking levels to efforts (GPT-6 models take xhigh, not minimal)", () => {
      const levels: ThinkingLevel[] = ["minimal", "low", "medium", "high", "xhigh"];
      expect(levels.map((l) => reasoningEffort(l, "gpt-5.5"))).to.deep.equal([
        "minimal",
        "low",
        "medium",
        "high",
        "high",
      ]);
      expect(levels.map((l) => reasoningEffort(l, "gpt-6.2-sol"))).to.deep.equal([
        "low",
        "low",
        "medium",
        "high",
        "xhigh",
      ]);
    });

    it("sends the effort compat.thinkingLevelMap names for a level, else its own mapping", () => {
      const gpt5 = { ...MODEL, id: "gpt-5.5" };
      const effort = (level: ThinkingLevel, compat?: Record<string, unknown>) =>
        (
          buildPayload(request({ model: gpt5, thinkingLevel: level, ...(compat ? { compat } : {}) }))
            .reasoning as {
            effort: string;
          }
        ).effort;
      const map = { thinkingLevelMap: { minimal: "low", xhigh: "xhigh" } };
      expect(effort("minimal", map)).to.equal("low");
      expect(effort("xhigh", map)).to.equal("xhigh");
      expect(effort("medium", map)).to.equal("medium");
      expect(effort("minimal")).to.equal("minimal");
      expect(effort("minimal", { thinkingLevelMap: { minimal: null } })).to.equal("minimal");
    });

    it("keeps an already strict schema unchanged and closes nested objects", () => {
      const classify = {
        type: "object",
        properties: { label: { type: "string", enum: ["a", "b"] } },
        required: ["label"],
        additionalProperties: false,
      };
      expect(strictSchema(classify)).to.deep.equal(classify);
      expect(
        strictSchema({
          type: "object",
          properties: {
            list: { type: "array", items: { type: "object", properties: { n: { type: "number" } } } },
          },
          required: ["list"],
        }),
      ).to.deep.equal({
        type: "object",
        properties: {
          list: {
            type: "array",
            items: {
              type: "object",
              properties: { n: { type: ["number", "null"] } },
              required: ["n"],
              additionalProperties: false,
            },
          },
        },
        required: ["list"],
        additionalProperties: false,
      });
    });

    it("reads only well-formed reasoning signatures", () => {
      expect(parseReasoningSignature(undefined)).to.equal(undefined);
      expect(parseReasoningSignature("EqQBCkgIARAB")).to.equal(undefined);
      expect(parseReasoningSignature(JSON.stringify({ id: "rs_1" }))).to.equal(undefined);
      expect(
        parseReasoningSignature(JSON.stringify({ id: "rs_1", encrypted_content: "gA==" })),
      ).to.deep.equal({
        id: "rs_1",
        encrypted_content: "gA==",
        summary: [],
      });
    });
  });

  describe("through a session", () => {
    let kernel: Awaited<ReturnType<typeof createStandardKernel>> | undefined;
    let handle: AgentSessionHandle | undefined;
    let dir = "";

    afterEach(async () => {
      await handle?.dispose();
      await kernel?.dispose();
      handle = undefined;
      kernel = undefined;
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = "";
    });

    async function open(options: {
      providers: Record<string, unknown>;
      provider: string;
      model: string;
      thinkingLevel?: ThinkingLevel;
      extensions?: ExtensionFactory[];
      settings?: Record<string, unknown>;
    }) {
      dir = mkdtempSync(join(tmpdir(), "kc-openai-"));
      const agentDir = join(dir, "agent");
      mkdirSync(agentDir, { recursive: true });
      writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: options.providers }));
      kernel = await createStandardKernel({ agentDir, cacheDir: false });
      const warnings: string[] = [];
      handle = await createAgentSession({
        cwd: dir,
        agentDir,
        kernel,
        provider: options.provider,
        model: options.model,
        session: { inMemory: true },
        settings: { retry: { baseDelayMs: 1, maxDelayMs: 2000 }, ...options.settings },
        extensions: [openaiProvider, ...(options.extensions ?? [])],
        ...(options.thinkingLevel ? { thinkingLevel: options.thinkingLevel } : {}),
        warn: (message) => warnings.push(message),
      });
      const events: SessionEvent[] = [];
      handle.subscribe((event) => events.push(structuredClone(event)));
      return { handle, events, warnings, ofType: (type: string) => events.filter((e) => e.type === type) };
    }

    const openaiAt = (models: unknown[]) => ({
      openai: { baseUrl: `${server.url}/v1`, api: "openai-responses", apiKey: "sk-session-key", models },
    });

    it("answers to pi's provider name openai-codex, with pi-ai's models it does not list itself (gpt-5.5)", async () => {
      const wire = new ResponsesWire("resp_codex", "gpt-5.5").created().text(["from ", "5.5"]).completed();
      server.respond((_req, res) => writeSse(res, wire.events));
      // Only the address and key: the built-in's catalogue stays.
      const s = await open({
        providers: { openai: { baseUrl: `${server.url}/v1`, apiKey: "sk-session-key" } },
        provider: "openai-codex",
        model: "gpt-5.5",
      });
      expect(s.handle.getState().model).to.include({ provider: "openai", id: "gpt-5.5" });
      await s.handle.prompt("hi");
      expect(server.requests[0]!.path).to.equal("/v1/responses");
      expect(server.requests[0]!.body.model).to.equal("gpt-5.5");
    });

    it("runs a tool loop: hooks observe the traffic, reasoning and tool results go into the next request", async () => {
      const lookup = defineTool({
        name: "lookup",
        description: "Look a word up",
        parameters: Type.Object({ word: Type.String() }),
        execute: async (_id, params) => ({
          content: [{ type: "text" as const, text: `definition of ${params.word}` }],
          details: {},
        }),
      });
      const seen = { statuses: [] as number[], raw: [] as string[], payloads: [] as unknown[] };
      const observer = (kc: ExtensionAPI) => {
        kc.registerTool(lookup);
        kc.on("before_provider_request", (event) => {
          seen.payloads.push(event.payload);
        });
        kc.on("before_provider_headers", (event) => {
          event.headers["x-session-hook"] = "added";
        });
        kc.on("after_provider_response", (event) => {
          seen.statuses.push(event.status);
        });
        kc.on("provider_stream_event", (event) => {
          seen.raw.push(String((event.data as { type: string }).type));
        });
      };
      const first = new ResponsesWire("resp_1")
        .created()
        .reasoning([pieces("I need both words.")], "gAAAAB-session-secret", "rs_s1")
        .functionCall("call_x", "lookup", pieces('{"word":"ephemeral"}', [2, 3]))
        .functionCall("call_y", "lookup", pieces('{"word":"port"}', [1, 4]))
        .completed({ input_tokens: 300, output_tokens: 60 });
      const second = new ResponsesWire("resp_2").created().text(pieces("Both defined.")).completed();
      server.respondInOrder(
        (_req, res) => writeSse(res, first.events),
        (_req, res) => writeSse(res, second.events),
      );
      const s = await open({
        providers: openaiAt([
          { id: "gpt-6.2-sol", reasoning: true, contextWindow: 1_050_000, maxTokens: 128_000 },
        ]),
        provider: "openai",
        model: "gpt-6.2-sol",
        thinkingLevel: "medium",
        extensions: [observer],
      });
      await withTimeout(s.handle.prompt("Define ephemeral and port"), 8000, "the prompt");

      expect(server.requests).to.have.length(2);
      const [req1, req2] = server.requests as [RecordedRequest, RecordedRequest];
      expect(req1.headers["x-session-hook"]).to.equal("added");
      expect(req1.headers.authorization).to.equal("Bearer sk-session-key");
      expect(body(req1).instructions).to.be.a("string").and.not.equal("");
      expect(body(req1).reasoning).to.deep.equal({ effort: "medium", summary: "auto" });
      expect(body(req1).tools.map((t: { name: string }) => t.name)).to.include("lookup");
      expect(seen.statuses).to.deep.equal([200, 200]);
      expect(seen.raw).to.deep.equal([...first.types, ...second.types]);
      expect(seen.payloads).to.have.length(2);

      expect(body(req2).input).to.deep.equal([
        {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "Define ephemeral and port" }],
        },
        {
          type: "reasoning",
          id: "rs_s1",
          encrypted_content: "gAAAAB-session-secret",
          summary: [{ type: "summary_text", text: "I need both words." }],
        },
        { type: "function_call", call_id: "call_x", name: "lookup", arguments: '{"word":"ephemeral"}' },
        { type: "function_call", call_id: "call_y", name: "lookup", arguments: '{"word":"port"}' },
        { type: "function_call_output", call_id: "call_x", output: "definition of ephemeral" },
        { type: "function_call_output", call_id: "call_y", output: "definition of port" },
      ]);
      const final = s.ofType("message_end").at(-1)!.message as AssistantMessage;
      expect(final).to.include({ stopReason: "stop", provider: "openai", model: "gpt-6.2-sol" });
      expect(textOf(final)).to.equal("Both defined.");
    });

    it("retries a 429 after the server's retry-after, then succeeds", async () => {
      server.respondInOrder(
        (_req, res) =>
          writeJsonError(
            res,
            429,
            {
              error: {
                message: "Rate limit reached for requests. Please try again in 30ms.",
                type: "requests",
                param: null,
                code: "rate_limit_exceeded",
              },
            },
            { "retry-after-ms": "30" },
          ),
        (_req, res) => writeSse(res, new ResponsesWire().created().text(["Recovered."]).completed().events),
      );
      const s = await open({
        providers: openaiAt([{ id: "gpt-6.2-sol", reasoning: true }]),
        provider: "openai",
        model: "gpt-6.2-sol",
      });
      await withTimeout(s.handle.prompt("Hello"), 8000, "the prompt");
      expect(server.requests).to.have.length(2);
      const start = s.ofType("auto_retry_start");
      expect(start).to.have.length(1);
      expect(start[0]!.delayMs).to.equal(30);
      expect(start[0]!.errorMessage).to.contain("rate limit");
      expect(s.ofType("auto_retry_end")[0]).to.deep.include({ success: true, attempt: 2 });
      const final = s.ofType("message_end").at(-1)!.message as AssistantMessage;
      expect(textOf(final)).to.equal("Recovered.");
    });

    it("classify(): forces the classify tool at temperature 0 on a custom openai-responses provider", async () => {
      const answer =
        (label: string) =>
        (_req: RecordedRequest, res: Parameters<Parameters<TestServer["respond"]>[0]>[1]) =>
          writeSse(
            res,
            new ResponsesWire()
              .created()
              .functionCall("call_c", "classify", pieces(`{"label":"${label}"}`, [3]))
              .completed().events,
          );
      server.respondInOrder(answer("risky"), answer("maybe"));
      const s = await open({
        providers: {
          "corp-gateway": {
            baseUrl: `${server.url}/v1`,
            api: "openai-responses",
            apiKey: "gateway-key",
            models: [{ id: "gpt-4.1-mini", reasoning: false }],
          },
        },
        provider: "corp-gateway",
        model: "gpt-4.1-mini",
      });
      const verdict = await withTimeout(
        sessionInternals(s.handle).models.classify({
          prompt: "rm -rf / --no-preserve-root",
          labels: ["safe", "risky"],
        }),
        8000,
        "classify()",
      );
      expect(verdict.label).to.equal("risky");
      const sent = body(server.requests[0]!);
      expect(server.requests[0]!.headers.authorization).to.equal("Bearer gateway-key");
      expect(sent.model).to.equal("gpt-4.1-mini");
      expect(sent.tool_choice).to.deep.equal({ type: "function", name: "classify" });
      expect(sent.temperature).to.equal(0);
      expect(sent.tools).to.deep.equal([
        {
          type: "function",
          name: "classify",
          description: "Answer with exactly one of the allowed labels.",
          parameters: {
            type: "object",
            properties: { label: { type: "string", enum: ["safe", "risky"] } },
            required: ["label"],
            additionalProperties: false,
          },
          strict: true,
        },
      ]);
      expect(sent.input).to.deep.equal([
        {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "rm -rf / --no-preserve-root" }],
        },
      ]);

      let failure: Error | undefined;
      try {
        await withTimeout(
          sessionInternals(s.handle).models.classify({ prompt: "ls", labels: ["safe", "risky"] }),
          8000,
          "classify()",
        );
      } catch (error) {
        failure = error as Error;
      }
      expect(failure?.message).to.contain('"maybe"').and.contain("safe, risky");
    });

    it("fails a session prompt with the auth error when the key is missing", async () => {
      const saved = process.env.OPENAI_API_KEY;
      delete process.env.OPENAI_API_KEY;
      try {
        const s = await open({
          providers: {
            openai: {
              baseUrl: `${server.url}/v1`,
              api: "openai-responses",
              apiKey: "OPENAI_API_KEY",
              models: [{ id: "gpt-6.2-sol" }],
            },
          },
          provider: "openai",
          model: "gpt-6.2-sol",
        });
        await withTimeout(s.handle.prompt("Hi"), 8000, "the prompt");
        const final = s.ofType("message_end").at(-1)!.message as AssistantMessage;
        expect(final).to.include({ stopReason: "error", errorKind: "auth" });
        expect(final.errorMessage).to.contain("OPENAI_API_KEY");
        expect(s.ofType("auto_retry_start")).to.deep.equal([]);
        expect(server.requests).to.have.length(0);
      } finally {
        if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
      }
    });
  });
});

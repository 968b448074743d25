import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageStream,
  ExtensionAPI,
  FlagDefinition,
  LlmMessage,
  ModelInfo,
  ProviderConfig,
  ProviderHooks,
  ProviderStreamRequest,
  ToolDeclaration,
} from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { expect } from "chai";
import scriptedProvider, {
  chunkText,
  createScriptedProvider,
  type ScriptEntry,
  type ScriptedRawEvent,
  ScriptSchema,
  type ScriptStep,
} from "../../../builtin-extensions/scripted-provider/index.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** Records what the extension uses of the API; nothing else exists on it. */
function fakeApi(flags: Record<string, string | boolean | undefined> = {}) {
  const providers = new Map<string, ProviderConfig>();
  const flagDefinitions = new Map<string, FlagDefinition>();
  const getFlagCalls: string[] = [];
  const api = {
    registerProvider(name: string, config: ProviderConfig) {
      providers.set(name, config);
    },
    registerFlag(name: string, flag: FlagDefinition) {
      flagDefinitions.set(name, flag);
    },
    getFlag(name: string) {
      getFlagCalls.push(name);
      return flags[name];
    },
  };
  return { api: api as unknown as ExtensionAPI, providers, flagDefinitions, getFlagCalls };
}

type HookCall =
  | { hook: "headers"; headers: Record<string, string> }
  | { hook: "payload"; payload: Record<string, unknown> }
  | { hook: "response"; status: number; headers: Record<string, string> }
  | { hook: "streamEvent"; data: ScriptedRawEvent };

function recordingHooks(options: { payload?: (payload: Record<string, unknown>) => unknown } = {}) {
  const calls: HookCall[] = [];
  const hooks: ProviderHooks = {
    async headers(headers) {
      calls.push({ hook: "headers", headers });
      return headers;
    },
    async payload(payload) {
      calls.push({ hook: "payload", payload: payload as Record<string, unknown> });
      return options.payload ? options.payload(payload as Record<string, unknown>) : payload;
    },
    async response(status, headers) {
      calls.push({ hook: "response", status, headers });
    },
    async streamEvent(data) {
      calls.push({ hook: "streamEvent", data: data as ScriptedRawEvent });
    },
  };
  return { calls, hooks };
}

const model: ModelInfo = {
  provider: "scripted",
  id: "scripted",
  name: "Scripted",
  api: "scripted",
  contextWindow: 200000,
  maxTokens: 32000,
  reasoning: true,
};

function user(text: string): LlmMessage {
  return { role: "user", content: text, timestamp: 1 };
}

function request(overrides: Partial<ProviderStreamRequest> = {}): ProviderStreamRequest {
  return {
    model,
    systemPrompt: "You are a test.",
    messages: [user("hello there")],
    tools: [],
    hooks: recordingHooks().hooks,
    ...overrides,
  };
}

/** The `scripted` provider of a fresh extension instance with these steps. */
function provider(steps: ScriptEntry[] | (() => ScriptEntry[])): ProviderConfig {
  const { api, providers } = fakeApi();
  createScriptedProvider(steps)(api);
  return providers.get("scripted")!;
}

async function collect(stream: AssistantMessageStream) {
  const events: AssistantMessageEvent[] = [];
  for await (const event of stream) events.push(event);
  return { events, result: await stream.result() };
}

function run(config: ProviderConfig, overrides: Partial<ProviderStreamRequest> = {}) {
  return collect(config.streamSimple!(request(overrides)));
}

function deltas(
  events: AssistantMessageEvent[],
  type: AssistantMessageEvent["type"],
  index?: number,
): string[] {
  return events
    .filter(
      (e) => e.type === type && (index === undefined || ("contentIndex" in e && e.contentIndex === index)),
    )
    .map((e) => (e as { delta: string }).delta);
}

function textOf(message: AssistantMessage): string {
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms).unref(),
    ),
  ]);
}

describe("builtin-extensions/scripted-provider", () => {
  describe("registration", () => {
    it("registers the script flag and the scripted provider, and reads the flag only when a request comes", async () => {
      const fake = fakeApi({ script: undefined });
      scriptedProvider(fake.api);
      expect(fake.flagDefinitions.get("script")).to.deep.equal({
        type: "string",
        description: "JSON file of scripted provider steps",
      });
      const config = fake.providers.get("scripted")!;
      expect(config.api).to.equal("scripted");
      expect(config.models).to.deep.equal([
        { id: "scripted", name: "Scripted", contextWindow: 200000, maxTokens: 32000, reasoning: true },
      ]);
      expect(config.streamSimple).to.be.a("function");
      expect(fake.getFlagCalls).to.deep.equal([]);

      const { result } = await run(config);
      expect(fake.getFlagCalls).to.deep.equal(["script"]);
      expect(result.stopReason).to.equal("error");
      expect(result.errorMessage).to.contain("--script");
    });

    it("createScriptedProvider registers only the provider", () => {
      const fake = fakeApi();
      createScriptedProvider([{ text: "hi" }])(fake.api);
      expect([...fake.providers.keys()]).to.deep.equal(["scripted"]);
      expect(fake.flagDefinitions.size).to.equal(0);
    });
  });

  describe("streaming", () => {
    it("streams a text step in small chunks with cumulative partials and final usage", async () => {
      const text = "Hello, this is a scripted answer with enough text for several chunks.";
      const { events, result } = await run(provider([{ text }]));

      const types = events.map((e) => e.type);
      expect(types[0]).to.equal("start");
      expect(types[1]).to.equal("text_start");
      expect(types.at(-2)).to.equal("text_end");
      expect(types.at(-1)).to.equal("done");
      const textDeltas = deltas(events, "text_delta");
      expect(types.slice(2, -2)).to.deep.equal(textDeltas.map(() => "text_delta"));
      expect(textDeltas.join("")).to.equal(text);
      expect(textDeltas.length).to.be.greaterThan(5);
      for (const delta of textDeltas) expect(delta.length).to.be.within(2, 6);

      let sofar = "";
      let lastOutput = 0;
      for (const event of events) {
        if (event.type === "done" || event.type === "error") continue;
        const partial = event.partial;
        expect(partial).to.include({
          role: "assistant",
          api: "scripted",
          provider: "scripted",
          model: "scripted",
        });
        expect(partial.stopReason).to.equal("pending");
        if (event.type === "text_delta") sofar += event.delta;
        if (event.type !== "start") expect(textOf(partial)).to.equal(sofar);
        expect(partial.usage.output).to.be.at.least(lastOutput);
        expect(partial.usage.totalTokens).to.equal(partial.usage.input + partial.usage.output);
        lastOutput = partial.usage.output;
      }
      // Snapshots: an early partial did not change afterwards.
      expect((events[0] as { partial: AssistantMessage }).partial.content).to.deep.equal([]);

      const end = events.at(-1) as Extract<AssistantMessageEvent, { type: "done" }>;
      expect(end.reason).to.equal("stop");
      expect(end.message).to.deep.equal(result);
      expect(result.stopReason).to.equal("stop");
      expect(result.content).to.deep.equal([{ type: "text", text }]);
      const input = Math.ceil(("You are a test.".length + "hello there".length) / 4);
      expect(result.usage).to.deep.equal({
        input,
        output: Math.ceil(text.length / 4),
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: input + Math.ceil(text.length / 4),
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      });
      expect(result.timestamp).to.be.a("number");
    });

    it("chunks deterministically and never splits a surrogate pair", () => {
      const text = "abcdefghijklmnopqrstuvwxyz0123456789";
      expect(chunkText(text)).to.deep.equal(chunkText(text));
      expect(chunkText(text).join("")).to.equal(text);
      for (const chunk of chunkText("abcdefg")) expect(chunk.length).to.be.within(2, 6);
      expect(chunkText("x")).to.deep.equal(["x"]);
      expect(chunkText("")).to.deep.equal([]);
      const emoji = "😀😀😀😀😀😀😀";
      expect(chunkText(emoji).every((chunk) => Array.from(chunk).every((c) => c === "😀"))).to.equal(true);
    });

    it("streams thinking before text", async () => {
      const { events, result } = await run(
        provider([{ thinking: "Let me think about it.", text: "Done thinking." }]),
      );
      const types = events.map((e) => e.type).filter((t) => !t.endsWith("_delta"));
      expect(types).to.deep.equal([
        "start",
        "thinking_start",
        "thinking_end",
        "text_start",
        "text_end",
        "done",
      ]);
      expect(deltas(events, "thinking_delta", 0).join("")).to.equal("Let me think about it.");
      expect(deltas(events, "text_delta", 1).join("")).to.equal("Done thinking.");
      const thinkingEnd = events.find((e) => e.type === "thinking_end") as { content: string };
      expect(thinkingEnd.content).to.equal("Let me think about it.");
      expect(result.content).to.deep.equal([
        { type: "thinking", thinking: "Let me think about it." },
        { type: "text", text: "Done thinking." },
      ]);
    });

    it("streams two tool calls with split argument deltas", async () => {
      const first = { path: "src/index.ts", offset: 10, limit: 40 };
      const second = { command: "ls -la", options: { hidden: true, depth: [1, 2] } };
      const config = provider([
        {
          text: "Reading.",
          toolCalls: [
            { name: "read", arguments: first },
            { name: "bash", arguments: second, id: "my-id" },
          ],
        },
        { toolCalls: [{ name: "ls", arguments: {} }] },
      ]);
      const { events, result } = await run(config);

      const starts = events.filter((e) => e.type === "toolcall_start") as {
        contentIndex: number;
        partial: AssistantMessage;
      }[];
      expect(starts.map((e) => e.contentIndex)).to.deep.equal([1, 2]);
      expect(starts[0]!.partial.content[1]).to.deep.equal({
        type: "toolCall",
        id: "call_1",
        name: "read",
        arguments: {},
      });

      const firstDeltas = deltas(events, "toolcall_delta", 1);
      const secondDeltas = deltas(events, "toolcall_delta", 2);
      expect(firstDeltas.length).to.be.greaterThan(3);
      expect(secondDeltas.length).to.be.greaterThan(3);
      expect(JSON.parse(firstDeltas.join(""))).to.deep.equal(first);
      expect(JSON.parse(secondDeltas.join(""))).to.deep.equal(second);

      const ends = events.filter((e) => e.type === "toolcall_end") as Extract<
        AssistantMessageEvent,
        { type: "toolcall_end" }
      >[];
      expect(ends.map((e) => e.toolCall)).to.deep.equal([
        { type: "toolCall", id: "call_1", name: "read", arguments: first },
        { type: "toolCall", id: "my-id", name: "bash", arguments: second },
      ]);
      const done = events.at(-1) as Extract<AssistantMessageEvent, { type: "done" }>;
      expect(done.reason).to.equal("toolUse");
      expect(result.stopReason).to.equal("toolUse");
      expect(result.content.map((block) => block.type)).to.deep.equal(["text", "toolCall", "toolCall"]);

      // Generated ids keep counting across requests of one provider instance.
      const next = await run(config);
      expect(next.result.content).to.deep.equal([
        { type: "toolCall", id: "call_2", name: "ls", arguments: {} },
      ]);
    });

    it("honours usage and stopReason overrides", async () => {
      const { result, events } = await run(
        provider([
          { text: "Cut short here", usage: { input: 500, output: 2, cacheRead: 100 }, stopReason: "length" },
        ]),
      );
      expect(result.stopReason).to.equal("length");
      expect((events.at(-1) as { reason: string }).reason).to.equal("length");
      expect(result.usage).to.include({
        input: 500,
        output: 2,
        cacheRead: 100,
        cacheWrite: 0,
        totalTokens: 602,
      });
      for (const event of events) {
        if ("partial" in event) expect(event.partial.usage.output).to.be.at.most(2);
      }
    });
  });

  describe("hooks", () => {
    it("calls payload, headers, response, then streamEvent before normalising each raw event", async () => {
      const log: string[] = [];
      const calls: HookCall[] = [];
      const hooks: ProviderHooks = {
        async headers(headers) {
          calls.push({ hook: "headers", headers });
          log.push("headers");
          return headers;
        },
        async payload(payload) {
          calls.push({ hook: "payload", payload: payload as Record<string, unknown> });
          log.push("payload");
          return payload;
        },
        async response(status, headers) {
          calls.push({ hook: "response", status, headers });
          log.push(`response:${status}`);
        },
        async streamEvent(data) {
          // Let the consumer drain what was pushed so far: the event for this raw event must not be among it.
          await new Promise((resolve) => setImmediate(resolve));
          calls.push({ hook: "streamEvent", data: data as ScriptedRawEvent });
          log.push(`raw:${(data as ScriptedRawEvent).type}`);
        },
      };
      const tools: ToolDeclaration[] = [
        { name: "read", description: "Read a file", parameters: Type.Object({ path: Type.String() }) },
      ];
      const stream = provider([{ thinking: "Hmm.", text: "Hi there!", toolCalls: [{ name: "read" }] }])
        .streamSimple!(request({ hooks, tools, headers: { "x-extra": "1" }, thinkingLevel: "high" }));
      for await (const event of stream) log.push(`event:${event.type}`);
      await stream.result();

      // The order every provider follows (the kit's request runner owns it).
      expect(log.slice(0, 3)).to.deep.equal(["payload", "headers", "response:200"]);
      const rest = log.slice(3);
      const normalised: Record<string, (next: string) => boolean> = {
        "raw:message_start": (next) => next === "event:start",
        "raw:block_start": (next) => next.endsWith("_start"),
        "raw:chunk": (next) => next.endsWith("_delta"),
        "raw:block_end": (next) => next.endsWith("_end"),
        "raw:message_end": (next) => next === "event:done",
      };
      expect(rest.length % 2).to.equal(0);
      for (let i = 0; i < rest.length; i += 2) {
        expect(normalised[rest[i]!]?.(rest[i + 1]!), `${rest[i]} then ${rest[i + 1]}`).to.equal(true);
      }

      const payloadCall = calls[0] as Extract<HookCall, { hook: "payload" }>;
      expect(payloadCall.payload).to.deep.include({
        model: "scripted",
        system: "You are a test.",
        messages: [{ role: "user", content: "hello there", timestamp: 1 }],
        thinking: "high",
        stream: true,
      });
      expect(payloadCall.payload.tools).to.deep.equal([
        {
          name: "read",
          description: "Read a file",
          parameters: {
            type: "object",
            properties: { path: { type: "string" } },
            required: ["path"],
          },
        },
      ]);
      // The configured headers, as every provider gives them to the hook.
      const headersCall = calls[1] as Extract<HookCall, { hook: "headers" }>;
      expect(headersCall.headers).to.deep.equal({ "x-extra": "1" });
      const responseCall = calls[2] as Extract<HookCall, { hook: "response" }>;
      expect(responseCall.headers["content-type"]).to.equal("text/event-stream");
      const raw = calls.slice(3).map((call) => (call as Extract<HookCall, { hook: "streamEvent" }>).data);
      expect(raw[0]).to.include({ type: "message_start", model: "scripted" });
      expect(raw.at(-1)).to.include({ type: "message_end", stop_reason: "tool_use" });
      expect(raw.filter((e) => e.type === "chunk").length).to.equal(
        rest.filter((entry) => entry.endsWith("_delta")).length,
      );
    });

    it("uses a replaced payload: its system counts in the usage estimate", async () => {
      const { hooks } = recordingHooks({ payload: (payload) => ({ ...payload, system: "S".repeat(4000) }) });
      const { result } = await run(provider([{ text: "ok" }]), { hooks });
      expect(result.usage.input).to.equal(Math.ceil((4000 + "hello there".length) / 4));
    });

    it("answers with the payload's scriptedStep when a handler sets one; the request still counts", async () => {
      const config = provider([{ text: "first" }, { text: "second" }]);
      const { hooks } = recordingHooks({
        payload: (payload) => ({ ...payload, scriptedStep: { text: "injected" } }),
      });
      const first = await run(config, { hooks });
      expect(textOf(first.result)).to.equal("injected");
      const second = await run(config);
      expect(textOf(second.result)).to.equal("second");

      const bad = recordingHooks({ payload: (payload) => ({ ...payload, scriptedStep: { text: 5 } }) });
      const third = await run(config, { hooks: bad.hooks });
      expect(third.result.stopReason).to.equal("error");
      expect(third.result.errorMessage).to.contain("$.scriptedStep.text");
    });
  });

  describe("errors and aborts", () => {
    it("fails mid-stream after some chunks with the step's kind, status and retry-after", async () => {
      const { calls, hooks } = recordingHooks();
      const { events, result } = await run(
        provider([
          {
            text: "This answer will be cut off.",
            error: {
              kind: "overloaded",
              message: "Overloaded, try later",
              status: 529,
              retryAfterMs: 10,
              afterChunks: 3,
            },
          },
        ]),
        { hooks },
      );
      const response = calls.find((call) => call.hook === "response") as Extract<
        HookCall,
        { hook: "response" }
      >;
      expect(response.status).to.equal(529);
      expect(response.headers["retry-after-ms"]).to.equal("10");

      expect(events.map((e) => e.type)).to.deep.equal([
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "error",
      ]);
      const partialText = deltas(events, "text_delta").join("");
      expect("This answer will be cut off.".startsWith(partialText)).to.equal(true);
      const error = events.at(-1) as Extract<AssistantMessageEvent, { type: "error" }>;
      expect(error.reason).to.equal("error");
      expect(error.error).to.deep.equal(result);
      expect(result).to.include({
        stopReason: "error",
        errorMessage: "Overloaded, try later",
        errorKind: "overloaded",
        retryAfterMs: 10,
      });
      expect(result.content).to.deep.equal([{ type: "text", text: partialText }]);
      expect(result.usage.output).to.equal(Math.ceil(partialText.length / 4));
      const rawError = calls.at(-1) as Extract<HookCall, { hook: "streamEvent" }>;
      expect(rawError.data).to.deep.include({ type: "error" });
    });

    it("fails before any content without afterChunks", async () => {
      const { events, result } = await run(
        provider([{ error: { kind: "rate_limit", message: "Slow down" } }]),
      );
      expect(events.map((e) => e.type)).to.deep.equal(["error"]);
      expect(result).to.include({ stopReason: "error", errorKind: "rate_limit", errorMessage: "Slow down" });
      expect(result.content).to.deep.equal([]);
    });

    it("ends with aborted when the signal aborts during a long chunk delay", async () => {
      const controller = new AbortController();
      const stream = provider([{ text: "A long answer that never finishes.", chunkDelayMs: 60_000 }])
        .streamSimple!(request({ signal: controller.signal }));
      const events: AssistantMessageEvent[] = [];
      const started = Date.now();
      const { result } = await withTimeout(
        (async () => {
          for await (const event of stream) {
            events.push(event);
            if (event.type === "text_delta") controller.abort();
          }
          return { result: await stream.result() };
        })(),
        2000,
      );
      expect(Date.now() - started).to.be.below(2000);
      const last = events.at(-1) as Extract<AssistantMessageEvent, { type: "error" }>;
      expect(last.type).to.equal("error");
      expect(last.reason).to.equal("aborted");
      expect(result).to.include({
        stopReason: "aborted",
        errorKind: "aborted",
        errorMessage: "Request was aborted",
      });
      expect(textOf(result)).to.equal(deltas(events, "text_delta").join(""));
    });

    it("ends with aborted when aborted during the initial delay or before the request", async () => {
      const controller = new AbortController();
      const config = provider([{ text: "late", delayMs: 60_000 }, { text: "never" }]);
      const stream = config.streamSimple!(request({ signal: controller.signal }));
      setTimeout(() => controller.abort(), 10);
      const first = await withTimeout(stream.result(), 2000);
      expect(first).to.include({ stopReason: "aborted", errorKind: "aborted" });

      const second = await withTimeout(run(config, { signal: AbortSignal.abort() }), 2000);
      expect(second.events.map((e) => e.type)).to.deep.equal(["error"]);
      expect(second.result.stopReason).to.equal("aborted");
    });

    it("says clearly when the steps run out", async () => {
      const config = provider([{ text: "only one" }]);
      expect((await run(config)).result.stopReason).to.equal("stop");
      const { result } = await run(config);
      expect(result.stopReason).to.equal("error");
      expect(result.errorKind).to.equal("bad_request");
      expect(result.errorMessage).to.equal("No scripted response left for request 2 (the script has 1 step)");
    });

    it("checks expect.lastUserText against the request", async () => {
      const config = provider([
        { expect: { lastUserText: "hello there" }, text: "matched" },
        { expect: { lastUserText: "something else" }, text: "unreachable" },
      ]);
      expect(textOf((await run(config)).result)).to.equal("matched");
      const { result } = await run(config);
      expect(result.stopReason).to.equal("error");
      expect(result.errorMessage).to.equal(
        'Scripted step 2 expected the last user message to be "something else", but it is "hello there"',
      );
    });

    it("accepts step functions and validates what they return", async () => {
      const seen: string[] = [];
      const config = provider([
        (req) => {
          seen.push(String(req.messages.at(-1)?.content));
          return { text: `You said: ${seen[0]}` };
        },
        () => ({ text: ["not", "a", "string"] }) as unknown as ScriptStep,
        () => {
          throw new Error("boom");
        },
      ]);
      expect(textOf((await run(config)).result)).to.equal("You said: hello there");
      const invalid = await run(config);
      expect(invalid.result.errorMessage).to.match(/^Scripted step 2 is invalid at \$\.text: /);
      const thrown = await run(config);
      expect(thrown.result.errorMessage).to.equal("Scripted step 3 failed: boom");
    });
  });

  describe("script files", () => {
    const tmp = useTempDir("kc-scripted-");

    it("answers from the file named by --script, read once at the first request", async () => {
      const file = tmp.write(
        "turn.json",
        JSON.stringify({
          steps: [
            { toolCalls: [{ name: "ls", arguments: { path: "." } }] },
            { text: "Here is the listing." },
          ],
        }),
      );
      const fake = fakeApi({ script: file });
      scriptedProvider(fake.api);
      const config = fake.providers.get("scripted")!;
      const first = await run(config);
      expect(first.result.content).to.deep.equal([
        { type: "toolCall", id: "call_1", name: "ls", arguments: { path: "." } },
      ]);
      const second = await run(config);
      expect(textOf(second.result)).to.equal("Here is the listing.");
      expect(fake.getFlagCalls).to.deep.equal(["script"]);
    });

    it("accepts a bare array of steps", async () => {
      const file = tmp.write("bare.json", JSON.stringify([{ text: "bare" }]));
      const fake = fakeApi({ script: file });
      scriptedProvider(fake.api);
      expect(textOf((await run(fake.providers.get("scripted")!)).result)).to.equal("bare");
    });

    it("names the file and the JSON path of the first problem of an invalid script", async () => {
      const file = tmp.write(
        "bad.json",
        JSON.stringify({ steps: [{ text: "fine" }, { error: { kind: "melted", message: "x" } }] }),
      );
      const fake = fakeApi({ script: file });
      scriptedProvider(fake.api);
      const { events, result } = await run(fake.providers.get("scripted")!);
      expect(events.map((e) => e.type)).to.deep.equal(["error"]);
      expect(result.stopReason).to.equal("error");
      expect(result.errorKind).to.equal("bad_request");
      expect(result.errorMessage).to.contain(file);
      expect(result.errorMessage).to.contain("$.steps[1].error.kind");
      expect(result.errorMessage).to.contain('"overloaded"');

      const typo = tmp.write("typo.json", JSON.stringify([{ txt: "oops" }]));
      const other = fakeApi({ script: typo });
      scriptedProvider(other.api);
      const typoResult = (await run(other.providers.get("scripted")!)).result;
      expect(typoResult.errorMessage).to.contain(typo).and.to.contain("$[0].txt");

      const empty = tmp.write("empty.json", JSON.stringify({ steps: [{ delayMs: 5 }] }));
      const third = fakeApi({ script: empty });
      scriptedProvider(third.api);
      const emptyResult = (await run(third.providers.get("scripted")!)).result;
      expect(emptyResult.errorMessage)
        .to.contain("$.steps[0]")
        .and.to.contain("needs text, thinking, toolCalls or error");
    });

    it("names the file when it is not valid JSON or cannot be read", async () => {
      const file = tmp.write("broken.json", '{"steps": [');
      const fake = fakeApi({ script: file });
      scriptedProvider(fake.api);
      const { result } = await run(fake.providers.get("scripted")!);
      expect(result.errorMessage).to.contain(file).and.to.contain("not valid JSON");

      const missing = fakeApi({ script: `${tmp.path}/missing.json` });
      scriptedProvider(missing.api);
      const missingResult = (await run(missing.providers.get("scripted")!)).result;
      expect(missingResult.errorMessage).to.contain("missing.json").and.to.contain("cannot be read");
    });

    it("ships valid example scripts", () => {
      for (const name of ["hello.json", "tool-turn.json"]) {
        const path = fileURLToPath(new URL(`../../../examples/scripts/${name}`, import.meta.url));
        expect(Value.Check(ScriptSchema, JSON.parse(readFileSync(path, "utf8"))), name).to.equal(true);
      }
    });
  });
});

/** streamSimple of the Anthropic provider against a local server speaking the Messages API wire format. */

import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageStream,
  ExtensionAPI,
  LlmMessage,
  ModelInfo,
  ProviderConfig,
  ProviderHooks,
  ProviderStreamRequest,
} from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import anthropicProvider, {
  ANTHROPIC_API,
  ANTHROPIC_MODELS,
  anthropicProviderConfig,
} from "../../../../builtin-extensions/providers/anthropic/index.js";
import { startTestServer, type TestServer, writeSse } from "../../../helpers/sse-server.js";
import {
  errorEvent,
  messageDelta,
  messageStart,
  messageStop,
  parsedData,
  pieces,
  ping,
  redactedThinkingBlock,
  textAnswer,
  textBlock,
  thinkingBlock,
  toolUseBlock,
  writeApiError,
} from "./wire.js";

type HookCall =
  | { hook: "payload"; payload: Record<string, unknown> }
  | { hook: "headers"; headers: Record<string, string> }
  | { hook: "response"; status: number; headers: Record<string, string> }
  | { hook: "streamEvent"; data: unknown };

function recordingHooks(
  options: {
    payload?: (p: Record<string, unknown>) => unknown;
    headers?: (h: Record<string, string>) => Record<string, string>;
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
      calls.push({ hook: "streamEvent", data });
    },
  };
  return {
    calls,
    hooks,
    of: <K extends HookCall["hook"]>(hook: K) =>
      calls.filter((c): c is Extract<HookCall, { hook: K }> => c.hook === hook),
  };
}

const catalogue = (id: string): ModelInfo => {
  const m = ANTHROPIC_MODELS.find((model) => model.id === id)!;
  return {
    provider: "anthropic",
    api: ANTHROPIC_API,
    id: m.id,
    ...(m.name ? { name: m.name } : {}),
    contextWindow: m.contextWindow!,
    maxTokens: m.maxTokens!,
    reasoning: m.reasoning!,
    cost: {
      input: m.cost!.input,
      output: m.cost!.output,
      cacheRead: m.cost!.cacheRead ?? 0,
      cacheWrite: m.cost!.cacheWrite ?? 0,
    },
  };
};

const HAIKU = catalogue("claude-haiku-4-5");
const SONNET = catalogue("claude-sonnet-5-5");

const user = (text: string): LlmMessage => ({ role: "user", content: text, timestamp: 1 });

async function collect(stream: AssistantMessageStream) {
  const events: AssistantMessageEvent[] = [];
  for await (const event of stream) events.push(event);
  return { events, result: await stream.result(), types: events.map((e) => e.type) };
}

/** Resolves a stream's result, failing the test instead of hanging. */
function settled(stream: AssistantMessageStream, ms = 5000): Promise<AssistantMessage> {
  return Promise.race([
    stream.result(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no result within ${ms}ms`)), ms)),
  ]);
}

describe("anthropic provider: streamSimple", () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    await server.close();
  });

  function request(
    hooks: ProviderHooks,
    overrides: Partial<ProviderStreamRequest> = {},
  ): ProviderStreamRequest {
    return {
      model: HAIKU,
      systemPrompt: "You are a careful assistant.",
      messages: [user("Hello")],
      tools: [],
      apiKey: "sk-ant-test",
      baseUrl: server.url,
      hooks,
      ...overrides,
    };
  }

  it("registers the anthropic provider with its API, key variable, catalogue and streamSimple", () => {
    const providers = new Map<string, ProviderConfig>();
    anthropicProvider({
      registerProvider: (name: string, config: ProviderConfig) => providers.set(name, config),
    } as unknown as ExtensionAPI);
    const config = providers.get("anthropic")!;
    expect(config).to.include({ api: "anthropic-messages", apiKey: "ANTHROPIC_API_KEY" });
    expect(config.streamSimple).to.be.a("function");
    expect(config.models!.map((m) => m.id)).to.include.members(["claude-sonnet-5-5", "claude-haiku-4-5"]);
    for (const model of config.models!) {
      expect(model.cost, model.id).to.have.all.keys("input", "output", "cacheRead", "cacheWrite");
      expect(model.contextWindow, model.id).to.be.greaterThan(0);
      expect(model.maxTokens, model.id).to.be.greaterThan(0);
    }
    expect(anthropicProviderConfig().models).to.deep.equal(config.models);
  });

  it("streams a text answer: normalised events, usage with cache tokens and cost, hooks in order", async () => {
    const events = textAnswer(HAIKU.id, "Hello! How can I help today?", {
      input: 120,
      cacheRead: 2000,
      cacheWrite: 300,
      output: 9,
    });
    server.respond((_req, res) => writeSse(res, events, { headers: { "request-id": "req_1" } }));
    const rec = recordingHooks();
    const {
      types,
      result,
      events: out,
    } = await collect(anthropicProviderConfig().streamSimple!(request(rec.hooks)));

    expect(types[0]).to.equal("start");
    expect(types[1]).to.equal("text_start");
    expect(types.filter((t) => t === "text_delta").length).to.be.greaterThan(2);
    expect(types.slice(-2)).to.deep.equal(["text_end", "done"]);
    expect(result.stopReason).to.equal("stop");
    expect(result.content).to.deep.equal([{ type: "text", text: "Hello! How can I help today?" }]);
    expect(result).to.include({ api: "anthropic-messages", provider: "anthropic", model: HAIKU.id });
    expect(result.usage).to.include({
      input: 120,
      output: 9,
      cacheRead: 2000,
      cacheWrite: 300,
      totalTokens: 2429,
    });
    expect(result.usage.cost.input).to.be.closeTo((120 * 1) / 1e6, 1e-12);
    expect(result.usage.cost.cacheRead).to.be.closeTo((2000 * 0.1) / 1e6, 1e-12);
    expect(result.usage.cost.cacheWrite).to.be.closeTo((300 * 1.25) / 1e6, 1e-12);
    expect(result.usage.cost.output).to.be.closeTo((9 * 5) / 1e6, 1e-12);
    const partial = out.find((e) => e.type === "text_delta") as { partial: AssistantMessage };
    expect(partial.partial.content[0]).to.have.property("type", "text");

    // What the server received.
    const sent = server.requests[0]!;
    expect(sent.method).to.equal("POST");
    expect(sent.path).to.equal("/v1/messages");
    expect(sent.headers.authorization).to.equal("Bearer sk-ant-test"); // how SDK 1.x sends an API key
    expect(sent.headers["anthropic-version"]).to.be.a("string");
    expect(sent.body).to.deep.equal({
      model: HAIKU.id,
      max_tokens: HAIKU.maxTokens,
      system: [{ type: "text", text: "You are a careful assistant.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "Hello", cache_control: { type: "ephemeral" } }] },
      ],
      // The request asks for no thinking: said, not left to the model's default.
      thinking: { type: "disabled" },
      stream: true,
    });

    // Hooks: payload, headers, response, then every parsed raw event in order (the SDK drops pings).
    expect(rec.calls.slice(0, 3).map((c) => c.hook)).to.deep.equal(["payload", "headers", "response"]);
    expect(rec.of("payload")[0]!.payload).to.deep.equal(sent.body);
    const response = rec.of("response")[0] as { status: number; headers: Record<string, string> };
    expect(response.status).to.equal(200);
    expect(response.headers).to.include({ "content-type": "text/event-stream", "request-id": "req_1" });
    expect(rec.of("streamEvent").map((c) => (c as { data: unknown }).data)).to.deep.equal(parsedData(events));
  });

  it("sends what a payload handler returns and the headers a headers handler returns", async () => {
    server.respond((_req, res) => writeSse(res, textAnswer(HAIKU.id, "ok")));
    const rec = recordingHooks({
      payload: (p) => ({ ...p, metadata: { user_id: "u-42" }, max_tokens: 77 }),
      headers: (h) => ({ ...h, "x-extra": "from-hook", "anthropic-beta": "test-beta" }),
    });
    const result = await settled(
      anthropicProviderConfig().streamSimple!(request(rec.hooks, { headers: { "x-configured": "yes" } })),
    );
    expect(result.stopReason).to.equal("stop");
    const sent = server.requests[0]!;
    expect(sent.body).to.deep.include({ metadata: { user_id: "u-42" }, max_tokens: 77, stream: true });
    expect(sent.headers).to.include({
      "x-extra": "from-hook",
      "anthropic-beta": "test-beta",
      "x-configured": "yes",
    });
    expect(rec.of("headers")[0]).to.deep.equal({ hook: "headers", headers: { "x-configured": "yes" } });
  });

  it("streams budget thinking with its signature and redacted thinking, and sends both back next time", async () => {
    const first = [
      messageStart(HAIKU.id),
      ...thinkingBlock(0, ["Let me think", " about 2+2.", " It is 4."], "EqQBCkgIARABGAIiQL+sig=="),
      ...redactedThinkingBlock(1, "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"),
      ...textBlock(2, ["The answer", " is 4."]),
      messageDelta("end_turn", { output: 40 }),
      messageStop(),
    ];
    server.respondInOrder(
      (_req, res) => writeSse(res, first),
      (_req, res) => writeSse(res, textAnswer(HAIKU.id, "Yes.")),
    );
    const provider = anthropicProviderConfig();
    const rec = recordingHooks();
    const { types, result } = await collect(
      provider.streamSimple!(
        request(rec.hooks, { thinkingLevel: "medium", maxTokens: 8000, temperature: 0.3 }),
      ),
    );
    expect(types).to.include.members(["thinking_start", "thinking_delta", "thinking_end"]);
    expect(result.content).to.deep.equal([
      {
        type: "thinking",
        thinking: "Let me think about 2+2. It is 4.",
        thinkingSignature: "EqQBCkgIARABGAIiQL+sig==",
      },
      {
        type: "thinking",
        thinking: "",
        thinkingSignature: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
        redacted: true,
      },
      { type: "text", text: "The answer is 4." },
    ]);
    const body = server.requests[0]!.body;
    expect(body.thinking).to.deep.equal({ type: "enabled", budget_tokens: 10240 });
    expect(body.max_tokens).to.be.greaterThan(10240); // raised above the budget
    expect(body).to.not.have.property("temperature"); // thinking takes only the default temperature

    await settled(
      provider.streamSimple!(
        request(recordingHooks().hooks, {
          thinkingLevel: "medium",
          messages: [user("What is 2+2?"), result, user("Sure?")],
        }),
      ),
    );
    expect(server.requests[1]!.body.messages).to.deep.equal([
      { role: "user", content: [{ type: "text", text: "What is 2+2?" }] },
      {
        role: "assistant",
        content: [
          {
            type: "thinking",
            thinking: "Let me think about 2+2. It is 4.",
            signature: "EqQBCkgIARABGAIiQL+sig==",
          },
          {
            type: "redacted_thinking",
            data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
          },
          { type: "text", text: "The answer is 4." },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Sure?", cache_control: { type: "ephemeral" } }] },
    ]);
  });

  it("uses adaptive thinking with an effort on models that refuse budgets, and asks for the thinking text", async () => {
    server.respond((_req, res) =>
      writeSse(res, [
        messageStart(SONNET.id),
        ...thinkingBlock(0, ["Summarised thinking."], "sig-adaptive"),
        ...textBlock(1, ["Done."]),
        messageDelta("end_turn"),
        messageStop(),
      ]),
    );
    const result = await settled(
      anthropicProviderConfig().streamSimple!(
        request(recordingHooks().hooks, { model: SONNET, thinkingLevel: "high", temperature: 0.2 }),
      ),
    );
    expect(result.content[0]).to.deep.equal({
      type: "thinking",
      thinking: "Summarised thinking.",
      thinkingSignature: "sig-adaptive",
    });
    const body = server.requests[0]!.body;
    expect(body.thinking).to.deep.equal({ type: "adaptive", display: "summarized" });
    expect(body.output_config).to.deep.equal({ effort: "high" });
    expect(body.max_tokens).to.equal(SONNET.maxTokens);
    expect(body).to.not.have.property("temperature");
  });

  it("streams parallel tool calls whose argument JSON arrives in many pieces", async () => {
    const readArgs = JSON.stringify({ path: "src/index.ts", offset: 10, limit: 40 });
    const grepArgs = JSON.stringify({ pattern: "TODO\\(\\w+\\)", paths: ["src", "test"], ignoreCase: true });
    server.respond((_req, res) =>
      writeSse(res, [
        messageStart(HAIKU.id, { input: 800 }),
        ...textBlock(0, ["I'll look at both."]),
        ...toolUseBlock(1, "toolu_01A09q90qw90lq917835lq9", "read", pieces(readArgs, 3)),
        ...toolUseBlock(2, "toolu_01B8723kjh23kj4h23kj4h2", "grep", pieces(grepArgs, 5)),
        messageDelta("tool_use", { output: 95 }),
        messageStop(),
      ]),
    );
    const tools = [
      {
        name: "read",
        description: "Read a file",
        parameters: Type.Object({ path: Type.String(), offset: Type.Optional(Type.Number()) }),
      },
      { name: "grep", description: "Search files", parameters: Type.Object({ pattern: Type.String() }) },
    ];
    const { events, result } = await collect(
      anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks, { tools })),
    );
    expect(result.stopReason).to.equal("toolUse");
    expect(result.content.slice(1)).to.deep.equal([
      {
        type: "toolCall",
        id: "toolu_01A09q90qw90lq917835lq9",
        name: "read",
        arguments: JSON.parse(readArgs),
      },
      {
        type: "toolCall",
        id: "toolu_01B8723kjh23kj4h23kj4h2",
        name: "grep",
        arguments: JSON.parse(grepArgs),
      },
    ]);
    const deltas = events.filter((e) => e.type === "toolcall_delta") as {
      contentIndex: number;
      delta: string;
    }[];
    expect(
      deltas
        .filter((d) => d.contentIndex === 1)
        .map((d) => d.delta)
        .join(""),
    ).to.equal(readArgs);
    expect(
      deltas
        .filter((d) => d.contentIndex === 2)
        .map((d) => d.delta)
        .join(""),
    ).to.equal(grepArgs);
    expect(deltas.length).to.be.greaterThan(20);
    const ends = events.filter((e) => e.type === "toolcall_end") as { toolCall: { name: string } }[];
    expect(ends.map((e) => e.toolCall.name)).to.deep.equal(["read", "grep"]);
    expect(result.usage).to.include({ input: 800, output: 95 });
    const body = server.requests[0]!.body;
    expect(body.tools).to.deep.equal([
      {
        name: "read",
        description: "Read a file",
        input_schema: {
          type: "object",
          properties: { path: { type: "string" }, offset: { type: "number" } },
          required: ["path"],
        },
      },
      {
        name: "grep",
        description: "Search files",
        input_schema: { type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] },
      },
    ]);
  });

  it("with a Claude subscription: Claude Code's tool names and headers go out, the tools' own names come back", async () => {
    const bashArgs = JSON.stringify({ command: "ls" });
    server.respondInOrder(
      (_req, res) =>
        writeSse(res, [
          messageStart(HAIKU.id),
          ...toolUseBlock(0, "toolu_cc_1", "Bash", pieces(bashArgs, 2)),
          messageDelta("tool_use", { output: 9 }),
          messageStop(),
        ]),
      (_req, res) => writeSse(res, textAnswer(HAIKU.id, "Done.")),
    );
    const schema = Type.Object({});
    const tools = [
      { name: "read", description: "Read a file", parameters: schema },
      { name: "bash", description: "Run a command", parameters: schema },
      { name: "find", description: "Find files", parameters: schema },
      // Already Claude Code's spelling: sent as it is, and "grep" beside it is not renamed onto it.
      { name: "Grep", description: "Search", parameters: schema },
      { name: "grep", description: "Search too", parameters: schema },
    ];
    const subscription = { apiKey: "sk-ant-oat01-test", credential: { type: "oauth" }, tools };
    const provider = anthropicProviderConfig();
    const { result } = await collect(provider.streamSimple!(request(recordingHooks().hooks, subscription)));
    expect(result.content).to.deep.equal([
      { type: "toolCall", id: "toolu_cc_1", name: "bash", arguments: { command: "ls" } },
    ]);
    const first = server.requests[0]!;
    expect(first.body.tools.map((t: { name: string }) => t.name)).to.deep.equal([
      "Read",
      "Bash",
      "find",
      "Grep",
      "grep",
    ]);
    expect(first.headers["user-agent"]).to.match(/^claude-cli\/\d+\.\d+\.\d+$/);
    expect(first.headers["x-app"]).to.equal("cli");
    expect(first.headers.authorization).to.equal("Bearer sk-ant-oat01-test");

    // The call goes back under Claude Code's name in the next request's history.
    const toolResult: LlmMessage = {
      role: "toolResult",
      toolCallId: "toolu_cc_1",
      toolName: "bash",
      content: [{ type: "text", text: "a.txt" }],
      isError: false,
      timestamp: 3,
    };
    await settled(
      provider.streamSimple!(
        request(recordingHooks().hooks, { ...subscription, messages: [user("List"), result, toolResult] }),
      ),
    );
    const sent = server.requests[1]!.body.messages[1].content;
    expect(sent).to.deep.equal([
      { type: "tool_use", id: "toolu_cc_1", name: "Bash", input: { command: "ls" } },
    ]);

    // With an API key, names and headers are the request's own.
    server.respond((_req, res) => writeSse(res, textAnswer(HAIKU.id, "Hi.")));
    await settled(provider.streamSimple!(request(recordingHooks().hooks, { tools })));
    const plain = server.requests[2]!;
    expect(plain.body.tools.map((t: { name: string }) => t.name)).to.deep.equal([
      "read",
      "bash",
      "find",
      "Grep",
      "grep",
    ]);
    expect(plain.headers["x-app"]).to.equal(undefined);
    expect(String(plain.headers["user-agent"])).to.not.match(/^claude-cli/);
  });

  it("maps max_tokens to length (and takes a base URL written with /v1)", async () => {
    server.respond((_req, res) =>
      writeSse(res, [
        messageStart(HAIKU.id),
        ...textBlock(0, ["cut"]),
        messageDelta("max_tokens"),
        messageStop(),
      ]),
    );
    const result = await settled(
      anthropicProviderConfig().streamSimple!(
        request(recordingHooks().hooks, { baseUrl: `${server.url}/v1/` }),
      ),
    );
    expect(result.stopReason).to.equal("length");
    expect(server.requests[0]!.path).to.equal("/v1/messages");
  });

  describe("failures", () => {
    it("fails with auth naming the variable when there is no key, without sending anything", async () => {
      const rec = recordingHooks();
      const { types, result } = await collect(
        anthropicProviderConfig().streamSimple!(request(rec.hooks, { apiKey: undefined })),
      );
      expect(types).to.deep.equal(["error"]);
      expect(result).to.include({ stopReason: "error", errorKind: "auth" });
      expect(result.errorMessage).to.contain("ANTHROPIC_API_KEY");
      expect(server.requests).to.have.length(0);
    });

    it("gives a 401 the kind auth with the provider's message and the key hint", async () => {
      server.respond((_req, res) => writeApiError(res, 401, "authentication_error", "invalid x-api-key"));
      const rec = recordingHooks();
      const result = await settled(anthropicProviderConfig().streamSimple!(request(rec.hooks)));
      expect(result).to.include({ stopReason: "error", errorKind: "auth" });
      expect(result.errorMessage).to.contain("invalid x-api-key").and.contain("ANTHROPIC_API_KEY");
      // An error answer is an answer: after_provider_response sees its status, as with every provider.
      expect(rec.of("response").map((c) => (c as { status: number }).status)).to.deep.equal([401]);
    });

    it("gives 'prompt is too long' the kind context_overflow", async () => {
      server.respond((_req, res) =>
        writeApiError(
          res,
          400,
          "invalid_request_error",
          "prompt is too long: 208310 tokens > 200000 maximum",
        ),
      );
      const result = await settled(anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks)));
      expect(result).to.include({ errorKind: "context_overflow" });
      expect(result.errorMessage).to.contain("208310 tokens > 200000 maximum");
    });

    it("shows the provider's message for another 400", async () => {
      server.respond((_req, res) =>
        writeApiError(res, 400, "invalid_request_error", "messages.1.content.0.text: field required"),
      );
      const result = await settled(anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks)));
      expect(result).to.include({ errorKind: "bad_request" });
      expect(result.errorMessage).to.contain("messages.1.content.0.text: field required").and.contain("400");
    });

    it("gives a 429 rate_limit with the server's retry-after, and a 529 overloaded", async () => {
      server.respondInOrder(
        (_req, res) =>
          writeApiError(res, 429, "rate_limit_error", "Number of request tokens has exceeded your limit", {
            "retry-after": "7",
          }),
        (_req, res) => writeApiError(res, 529, "overloaded_error", "Overloaded"),
      );
      const provider = anthropicProviderConfig();
      const limited = await settled(provider.streamSimple!(request(recordingHooks().hooks)));
      expect(limited).to.include({ errorKind: "rate_limit", retryAfterMs: 7000 });
      const overloaded = await settled(provider.streamSimple!(request(recordingHooks().hooks)));
      expect(overloaded).to.include({ errorKind: "overloaded" });
      expect(overloaded.errorMessage).to.contain("Overloaded");
      expect(server.requests).to.have.length(2); // the SDK did not retry on its own
    });

    it("maps an overloaded error event mid-stream to overloaded, keeping the text so far", async () => {
      const events = [
        messageStart(HAIKU.id),
        textBlock(0, [])[0]!,
        ...textBlock(0, ["Partial ", "answer"]).slice(1, 3),
        errorEvent("overloaded_error", "Overloaded"),
      ];
      server.respond((_req, res) => writeSse(res, events));
      const rec = recordingHooks();
      const { types, result } = await collect(anthropicProviderConfig().streamSimple!(request(rec.hooks)));
      expect(types.at(-1)).to.equal("error");
      expect(result).to.include({ stopReason: "error", errorKind: "overloaded" });
      expect(result.errorMessage).to.contain("Overloaded");
      expect(result.content).to.deep.equal([{ type: "text", text: "Partial answer" }]);
      const raw = rec.of("streamEvent").map((c) => (c as { data: unknown }).data);
      expect(raw.at(-1)).to.deep.equal({
        type: "error",
        error: { type: "overloaded_error", message: "Overloaded" },
      });
    });

    it("reports a connection dropped mid-stream as network", async () => {
      server.respond((_req, res) =>
        writeSse(res, [messageStart(HAIKU.id), ...textBlock(0, ["Hello", " there", " friend"])], {
          dropAfter: 3,
          delayMs: 20, // let the first events reach the client before the socket goes
        }),
      );
      const result = await settled(anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks)));
      expect(result).to.include({ stopReason: "error", errorKind: "network" });
      expect(result.content).to.deep.equal([{ type: "text", text: "Hello" }]);
    });

    it("reports a stream that ends without message_stop as network", async () => {
      server.respond((_req, res) => writeSse(res, [messageStart(HAIKU.id), ...textBlock(0, ["Hello"])]));
      const result = await settled(anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks)));
      expect(result).to.include({ errorKind: "network" });
      expect(result.errorMessage).to.contain("the stream ended before the response was complete");
    });

    it("fails with unknown on an event that is not JSON", async () => {
      server.respond((_req, res) =>
        writeSse(res, [messageStart(HAIKU.id), { event: "content_block_start", data: "{not json" }]),
      );
      const result = await settled(anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks)));
      expect(result).to.include({ stopReason: "error", errorKind: "unknown" });
      expect(result.errorMessage).to.contain("malformed stream event");
    });

    it("fails with unknown on an event of an unexpected shape", async () => {
      server.respond((_req, res) =>
        writeSse(res, [
          messageStart(HAIKU.id),
          {
            event: "content_block_delta",
            data: { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "x" } },
          },
          messageStop(),
        ]),
      );
      const result = await settled(anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks)));
      expect(result).to.include({ errorKind: "unknown" });
      expect(result.errorMessage).to.contain("content block 3 was never started");
    });

    it("ends with aborted soon after the user aborts a stalled stream", async () => {
      const events = [
        messageStart(HAIKU.id),
        ...textBlock(0, pieces("a slow answer that takes a long time", 2)),
        messageDelta("end_turn"),
        messageStop(),
      ];
      // After the first text delta the server sends nothing more and keeps the connection: only the abort can end
      // the stream, so the bound below can be loose (a loaded machine) and still fails a stream that waits.
      const firstText = events.findIndex((e) => (e.data as { type?: string }).type === "content_block_delta");
      server.respond((_req, res) => writeSse(res, events, { stallAfter: firstText + 1 }));
      const controller = new AbortController();
      const stream = anthropicProviderConfig().streamSimple!(
        request(recordingHooks().hooks, { signal: controller.signal }),
      );
      for await (const event of stream) {
        if (event.type === "text_delta") break;
      }
      const abortedAt = Date.now();
      controller.abort();
      const result = await settled(stream, 5000);
      expect(Date.now() - abortedAt).to.be.lessThan(2000);
      expect(result).to.include({ stopReason: "aborted", errorKind: "aborted" });
    });

    it("ends with aborted at once when the signal is already aborted", async () => {
      const controller = new AbortController();
      controller.abort();
      const result = await settled(
        anthropicProviderConfig().streamSimple!(
          request(recordingHooks().hooks, { signal: controller.signal }),
        ),
      );
      expect(result.stopReason).to.equal("aborted");
      expect(server.requests).to.have.length(0);
    });

    it("times out a stream that stops sending (compat.timeoutMs)", async () => {
      server.respond(async (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const start = messageStart(HAIKU.id);
        res.write(`event: ${start.event}\ndata: ${JSON.stringify(start.data)}\n\n`);
        // then nothing: the server keeps the connection open
      });
      const result = await settled(
        anthropicProviderConfig().streamSimple!(
          request(recordingHooks().hooks, { compat: { timeoutMs: 150 } }),
        ),
        3000,
      );
      expect(result).to.include({ stopReason: "error", errorKind: "timeout" });
    });

    it("reports a refused connection as network", async () => {
      const url = server.url;
      await server.close();
      const result = await settled(
        anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks, { baseUrl: url })),
      );
      expect(result).to.include({ errorKind: "network" });
      server = await startTestServer(); // for afterEach
    });
  });

  it("ignores pings and unknown event types", async () => {
    server.respond((_req, res) =>
      writeSse(res, [
        messageStart(HAIKU.id),
        ping(),
        { event: "future_event", data: { type: "future_event", anything: 1 } },
        ...textBlock(0, ["fine"]),
        messageDelta("end_turn"),
        messageStop(),
      ]),
    );
    const result = await settled(anthropicProviderConfig().streamSimple!(request(recordingHooks().hooks)));
    expect(result.stopReason).to.equal("stop");
    expect(result.content).to.deep.equal([{ type: "text", text: "fine" }]);
  });
});

/**
 * The Anthropic provider inside a real session: models.json points `anthropic` at a local server speaking the
 * Messages API, and the session's events, hooks, retries and classify() go through it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentSessionHandle,
  type AssistantMessage,
  createAgentSession,
  createStandardKernel,
  type ExtensionAPI,
  type ExtensionFactory,
  type SessionEvent,
  type ToolDefinition,
} from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import anthropicProvider from "../../../../builtin-extensions/providers/anthropic/index.js";
import { sessionInternals } from "../../../../hosts/sdk/session-internals.js";
import { startTestServer, type TestServer, writeSse } from "../../../helpers/sse-server.js";
import {
  messageDelta,
  messageStart,
  messageStop,
  parsedData,
  pieces,
  textAnswer,
  textBlock,
  thinkingBlock,
  toolUseBlock,
  writeApiError,
} from "./wire.js";

const MODEL = "claude-haiku-4-5";

type Kernel = Awaited<ReturnType<typeof createStandardKernel>>;

const echoTool: ToolDefinition = {
  name: "echo",
  description: "Echo the text back",
  parameters: Type.Object({ text: Type.String() }),
  execute: async (_id, params) => ({
    content: [{ type: "text", text: `echo: ${(params as { text: string }).text}` }],
    details: {},
  }),
} as ToolDefinition;

const failTool: ToolDefinition = {
  name: "fail",
  description: "Always fails",
  parameters: Type.Object({}),
  execute: async () => {
    throw new Error("this tool always fails");
  },
} as ToolDefinition;

describe("anthropic provider: in a session", () => {
  let server: TestServer;
  let dir: string;
  const opened: { handle: AgentSessionHandle; kernel: Kernel }[] = [];

  beforeEach(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "kc-anthropic-"));
  });

  afterEach(async () => {
    for (const { handle, kernel } of opened.splice(0)) {
      await handle.dispose();
      await kernel.dispose();
    }
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(
    options: {
      extensions?: ExtensionFactory[];
      apiKey?: string;
      thinkingLevel?: "medium";
      tools?: string[];
    } = {},
  ) {
    const agentDir = join(dir, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({
        providers: {
          anthropic: {
            baseUrl: server.url,
            api: "anthropic-messages",
            apiKey: options.apiKey ?? "sk-ant-session-key",
            models: [
              {
                id: MODEL,
                name: "Claude Haiku 4.5",
                reasoning: true,
                contextWindow: 200000,
                maxTokens: 64000,
                cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
              },
            ],
          },
        },
      }),
    );
    const kernel = await createStandardKernel({ agentDir, cacheDir: false });
    const warnings: string[] = [];
    const handle = await createAgentSession({
      cwd: dir,
      agentDir,
      kernel,
      provider: "anthropic",
      model: MODEL,
      session: { inMemory: true },
      settings: { retry: { baseDelayMs: 1, maxDelayMs: 2000 } },
      extensions: [anthropicProvider, ...(options.extensions ?? [])],
      ...(options.thinkingLevel ? { thinkingLevel: options.thinkingLevel } : {}),
      tools: options.tools ?? [],
      warn: (message) => warnings.push(message),
    });
    opened.push({ handle, kernel });
    const events: SessionEvent[] = [];
    handle.subscribe((event) => events.push(structuredClone(event)));
    return {
      handle,
      events,
      warnings,
      ofType: (type: string) => events.filter((e) => e.type === type),
      assistants: () =>
        events
          .filter((e) => e.type === "message_end")
          .map((e) => e.message as AssistantMessage)
          .filter((m) => m.role === "assistant"),
    };
  }

  it("finds a model of pi-ai's catalogue that it does not list itself (claude-opus-4-7) and sends it", async () => {
    server.respond((_req, res) => writeSse(res, textAnswer("claude-opus-4-7", "hello from 4.7")));
    const agentDir = join(dir, "agent-pi");
    mkdirSync(agentDir, { recursive: true });
    // Only the address: the built-in's catalogue stays.
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({ providers: { anthropic: { baseUrl: server.url, apiKey: "sk-ant-session-key" } } }),
    );
    const kernel = await createStandardKernel({ agentDir, cacheDir: false });
    const handle = await createAgentSession({
      cwd: dir,
      agentDir,
      kernel,
      model: "anthropic/claude-opus-4-7",
      thinkingLevel: "high",
      session: { inMemory: true },
      extensions: [anthropicProvider],
      tools: [],
    });
    opened.push({ handle, kernel });
    expect(handle.getState().model).to.include({
      provider: "anthropic",
      id: "claude-opus-4-7",
      contextWindow: 1_000_000,
    });
    await handle.prompt("hi");
    const body = server.requests[0]!.body as { model: string; thinking?: { type: string } };
    expect(body.model).to.equal("claude-opus-4-7");
    // Its traits follow from the id: 4.6 and later think adaptively.
    expect(body.thinking).to.include({ type: "adaptive" });
  });

  it("lets a before_provider_request handler edit the payload in place without changing the session's messages", async () => {
    const first = [
      messageStart(MODEL),
      ...toolUseBlock(0, "toolu_01Echo", "echo", [JSON.stringify({ text: "from the model" })]),
      messageDelta("tool_use"),
      messageStop(),
    ];
    server.respondInOrder(
      (_req, res) => writeSse(res, first),
      (_req, res) => writeSse(res, textAnswer(MODEL, "done")),
    );
    const s = await open({
      tools: ["echo"],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool(echoTool);
          kc.on("before_provider_request", (event) => {
            const messages = (event.payload as { messages?: { content?: unknown }[] }).messages ?? [];
            for (const message of messages) {
              for (const block of Array.isArray(message.content) ? message.content : []) {
                if (block.type === "tool_use") block.input.text = "edited in place";
              }
            }
          });
        },
      ],
    });
    await s.handle.prompt("echo");
    expect(JSON.stringify(server.requests[1]!.body)).to.contain("edited in place");
    const recorded = sessionInternals(s.handle)
      .log.buildContext()
      .messages.flatMap((m) => (m.role === "assistant" ? m.content : []))
      .find((c) => c.type === "toolCall");
    expect(recorded).to.deep.include({ arguments: { text: "from the model" } });
  });

  it("runs a tool turn: thinking, parallel tool calls, results and signatures carried into the next request", async () => {
    const echoArgs = JSON.stringify({ text: "hello from the model" });
    const first = [
      messageStart(MODEL, { input: 500, cacheWrite: 1200 }),
      ...thinkingBlock(0, ["I should echo", " and try the failing tool."], "EqQBCkgIARABGAIiQsignature"),
      ...textBlock(1, ["Calling both tools."]),
      ...toolUseBlock(2, "toolu_01Echo", "echo", pieces(echoArgs, 4)),
      ...toolUseBlock(3, "toolu_02Fail", "fail", ["{}"]),
      messageDelta("tool_use", { output: 120 }),
      messageStop(),
    ];
    const second = textAnswer(MODEL, "Echo worked; fail failed.", { input: 40, cacheRead: 1700, output: 8 });
    server.respondInOrder(
      (_req, res) => writeSse(res, first),
      (_req, res) => writeSse(res, second),
    );
    const headersSeen: string[] = [];
    const responses: { status: number }[] = [];
    const rawEvents: unknown[] = [];
    const payloadModels: string[] = [];
    const s = await open({
      thinkingLevel: "medium",
      tools: ["echo", "fail"],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool(echoTool);
          kc.registerTool(failTool);
          kc.on("before_provider_request", (event) => {
            payloadModels.push(event.model);
          });
          kc.on("before_provider_headers", (event) => {
            headersSeen.push(event.provider);
            event.headers["x-trace-id"] = "trace-123";
          });
          kc.on("after_provider_response", (event) => {
            responses.push({ status: event.status });
          });
          kc.on("provider_stream_event", (event) => {
            rawEvents.push(event.data);
          });
        },
      ],
    });
    await s.handle.prompt("Please echo something");

    const [answer, final] = s.assistants();
    expect(answer!.stopReason).to.equal("toolUse");
    expect(answer!.content.map((c) => c.type)).to.deep.equal(["thinking", "text", "toolCall", "toolCall"]);
    expect(answer!.content[2]).to.deep.include({ name: "echo", arguments: { text: "hello from the model" } });
    expect(answer!.usage).to.include({ input: 500, cacheWrite: 1200, output: 120 });
    expect(final!.stopReason).to.equal("stop");
    expect(final!.content).to.deep.equal([{ type: "text", text: "Echo worked; fail failed." }]);
    expect(final!.usage).to.include({ cacheRead: 1700 });

    // The hooks, through the session's events.
    expect(headersSeen).to.deep.equal(["anthropic", "anthropic"]);
    expect(server.requests.map((r) => r.headers["x-trace-id"])).to.deep.equal(["trace-123", "trace-123"]);
    expect(responses).to.deep.equal([{ status: 200 }, { status: 200 }]);
    expect(payloadModels).to.deep.equal([MODEL, MODEL]);
    expect(rawEvents).to.deep.equal([...parsedData(first), ...parsedData(second)]);

    // The first request: system prompt, tools and thinking.
    const firstBody = server.requests[0]!.body;
    expect(firstBody.system[0]).to.deep.include({ type: "text", cache_control: { type: "ephemeral" } });
    expect(firstBody.tools.map((t: { name: string }) => t.name)).to.deep.equal(["echo", "fail"]);
    expect(firstBody.tools[0].input_schema).to.deep.equal({
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    });
    expect(firstBody.thinking).to.deep.equal({ type: "enabled", budget_tokens: 10240 });

    // The second request carries the signed thinking, the calls and both results (one an error).
    const messages = server.requests[1]!.body.messages;
    expect(messages).to.have.length(3);
    expect(messages[1]).to.deep.equal({
      role: "assistant",
      content: [
        {
          type: "thinking",
          thinking: "I should echo and try the failing tool.",
          signature: "EqQBCkgIARABGAIiQsignature",
        },
        { type: "text", text: "Calling both tools." },
        { type: "tool_use", id: "toolu_01Echo", name: "echo", input: { text: "hello from the model" } },
        { type: "tool_use", id: "toolu_02Fail", name: "fail", input: {} },
      ],
    });
    expect(messages[2].role).to.equal("user");
    expect(messages[2].content).to.have.length(2);
    expect(messages[2].content[0]).to.deep.equal({
      type: "tool_result",
      tool_use_id: "toolu_01Echo",
      content: [{ type: "text", text: "echo: hello from the model" }],
    });
    expect(messages[2].content[1]).to.deep.include({
      type: "tool_result",
      tool_use_id: "toolu_02Fail",
      is_error: true,
    });
    expect(JSON.stringify(messages[2].content[1].content)).to.contain("this tool always fails");
    expect(messages[2].content[1].cache_control).to.deep.equal({ type: "ephemeral" });
    expect(messages[0].content[0]).to.not.have.property("cache_control");
  });

  it("retries a 429 after the server's retry-after, then succeeds", async () => {
    server.respondInOrder(
      (_req, res) =>
        writeApiError(res, 429, "rate_limit_error", "This request would exceed the rate limit", {
          "retry-after": "1",
          "anthropic-ratelimit-requests-remaining": "0",
        }),
      (_req, res) => writeSse(res, textAnswer(MODEL, "Recovered.")),
    );
    const s = await open();
    await s.handle.prompt("hi");
    const start = s.ofType("auto_retry_start");
    expect(start).to.have.length(1);
    expect(start[0]).to.deep.include({ attempt: 1, delayMs: 1000 });
    expect(start[0]!.errorMessage).to.contain("rate limit");
    expect(s.ofType("auto_retry_end")[0]).to.deep.include({ success: true, attempt: 2 });
    expect(s.assistants().at(-1)!.content).to.deep.equal([{ type: "text", text: "Recovered." }]);
    expect(server.requests).to.have.length(2);
  });

  it("ends a turn with the auth error naming what to set when the key is missing", async () => {
    const s = await open({ apiKey: "KC_TEST_ANTHROPIC_KEY_THAT_IS_NOT_SET" });
    await s.handle.prompt("hi");
    const last = s.assistants().at(-1)!;
    expect(last).to.include({ stopReason: "error", errorKind: "auth" });
    expect(last.errorMessage).to.contain("ANTHROPIC_API_KEY");
    expect(s.ofType("auto_retry_start")).to.deep.equal([]);
    expect(server.requests).to.have.length(0);
  });

  describe("classify()", () => {
    const classifyAnswer = (label: string) => [
      messageStart(MODEL, { input: 60 }),
      ...toolUseBlock(0, "toolu_01Classify", "classify", pieces(JSON.stringify({ label }), 3)),
      messageDelta("tool_use", { output: 10 }),
      messageStop(),
    ];

    it("forces the classify tool at temperature 0 with the labels as an enum, and returns the label", async () => {
      server.respond((_req, res) => writeSse(res, classifyAnswer("risky")));
      const s = await open();
      const answer = await sessionInternals(s.handle).models.classify({
        prompt: "rm -rf /",
        labels: ["safe", "risky"],
      });
      expect(answer.label).to.equal("risky");
      expect(answer.usage).to.include({ input: 60, output: 10 });
      const body = server.requests[0]!.body;
      expect(body.tool_choice).to.deep.equal({ type: "tool", name: "classify" });
      expect(body.temperature).to.equal(0);
      expect(body).to.not.have.property("thinking");
      expect(body.tools).to.have.length(1);
      expect(body.tools[0].input_schema.properties.label).to.deep.equal({
        type: "string",
        enum: ["safe", "risky"],
      });
      expect(body.messages).to.deep.equal([
        { role: "user", content: [{ type: "text", text: "rm -rf /", cache_control: { type: "ephemeral" } }] },
      ]);
    });

    it("throws when the answer is not one of the labels", async () => {
      server.respond((_req, res) => writeSse(res, classifyAnswer("maybe")));
      const s = await open();
      let error: { code?: string; message: string } | undefined;
      try {
        await sessionInternals(s.handle).models.classify({ prompt: "ls", labels: ["safe", "risky"] });
      } catch (e) {
        error = e as { code?: string; message: string };
      }
      expect(error?.code).to.equal("KC_ERR_CLASSIFY");
      expect(error?.message).to.contain('"maybe"');
    });
  });
});

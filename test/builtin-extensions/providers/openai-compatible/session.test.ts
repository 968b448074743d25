/**
 * builtin:openai-compatible through real sessions: a custom provider `local` in models.json names the
 * `openai-completions` API and points at a local server; the model registry sends its requests to this extension.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionFactory, ToolDefinition } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import openaiCompatible from "../../../../builtin-extensions/providers/openai-compatible/index.js";
import {
  type AgentSessionHandle,
  type CreateAgentSessionOptions,
  createAgentSession,
  createStandardKernel,
  type SessionEvent,
} from "../../../../hosts/sdk/create-agent-session.js";
import { sessionInternals } from "../../../../hosts/sdk/session-internals.js";
import type { Kernel } from "../../../../kernel/index.js";
import { startTestServer, type TestServer, writeJsonError, writeSse } from "../../../helpers/sse-server.js";
import {
  chunk,
  DONE,
  finishChunk,
  roleChunk,
  textStream,
  toolCallChunks,
  toolCallStream,
  usageChunk,
} from "./fixtures.js";

const lookupTool: ToolDefinition = {
  name: "lookup",
  description: "Look a key up",
  parameters: Type.Object({ key: Type.String() }),
  execute: async (_id: string, params: { key: string }) => ({
    content: [{ type: "text", text: `value of ${params.key} is 42` }],
    details: { key: params.key },
  }),
} as ToolDefinition;

const withLookup: ExtensionFactory = (kc: ExtensionAPI) => {
  kc.registerTool(lookupTool);
};

describe("builtin:openai-compatible in a session (models.json custom provider)", () => {
  let server: TestServer;
  let dir: string;
  let kernel: Kernel | undefined;
  const handles: AgentSessionHandle[] = [];
  let warnings: string[];

  beforeEach(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "kc-openai-compat-"));
    mkdirSync(join(dir, "agent"), { recursive: true });
    warnings = [];
  });

  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    await kernel?.dispose();
    kernel = undefined;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function writeModelsJson(provider: Record<string, unknown> = {}): void {
    const models = {
      providers: {
        local: {
          baseUrl: `${server.url}/v1`,
          api: "openai-completions",
          apiKey: "sk-test-local",
          headers: { "x-team": "knightcode" },
          compat: { maxTokensField: "max_tokens", supportsStore: false },
          models: [{ id: "qwen3-coder", contextWindow: 32768, maxTokens: 2048 }],
          ...provider,
        },
      },
    };
    writeFileSync(join(dir, "agent", "models.json"), JSON.stringify(models, null, 2));
  }

  async function open(
    extensions: ExtensionFactory[] = [],
    settings: Record<string, unknown> = {},
    log?: CreateAgentSessionOptions["log"],
  ): Promise<{ handle: AgentSessionHandle; events: SessionEvent[]; ofType(type: string): SessionEvent[] }> {
    kernel ??= await createStandardKernel({ agentDir: join(dir, "agent"), cacheDir: false });
    const handle = await createAgentSession({
      cwd: dir,
      agentDir: join(dir, "agent"),
      kernel,
      provider: "local",
      model: "qwen3-coder",
      session: { inMemory: true },
      settings: { retry: { baseDelayMs: 1, maxDelayMs: 2000 }, ...settings },
      extensions: [openaiCompatible, ...extensions],
      warn: (message) => warnings.push(message),
      ...(log ? { log } : {}),
    });
    handles.push(handle);
    const events: SessionEvent[] = [];
    handle.subscribe((event) => events.push(structuredClone(event)));
    return { handle, events, ofType: (type) => events.filter((e) => e.type === type) };
  }

  const assistantTexts = (events: SessionEvent[]) =>
    events
      .filter((e) => e.type === "message_end" && (e.message as { role: string }).role === "assistant")
      .map((e) => (e.message as { content: { type: string; text?: string }[] }).content)
      .map((content) => content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join(""));

  it("runs a tool turn and a text turn end to end, sending the tool result back with its tool_call_id", async () => {
    writeModelsJson();
    server.respondInOrder(
      (_req, res) =>
        writeSse(res, [
          chunk({ role: "assistant", content: null, reasoning_content: "I should look it up." }),
          ...toolCallChunks(0, "call_lookup_1", "lookup", { key: "alpha" }).map((event, i) =>
            i === 0 ? chunk({ tool_calls: (event.data as any).choices[0].delta.tool_calls }) : event,
          ),
          finishChunk("tool_calls"),
          usageChunk(200, 20),
          DONE,
        ]),
      (_req, res) => writeSse(res, textStream("alpha is 42.")),
      (_req, res) => writeSse(res, textStream("You are welcome.")),
    );
    const { handle, events, ofType } = await open([withLookup]);

    await handle.prompt("What is alpha?");
    const toolEnd = ofType("tool_execution_end");
    expect(toolEnd).to.have.length(1);
    expect(toolEnd[0]).to.include({ toolName: "lookup", isError: false });
    expect(assistantTexts(events)).to.deep.equal(["", "alpha is 42."]);
    const toolCallMessage = ofType("message_end")
      .map((e) => e.message as { role: string; stopReason?: string; content: { type: string }[] })
      .find((m) => m.role === "assistant" && m.stopReason === "toolUse");
    expect(toolCallMessage!.content.map((c) => c.type)).to.deep.equal(["thinking", "toolCall"]);
    const updates = ofType("message_update").map((e) => (e.assistantMessageEvent as { type: string }).type);
    expect(updates).to.include.members([
      "thinking_delta",
      "toolcall_start",
      "toolcall_delta",
      "toolcall_end",
    ]);

    await handle.prompt("Thanks");
    expect(assistantTexts(events).at(-1)).to.equal("You are welcome.");
    expect(ofType("agent_end")).to.have.length(2);

    expect(server.requests).to.have.length(3);
    for (const request of server.requests) {
      expect(request.path).to.equal("/v1/chat/completions");
      expect(request.headers.authorization).to.equal("Bearer sk-test-local");
      expect(request.headers["x-team"]).to.equal("knightcode");
      expect(request.body.model).to.equal("qwen3-coder");
      expect(request.body.max_tokens).to.equal(2048);
      expect(request.body).to.not.have.property("max_completion_tokens");
      expect(request.body).to.not.have.property("store");
      expect(request.body.tools.map((t: { function: { name: string } }) => t.function.name)).to.include(
        "lookup",
      );
      expect(request.body.messages[0].role).to.equal("system");
    }
    const second = server.requests[1]!.body.messages;
    expect(second.slice(1)).to.deep.equal([
      { role: "user", content: "What is alpha?" },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "call_lookup_1",
            type: "function",
            function: { name: "lookup", arguments: '{"key":"alpha"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_lookup_1", content: "value of alpha is 42" },
    ]);
    expect(JSON.stringify(second), "thinking is not sent back").to.not.contain("I should look it up");
    const third = server.requests[2]!.body.messages;
    expect(third.slice(-2)).to.deep.equal([
      { role: "assistant", content: "alpha is 42." },
      { role: "user", content: "Thanks" },
    ]);
    expect(warnings).to.deep.equal([]);
  });

  it("reports unknown compat keys once through the provider extension's log, and still answers", async () => {
    writeModelsJson({ compat: { notAKnownKey: true } });
    server.respond((_req, res) => writeSse(res, textStream("fine")));
    const logs: { extension: string; level: string; message: string }[] = [];
    const { handle } = await open([], {}, (entry) => logs.push(entry));
    await handle.prompt("hi");
    await handle.prompt("again");
    const compatLogs = logs.filter((l) => l.message.includes("notAKnownKey"));
    expect(compatLogs).to.have.length(1);
    expect(compatLogs[0]).to.include({ extension: "sdk:openaiCompatible", level: "warn" });
  });

  it("retries a 429 after the server's retry-after and succeeds", async () => {
    writeModelsJson();
    server.respondInOrder(
      (_req, res) =>
        writeJsonError(
          res,
          429,
          {
            error: {
              message: "Rate limit reached for requests",
              type: "requests",
              code: "rate_limit_exceeded",
            },
          },
          { "retry-after-ms": "30" },
        ),
      (_req, res) => writeSse(res, textStream("after the wait")),
    );
    const { handle, events, ofType } = await open();
    await handle.prompt("hi");
    const start = ofType("auto_retry_start");
    expect(start).to.have.length(1);
    expect(start[0]).to.include({ attempt: 1, delayMs: 30 });
    expect(start[0]!.errorMessage).to.contain("Rate limit reached for requests");
    expect(ofType("auto_retry_end")).to.deep.equal([{ type: "auto_retry_end", success: true, attempt: 2 }]);
    expect(assistantTexts(events).at(-1)).to.equal("after the wait");
    expect(server.requests).to.have.length(2);
  });

  it("lets extensions see and change the traffic: payload, headers, response status and raw stream events", async () => {
    writeModelsJson({ apiKey: undefined, compat: {} });
    server.respond((_req, res) => writeSse(res, textStream("observed")));
    const seen = {
      payloads: [] as any[],
      statuses: [] as number[],
      raw: [] as any[],
      apis: new Set<string>(),
    };
    const observer: ExtensionFactory = (kc) => {
      kc.on("before_provider_request", (event) => {
        seen.payloads.push(structuredClone(event.payload));
        return { ...(event.payload as object), seed: 7 };
      });
      kc.on("before_provider_headers", (event) => {
        seen.apis.add(event.api);
        event.headers["x-trace-id"] = "trace-1";
        event.headers["x-team"] = null;
      });
      kc.on("after_provider_response", (event) => {
        seen.statuses.push(event.status);
      });
      kc.on("provider_stream_event", (event) => {
        seen.raw.push(event.data);
      });
    };
    const { handle } = await open([observer]);
    await handle.prompt("watch this");
    const sent = server.requests[0]!;
    expect(sent.body.seed).to.equal(7);
    expect(sent.body.store).to.equal(false);
    expect(sent.body.max_completion_tokens).to.equal(2048);
    expect(sent.headers["x-trace-id"]).to.equal("trace-1");
    expect(sent.headers).to.not.have.property("x-team");
    expect(sent.headers.authorization, "no key configured: the placeholder").to.equal("Bearer not-needed");
    expect(seen.payloads[0].messages.at(-1)).to.deep.equal({ role: "user", content: "watch this" });
    expect([...seen.apis]).to.deep.equal(["openai-completions"]);
    expect(seen.statuses).to.deep.equal([200]);
    expect(seen.raw.length).to.equal(textStream("observed").length - 1);
    expect(seen.raw[0]).to.include({ object: "chat.completion.chunk" });
  });

  it("classify(): forces the tool with tool_choice at temperature 0 with the labels as an enum", async () => {
    writeModelsJson();
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_cls_1", "classify", { label: "risky" })),
      (_req, res) => writeSse(res, toolCallStream("call_cls_2", "classify", { label: "maybe" })),
    );
    const { handle } = await open();
    const answer = await sessionInternals(handle).models.classify({
      prompt: "Is `rm -rf /` safe?",
      labels: ["safe", "risky"],
    });
    expect(answer.label).to.equal("risky");
    expect(answer.usage).to.include({ input: 30, output: 12 });
    const body = server.requests[0]!.body;
    expect(body.tool_choice).to.deep.equal({ type: "function", function: { name: "classify" } });
    expect(body.temperature).to.equal(0);
    expect(body.tools).to.have.length(1);
    expect(body.tools[0].function.name).to.equal("classify");
    expect(body.tools[0].function.parameters.properties.label.enum).to.deep.equal(["safe", "risky"]);
    expect(body.messages.at(-1)).to.deep.equal({ role: "user", content: "Is `rm -rf /` safe?" });

    let error: Error | undefined;
    try {
      await sessionInternals(handle).models.classify({ prompt: "And `ls`?", labels: ["safe", "risky"] });
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).to.contain('"maybe"').and.contain("safe, risky");
  });

  it("shows the error of a failed request as the turn's error message", async () => {
    writeModelsJson();
    server.respond((_req, res) =>
      writeSse(res, [
        roleChunk(),
        chunk({ content: "Start" }),
        { data: { error: { message: "Invalid tool schema", type: "invalid_request_error" } } },
      ]),
    );
    const { handle, ofType } = await open();
    await handle.prompt("go");
    const last = ofType("message_end").at(-1)!.message as {
      stopReason: string;
      errorKind: string;
      errorMessage: string;
    };
    expect(last).to.include({ stopReason: "error", errorKind: "bad_request" });
    expect(last.errorMessage).to.contain("Invalid tool schema");
    expect(ofType("auto_retry_start"), "bad_request is not retried").to.have.length(0);
  });
});

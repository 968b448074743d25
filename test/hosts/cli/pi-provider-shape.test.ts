/**
 * A provider an extension written for pi registers in pi's shape (`streamSimple(model, context, options)` over pi
 * 1.x's transcript, returning pi-ai's event stream, with pi-ai's transcript helpers), run through the built
 * `knightcode` in JSON mode against a local server speaking Anthropic's Messages wire format.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  messageDelta,
  messageStart,
  messageStop,
  textBlock,
  toolUseBlock,
} from "../../builtin-extensions/providers/anthropic/wire.js";
import { runCli } from "../../helpers/cli.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** The extension as a pi user writes it: pi's imports, pi's provider shape, Anthropic's wire by hand. */
const EXTENSION = String.raw`
import {
  collapseSystemMessages,
  createAssistantMessageEventStream,
  getCurrentSystemPrompt,
  getCurrentTools,
  ToolCallArgumentsStream,
} from "@earendil-works/pi-ai";
import type { AssistantMessage, AssistantMessageEventStream, Model, SimpleStreamOptions } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { writeFileSync } from "node:fs";

function toAnthropic(messages: any[]) {
  const out: any[] = [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", content: typeof m.content === "string" ? m.content : m.content.filter((b: any) => b.type === "text").map((b: any) => ({ type: "text", text: b.text })) });
    else if (m.role === "assistant") out.push({ role: "assistant", content: m.content.flatMap((b: any) => b.type === "text" ? [{ type: "text", text: b.text }] : b.type === "toolCall" ? [{ type: "tool_use", id: b.id, name: b.name, input: b.arguments }] : []) });
    else if (m.role === "toolResult") out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: m.toolCallId, content: m.content.map((b: any) => b.text ?? "").join(""), is_error: m.isError }] });
  }
  return out;
}

function streamPiShape(model: Model<any>, context: any, options?: SimpleStreamOptions): AssistantMessageEventStream {
  const stream = createAssistantMessageEventStream();
  const transcript = collapseSystemMessages(context);
  const system = getCurrentSystemPrompt(transcript.messages);
  const tools = getCurrentTools(transcript.messages);
  (async () => {
    const output: AssistantMessage = {
      role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop", timestamp: Date.now(),
    } as AssistantMessage;
    try {
      const response = await fetch(model.baseUrl + "/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": options?.apiKey ?? "", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({
          model: model.id, max_tokens: options?.maxTokens ?? 1024, stream: true, system,
          tools: tools.map((t: any) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
          messages: toAnthropic(transcript.messages),
          metadata: { roles: transcript.messages.map((m: any) => m.role), contextRoles: context.messages.map((m: any) => m.role) },
        }),
        signal: options?.signal,
      });
      if (!response.ok) throw new Error("HTTP " + response.status + ": " + (await response.text()));
      stream.push({ type: "start", partial: output });
      const blocks: any[] = [];
      for (const chunk of (await response.text()).split("\n\n")) {
        const line = chunk.split("\n").find((l) => l.startsWith("data:"));
        if (!line) continue;
        const event = JSON.parse(line.slice(5));
        if (event.type === "content_block_start") {
          const b = event.content_block;
          if (b.type === "text") { output.content.push({ type: "text", text: "" }); stream.push({ type: "text_start", contentIndex: output.content.length - 1, partial: output }); }
          else { output.content.push({ type: "toolCall", id: b.id, name: b.name, arguments: {} }); blocks[event.index] = new ToolCallArgumentsStream(); stream.push({ type: "toolcall_start", contentIndex: output.content.length - 1, partial: output }); }
        } else if (event.type === "content_block_delta") {
          const i = output.content.length - 1;
          const block: any = output.content[i];
          if (event.delta.type === "text_delta") { block.text += event.delta.text; stream.push({ type: "text_delta", contentIndex: i, delta: event.delta.text, partial: output }); }
          else { block.arguments = blocks[event.index].append(event.delta.partial_json); stream.push({ type: "toolcall_delta", contentIndex: i, delta: event.delta.partial_json, partial: output }); }
        } else if (event.type === "content_block_stop") {
          const i = output.content.length - 1;
          const block: any = output.content[i];
          if (block.type === "text") stream.push({ type: "text_end", contentIndex: i, content: block.text, partial: output });
          else { Object.assign(block, blocks[event.index].finish()); stream.push({ type: "toolcall_end", contentIndex: i, toolCall: block, partial: output }); }
        } else if (event.type === "message_delta") {
          output.stopReason = event.delta.stop_reason === "tool_use" ? "toolUse" : "stop";
        }
      }
      stream.push({ type: "done", reason: output.stopReason as any, message: output });
      stream.end();
    } catch (error) {
      output.stopReason = "error";
      output.errorMessage = error instanceof Error ? error.message : String(error);
      stream.push({ type: "error", reason: "error", error: output });
      stream.end();
    }
  })();
  return stream;
}

export default function (pi: ExtensionAPI) {
  const transcript = [
    { role: "system", content: "base", sections: { a: "<a>one</a>", b: "<b>two</b>" }, toolsAdded: [{ name: "t1", description: "1", parameters: {} }, { name: "t2", description: "2", parameters: {} }], timestamp: 5 },
    { role: "user", content: "hi", timestamp: 6 },
    { role: "system", content: [{ type: "text", text: "more" }], sections: { a: null, b: "<b>three</b>" }, toolsRemoved: [{ name: "t1" }], toolsAdded: [{ name: "t3", description: "3", parameters: {} }], timestamp: 7 },
  ];
  if (process.env.PI_SHAPE_OUT) {
    writeFileSync(process.env.PI_SHAPE_OUT, JSON.stringify({
      prompt: getCurrentSystemPrompt(transcript as any),
      tools: getCurrentTools(transcript as any).map((t: any) => t.name),
      collapsed: collapseSystemMessages({ messages: transcript } as any).messages,
      empty: getCurrentSystemPrompt([]),
      partials: (() => { const a = new ToolCallArgumentsStream(); return [a.append('{"path": "no'), a.append('tes.txt", "li'), a.append('mit": 3}'), a.finish(), a.text]; })(),
      broken: (() => { const a = new ToolCallArgumentsStream(); a.append("[1, 2]"); return a.finish(); })(),
    }));
  }
  pi.registerProvider("pi-shape", {
    baseUrl: process.env.PI_SHAPE_URL,
    apiKey: "$PI_SHAPE_KEY",
    api: "pi-shape-api",
    models: [{ id: "shape-1", name: "Shape One", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 2048 }],
    oauth: { name: "unused", login: async () => ({}), refreshToken: async (c: any) => c, getApiKey: (c: any) => c.access },
    streamSimple: streamPiShape,
  } as any);
  pi.registerProvider("pi-throws", {
    baseUrl: "http://127.0.0.1:9",
    apiKey: "unused",
    api: "pi-throws-api",
    models: [{ id: "t-1", name: "Throws", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 }],
    streamSimple: () => { throw new Error("no credentials for pi-throws"); },
  } as any);
}
`;

interface Wire {
  type: string;
  [field: string]: any;
}

describe("a provider registered in pi's shape (pi-compat)", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-pi-provider-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
    tmp.write("ext/pi-shape.ts", EXTENSION);
    tmp.write("notes.txt", "THE NOTE SAYS 42\n");
  });
  afterEach(() => server.close());

  const run = (args: string[]) =>
    runCli(["-e", join(tmp.path, "ext", "pi-shape.ts"), "--mode", "json", ...args], {
      cwd: tmp.path,
      env: {
        KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"),
        PI_SHAPE_URL: server.url,
        PI_SHAPE_KEY: "sk-pi-shape-test",
        PI_SHAPE_OUT: join(tmp.path, "helpers.json"),
      },
    });
  const wire = (stdout: string): Wire[] =>
    stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Wire);
  const lastAssistant = (events: Wire[]) =>
    events.filter((e) => e.type === "message_end" && e.message?.role === "assistant").at(-1)?.message;

  it("answers a prompt: pi's model, transcript and options in, pi's events back", async () => {
    server.respond((_req, res) =>
      writeSse(res, [
        messageStart("shape-1"),
        ...textBlock(0, ["Hello ", "from pi's shape"]),
        messageDelta("end_turn"),
        messageStop(),
      ]),
    );
    const result = await run([
      "--provider",
      "pi-shape",
      "--model",
      "shape-1",
      "--system-prompt",
      "PI SHAPE PROMPT",
      "say hi",
    ]);
    expect(result.code, result.stderr).to.equal(0);
    const message = lastAssistant(wire(result.stdout));
    expect(message.content).to.deep.equal([{ type: "text", text: "Hello from pi's shape" }]);
    expect(message.provider).to.equal("pi-shape");
    expect(wire(result.stdout).some((e) => e.assistantMessageEvent?.type === "text_delta")).to.equal(true);
    const request = server.requests[0]!;
    expect(request.path).to.equal("/v1/messages");
    expect(request.headers["x-api-key"]).to.equal("sk-pi-shape-test");
    expect(request.body.model).to.equal("shape-1");
    expect(request.body.system).to.contain("PI SHAPE PROMPT");
    const toolNames = request.body.tools.map((t: { name: string }) => t.name);
    expect(toolNames).to.include.members(["read", "bash"]);
    // pi 1.x's transcript: the prompt and tools arrive as a leading system message, which the helpers read.
    expect(request.body.metadata.contextRoles[0]).to.equal("system");
    expect(request.body.metadata.roles).to.deep.equal(["system", "user"]);
    expect(request.body.messages).to.deep.equal([{ role: "user", content: "say hi" }]);
  });

  it("runs a tool call round trip", async () => {
    server.respondInOrder(
      (_req, res) =>
        writeSse(res, [
          messageStart("shape-1"),
          ...toolUseBlock(0, "toolu_01", "read", ['{"path":', '"notes.txt"}']),
          messageDelta("tool_use"),
          messageStop(),
        ]),
      (_req, res) =>
        writeSse(res, [
          messageStart("shape-1"),
          ...textBlock(0, ["The note says 42."]),
          messageDelta("end_turn"),
          messageStop(),
        ]),
    );
    const result = await run(["--provider", "pi-shape", "--model", "shape-1", "what does notes.txt say?"]);
    expect(result.code, result.stderr).to.equal(0);
    const events = wire(result.stdout);
    const executed = events.find((e) => e.type === "tool_execution_end");
    expect(executed?.toolName).to.equal("read");
    expect(executed?.isError).to.equal(false);
    expect(JSON.stringify(executed?.result)).to.contain("THE NOTE SAYS 42");
    expect(lastAssistant(events).content).to.deep.equal([{ type: "text", text: "The note says 42." }]);
    expect(server.requests).to.have.length(2);
    const second = server.requests[1]!.body.messages;
    expect(second[1]).to.deep.equal({
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_01", name: "read", input: { path: "notes.txt" } }],
    });
    expect(second[2].role).to.equal("user");
    expect(second[2].content[0].tool_use_id).to.equal("toolu_01");
    expect(second[2].content[0].content).to.contain("THE NOTE SAYS 42");
    expect(second[2].content[0].is_error).to.equal(false);
  });

  it("pi-ai's transcript helpers replay system messages as pi-ai does", async () => {
    server.respond((_req, res) =>
      writeSse(res, [
        messageStart("shape-1"),
        ...textBlock(0, ["ok"]),
        messageDelta("end_turn"),
        messageStop(),
      ]),
    );
    const result = await run(["--provider", "pi-shape", "--model", "shape-1", "hi"]);
    expect(result.code, result.stderr).to.equal(0);
    const helpers = JSON.parse(readFileSync(join(tmp.path, "helpers.json"), "utf8"));
    expect(helpers.prompt).to.equal("base\n\nmore\n\n<b>three</b>");
    expect(helpers.tools).to.deep.equal(["t2", "t3"]);
    expect(helpers.empty).to.equal("");
    expect(helpers.partials).to.deep.equal([
      { path: "no" },
      { path: "notes.txt" },
      { path: "notes.txt", limit: 3 },
      { arguments: { path: "notes.txt", limit: 3 } },
      '{"path": "notes.txt", "limit": 3}',
    ]);
    expect(helpers.broken.arguments).to.deep.equal({});
    expect(helpers.broken.argumentsError).to.match(
      /^Tool arguments must be a JSON object\n\nReceived arguments:\n\[1, 2\]$/,
    );
    expect(helpers.collapsed.map((m: { role: string }) => m.role)).to.deep.equal(["system", "user"]);
    expect(helpers.collapsed[0]).to.deep.include({
      content: "base\n\nmore",
      sections: { b: "<b>three</b>" },
      timestamp: 5,
    });
    expect(helpers.collapsed[0].toolsAdded.map((t: { name: string }) => t.name)).to.deep.equal(["t2", "t3"]);
    // The helpers are no longer refused, so loading the extension warns about none of them.
    expect(result.stderr).to.not.match(
      /collapseSystemMessages|getCurrentSystemPrompt|getCurrentTools|ToolCallArgumentsStream/,
    );
  });

  it("a pi provider that throws ends the request with its error, not a crash", async () => {
    const result = await run(["--provider", "pi-throws", "--model", "t-1", "hi"]);
    const message = lastAssistant(wire(result.stdout));
    expect(message?.stopReason, result.stdout + result.stderr).to.equal("error");
    expect(message.errorMessage).to.contain("no credentials for pi-throws");
    expect(message.errorMessage).to.contain("pi-throws");
  });
});

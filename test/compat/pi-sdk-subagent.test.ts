/**
 * Issue 29: an extension written for pi 1.6 that runs a subagent in process with pi's SDK (`createAgentSession`,
 * `SessionManager.inMemory()`, `SettingsManager.inMemory()`, `DefaultResourceLoader`, `AuthStorage`, `ModelRegistry`,
 * `customTools`) gets a real KnightCode session with its own system prompt, tools and events, answered by a local
 * OpenAI-compatible server; an older pi extension (`session_switch`, pi-ai's `/compat` subpath, `typebox/compile`)
 * loads beside it with a warning for what it imports that KnightCode refuses. Run through the built CLI in JSON mode.
 */

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream, toolCallStream } from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../helpers/cli.js";
import { writeLocalModels } from "../helpers/local-models.js";
import { type RecordedRequest, startTestServer, type TestServer, writeSse } from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

const SUBAGENT = `import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import {
  AuthStorage, createAgentSession, DefaultResourceLoader, defineTool, getAgentDir, ModelRegistry, SessionManager,
  SettingsManager,
} from "@earendil-works/pi-coding-agent";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "typebox";

export default function (pi: ExtensionAPI) {
  pi.registerTool({
    name: "subagent",
    label: "Subagent",
    description: "Runs a task in a subagent",
    parameters: Type.Object({ task: Type.String() }),
    async execute(_id, params, _signal, _onUpdate, ctx) {
      const authStorage = AuthStorage.create();
      const modelRegistry = ModelRegistry.create(authStorage);
      const model = modelRegistry.find(ctx.model!.provider, ctx.model!.id);
      if (!model) throw new Error("no model");
      const loader = new DefaultResourceLoader({
        cwd: ctx.cwd,
        agentDir: getAgentDir(),
        noExtensions: true,
        systemPrompt: "You are the SUBAGENT. Be brief.",
      });
      await loader.reload();
      const note = defineTool({
        name: "note",
        label: "Note",
        description: "Writes a note file",
        parameters: Type.Object({ text: Type.String() }),
        async execute(_id, args) {
          writeFileSync(join(ctx.cwd, "note.txt"), args.text);
          return { content: [{ type: "text", text: "noted" }], details: {} };
        },
      });
      const sessionManager = SessionManager.inMemory(ctx.cwd);
      const { session } = await createAgentSession({
        cwd: ctx.cwd,
        model,
        thinkingLevel: "off",
        tools: ["read"],
        customTools: [note],
        resourceLoader: loader,
        sessionManager,
        settingsManager: SettingsManager.inMemory({ retry: { enabled: false } }),
        authStorage,
        modelRegistry,
      });
      const events: string[] = [];
      const stop = session.subscribe((event) => { events.push(event.type); });
      try {
        await session.prompt(params.task);
      } finally {
        stop();
      }
      const text = session.getLastAssistantText();
      const roles = session.messages.map((m: any) => m.role).join(",");
      const persisted = sessionManager.isPersisted() + ":" + (session.sessionFile ?? "none") + ":" + sessionManager.getEntries().length;
      session.dispose();
      const seen = ["agent_start", "tool_execution_end", "message_update", "agent_end"].filter((e) => events.includes(e));
      return {
        content: [{ type: "text", text: "subagent said: " + text + " | roles " + roles + " | events " + seen.join(",") + " | " + persisted }],
        details: {},
      };
    },
  });
}
`;

/** An extension for an older pi: session_switch, pi-ai's compat subpath, typebox/compile, a refused import. */
const LEGACY = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { compact, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { getModels } from "@mariozechner/pi-ai/compat";
import { Compile } from "typebox/compile";
import { Type } from "typebox";
import { writeFileSync } from "node:fs";

export default function (pi: ExtensionAPI) {
  const check = Compile(Type.Object({ n: Type.Number() }));
  pi.on("session_switch", async () => {});
  pi.registerCommand("legacy", {
    description: "an older pi extension",
    handler: async (_args, ctx) => {
      let refused = "";
      try { await (compact as any)(); } catch (error) { refused = (error as Error).message; }
      const { frontmatter } = parseFrontmatter("---\\nname: x\\nmeta:\\n  tags: [a, b]\\n---\\nbody");
      writeFileSync("legacy.txt", "legacy " + check.Check({ n: 1 }) + " " + getModels("local").length + " " + JSON.stringify(frontmatter) + " " + refused);
    },
  });
}
`;

/** pi-agent-core's Agent, built by a command: its own system prompt, one tool, events and messages. */
const AGENT_CORE = `import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Agent } from "@earendil-works/pi-agent-core";
import { getModel, streamSimple } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { writeFileSync } from "node:fs";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("agentcore", {
    description: "runs pi-agent-core's Agent",
    handler: async () => {
      const shout = {
        name: "shout",
        label: "Shout",
        description: "Upper-cases text",
        parameters: Type.Object({ text: Type.String() }),
        execute: async (_id: string, args: { text: string }) => ({ content: [{ type: "text" as const, text: args.text.toUpperCase() }], details: {} }),
      };
      const agent = new Agent({
        initialState: { systemPrompt: "You are AGENT-CORE.", model: getModel("local", "m")!, thinkingLevel: "off", tools: [shout] },
        streamFn: streamSimple,
      });
      const events = new Set<string>();
      agent.subscribe((event) => { events.add(event.type); });
      await agent.prompt("shout hey");
      let refused = "";
      try { new Agent({ initialState: {}, streamFn: streamSimple, beforeToolCall: async () => undefined } as any); } catch (error) { refused = (error as Error).message; }
      const last = agent.state.messages.at(-1) as any;
      writeFileSync("agentcore.txt", [last.content[0].text, agent.state.messages.map((m: any) => m.role).join(","), ["agent_start", "tool_execution_end", "agent_end"].filter((e) => events.has(e)).join(","), refused].join(" | "));
      agent.reset();
    },
  });
}
`;

function lastMessageText(request: RecordedRequest): string {
  const messages = request.body?.messages as { role: string; content: unknown }[];
  const last = messages.at(-1)!;
  return typeof last.content === "string" ? last.content : JSON.stringify(last.content);
}

describe("extensions written for pi, in-process subagents through pi's SDK", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-pi-subagent-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  it("a subagent started with pi's createAgentSession is a KnightCode session with its own prompt, tools and events", async () => {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      models: [{ id: "m", contextWindow: 32000, maxTokens: 1024 }],
    });
    // A personal extension: the main session loads it; the subagent, started with noExtensions, does not.
    mkdirSync(join(agentDir, "extensions"), { recursive: true });
    writeFileSync(
      join(agentDir, "extensions", "count.ts"),
      `import { appendFileSync } from "node:fs";\nexport default function () { appendFileSync(${JSON.stringify(join(tmp.path, "loads.txt"))}, "loaded\\n"); }\n`,
    );
    server.respond(async (request, res) => {
      const system = JSON.stringify(request.body.messages[0]);
      const isSub = system.includes("You are the SUBAGENT.");
      const afterTool = request.body.messages.at(-1).role === "tool";
      if (system.includes("You are AGENT-CORE.")) {
        return writeSse(
          res,
          afterTool ? textStream("core done") : toolCallStream("call_core", "shout", { text: "hey" }),
        );
      }
      if (!isSub && !afterTool)
        return writeSse(res, toolCallStream("call_main", "subagent", { task: "note hi" }));
      if (isSub && !afterTool)
        return writeSse(res, toolCallStream("call_sub", "note", { text: "hi from sub" }));
      if (isSub) return writeSse(res, textStream("sub done"));
      return writeSse(res, textStream("main done"));
    });
    const result = await runCli(
      [
        "--mode",
        "json",
        "--no-session",
        "-e",
        tmp.write("subagent.ts", SUBAGENT),
        "-e",
        tmp.write("legacy.ts", LEGACY),
        "-e",
        tmp.write("agent-core.ts", AGENT_CORE),
        "--provider",
        "local",
        "--model",
        "m",
        "delegate it",
        "/legacy",
        "/agentcore",
      ],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agentDir, NO_COLOR: "1" } },
    );
    expect(result.code, result.stderr).to.equal(0);
    // The subagent's tool ran for real, in the subagent's session.
    expect(readFileSync(join(tmp.path, "note.txt"), "utf8")).to.equal("hi from sub");
    expect(readFileSync(join(tmp.path, "loads.txt"), "utf8")).to.equal("loaded\n");
    // Four requests: main (calls subagent), sub (calls note), sub (answers), main (answers); then the Agent's two.
    expect(server.requests).to.have.length(6);
    const [main1, sub1, sub2, main2, core1, core2] = server.requests;
    const tools = (r: RecordedRequest) =>
      ((r.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name).sort();
    expect(JSON.stringify(main1!.body.messages[0])).not.to.contain("SUBAGENT");
    expect(tools(main1!)).to.include("subagent");
    expect(JSON.stringify(sub1!.body.messages[0])).to.contain("You are the SUBAGENT. Be brief.");
    // The subagent's tools are the ones it asked for: read and its custom note tool, not the main session's subagent.
    expect(tools(sub1!)).to.deep.equal(["note", "read"]);
    expect(lastMessageText(sub1!)).to.contain("note hi");
    expect(lastMessageText(sub2!)).to.contain("noted");
    expect(lastMessageText(main2!), lastMessageText(main2!)).to.contain(
      "subagent said: sub done | roles user,assistant,toolResult,assistant | events agent_start,tool_execution_end,message_update,agent_end | false:none:6",
    );
    // pi-agent-core's Agent: its system prompt, exactly its tool, the tool run, its events and messages.
    expect(JSON.stringify(core1!.body.messages[0])).to.contain("You are AGENT-CORE.");
    expect(tools(core1!)).to.deep.equal(["shout"]);
    expect(lastMessageText(core2!)).to.contain("HEY");
    expect(readFileSync(join(tmp.path, "agentcore.txt"), "utf8")).to.equal(
      "core done | user,assistant,toolResult,assistant | agent_start,tool_execution_end,agent_end | " +
        "Agent from pi-agent-core: beforeToolCall is not supported by KnightCode (its Agent runs a KnightCode session: give initialState and pi-ai's streamSimple, or use createAgentSession)",
    );
    // stdout carries the main session's JSON records only.
    const records = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, any>);
    expect(records.filter((r) => r.type === "extension_error")).to.deep.equal([]);
    const subagentEnd = records.find((r) => r.type === "tool_execution_end" && r.toolName === "subagent");
    expect(subagentEnd?.isError, JSON.stringify(subagentEnd)).to.equal(false);
    expect(records.some((r) => r.type === "tool_execution_end" && r.toolName === "note")).to.equal(false);
    // The older extension loaded beside it: warned about its refused import, the rest working.
    expect(result.stderr).to.match(
      /legacy\.ts: imports compact from @mariozechner\/pi-coding-agent, which KnightCode does not support \(pi's compaction and session-file internals/,
    );
    expect(result.stderr).not.to.contain("session_switch");
    expect(readFileSync(join(tmp.path, "legacy.txt"), "utf8")).to.match(
      /^legacy true 1 \{"name":"x","meta":\{"tags":\["a","b"\]\}\} compact from @mariozechner\/pi-coding-agent is not supported by KnightCode: /,
    );
  });
});

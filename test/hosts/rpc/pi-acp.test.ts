/**
 * pi's ACP adapter, `pi-acp` (the published package, pinned), driving KnightCode: pi-acp starts
 * `$PI_ACP_PI_COMMAND --mode rpc --no-themes` and speaks pi's RPC to it. The test is the editor: the ACP SDK's
 * client over pi-acp's stdio, through initialize, session/new and a prompt whose answer reads a file with the `read`
 * tool, against a local server speaking the OpenAI Chat Completions wire format.
 */

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  type ClientContext,
  client,
  type InitializeResponse,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { expect } from "chai";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { alive, gone } from "../../helpers/processes.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = join(root, "dist", "hosts", "cli", "main.js");
const piAcp = createRequire(import.meta.url).resolve("pi-acp");

describe("pi-acp (pi's ACP adapter) driving KnightCode's RPC mode", function () {
  this.timeout(60_000);
  let server: TestServer;
  let adapter: ChildProcessWithoutNullStreams | undefined;
  beforeEach(async () => {
    server = await startTestServer();
  });
  // Registered before useTempDir's, so it runs before the folder (and the pid file in it) goes.
  afterEach(async () => {
    adapter?.kill("SIGKILL");
    adapter = undefined;
    // The knightcode processes pi-acp started (the wrapper wrote their pids) must be gone before the folder goes.
    const pidFile = join(tmp.path, "knightcode.pids");
    const pids = existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim().split("\n").map(Number) : [];
    for (const pid of pids) {
      if (!(await gone(pid, 10_000)) && alive(pid)) process.kill(pid, "SIGKILL");
    }
    await server.close();
  });
  const tmp = useTempDir("kc-pi-acp-");

  /** The agent dir, project, pi-acp's home and the wrapper pi-acp runs as "pi". */
  function setup(): { agentDir: string; project: string; home: string; wrapper: string } {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_TEST_KEY",
      models: [
        { id: "m1", contextWindow: 32_000, maxTokens: 1024 },
        { id: "m2", contextWindow: 64_000, maxTokens: 1024 },
      ],
    });
    const project = join(tmp.path, "project");
    tmp.write("project/notes.txt", "hello from the notes file\n");
    // pi-acp keeps its own files under ~/.pi; quietStartup spares the start-up banner (it asks `pi --version`).
    const home = join(tmp.path, "home");
    tmp.write("home/.pi/agent/settings.json", JSON.stringify({ quietStartup: true }));
    // What pi-acp runs as "pi": knightcode with the local model; `exec` keeps the pid the wrapper wrote.
    const wrapper = tmp.write(
      "knightcode-as-pi.sh",
      `#!/bin/sh\necho $$ >> "${join(tmp.path, "knightcode.pids")}"\n` +
        `exec "${process.execPath}" "${bin}" --provider local --model m1 "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    return { agentDir, project, home, wrapper };
  }

  /** Starts pi-acp and runs `op` as its ACP client; `updates` collects every session/update. */
  async function asEditor<T>(
    where: ReturnType<typeof setup>,
    op: (ctx: ClientContext, init: InitializeResponse) => Promise<T>,
  ): Promise<{ result: T; updates: SessionUpdate[]; stderr: () => string }> {
    adapter?.kill("SIGKILL");
    adapter = spawn(process.execPath, [piAcp], {
      cwd: tmp.path,
      env: {
        ...process.env,
        HOME: where.home,
        PI_ACP_PI_COMMAND: where.wrapper,
        KNIGHTCODE_AGENT_DIR: where.agentDir,
        LOCAL_TEST_KEY: "sk-local",
      },
    });
    let stderr = "";
    adapter.stderr.on("data", (d) => {
      stderr += d;
    });
    const updates: SessionUpdate[] = [];
    const app = client({ name: "knightcode-test" })
      .onNotification(methods.client.session.update, ({ params }) => {
        updates.push(params.update);
      })
      .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: "cancelled" } }));
    const stream = ndJsonStream(
      Writable.toWeb(adapter.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(adapter.stdout) as ReadableStream<Uint8Array>,
    );
    const result = await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      return op(ctx, init);
    });
    return { result, updates, stderr: () => stderr };
  }

  /** The text of the message chunks of one kind, joined. */
  const texts = (updates: SessionUpdate[], kind: "agent_message_chunk" | "user_message_chunk") =>
    updates
      .flatMap((u) => (u.sessionUpdate === kind && u.content.type === "text" ? [u.content.text] : []))
      .join("");

  it("runs initialize, session/new and a prompt with a read tool call, and streams the updates", async () => {
    const where = setup();
    const { project, agentDir } = where;
    server.respondInOrder(
      (_req, res) => writeSse(res, [...toolCallStream("call_r1", "read", { path: "notes.txt" })]),
      (_req, res) => writeSse(res, [...textStream("The notes say hello.")]),
    );
    const run = await asEditor(where, async (ctx, init) => {
      const session = await ctx.request(methods.agent.session.new, { cwd: project, mcpServers: [] });
      const prompt = await ctx.request(methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "What do the notes say?" }],
      });
      return { init, session, prompt };
    });
    const outcome = run.result;
    const updates = run.updates;
    const adapterStderr = run.stderr();
    expect(outcome.init.protocolVersion, adapterStderr).to.equal(PROTOCOL_VERSION);
    expect(outcome.init.agentInfo?.name).to.equal("pi-acp");

    // session/new: pi-acp read get_state, get_available_models and get_available_thinking_levels.
    const { session } = outcome;
    const sessionFiles = join(agentDir, "sessions");
    expect(existsSync(sessionFiles), "KnightCode wrote the session under its agent dir").to.equal(true);
    const options = session.configOptions ?? [];
    const model = options.find((o) => o.id === "model") as { currentValue: string } | undefined;
    expect(model?.currentValue).to.equal("local/m1");
    const thinking = options.find((o) => o.category === "thought_level") as
      | { currentValue: string; options: { value: string }[] }
      | undefined;
    expect(thinking?.currentValue).to.equal("off");
    expect(thinking?.options.map((o) => o.value)).to.deep.equal(["off"]);

    // The prompt: a read tool call, then the answer, then agent_settled ends the turn.
    expect(outcome.prompt.stopReason).to.equal("end_turn");
    const toolCall = updates.find((u) => u.sessionUpdate === "tool_call") as
      | Extract<SessionUpdate, { sessionUpdate: "tool_call" }>
      | undefined;
    expect(toolCall, JSON.stringify(updates)).to.not.equal(undefined);
    expect(toolCall!.toolCallId).to.equal("call_r1");
    expect(toolCall!.kind).to.equal("read");
    expect(toolCall!.locations?.[0]?.path).to.equal(join(project, "notes.txt"));
    const finished = updates.find(
      (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_r1" && u.status === "completed",
    ) as Extract<SessionUpdate, { sessionUpdate: "tool_call_update" }> | undefined;
    expect(finished, JSON.stringify(updates)).to.not.equal(undefined);
    expect(JSON.stringify(finished!.content)).to.contain("hello from the notes file");
    expect(texts(updates, "agent_message_chunk")).to.equal("The notes say hello.");
    // Context usage comes from get_session_stats' contextUsage after the turn.
    expect(updates.some((u) => u.sessionUpdate === "usage_update")).to.equal(true);

    // The model saw the tool's result: the second request carries it.
    expect(server.requests).to.have.length(2);
    const toolMessage = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
    expect(JSON.stringify(toolMessage.content)).to.contain("hello from the notes file");
  });

  it("serves pi-acp's own commands, a model switch, and session/load of the session afterwards", async () => {
    const where = setup();
    const { project, agentDir } = where;
    server.respond((_req, res) => writeSse(res, [...textStream("Noted.")]));
    const first = await asEditor(where, async (ctx) => {
      const session = await ctx.request(methods.agent.session.new, { cwd: project, mcpServers: [] });
      const sessionId = session.sessionId;
      const say = (text: string) =>
        ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      expect((await say("Remember the notes")).stopReason).to.equal("end_turn");
      for (const command of [
        "/name Notes session",
        "/steering one-at-a-time",
        "/autocompact off",
        "/export",
        "/session",
      ]) {
        expect((await say(command)).stopReason, command).to.equal("end_turn");
      }
      // The editor's model picker: pi-acp sends set_model, then reads the state and thinking levels again.
      const switched = await ctx.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "model",
        value: "local/m2",
      });
      return { sessionId, switched };
    });
    const { sessionId, switched } = first.result;
    const said = texts(first.updates, "agent_message_chunk");
    expect(said, first.stderr()).to.contain("Session name set: Notes session");
    expect(said).to.contain("Steering mode set to: one-at-a-time");
    expect(said).to.contain("Session exported: ");
    expect(said).to.match(/Tokens: in \d+, out \d+, cache read 0, cache write 0, total \d+/);
    const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8"));
    expect(settings).to.deep.include({ steeringMode: "one-at-a-time", compaction: { enabled: false } });
    const exported = join(project, `pi-session-${sessionId.replace(/[^a-zA-Z0-9_-]/g, "_")}.html`);
    expect(readFileSync(exported, "utf8")).to.contain("Remember the notes");
    const model = switched.configOptions.find((o) => o.id === "model") as { currentValue: string };
    expect(model.currentValue).to.equal("local/m2");
    expect(first.updates.some((u) => u.sessionUpdate === "config_option_update")).to.equal(true);

    // A new adapter loads the session: pi-acp starts `knightcode --mode rpc --session <file>` and replays it.
    const second = await asEditor(where, async (ctx) => {
      await ctx.request(methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] });
    });
    expect(texts(second.updates, "user_message_chunk"), second.stderr()).to.equal("Remember the notes");
    expect(texts(second.updates, "agent_message_chunk")).to.equal("Noted.");
  });
});

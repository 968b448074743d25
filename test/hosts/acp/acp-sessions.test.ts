/**
 * `knightcode acp` sessions: cancelling a turn in the middle, loading an earlier session (its history replayed as
 * updates) in a new process, prompts with images and embedded resources, and the errors a client gets for bad
 * requests.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import { expect } from "chai";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import {
  type AcpHarness,
  acpHarness,
  agentText,
  messageText,
  toolMessages,
  toolPerPrompt,
  toolUpdates,
  withTimeout,
} from "./harness.js";

const prompt = (text: string): ContentBlock[] => [{ type: "text", text }];

/** A 1x1 PNG. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: Error & { code?: number }) => error,
  );

describe("knightcode acp: cancel, session/load, prompt content and bad requests", function () {
  this.timeout(60_000);
  let h: AcpHarness;
  // Registered before the temp dir's: the children stop before their folder goes.
  afterEach(() => h.close());
  const tmp = useTempDir("kc-acp-sessions-");
  beforeEach(async () => {
    h = await acpHarness(tmp.path);
    toolPerPrompt(h.model);
  });

  it("session/cancel stops a turn in the middle of a command: the prompt answers cancelled, and the session goes on", async () => {
    const acp = await h.start();
    const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    const running = acp.agent.request("session/prompt", {
      sessionId,
      prompt: prompt('bash: {"command":"sleep 30"}'),
    });
    await acp.waitFor(
      () => toolUpdates(acp.updates(sessionId), "call_1").length > 0,
      "the sleep's tool call",
    );
    const started = Date.now();
    await acp.agent.notify("session/cancel", { sessionId });
    const answer = await withTimeout(running, 10_000, () => `the prompt did not answer\n${acp.stderr()}`);
    expect(answer.stopReason).to.equal("cancelled");
    expect(Date.now() - started).to.be.lessThan(10_000);
    expect(toolUpdates(acp.updates(sessionId), "call_1").at(-1)!.status).to.equal("failed");

    const next = await acp.agent.request("session/prompt", { sessionId, prompt: prompt("hello again") });
    expect(next.stopReason).to.equal("end_turn");
    expect(agentText(acp.updates(sessionId))).to.contain("nothing to do");
  });

  it("ends when the client closes its input in the middle of a turn: the run stops and the process exits 0", async () => {
    const acp = await h.start();
    const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    void acp.agent
      .request("session/prompt", { sessionId, prompt: prompt('bash: {"command":"sleep 30"}') })
      .catch(() => {});
    await acp.waitFor(
      () => toolUpdates(acp.updates(sessionId), "call_1").length > 0,
      "the sleep's tool call",
    );
    const started = Date.now();
    expect(await acp.stop()).to.equal(0);
    expect(Date.now() - started).to.be.lessThan(8_000);
  });

  it("session/load in a new process replays the earlier session as updates, then continues it", async () => {
    const first = await h.start();
    const { sessionId } = await first.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    await first.agent.request("session/prompt", {
      sessionId,
      prompt: prompt('bash: {"command":"echo from-the-first-run"}'),
    });
    expect(await first.stop()).to.equal(0);

    const second = await h.start();
    expect(second.init.agentCapabilities?.loadSession).to.equal(true);
    const listed = await second.agent.request("session/list", { cwd: h.project });
    expect(listed.sessions.map((s) => s.sessionId)).to.include(sessionId);
    const loaded = await second.agent.request("session/load", { sessionId, cwd: h.project, mcpServers: [] });
    expect(loaded.modes?.currentModeId).to.equal("default");
    // Everything was replayed before the answer.
    const replayed = second.updates(sessionId).filter((u) => u.sessionUpdate !== "available_commands_update");
    const kinds = replayed.map((u) => u.sessionUpdate);
    expect(kinds[0]).to.equal("user_message_chunk");
    const user = replayed[0] as Extract<SessionUpdate, { sessionUpdate: "user_message_chunk" }>;
    expect(user.content).to.deep.equal({ type: "text", text: 'bash: {"command":"echo from-the-first-run"}' });
    const call = toolUpdates(replayed, "call_1");
    expect(call[0]).to.deep.include({
      sessionUpdate: "tool_call",
      kind: "execute",
      title: "echo from-the-first-run",
    });
    expect(call.at(-1)!.status).to.equal("completed");
    expect(JSON.stringify(call.at(-1)!.content)).to.contain("from-the-first-run");
    expect(agentText(replayed)).to.equal("done");

    await second.agent.request("session/prompt", { sessionId, prompt: prompt("and now?") });
    const request = h.model.requests.at(-1)!;
    expect(toolMessages(request), "the loaded history reaches the model").to.contain("from-the-first-run");
  });

  it("takes text, images, embedded resources and resource links in one prompt", async () => {
    const acp = await h.start();
    const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    await acp.agent.request("session/prompt", {
      sessionId,
      prompt: [
        { type: "text", text: "Look at these" },
        { type: "image", data: PNG, mimeType: "image/png" },
        {
          type: "resource",
          resource: { uri: "file:///work/notes.md", mimeType: "text/markdown", text: "the embedded body" },
        },
        { type: "resource_link", uri: "file:///work/src/main.ts", name: "main.ts" },
      ],
    });
    const body = h.model.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    const user = body.messages.filter((m) => m.role === "user").at(-1)!;
    const text = messageText(user);
    expect(text).to.contain("Look at these");
    expect(text).to.contain('<context uri="file:///work/notes.md">\nthe embedded body\n</context>');
    expect(text).to.contain("[main.ts](/work/src/main.ts)");
    expect(JSON.stringify(user.content)).to.contain(`data:image/png;base64,${PNG}`);
  });

  it("answers bad requests with specific errors and keeps serving; an extension's stray output goes to stderr", async () => {
    const noisy = join(tmp.path, "noisy.ts");
    writeFileSync(
      noisy,
      'export default function (knightcode) { console.log("stray from the factory"); knightcode.on("session_start", () => { process.stdout.write("stray from session_start\\n"); }); }\n',
    );
    const acp = await h.start({}, ["--provider", "local", "--model", "m", "-e", noisy]);
    const unknown = await failure(
      acp.agent.request("session/prompt", { sessionId: "no-such-session", prompt: prompt("hi") }),
    );
    expect(unknown?.code).to.equal(-32002);
    const relative = await failure(acp.agent.request("session/new", { cwd: "project", mcpServers: [] }));
    expect(relative?.message).to.contain("cwd must be an absolute path");
    const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    const audio = await failure(
      acp.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }],
      }),
    );
    expect(audio?.message).to.contain("does not take audio");
    const mode = await failure(acp.agent.request("session/set_mode", { sessionId, modeId: "yolo" }));
    expect(mode?.message).to.contain('unknown mode "yolo"');
    const missing = await failure(
      acp.agent.request("session/load", { sessionId: "0000-none", cwd: h.project, mcpServers: [] }),
    );
    expect(missing?.code).to.equal(-32002);
    const ok = await acp.agent.request("session/prompt", { sessionId, prompt: prompt("still there?") });
    expect(ok.stopReason).to.equal("end_turn");
    // The harness checks at close that every stdout line is JSON-RPC.
    expect(acp.stderr()).to.contain("stray from the factory");
    expect(acp.stderr()).to.contain("stray from session_start");
  });

  it("a project whose trust would be asked about while the session opens is not trusted, and the session opens", async () => {
    mkdirSync(join(h.project, ".knightcode"));
    writeFileSync(join(h.project, ".knightcode", "settings.json"), "{}");
    const acp = await h.start();
    const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    expect(sessionId).to.be.a("string");
    expect(acp.stderr()).to.contain("was asked while the session was opening");
    expect(acp.stderr()).to.contain("--approve");
  });

  it("without a usable model: offers the api-key method, and session/new fails with auth_required naming what to set", async () => {
    const empty = join(tmp.path, "empty-agent");
    mkdirSync(empty);
    const acp = await h.start({}, [], {
      KNIGHTCODE_AGENT_DIR: empty,
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
    });
    expect(acp.init.authMethods?.map((m) => m.id)).to.deep.equal(["api-key"]);
    const refused = await failure(acp.agent.request("session/new", { cwd: h.project, mcpServers: [] }));
    expect(refused?.code).to.equal(-32000);
    expect(refused?.message).to.contain("no usable model");
    const still = await failure(acp.agent.request("authenticate", { methodId: "api-key" }));
    expect(still?.code).to.equal(-32000);
  });

  it("refuses what the client decides: prompts on the command line, --session, -p", async () => {
    const env = { KNIGHTCODE_AGENT_DIR: h.agentDir };
    const prompted = await runCli(["acp", "hello"], { cwd: h.project, env });
    expect(prompted.code).to.equal(2);
    expect(prompted.stderr).to.contain("knightcode acp does not take prompts");
    const session = await runCli(["acp", "--session", "x", "-p"], { cwd: h.project, env });
    expect(session.code).to.equal(2);
    expect(session.stderr).to.contain("-p or --mode");
    expect(session.stderr).to.contain("--session");
    const help = await runCli(["--help"], { cwd: h.project, env });
    expect(help.stdout).to.match(/acp \[options\]\s+Be an Agent Client Protocol agent/);
    expect(help.stdout).to.match(/acp\s+the Agent Client Protocol on stdin and stdout/);
  });
});

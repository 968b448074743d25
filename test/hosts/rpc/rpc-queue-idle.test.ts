/**
 * RPC `steer` and `follow_up` as pi 1.6 has them, through the built `knightcode --mode rpc` against a local
 * OpenAI-compatible server: sent while nothing runs they are queued (not refused, no run started), and the next run
 * takes queued steering into its first request and queued follow-ups once it would stop; the `input` handlers see
 * them first (with `streamingBehavior` only while a run is going), and an extension command is refused.
 */

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("RPC mode: steer and follow_up while idle (pi 1.6)", function () {
  this.timeout(40_000);
  const running: RpcProcess[] = [];
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
    server.respond((_req, res, index) => writeSse(res, [...textStream(`answer ${index}`)]));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.end(5_000)));
    await server.close();
  });
  const tmp = useTempDir("kc-rpc-queue-");

  function start(extra: string[] = []): RpcProcess {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "local-key",
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--provider", "local", "--model", "m1", "--no-session", ...extra],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir } },
    );
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }

  /** The user texts of one recorded request, in order. */
  const userTexts = (index: number): string[] =>
    (server.requests[index]!.body.messages as { role: string; content: unknown }[])
      .filter((m) => m.role === "user")
      .map((m) =>
        typeof m.content === "string"
          ? m.content
          : (m.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join(""),
      );
  const settled = (p: RpcProcess, n: number) =>
    p.waitFor(() => p.records.filter((r) => r.type === "agent_settled").length >= n, 20_000);

  it("queues a steering message while idle; the next prompt's first request carries it after the prompt", async () => {
    const p = start();
    const steered = await p.request("1", "steer", { message: "also mind the tests" });
    expect(steered).to.deep.include({ success: true, data: { disposition: "queued" } });
    await p.waitFor(
      (r) => r.type === "queue_update" && (r.steering as string[]).includes("also mind the tests"),
    );
    const state = (await p.request("2", "get_state")).data as {
      pendingMessageCount: number;
      isStreaming: boolean;
    };
    expect(state).to.deep.include({ pendingMessageCount: 1, isStreaming: false });
    // Nothing ran.
    expect(p.records.some((r) => r.type === "agent_start")).to.equal(false);
    expect(server.requests).to.have.length(0);

    expect((await p.request("3", "prompt", { message: "fix the bug" })).data).to.deep.equal({
      disposition: "started",
    });
    await settled(p, 1);
    expect(server.requests).to.have.length(1);
    expect(userTexts(0)).to.deep.equal(["fix the bug", "also mind the tests"]);
    expect(
      ((await p.request("4", "get_state")).data as { pendingMessageCount: number }).pendingMessageCount,
    ).to.equal(0);
  });

  it("queues a follow-up while idle; the next run delivers it once it would stop", async () => {
    const p = start();
    expect((await p.request("1", "follow_up", { message: "then summarise" })).data).to.deep.equal({
      disposition: "queued",
    });
    await p.waitFor((r) => r.type === "queue_update" && (r.followUp as string[]).includes("then summarise"));
    expect(server.requests).to.have.length(0);
    await p.request("2", "prompt", { message: "do the work" });
    await settled(p, 1);
    expect(server.requests).to.have.length(2);
    expect(userTexts(0)).to.deep.equal(["do the work"]);
    expect(userTexts(1)).to.deep.equal(["do the work", "then summarise"]);
    // One run: the follow-up was a second turn of it.
    expect(p.records.filter((r) => r.type === "agent_start")).to.have.length(1);
  });

  it("expands a prompt template and a skill in a queued message, as pi does, while idle and while running", async () => {
    tmp.write("agent/prompts/review.md", "---\ndescription: Review a file\n---\nReview $1 with care.");
    tmp.write(
      "agent/skills/tidy/SKILL.md",
      "---\nname: tidy\ndescription: Tidies imports\n---\nSort the imports of every file you touch.",
    );
    server.respond((_req, res, index) =>
      writeSse(res, [...textStream(`answer ${index}`)], { delayMs: index === 0 ? 150 : 0 }),
    );
    const p = start();
    expect((await p.request("1", "steer", { message: "/review src/a.ts" })).data).to.deep.equal({
      disposition: "queued",
    });
    await p.waitFor(
      (r) => r.type === "queue_update" && (r.steering as string[]).includes("Review src/a.ts with care."),
    );
    expect(server.requests).to.have.length(0);
    await p.request("2", "prompt", { message: "start" });
    await p.waitFor((r) => r.type === "message_update");
    expect((await p.request("3", "follow_up", { message: "/skill:tidy then stop" })).data).to.deep.equal({
      disposition: "queued",
    });
    const steered = await p.request("4", "prompt", { message: "/review b.ts", streamingBehavior: "steer" });
    expect(steered.data).to.deep.equal({ disposition: "queued" });
    await settled(p, 1);
    expect(userTexts(0)).to.deep.equal(["start", "Review src/a.ts with care."]);
    expect(server.requests.flatMap((_r, i) => userTexts(i))).to.include("Review b.ts with care.");
    const last = userTexts(server.requests.length - 1);
    const skill = last.find((t) => t.includes("Sort the imports of every file you touch."));
    expect(skill, JSON.stringify(last)).to.be.a("string");
    expect(skill)
      .to.contain("tidy")
      .and.contain("then stop")
      .and.not.match(/^\/skill:/);
    expect(last).to.not.include("/skill:tidy then stop");
  });

  it("runs the input handlers first (streamingBehavior only while running) and refuses extension commands", async () => {
    const log = join(tmp.path, "inputs.jsonl");
    const ext = tmp.write(
      "inputs.ts",
      `import { appendFileSync } from "node:fs";
export default (pi: any) => {
  pi.registerCommand("deploy", { description: "deploy", handler: async () => {} });
  pi.on("input", (event: any) => {
    appendFileSync(${JSON.stringify(log)}, JSON.stringify({ text: event.text, source: event.source, streamingBehavior: event.streamingBehavior ?? null }) + "\\n");
    if (event.text === "drop me") return { action: "handled" };
    if (event.text === "shout") return { action: "transform", text: "SHOUT" };
    return { action: "continue" };
  });
};`,
    );
    server.respond((_req, res, index) =>
      writeSse(res, [...textStream(`answer ${index}`)], { delayMs: index === 0 ? 120 : 0 }),
    );
    const p = start(["-e", ext]);
    expect((await p.request("1", "steer", { message: "drop me" })).data).to.deep.equal({
      disposition: "handled",
    });
    expect((await p.request("2", "follow_up", { message: "shout" })).data).to.deep.equal({
      disposition: "queued",
    });
    const refused = await p.request("3", "steer", { message: "/deploy now" });
    expect(refused.success).to.equal(false);
    expect(String(refused.error)).to.contain(
      'Extension command "/deploy" cannot be queued. Use prompt() or execute the command when not streaming.',
    );
    await p.request("4", "prompt", { message: "start" });
    await p.waitFor((r) => r.type === "message_update");
    expect((await p.request("5", "steer", { message: "while running" })).data).to.deep.equal({
      disposition: "queued",
    });
    await settled(p, 1);
    const inputs = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(inputs).to.deep.equal([
      { text: "drop me", source: "rpc", streamingBehavior: null },
      { text: "shout", source: "rpc", streamingBehavior: null },
      { text: "start", source: "rpc", streamingBehavior: null },
      { text: "while running", source: "rpc", streamingBehavior: "steer" },
    ]);
    // The transformed follow-up is what the model got, after the steering message of the running turn.
    const last = server.requests.length - 1;
    expect(userTexts(last)).to.include.members(["start", "while running", "SHOUT"]);
    expect(server.requests.flatMap((_r, i) => userTexts(i))).to.not.include("drop me");
  });
});

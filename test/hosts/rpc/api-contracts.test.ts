/**
 * Behaviour the spec promises that had no test (issue 32), held through one `knightcode --mode rpc` process against a
 * local OpenAI-compatible server: `--thinking` reaches the request, the awaitable `ctx.sendUserMessage()` of a command
 * resolves after its run, `ctx.getContextUsage()`, `ctx.getSystemPrompt()`, `ctx.isProjectTrusted()`,
 * `knightcode.getMcpServers()`, `withFileMutationQueue()` (one file's changes in turn), `ctx.modelRegistry.streamSimple()`,
 * `thinking_level_select`, `model_select`, `session_before_fork`, cumulative usage in `get_session_stats`, and
 * U+2028 inside a JSON line read as text, not as a line break.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import {
  type RecordedRequest,
  startTestServer,
  type TestServer,
  writeSse,
} from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** Logs what the extension sees, one JSON line per observation, to $PROBE_FILE. */
const PROBE = `import { appendFileSync } from "node:fs";
import { withFileMutationQueue } from "@knightcodeai/cli/kit";
const log = (x: unknown) => appendFileSync(process.env.PROBE_FILE!, JSON.stringify(x) + "\\n");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export default (kc: any) => {
  kc.registerMcpServer("probe-server", { command: "probe-never-started", enabled: false });
  kc.on("model_select", (e: any) => log({ ev: "model_select", model: e.model.id, previous: e.previousModel?.id, source: e.source }));
  kc.on("thinking_level_select", (e: any) => log({ ev: "thinking_level_select", level: e.level, previous: e.previousLevel }));
  kc.on("session_before_fork", (e: any) => log({ ev: "session_before_fork", entryId: e.entryId }));
  kc.registerCommand("probe", { description: "probe", handler: async (_args: string, ctx: any) => {
    const before = ctx.sessionManager.getBranch().length;
    await ctx.sendUserMessage("inner question");
    const branch = ctx.sessionManager.getBranch();
    const last = branch.at(-1);
    const order: string[] = [];
    const file = process.env.PROBE_FILE + ".target";
    await Promise.all([
      withFileMutationQueue(file, async () => { order.push("a:start"); await sleep(60); order.push("a:end"); }),
      withFileMutationQueue(file, async () => { order.push("b:start"); order.push("b:end"); }),
    ]);
    const stream = ctx.modelRegistry.streamSimple(ctx.model, [{ role: "user", content: "side question", timestamp: Date.now() }]);
    let deltas = 0;
    for await (const event of stream) if (event.type === "text_delta") deltas++;
    const side = await stream.result();
    log({
      ev: "probe",
      grew: branch.length - before,
      lastRole: last?.message?.role,
      lastText: last?.message?.content?.[0]?.text,
      idle: ctx.isIdle(),
      usage: ctx.getContextUsage(),
      systemPrompt: ctx.getSystemPrompt(),
      trusted: ctx.isProjectTrusted(),
      mcp: kc.getMcpServers().map((s: any) => ({ name: s.name, owner: s.owner })),
      order,
      side: side.content.map((c: any) => c.text).join(""),
      deltas,
    });
  } });
};`;

describe("knightcode --mode rpc: API contracts with a local model", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-api-contracts-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  const lastUser = (request: RecordedRequest) =>
    JSON.stringify(request.body.messages.filter((m: { role: string }) => m.role === "user").at(-1)?.content);

  it("holds each promise through one process", async () => {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-local",
      models: [
        { id: "m", contextWindow: 32_000, maxTokens: 1024, reasoning: true },
        { id: "m2", contextWindow: 16_000, maxTokens: 1024 },
      ] as never,
    });
    let n = 0;
    server.respond((request, res) => {
      n++;
      const text = lastUser(request).includes("line\u2028sep") ? "echo\u2028back" : `answer ${n}`;
      return writeSse(res, textStream(text, [100 * n, 10]));
    });
    const probeFile = join(tmp.path, "probe.jsonl");
    const ext = tmp.write("probe.ts", PROBE);
    const child = spawn(
      process.execPath,
      [
        cliBin,
        "--mode",
        "rpc",
        "--provider",
        "local",
        "--model",
        "m",
        "--thinking",
        "high",
        "--no-approve",
        "-e",
        ext,
      ],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir, PROBE_FILE: probeFile } },
    );
    const rpc = new RpcProcess(child);
    try {
      const settledCount = () => rpc.records.filter((r) => r.type === "agent_settled").length;
      const settle = async (count: number) => rpc.waitFor(() => settledCount() >= count, 20_000);

      await rpc.request("1", "prompt", { message: "first" });
      await settle(1);
      // --thinking high reaches a reasoning model's request.
      expect(server.requests[0]!.body.reasoning_effort).to.equal("high");

      // The command's awaited sendUserMessage() resolves once its run settled.
      expect((await rpc.request("2", "prompt", { message: "/probe" }, 30_000)).success).to.equal(true);
      await rpc.waitFor(() => readFileSync(probeFile, "utf8").includes('"ev":"probe"'), 20_000);
      const probe = JSON.parse(
        readFileSync(probeFile, "utf8")
          .trim()
          .split("\n")
          .find((l) => l.includes('"ev":"probe"'))!,
      );
      expect(probe.grew).to.be.at.least(2);
      expect(probe.lastRole).to.equal("assistant");
      expect(probe.lastText).to.equal("answer 2");
      // getContextUsage(): the last answer's usage (input 200 + output 10) against the window.
      expect(probe.usage).to.deep.include({ tokens: 210, contextWindow: 32_000 });
      expect(probe.systemPrompt).to.contain("KnightCode").and.contain(tmp.path);
      expect(probe.trusted).to.equal(false);
      expect(probe.mcp).to.deep.include({ name: "probe-server", owner: `cli:${ext}` });
      expect(probe.order).to.deep.equal(["a:start", "a:end", "b:start", "b:end"]);
      expect(probe.side).to.equal("answer 3");
      expect(probe.deltas).to.be.greaterThan(0);
      expect(lastUser(server.requests[2]!)).to.contain("side question");

      await rpc.request("3", "set_thinking_level", { level: "low" });
      const model = await rpc.request("4", "set_model", { provider: "local", modelId: "m2" });
      expect(model.success, JSON.stringify(model)).to.equal(true);

      // U+2028 inside a JSON string is text: the line is one command, and the model gets the character.
      rpc.send(`{"id":"5","type":"prompt","message":"line\u2028sep"}`);
      expect((await rpc.response("5")).success).to.equal(true);
      await settle(3);
      expect(lastUser(server.requests.at(-1)!)).to.equal(JSON.stringify("line\u2028sep"));
      const echoed = rpc.records.filter((r) => r.type === "message_end").at(-1)!.message as {
        content: { text: string }[];
      };
      expect(echoed.content[0]!.text).to.equal("echo\u2028back");

      // Usage adds up over every answer of the session: 100+200+400 input (the side call is not the session's).
      const stats = (await rpc.request("6", "get_session_stats")).data as { tokens: Record<string, number> };
      expect(stats.tokens).to.deep.include({ input: 100 + 200 + 400, output: 30 });

      const entries = (await rpc.request("7", "get_entries")).data as {
        entries: { id: string; type: string }[];
      };
      const firstUser = entries.entries.find((e) => e.type === "message")!;
      expect((await rpc.request("8", "fork", { entryId: firstUser.id })).success).to.equal(true);

      const events = readFileSync(probeFile, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((e) => e.ev !== "probe");
      expect(events).to.deep.include({ ev: "thinking_level_select", level: "low", previous: "high" });
      expect(events).to.deep.include({ ev: "model_select", model: "m2", previous: "m", source: "set" });
      expect(events).to.deep.include({ ev: "session_before_fork", entryId: firstUser.id });
    } finally {
      await rpc.end();
    }
  });
});

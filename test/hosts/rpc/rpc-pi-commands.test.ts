/**
 * pi 1.6's RPC commands with pi's shapes, each through the built `knightcode --mode rpc` as a child process:
 * thinking levels, queue modes, automatic compaction and retries, fork messages, the dispositions of prompts,
 * cycle_model's null and scope, new_session's parent, export_html's `outputPath`.
 */

import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { writeLocalModels } from "../../helpers/local-models.js";
import { type Record_, RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = join(root, "dist", "hosts", "cli", "main.js");

describe("RPC mode: pi's commands", function () {
  this.timeout(30_000);
  const running: RpcProcess[] = [];
  // Registered before useTempDir's: the processes end before their folder goes.
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.end(5_000)));
  });
  const tmp = useTempDir("kc-rpc-pi-");
  const agentDir = () => join(tmp.path, "agent");

  function start(args: string[]): RpcProcess {
    const child = spawn(process.execPath, [bin, "--mode", "rpc", ...args], {
      cwd: tmp.path,
      env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir() },
    });
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }

  function scripted(steps: unknown[], extra: string[] = []): RpcProcess {
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps }));
    return start(["--provider", "scripted", "--script", script, ...extra]);
  }

  /** A models.json provider `local` (never called: these tests only read its models). */
  function localModels(ids: string[]): void {
    writeLocalModels(agentDir(), {
      baseUrl: "http://127.0.0.1:9/v1",
      apiKey: "unused",
      models: ids.map((id) => ({ id, contextWindow: 32_000, maxTokens: 1024 })),
    });
  }

  const settingsFile = () => JSON.parse(readFileSync(join(agentDir(), "settings.json"), "utf8"));
  const assistantEnds = (p: RpcProcess) =>
    p.records.filter((r) => r.type === "message_end" && (r.message as { role: string }).role === "assistant");

  it("lists every thinking level for a reasoning model and cycles through them", async () => {
    const p = scripted([], ["--no-session"]);
    const levels = await p.request("1", "get_available_thinking_levels");
    expect(levels.data).to.deep.equal({ levels: ["off", "minimal", "low", "medium", "high", "xhigh"] });
    expect((await p.request("2", "cycle_thinking_level")).data).to.deep.equal({ level: "minimal" });
    await p.waitFor((r) => r.type === "thinking_level_changed" && r.level === "minimal");
    await p.request("3", "set_thinking_level", { level: "xhigh" });
    expect((await p.request("4", "cycle_thinking_level")).data).to.deep.equal({ level: "off" });
    expect(((await p.request("5", "get_state")).data as { thinkingLevel: string }).thinkingLevel).to.equal(
      "off",
    );
  });

  it("offers only off for a model without reasoning, and cycle_thinking_level answers null", async () => {
    localModels(["m1"]);
    const p = start(["--provider", "local", "--model", "m1", "--no-session"]);
    expect((await p.request("1", "get_available_thinking_levels")).data).to.deep.equal({ levels: ["off"] });
    const cycled = await p.request("2", "cycle_thinking_level");
    expect(cycled).to.deep.include({ success: true, data: null });
    // As pi, a level the model does not take becomes the nearest it does.
    expect((await p.request("3", "set_thinking_level", { level: "high" })).success).to.equal(true);
    expect(((await p.request("4", "get_state")).data as { thinkingLevel: string }).thinkingLevel).to.equal(
      "off",
    );
  });

  it("set_model to a model without reasoning brings the thinking level down to off", async () => {
    localModels(["m1"]);
    const p = scripted([], ["--no-session"]);
    await p.request("1", "set_thinking_level", { level: "high" });
    expect(((await p.request("2", "get_state")).data as { thinkingLevel: string }).thinkingLevel).to.equal(
      "high",
    );
    expect((await p.request("3", "set_model", { provider: "local", modelId: "m1" })).success).to.equal(true);
    const state = (await p.request("4", "get_state")).data as {
      thinkingLevel: string;
      model: { id: string };
    };
    expect(state).to.deep.include({ thinkingLevel: "off" });
    expect(state.model.id).to.equal("m1");
  });

  for (const [command, queue] of [
    ["set_steering_mode", "steer"],
    ["set_follow_up_mode", "follow_up"],
  ] as const) {
    it(`${command} one-at-a-time delivers one queued message per turn, all of them at once otherwise`, async () => {
      const turns = async (mode: "all" | "one-at-a-time") => {
        const p = scripted(
          [{ text: "working on it", chunkDelayMs: 700 }, { text: "a" }, { text: "b" }, { text: "c" }],
          ["--no-session"],
        );
        expect((await p.request("m", command, { mode })).success).to.equal(true);
        const key = command === "set_steering_mode" ? "steeringMode" : "followUpMode";
        expect(((await p.request("s", "get_state")).data as Record<string, unknown>)[key]).to.equal(mode);
        await p.request("1", "prompt", { message: "go" });
        await p.waitFor((r) => r.type === "message_update");
        expect((await p.request("2", queue, { message: "first" })).data).to.deep.equal({
          disposition: "queued",
        });
        expect((await p.request("3", queue, { message: "second" })).data).to.deep.equal({
          disposition: "queued",
        });
        await p.waitFor((r) => r.type === "agent_settled");
        const count = assistantEnds(p).length;
        await p.end();
        running.splice(running.indexOf(p), 1);
        return count;
      };
      expect(await turns("one-at-a-time")).to.equal(3);
      expect(settingsFile()[command === "set_steering_mode" ? "steeringMode" : "followUpMode"]).to.equal(
        "one-at-a-time",
      );
      expect(await turns("all")).to.equal(2);
    });
  }

  it("rejects a queue mode pi does not have", async () => {
    const p = scripted([], ["--no-session"]);
    const bad = await p.request("1", "set_steering_mode", { mode: "some" });
    expect(bad.success).to.equal(false);
    expect(String(bad.error)).to.contain("/mode");
  });

  it("set_auto_compaction saves compaction.enabled and get_state reports it in the next process too", async () => {
    const p = scripted([], ["--no-session"]);
    expect(
      ((await p.request("1", "get_state")).data as Record<string, unknown>).autoCompactionEnabled,
    ).to.equal(true);
    expect((await p.request("2", "set_auto_compaction", { enabled: false })).success).to.equal(true);
    expect(
      ((await p.request("3", "get_state")).data as Record<string, unknown>).autoCompactionEnabled,
    ).to.equal(false);
    expect(settingsFile().compaction).to.deep.equal({ enabled: false });
    const next = scripted([], ["--no-session"]);
    expect(
      ((await next.request("1", "get_state")).data as Record<string, unknown>).autoCompactionEnabled,
    ).to.equal(false);
    const bad = await next.request("2", "set_auto_compaction", { enabled: "no" });
    expect(bad.success).to.equal(false);
  });

  it("set_auto_retry false stops retries of a retryable failure", async () => {
    tmp.write("agent/settings.json", JSON.stringify({ retry: { baseDelayMs: 1, maxDelayMs: 1 } }));
    const fail = { error: { kind: "overloaded" } };
    const p = scripted([fail, fail, { text: "third time" }], ["--no-session"]);
    await p.request("1", "set_auto_retry", { enabled: false });
    expect(settingsFile().retry).to.deep.equal({ baseDelayMs: 1, maxDelayMs: 1, enabled: false });
    await p.request("2", "prompt", { message: "go" });
    await p.waitFor((r) => r.type === "agent_settled");
    expect(p.records.some((r) => r.type === "auto_retry_start")).to.equal(false);
    expect(assistantEnds(p).map((r) => (r.message as { stopReason: string }).stopReason)).to.deep.equal([
      "error",
    ]);
    // Turned back on, the same failure is retried.
    await p.request("3", "set_auto_retry", { enabled: true });
    await p.request("4", "prompt", { message: "again", streamingBehavior: "followUp" });
    await p.waitFor((r) => r.type === "auto_retry_end");
    expect(p.records.filter((r) => r.type === "auto_retry_start")).to.have.length(1);
  });

  it("abort_retry cancels a retry waiting for its delay; the run ends with the failure", async () => {
    tmp.write("agent/settings.json", JSON.stringify({ retry: { baseDelayMs: 20_000, maxDelayMs: 20_000 } }));
    const p = scripted(
      [{ error: { kind: "overloaded", message: "busy" } }, { text: "never" }],
      ["--no-session"],
    );
    await p.request("1", "prompt", { message: "go" });
    await p.waitFor((r) => r.type === "auto_retry_start");
    const started = Date.now();
    expect((await p.request("2", "abort_retry")).success).to.equal(true);
    const end = await p.waitFor((r) => r.type === "auto_retry_end", 5_000);
    expect(end).to.deep.include({ success: false, finalError: "Retry cancelled" });
    const settled = await p.waitFor((r) => r.type === "agent_settled", 5_000);
    expect(settled.aborted).to.equal(false);
    expect(Date.now() - started).to.be.below(5_000);
    expect(((await p.request("3", "get_last_assistant_text")).data as { text: string }).text).to.equal("");
  });

  it("get_fork_messages lists the user messages and fork starts before one, handing back its text", async () => {
    const p = scripted([{ text: "one" }, { text: "two" }]);
    await p.request("1", "prompt", { message: "first question" });
    await p.waitFor((r) => r.type === "agent_settled");
    await p.request("2", "prompt", { message: "second question" });
    await p.waitFor(() => p.records.filter((r) => r.type === "agent_settled").length === 2);
    const list = (await p.request("3", "get_fork_messages")).data as {
      messages: { entryId: string; text: string }[];
    };
    expect(list.messages.map((m) => m.text)).to.deep.equal(["first question", "second question"]);
    const assistantEntry = (
      (await p.request("4", "get_entries")).data as { entries: { id: string; type: string; message?: any }[] }
    ).entries.find((e) => e.type === "message" && e.message.role === "assistant")!;
    const refused = await p.request("5", "fork", { entryId: assistantEntry.id });
    expect(refused.success).to.equal(false);
    expect(String(refused.error)).to.contain("not a user message");
    const forked = await p.request("6", "fork", { entryId: list.messages[1]!.entryId });
    expect(forked.data).to.deep.equal({ text: "second question", cancelled: false });
    const messages = (await p.request("7", "get_messages")).data as { messages: { role: string }[] };
    expect(messages.messages.map((m) => m.role)).to.deep.equal(["user", "assistant"]);
  });

  it("answers prompt with its disposition: started, queued, or handled by a command", async () => {
    const ext = tmp.write(
      "cmd.ts",
      `export default (kc: any) => kc.registerCommand("ping", { description: "ping", handler: async () => {} });`,
    );
    const p = scripted(
      [{ text: "slow answer", chunkDelayMs: 1000 }, { text: "later" }],
      ["--no-session", "-e", ext],
    );
    expect((await p.request("1", "prompt", { message: "go" })).data).to.deep.equal({
      disposition: "started",
    });
    await p.waitFor((r) => r.type === "message_update");
    const queued = await p.request("2", "prompt", { message: "then this", streamingBehavior: "followUp" });
    expect(queued.data).to.deep.equal({ disposition: "queued" });
    expect((await p.request("3", "prompt", { message: "/ping" })).data).to.deep.equal({
      disposition: "handled",
    });
    await p.waitFor((r) => r.type === "agent_settled");
  });

  it("cycle_model answers null with nothing to move to, and moves within --models (isScoped)", async () => {
    localModels(["m1", "m2", "other"]);
    const one = start(["--provider", "local", "--model", "m1", "--models", "local/m1", "--no-session"]);
    expect(await one.request("1", "cycle_model")).to.deep.include({ success: true, data: null });
    const scoped = start(["--provider", "local", "--model", "m1", "--models", "local/m*", "--no-session"]);
    const moved = (await scoped.request("1", "cycle_model")).data as {
      model: { id: string };
      isScoped: boolean;
      thinkingLevel: string;
    };
    expect(moved.model.id).to.equal("m2");
    expect(moved.isScoped).to.equal(true);
    expect(moved.thinkingLevel).to.equal("off");
    const back = (await scoped.request("2", "cycle_model")).data as { model: { id: string } };
    expect(back.model.id).to.equal("m1");
    const unscoped = start(["--provider", "local", "--model", "m1", "--no-session"]);
    expect(((await unscoped.request("1", "cycle_model")).data as { isScoped: boolean }).isScoped).to.equal(
      false,
    );
    const nothing = start(["--provider", "local", "--model", "m1", "--models", "nomatch", "--no-session"]);
    await nothing.request("1", "get_state");
    expect(nothing.stderr).to.contain('no available model matches "nomatch"');
  });

  it("new_session records parentSession; export_html takes pi's outputPath; get_session_stats has tokens.total", async () => {
    const p = scripted([{ text: "hello" }]);
    await p.request("1", "prompt", { message: "hi" });
    await p.waitFor((r) => r.type === "agent_settled");
    const stats = (await p.request("2", "get_session_stats")).data as { tokens: Record<string, number> };
    expect(stats.tokens.total).to.equal(stats.tokens.totalTokens);
    expect(stats.tokens.total).to.be.above(0);
    const out = join(tmp.path, "out.html");
    const exported = await p.request("3", "export_html", { outputPath: out });
    expect(exported.data).to.deep.equal({ path: out });
    expect(readFileSync(out, "utf8")).to.contain("hello");
    const clash = await p.request("3b", "export_html", { outputPath: out, path: join(tmp.path, "x.html") });
    expect(clash.success).to.equal(false);
    const parent = ((await p.request("4", "get_state")).data as { sessionFile: string }).sessionFile;
    expect((await p.request("5", "new_session", { parentSession: parent })).data).to.deep.equal({
      cancelled: false,
    });
    const fresh = ((await p.request("6", "get_state")).data as { sessionFile: string }).sessionFile;
    expect(fresh).to.not.equal(parent);
    // The header is written with the first entry; a name is one.
    await p.request("7", "set_session_name", { name: "child" });
    await p.waitFor((r: Record_) => r.type === "session_info_changed");
    expect(existsSync(fresh)).to.equal(true);
    const header = JSON.parse(readFileSync(fresh, "utf8").split("\n")[0]!);
    expect(header.parentSession).to.equal(parent);
  });
});

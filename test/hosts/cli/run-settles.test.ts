/**
 * A run always settles, and never with a false success (issue 20), through the built CLI with small fixture
 * extensions: an extension factory that never finishes stops the start with exit 1, naming it; a tool or `tool_call` handler whose promise never settles ends a print or JSON run with exit 1 and a
 * message naming it; an RPC abort settles a run whose tool ignores its signal, and its late result is dropped;
 * gate handlers have a time limit; `turn_end` continuations are capped; the same successful call repeated stops the
 * run; an interval started at run time does not keep a finished print run alive; a huge tool result is capped.
 */

import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { MAX_CONTINUATIONS } from "../../../plugins/agent-loop/agent-run.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type Wire = { type: string; [k: string]: unknown };

/** A tool whose promise never settles and that keeps nothing else alive. */
const HANGING_TOOL = `export default (kc: any) => kc.registerTool({
  name: "hang", label: "hang", description: "never answers",
  parameters: { type: "object", properties: {} },
  execute: () => new Promise(() => {}),
});`;

/** A tool_call handler whose promise never settles, and a tool it guards. */
const HANGING_GATE = `export default (kc: any) => {
  kc.registerTool({ name: "fine", label: "fine", description: "answers", parameters: { type: "object", properties: {} },
    execute: async () => ({ content: [{ type: "text", text: "fine" }], details: undefined }) });
  kc.on("tool_call", () => new Promise(() => {}));
};`;

const callTool = (name: string, args: Record<string, unknown> = {}) => ({
  toolCalls: [{ name, arguments: args }],
});

describe("knightcode: a run settles, and not with a false success", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-settle-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });
  const script = (steps: unknown[]) => tmp.write("script.json", JSON.stringify({ steps }));
  const cli = (args: string[], timeoutMs = 30_000) =>
    runCli(["--provider", "scripted", "--no-session", ...args], { cwd: tmp.path, env: env(), timeoutMs });
  const records = (stdout: string) =>
    stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Wire);
  const settings = (values: object) => tmp.write("agent/settings.json", JSON.stringify(values));

  it("ends a print run whose tool never settles with exit 1, naming the tool and its extension", async () => {
    const ext = tmp.write("hang.ts", HANGING_TOOL);
    const file = script([callTool("hang"), { text: "never reached" }]);
    const { code, stdout, stderr } = await cli(["-e", ext, "--script", file, "-p", "go"]);
    expect(code, stderr).to.equal(1);
    expect(stdout).to.equal("");
    expect(stderr).to.contain('the tool "hang" of cli:');
    expect(stderr).to.contain("hang.ts");
    expect(stderr).to.contain("never settled");
  });

  it("ends a print or JSON run whose extension factory never settles with exit 1, naming the extension", async () => {
    // The factory's promise waits on nothing: Node's event loop emptied mid-start and the process exited 0,
    // with no answer and nothing on stderr.
    const ext = tmp.write("never-loads.ts", `export default (kc: any) => new Promise(() => {});`);
    const file = script([{ text: "never reached" }]);
    for (const mode of [["-p"], ["--mode", "json"]]) {
      const { code, stdout, stderr } = await cli(["-e", ext, "--script", file, ...mode, "go"]);
      expect(code, `${mode.join(" ")}: ${stderr}`).to.equal(1);
      expect(stdout).to.equal("");
      expect(stderr).to.match(/Extension \S*never-loads\.ts failed to load: it never finished loading/);
      expect(stderr).to.contain("never settled");
    }
  });

  it("ends a print run whose session_start handler never settles with exit 1, naming the handler", async () => {
    const ext = tmp.write(
      "never-starts.ts",
      `export default (kc: any) => kc.on("session_start", () => new Promise(() => {}));`,
    );
    const file = script([{ text: "never reached" }]);
    const { code, stdout, stderr } = await cli(["-e", ext, "--script", file, "-p", "go"]);
    expect(code, stderr).to.equal(1);
    expect(stdout).to.equal("");
    expect(stderr).to.match(
      /The session cannot start: it waits for the session_start handler of cli:\S*never-starts\.ts/,
    );
  });

  it("stops a start whose extension factory takes longer than extensionLoad.timeoutMs", async () => {
    // The limit holds for every factory, the built-ins' too: 2 s keeps a loaded machine's built-ins inside it.
    settings({ extensionLoad: { timeoutMs: 2000 } });
    const ext = tmp.write(
      "slow-load.ts",
      `export default (kc: any) => new Promise((r) => setTimeout(r, 60_000));`,
    );
    const file = script([{ text: "never reached" }]);
    const started = Date.now();
    const { code, stdout, stderr } = await cli(["-e", ext, "--script", file, "-p", "go"]);
    expect(code, stderr).to.equal(1);
    expect(Date.now() - started).to.be.below(20_000);
    expect(stdout).to.equal("");
    expect(stderr).to.match(/Extension \S*slow-load\.ts failed to load: it never finished loading/);
    expect(stderr).to.contain("did not settle within 2 s (setting extensionLoad.timeoutMs)");
  });

  it("ends a JSON run whose tool_call handler never settles with exit 1, naming the handler", async () => {
    const ext = tmp.write("gate.ts", HANGING_GATE);
    const file = script([callTool("fine"), { text: "never reached" }]);
    const { code, stdout } = await cli(["-e", ext, "--script", file, "--mode", "json", "go"]);
    expect(code).to.equal(1);
    const wire = records(stdout);
    const last = wire.filter((r) => r.type === "message_end").at(-1)!.message as Record<string, unknown>;
    expect(last).to.include({ role: "assistant", stopReason: "error" });
    expect(String(last.errorMessage)).to.match(/the tool_call handler of cli:\S*gate\.ts/);
    expect(wire.at(-1)).to.deep.equal({ type: "agent_settled", aborted: false });
  });

  it("ends a print run whose input handler never settles with exit 1, naming the handler", async () => {
    const ext = tmp.write(
      "input.ts",
      `export default (kc: any) => kc.on("input", () => new Promise(() => {}));`,
    );
    const file = script([{ text: "never reached" }]);
    const { code, stdout, stderr } = await cli(["-e", ext, "--script", file, "-p", "go"]);
    expect(code).to.equal(1);
    expect(stdout).to.equal("");
    expect(stderr).to.match(
      /The prompt could not be taken: it waits for the input handler of cli:\S*input\.ts/,
    );
  });

  it("blocks a call whose tool_call handler does not answer within gates.timeoutMs, blaming it", async () => {
    // The limit holds for every handler, the built-ins' too: 2 s keeps a loaded machine's built-ins inside it.
    settings({ gates: { timeoutMs: 2000 } });
    const ext = tmp.write(
      "slow-gate.ts",
      `export default (kc: any) => {
        kc.registerTool({ name: "fine", label: "fine", description: "answers", parameters: { type: "object", properties: {} },
          execute: async () => ({ content: [{ type: "text", text: "ran" }], details: undefined }) });
        kc.on("tool_call", () => new Promise((r) => setTimeout(r, 60_000)));
      };`,
    );
    const file = script([callTool("fine"), { text: "done" }]);
    const started = Date.now();
    const { code, stdout } = await cli(["-e", ext, "--script", file, "--mode", "json", "go"]);
    expect(code).to.equal(0);
    expect(Date.now() - started).to.be.below(20_000);
    const end = records(stdout).find((r) => r.type === "tool_execution_end")!;
    expect(end.isError).to.equal(true);
    const text = (end.result as { content: { text: string }[] }).content[0]!.text;
    expect(text).to.match(/Tool call blocked: the tool_call handler of cli:\S*slow-gate\.ts failed/);
    expect(text).to.contain("did not answer within 2000 ms");
  });

  it("blocks an RPC bash command whose user_bash handler does not answer within gates.timeoutMs", async () => {
    settings({ gates: { timeoutMs: 2000 } });
    const ext = tmp.write(
      "slow-bash.ts",
      `export default (kc: any) => kc.on("user_bash", () => new Promise((r) => setTimeout(r, 60_000)));`,
    );
    const rpc = new RpcProcess(
      spawn(
        process.execPath,
        [cliBin, "--mode", "rpc", "-e", ext, "--provider", "scripted", "--no-session"],
        {
          cwd: tmp.path,
          env: { ...process.env, ...env() },
        },
      ),
    );
    try {
      const response = await rpc.request("b", "bash", { command: "echo should-not-run" });
      expect(response.success, JSON.stringify(response)).to.equal(true);
      const data = response.data as { output: string; cancelled: boolean };
      expect(data.cancelled).to.equal(true);
      expect(data.output).to.match(/Command blocked by extension cli:\S*slow-bash\.ts/);
      expect(data.output).to.contain("did not answer within 2000 ms");
      expect(await rpc.end()).to.equal(0);
    } finally {
      rpc.kill();
    }
  });

  it("settles an RPC run on abort while its tool ignores the signal, and drops the late result", async () => {
    const ext = tmp.write(
      "stubborn.ts",
      `export default (kc: any) => kc.registerTool({
        name: "stubborn", label: "stubborn", description: "ignores aborts", parameters: { type: "object", properties: {} },
        execute: () => new Promise((r) => setTimeout(() => r({ content: [{ type: "text", text: "LATE RESULT" }], details: undefined }), 5_000)),
      });`,
    );
    const file = script([callTool("stubborn"), { text: "never reached" }]);
    const rpc = new RpcProcess(
      spawn(
        process.execPath,
        [cliBin, "--mode", "rpc", "-e", ext, "--provider", "scripted", "--script", file, "--no-session"],
        { cwd: tmp.path, env: { ...process.env, ...env() } },
      ),
    );
    try {
      expect((await rpc.request("p", "prompt", { message: "go" })).success).to.equal(true);
      await rpc.waitFor((r) => r.type === "tool_execution_start");
      const aborted = Date.now();
      expect((await rpc.request("a", "abort")).success).to.equal(true);
      const settled = await rpc.waitFor((r) => r.type === "agent_settled", 10_000);
      expect(settled.aborted).to.equal(true);
      expect(Date.now() - aborted).to.be.below(4_500);
      const end = rpc.records.find((r) => r.type === "tool_execution_end")!;
      expect(end.isError).to.equal(true);
      expect(JSON.stringify(end.result)).to.contain("Tool call aborted");
      // The tool answers 5 s after it started: by then its call is recorded as aborted, and the answer is dropped.
      await new Promise((r) => setTimeout(r, 5_500 - (Date.now() - aborted)));
      const messages = (await rpc.request("m", "get_messages")).data as { messages: unknown[] };
      expect(JSON.stringify(messages)).to.not.contain("LATE RESULT");
      expect(JSON.stringify(rpc.records)).to.not.contain("LATE RESULT");
      expect(await rpc.end()).to.equal(0);
    } finally {
      rpc.kill();
    }
  });

  it("settles an RPC run on abort while a tool_call handler never answers", async () => {
    const ext = tmp.write("gate.ts", HANGING_GATE);
    const file = script([callTool("fine"), { text: "never reached" }]);
    const rpc = new RpcProcess(
      spawn(
        process.execPath,
        [cliBin, "--mode", "rpc", "-e", ext, "--provider", "scripted", "--script", file, "--no-session"],
        { cwd: tmp.path, env: { ...process.env, ...env() } },
      ),
    );
    try {
      await rpc.request("p", "prompt", { message: "go" });
      await rpc.waitFor((r) => r.type === "tool_execution_start");
      await rpc.request("a", "abort");
      const settled = await rpc.waitFor((r) => r.type === "agent_settled", 10_000);
      expect(settled.aborted).to.equal(true);
      const end = rpc.records.find((r) => r.type === "tool_execution_end")!;
      expect(JSON.stringify(end.result)).to.contain("tool_call handlers had not answered");
      expect(await rpc.end()).to.equal(0);
    } finally {
      rpc.kill();
    }
  });

  it("keeps two prompts sent together in the session, with the reason, when their run cannot start", async () => {
    // A before_agent_start handler leaves the system prompt options unusable: the run fails before it takes its
    // input. Both prompts had been answered `success: true`, and the session stayed empty, without a word.
    const ext = tmp.write(
      "break-start.ts",
      `export default (kc: any) => kc.on("before_agent_start", (e: any) => { e.systemPromptOptions.tools = 42; });`,
    );
    const file = script([{ text: "never reached" }]);
    const rpc = new RpcProcess(
      spawn(
        process.execPath,
        [cliBin, "--mode", "rpc", "-e", ext, "--provider", "scripted", "--script", file, "--no-session"],
        { cwd: tmp.path, env: { ...process.env, ...env() } },
      ),
    );
    try {
      rpc.send({ id: "a", type: "prompt", message: "one" });
      rpc.send({ id: "b", type: "prompt", message: "two" });
      expect((await rpc.response("a")).success).to.equal(true);
      expect((await rpc.response("b")).success).to.equal(true);
      await rpc.waitFor((r) => r.type === "agent_settled");
      const { messages } = (await rpc.request("m", "get_messages")).data as {
        messages: { role: string; content: unknown; errorMessage?: string }[];
      };
      expect(messages.map((m) => [m.role, typeof m.content === "string" ? m.content : "…"])).to.deep.equal([
        ["user", "one"],
        ["user", "two"],
        ["assistant", "…"],
      ]);
      expect(messages[2]!.errorMessage).to.match(/^The run could not start: /);
      expect(await rpc.end()).to.equal(0);
    } finally {
      rpc.kill();
    }

    const print = await cli(["-e", ext, "--script", file, "-p", "go"]);
    expect(print.code).to.equal(1);
    expect(print.stderr).to.contain("The run could not start: ");
  });

  it("delivers a prompt queued with streamingBehavior while the run was settling, as its success promised", async () => {
    // agent_end handlers run after the turn loop's last look at the queues: a follow-up accepted then was left
    // in its queue, answered `success: true`, and never sent.
    const ext = tmp.write(
      "slow-end.ts",
      `export default (kc: any) => kc.on("agent_end", () => new Promise((r) => setTimeout(r, 1_000)));`,
    );
    const file = script([{ text: "first answer" }, { text: "second answer" }]);
    for (const streamingBehavior of ["followUp", "steer"]) {
      const rpc = new RpcProcess(
        spawn(
          process.execPath,
          [cliBin, "--mode", "rpc", "-e", ext, "--provider", "scripted", "--script", file, "--no-session"],
          { cwd: tmp.path, env: { ...process.env, ...env() } },
        ),
      );
      try {
        expect((await rpc.request("a", "prompt", { message: "one" })).success).to.equal(true);
        await rpc.waitFor((r) => r.type === "turn_end");
        const second = await rpc.request("b", "prompt", { message: "two", streamingBehavior });
        expect(second.success, streamingBehavior).to.equal(true);
        await rpc.waitFor((r) => r.type === "agent_settled");
        const messages = (await rpc.request("m", "get_messages")).data as {
          messages: { role: string; content: unknown }[];
        };
        expect(
          messages.messages.map((m) => [m.role, typeof m.content === "string" ? m.content : "…"]),
          streamingBehavior,
        ).to.deep.equal([
          ["user", "one"],
          ["assistant", "…"],
          ["user", "two"],
          ["assistant", "…"],
        ]);
        expect(rpc.records.filter((r) => r.type === "agent_settled")).to.have.length(1);
        expect(await rpc.end()).to.equal(0);
      } finally {
        rpc.kill();
      }
    }
  });

  it("caps the turns a turn_end handler that always continues can ask for", async () => {
    const ext = tmp.write(
      "again.ts",
      `export default (kc: any) => kc.on("turn_end", () => ({ continue: true }));`,
    );
    const file = script(Array.from({ length: MAX_CONTINUATIONS * 3 }, (_, i) => ({ text: `answer ${i}` })));
    const { code, stdout } = await cli(["-e", ext, "--script", file, "--mode", "json", "go"]);
    expect(code).to.equal(0);
    const wire = records(stdout);
    expect(wire.filter((r) => r.type === "turn_start")).to.have.length(MAX_CONTINUATIONS + 1);
    expect(wire.filter((r) => r.type === "agent_start")).to.have.length(1);
    expect(wire.at(-1)).to.deep.equal({ type: "agent_settled", aborted: false });
  });

  it("stops a print run whose model repeats the same successful call, with exit 1", async () => {
    tmp.write("notes.txt", "remember the milk\n");
    const reading = callTool("read", { path: "notes.txt" });
    const file = script(Array.from({ length: 20 }, () => reading));
    const { code, stderr } = await cli(["--script", file, "-p", "read my notes"]);
    expect(code).to.equal(1);
    expect(stderr).to.contain(
      'The same tool call was made 3 times in a row with the same arguments: read {"path":"notes.txt"}',
    );
    expect(stderr).to.contain("doomLoop");

    const json = await cli(["--script", file, "--mode", "json", "read my notes"]);
    expect(json.code).to.equal(1);
    const ends = records(json.stdout).filter((r) => r.type === "tool_execution_end");
    expect(ends).to.have.length(3);
    expect(ends.every((r) => r.isError === false)).to.equal(true);
  });

  it("asks through the RPC client's UI when the model repeats a successful call", async () => {
    tmp.write("notes.txt", "remember the milk\n");
    const reading = callTool("read", { path: "notes.txt" });
    const file = script(Array.from({ length: 20 }, () => reading));
    const rpc = new RpcProcess(
      spawn(
        process.execPath,
        [cliBin, "--mode", "rpc", "--provider", "scripted", "--script", file, "--no-session"],
        {
          cwd: tmp.path,
          env: { ...process.env, ...env() },
        },
      ),
    );
    try {
      await rpc.request("p", "prompt", { message: "read my notes" });
      const question = await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "confirm");
      expect(String(question.title)).to.contain("keeps repeating the same tool call");
      expect(String(question.message)).to.contain("made 3 times in a row");
      rpc.send({ type: "extension_ui_response", id: question.id, confirmed: false });
      await rpc.waitFor((r) => r.type === "agent_settled");
      const last = rpc.records.filter((r) => r.type === "message_end").at(-1)!.message as Record<
        string,
        unknown
      >;
      expect(String(last.errorMessage)).to.contain("Stopped at your request");
      expect(await rpc.end()).to.equal(0);
    } finally {
      rpc.kill();
    }
  });

  it("ends a print run although a tool left an interval running", async () => {
    const ext = tmp.write(
      "ticker.ts",
      `export default (kc: any) => {
        kc.on("session_start", () => { setInterval(() => {}, 50); });
        kc.registerTool({ name: "tick", label: "tick", description: "starts a ticker", parameters: { type: "object", properties: {} },
          execute: async () => { setInterval(() => {}, 50); return { content: [{ type: "text", text: "ticking" }], details: undefined }; } });
      };`,
    );
    const file = script([callTool("tick"), { text: "the answer" }]);
    const { code, stdout, stderr } = await cli(["-e", ext, "--script", file, "-p", "go"], 20_000);
    expect(code, stderr).to.equal(0);
    expect(stdout).to.equal("the answer\n");
  });

  it("caps a 20 MB tool result at toolResults.maxBytes and keeps the whole text in a temp file", async () => {
    const ext = tmp.write(
      "huge.ts",
      `export default (kc: any) => kc.registerTool({
        name: "huge", label: "huge", description: "a lot of text", parameters: { type: "object", properties: {} },
        execute: async () => ({ content: [{ type: "text", text: ("0123456789".repeat(10) + "\\n").repeat(200_000) }], details: undefined }),
      });`,
    );
    const file = script([
      callTool("huge"),
      { text: "seen", expect: { lastToolResult: { toolName: "huge", textContains: "[Output truncated" } } },
    ]);
    const { code, stdout, stderr } = await cli(["-e", ext, "--script", file, "--mode", "json", "go"]);
    expect(code, stderr).to.equal(0);
    const end = records(stdout).find((r) => r.type === "tool_execution_end")!;
    const text = (end.result as { content: { text: string }[] }).content[0]!.text;
    expect(Buffer.byteLength(text)).to.be.at.most(102_400);
    expect(text.startsWith("0123456789")).to.equal(true);
    const path = /The full output is in (\S+)\]/.exec(text)?.[1];
    expect(path, text.slice(-400)).to.be.a("string");
    try {
      expect(existsSync(path!)).to.equal(true);
      expect(statSync(path!).size).to.equal(101 * 200_000);
      expect(readFileSync(path!, "utf8").endsWith("0123456789\n")).to.equal(true);
    } finally {
      rmSync(path!, { force: true });
    }
    expect(stdout.length).to.be.below(1_000_000);
  });
});

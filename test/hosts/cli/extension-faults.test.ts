/**
 * An extension that misbehaves never takes the process down (issue 20, "The process dies"): each fault runs a small
 * fixture extension in the built CLI, as a user would meet it, with the scripted provider. The fault is blamed on
 * the extension, isolated, and the run goes on to its answer.
 */

import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin, runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type Wire = { type: string; [k: string]: unknown };

const TOOL = (name: string, body: string) => `
import { Type } from "@sinclair/typebox";
export default function (knightcode) {
  knightcode.registerTool({
    name: "${name}", label: "${name}", description: "a fixture tool", parameters: Type.Object({}),
    async execute() { ${body} },
  });
}
`;

describe("knightcode: a misbehaving extension does not take the process down", () => {
  const tmp = useTempDir("kc-faults-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });
  const script = (steps: unknown[]) => tmp.write("script.json", JSON.stringify({ steps }));
  const callThenAnswer = (tool: string) =>
    script([{ toolCalls: [{ name: tool, arguments: {} }] }, { text: "after the tool" }]);
  const cli = (args: string[]) => runCli(["--provider", "scripted", ...args], { cwd: tmp.path, env: env() });
  const records = (stdout: string) =>
    stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Wire);
  const toolEnd = (wire: Wire[]) => wire.find((r) => r.type === "tool_execution_end")!;
  const text = (record: Wire) => JSON.stringify(record.result);

  describe("a transform handler whose return has the wrong shape", () => {
    it("blames a context handler that returns messages holding null, skips its result and answers", async () => {
      const ext = tmp.write("ctx.ts", `export default (k) => k.on("context", () => ({ messages: [null] }));`);
      const { code, stdout, stderr } = await cli([
        "-e",
        ext,
        "--script",
        script([{ text: "still here" }]),
        "--no-session",
        "-p",
        "hi",
      ]);
      expect(code, stderr).to.equal(0);
      expect(stdout).to.equal("still here\n");
      expect(stderr).to.contain(
        `cli:${ext} (context): the context handler returned a value of the wrong shape`,
      );
      expect(stderr).to.contain("/messages/0");
      expect(stderr).not.to.contain("reading 'role'");
    });

    it("blames a message_end handler that returns a message without content, and keeps the message", async () => {
      const ext = tmp.write(
        "end.ts",
        `export default (k) => k.on("message_end", (e) => e.message.role === "assistant" ? { message: { role: "assistant" } } : undefined);`,
      );
      const { code, stdout, stderr } = await cli([
        "-e",
        ext,
        "--script",
        script([{ text: "kept whole" }]),
        "--no-session",
        "-p",
        "hi",
      ]);
      expect(code, stderr).to.equal(0);
      expect(stdout).to.equal("kept whole\n");
      expect(stderr).to.contain(
        `cli:${ext} (message_end): the message_end handler returned a value of the wrong shape`,
      );
    });
  });

  describe("a thrown value that cannot be read", () => {
    it("reports an object whose getter throws, thrown by a handler, and the run goes on", async () => {
      const ext = tmp.write(
        "getter.ts",
        `export default (k) => k.on("agent_start", () => { throw { get message() { throw new Error("gotcha"); } }; });`,
      );
      const { code, stdout, stderr } = await cli([
        "-e",
        ext,
        "--script",
        script([{ text: "answered" }]),
        "--no-session",
        "-p",
        "hi",
      ]);
      expect(code, stderr).to.equal(0);
      expect(stdout).to.equal("answered\n");
      expect(stderr).to.contain(
        `cli:${ext} (agent_start): an unreadable object was thrown (reading it failed: gotcha)`,
      );
    });

    it("fails the call of a tool that throws a Proxy whose every trap throws, and the run goes on", async () => {
      const trap = `() => { throw new Error("trapped"); }`;
      const ext = tmp.write(
        "proxy.ts",
        TOOL(
          "haunted",
          `throw new Proxy({}, { get: ${trap}, getPrototypeOf: ${trap}, ownKeys: ${trap}, has: ${trap} });`,
        ),
      );
      const { code, stdout, stderr } = await cli([
        "-e",
        ext,
        "--script",
        callThenAnswer("haunted"),
        "--no-session",
        "--mode",
        "json",
        "go",
      ]);
      expect(code, stderr).to.equal(0);
      const wire = records(stdout);
      expect(toolEnd(wire).isError).to.equal(true);
      expect(text(toolEnd(wire))).to.contain("an unreadable object was thrown");
      expect(wire.at(-1)).to.deep.equal({ type: "agent_settled", aborted: false });
    });
  });

  describe("values JSON cannot write", () => {
    it("writes tool details that are circular and hold a BigInt with replacements, blamed, in a valid session file", async () => {
      const ext = tmp.write(
        "circular.ts",
        TOOL(
          "loop",
          `const details = { count: 12n }; details.self = details;
           knightcode.appendEntry("fixture-state", details);
           return { content: [{ type: "text", text: "looped" }], details };`,
        ),
      );
      const sessions = join(tmp.path, "sessions");
      const { code, stdout, stderr } = await cli([
        "-e",
        ext,
        "--script",
        callThenAnswer("loop"),
        "--session-dir",
        sessions,
        "--mode",
        "json",
        "go",
      ]);
      expect(code, stderr).to.equal(0);
      const wire = records(stdout);
      expect((toolEnd(wire).result as { details: unknown }).details).to.deep.equal({
        count: "12",
        self: "[Circular]",
      });
      expect(wire.at(-1)).to.deep.equal({ type: "agent_settled", aborted: false });
      expect(stderr).to.contain(
        `cli:${ext} (tool loop): the result of tool "loop" cannot be written as JSON`,
      );
      expect(stderr).to.contain('details.self: a circular reference, written as "[Circular]"');
      expect(stderr).to.contain(
        `cli:${ext} (appendEntry): appendEntry was given a value that cannot be written as JSON: data.count: a BigInt`,
      );

      const [file] = readdirSync(sessions, { recursive: true }).filter((f) => String(f).endsWith(".jsonl"));
      const lines = readFileSync(join(sessions, String(file)), "utf8")
        .trimEnd()
        .split("\n");
      const entries = lines.map((line) => JSON.parse(line) as Record<string, any>);
      const state = entries.find((e) => e.customType === "fixture-state");
      expect(state?.data).to.deep.equal({ count: "12", self: "[Circular]" });
      const result = entries.find((e) => e.message?.role === "toolResult");
      expect(result?.message.details).to.deep.equal({ count: "12", self: "[Circular]" });
    });
  });

  describe("faults outside any handler (process-level handlers)", () => {
    it("fails the tool call whose extension's timer throws, blames it, and the run goes on", async function () {
      this.timeout(45_000);
      const ext = tmp.write(
        "timer.ts",
        TOOL(
          "boom",
          `setTimeout(() => { throw new Error("timer went off"); }, 10);
           await new Promise((resolve) => setTimeout(resolve, 30_000));
           return { content: [{ type: "text", text: "too late" }] };`,
        ),
      );
      const started = Date.now();
      const { code, stdout, stderr } = await cli([
        "-e",
        ext,
        "--script",
        callThenAnswer("boom"),
        "--no-session",
        "--mode",
        "json",
        "go",
      ]);
      expect(code, stderr).to.equal(0);
      expect(stderr).to.contain(`cli:${ext} (uncaughtException): timer went off`);
      const wire = records(stdout);
      expect(toolEnd(wire).isError).to.equal(true);
      expect(text(toolEnd(wire))).to.contain(`cli:${ext}, which provides this tool, failed outside the call`);
      const last = wire.filter((r) => r.type === "message_end").at(-1)!.message as { content: unknown };
      expect(JSON.stringify(last.content)).to.contain("after the tool");
      // The call failed when the timer threw, not when the tool would have finished (30 s); the bound leaves room
      // for a slow start on a loaded machine.
      expect(Date.now() - started).to.be.below(15_000);
    });

    it("blames a handler's unhandled promise rejection on its extension, and the run answers", async () => {
      const ext = tmp.write(
        "reject.ts",
        `export default (k) => k.on("agent_start", () => { Promise.reject(new Error("nobody awaited me")); });`,
      );
      const { code, stdout, stderr } = await cli([
        "-e",
        ext,
        "--script",
        script([{ text: "answered anyway" }]),
        "--no-session",
        "-p",
        "hi",
      ]);
      expect(code, stderr).to.equal(0);
      expect(stdout).to.equal("answered anyway\n");
      expect(stderr).to.contain(`cli:${ext} (unhandledRejection): nobody awaited me`);
    });

    it("keeps an idle RPC process serving after a fault no extension explains, reported against unknown", async () => {
      // A string has no stack, so nothing can be blamed; no run is active when it is thrown.
      const ext = tmp.write(
        "stray.ts",
        `export default (k) => k.on("session_start", () => { setTimeout(() => { throw "stray failure"; }, 20); });`,
      );
      const file = script([{ text: "still serving" }]);
      const child = spawn(
        process.execPath,
        [cliBin, "--mode", "rpc", "-e", ext, "--provider", "scripted", "--script", file, "--no-session"],
        { cwd: tmp.path, env: { ...process.env, ...env() } },
      );
      try {
        const wire: Wire[] = [];
        let stderr = "";
        let buffer = "";
        child.stderr.setEncoding("utf8");
        child.stderr.on("data", (chunk: string) => {
          stderr += chunk;
        });
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (chunk: string) => {
          buffer += chunk;
          for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
            wire.push(JSON.parse(buffer.slice(0, i)) as Wire);
            buffer = buffer.slice(i + 1);
          }
        });
        const waitFor = async (ready: () => boolean, what: string): Promise<void> => {
          const deadline = Date.now() + 15_000;
          while (!ready()) {
            if (Date.now() > deadline || child.exitCode !== null)
              throw new Error(`no ${what} (exit ${child.exitCode}); stderr: ${stderr}`);
            await new Promise((r) => setTimeout(r, 10));
          }
        };
        await waitFor(() => stderr.includes("unknown (uncaughtException): stray failure"), "fault report");
        child.stdin.write(`${JSON.stringify({ id: "1", type: "prompt", message: "are you there?" })}\n`);
        await waitFor(() => wire.some((r) => r.type === "agent_settled"), "answer");
        const last = wire.filter((r) => r.type === "message_end").at(-1)!.message as { content: unknown };
        expect(JSON.stringify(last.content)).to.contain("still serving");
        child.stdin.end();
        const code = await new Promise((resolve) => child.on("close", resolve));
        expect(code).to.equal(0);
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    });
  });
});

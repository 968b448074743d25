/**
 * What stops a run that would go on for ever, through the built CLI: the doom-loop guard in modes without a UI
 * (print, JSON: an error) and with one (RPC: a confirm dialog), and `--max-turns` for print and JSON runs.
 */

import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin, runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** The same malformed call (read without its path) in every answer, as a model stuck in a loop gives. */
const malformed = { toolCalls: [{ name: "read", arguments: { pathh: "notes.txt" } }] };
const repeat = <T>(step: T, n: number): T[] => Array.from({ length: n }, () => step);

type Wire = { type: string; [k: string]: unknown };

describe("knightcode: loop limits", () => {
  const tmp = useTempDir("kc-loop-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });
  const script = (steps: unknown[]) => tmp.write("script.json", JSON.stringify({ steps }));
  const cli = (args: string[]) =>
    runCli(["--provider", "scripted", "--no-session", ...args], { cwd: tmp.path, env: env() });
  const records = (stdout: string) =>
    stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Wire);

  it("ends a print run whose model repeats a failing tool call, with the error on stderr and exit 1", async () => {
    const file = script(repeat(malformed, 20));
    const { code, stdout, stderr } = await cli(["--script", file, "-p", "read my notes"]);
    expect(code).to.equal(1);
    expect(stdout).to.equal("");
    expect(stderr).to.contain('The same tool call failed 3 times in a row: read {"pathh":"notes.txt"}');
    expect(stderr).to.contain("doomLoop");
  });

  it("records the stop as a failed assistant message in the JSON stream, after three tool calls", async () => {
    const file = script(repeat(malformed, 20));
    const { code, stdout } = await cli(["--script", file, "--mode", "json", "read my notes"]);
    expect(code).to.equal(1);
    const wire = records(stdout);
    expect(wire.filter((r) => r.type === "tool_execution_end")).to.have.length(3);
    const last = wire.filter((r) => r.type === "message_end").at(-1)!.message as Record<string, unknown>;
    expect(last).to.include({ role: "assistant", stopReason: "error" });
    expect(String(last.errorMessage)).to.contain("failed 3 times in a row");
    expect(wire.at(-1)).to.deep.equal({ type: "agent_settled", aborted: false });
  });

  it("asks through the RPC client's UI, and stops the run when the client declines", async () => {
    const file = script(repeat(malformed, 20));
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--provider", "scripted", "--script", file, "--no-session"],
      { cwd: tmp.path, env: { ...process.env, ...env() } },
    );
    try {
      const wire: Wire[] = [];
      let buffer = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => {
        buffer += chunk;
        for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
          wire.push(JSON.parse(buffer.slice(0, i)) as Wire);
          buffer = buffer.slice(i + 1);
        }
      });
      const waitFor = async (predicate: (r: Wire) => boolean): Promise<Wire> => {
        const deadline = Date.now() + 15_000;
        for (;;) {
          const found = wire.find(predicate);
          if (found) return found;
          if (Date.now() > deadline) throw new Error(`timed out; got ${wire.map((r) => r.type).join(",")}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      child.stdin.write(`${JSON.stringify({ id: "1", type: "prompt", message: "read my notes" })}\n`);
      const question = await waitFor((r) => r.type === "extension_ui_request" && r.method === "confirm");
      expect(String(question.message)).to.contain("failed 3 times in a row");
      child.stdin.write(
        `${JSON.stringify({ type: "extension_ui_response", id: question.id, confirmed: false })}\n`,
      );
      await waitFor((r) => r.type === "agent_settled");
      const last = wire.filter((r) => r.type === "message_end").at(-1)!.message as Record<string, unknown>;
      expect(last).to.include({ stopReason: "error" });
      expect(String(last.errorMessage)).to.contain("Stopped at your request");
      expect(wire.filter((r) => r.type === "tool_execution_end")).to.have.length(3);
      child.stdin.end();
      const code = await new Promise((resolve) => child.on("close", resolve));
      expect(code).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("--max-turns ends a run that wants more turns with an error and exit 1", async () => {
    tmp.write("notes.txt", "remember the milk\n");
    const reading = { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] };
    const file = script(repeat(reading, 10));
    const { code, stderr } = await cli([
      "--script",
      file,
      "--max-turns",
      "2",
      "-p",
      "read it again and again",
    ]);
    expect(code).to.equal(1);
    expect(stderr).to.contain("Stopped after 2 turns");
    expect(stderr).to.contain("--max-turns 2");

    const json = await cli(["--script", file, "--max-turns", "2", "--mode", "json", "read it again"]);
    expect(json.code).to.equal(1);
    const wire = records(json.stdout);
    expect(wire.filter((r) => r.type === "turn_start")).to.have.length(2);
    expect(wire.filter((r) => r.type === "tool_execution_end").every((r) => r.isError === false)).to.equal(
      true,
    );
  });

  it("--max-turns lets a run that finishes within the limit succeed", async () => {
    tmp.write("notes.txt", "remember the milk\n");
    const file = script([
      { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
      { text: "It says: remember the milk" },
    ]);
    const { code, stdout, stderr } = await cli(["--script", file, "--max-turns", "2", "-p", "read my notes"]);
    expect(code, stderr).to.equal(0);
    expect(stdout).to.equal("It says: remember the milk\n");
  });

  it("refuses a --max-turns that is not a positive whole number, or outside print and JSON runs", async () => {
    const file = script([{ text: "never" }]);
    for (const value of ["0", "-1", "2.5", "many"]) {
      const { code, stderr } = await cli(["--script", file, `--max-turns=${value}`, "-p", "x"]);
      expect(code, value).to.equal(2);
      expect(stderr).to.contain("--max-turns needs a positive whole number");
    }
    const rpc = await cli(["--script", file, "--max-turns", "3", "--mode", "rpc"]);
    expect(rpc.code).to.equal(2);
    expect(rpc.stderr).to.contain("--max-turns applies to print and JSON runs");
  });

  it("shows --max-turns in --help", async () => {
    const { stdout } = await runCli(["--help"], { cwd: tmp.path, env: env() });
    expect(stdout).to.contain("--max-turns <n>");
  });
});

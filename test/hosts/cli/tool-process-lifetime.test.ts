/**
 * The processes of `bash` tool calls end with the agent, through the built CLI: a job a command left in the
 * background, and a command still running, are gone soon after the agent is killed with SIGKILL (when none of its
 * own cleanup runs), and a background job is gone after a print run ends normally.
 */

import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin, runCli } from "../../helpers/cli.js";
import { alive, gone } from "../../helpers/processes.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const bash = (command: string) => ({ toolCalls: [{ name: "bash", arguments: { command } }] });

/** Waits (at most `ms`) until `path` holds a pid, and returns it. */
async function pidIn(path: string, ms = 20_000): Promise<number> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (existsSync(path)) {
      const text = readFileSync(path, "utf8");
      if (/^\d+\n$/.test(text)) return Number(text);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no pid in ${path}`);
}

function killQuietly(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

describe("knightcode: tool processes end with the agent", function () {
  this.timeout(60_000);
  if (process.platform === "win32") return;
  const tmp = useTempDir("kc-lifetime-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });

  it("kills a background job and a running command when the agent is killed with SIGKILL", async () => {
    const script = tmp.write(
      "script.json",
      JSON.stringify({
        steps: [
          bash(`sleep 300 & echo $! > ${join(tmp.path, "background.pid")}; echo started`),
          bash(`echo $$ > ${join(tmp.path, "running.pid")}; sleep 300`),
          { text: "never reached" },
        ],
      }),
    );
    const agent = spawn(
      process.execPath,
      [cliBin, "--provider", "scripted", "--no-session", "--script", script, "-p", "go"],
      { cwd: tmp.path, env: { ...process.env, ...env() }, stdio: "ignore" },
    );
    let background: number | undefined;
    let running: number | undefined;
    try {
      background = await pidIn(join(tmp.path, "background.pid"));
      running = await pidIn(join(tmp.path, "running.pid"));
      expect(alive(background), "the background job runs while the agent lives").to.equal(true);
      const exited = new Promise((resolve) => agent.once("exit", resolve));
      agent.kill("SIGKILL");
      await exited;
      expect(await gone(background, 10_000), "the background job outlived the agent").to.equal(true);
      expect(await gone(running, 10_000), "the running command outlived the agent").to.equal(true);
    } finally {
      agent.kill("SIGKILL");
      killQuietly(background);
      killQuietly(running);
    }
  });

  it("kills a job a command left in the background when a print run ends", async () => {
    const script = tmp.write(
      "script.json",
      JSON.stringify({
        steps: [
          bash(`sleep 300 & echo $! > ${join(tmp.path, "background.pid")}; echo started`),
          { text: "done" },
        ],
      }),
    );
    let background: number | undefined;
    try {
      const { code, stdout, stderr } = await runCli(
        ["--provider", "scripted", "--no-session", "--script", script, "-p", "go"],
        { cwd: tmp.path, env: env() },
      );
      expect(code, stderr).to.equal(0);
      expect(stdout).to.equal("done\n");
      background = await pidIn(join(tmp.path, "background.pid"), 1_000);
      expect(await gone(background, 10_000), "the background job outlived the run").to.equal(true);
    } finally {
      killQuietly(background);
    }
  });
});

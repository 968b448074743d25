/**
 * codemode in the built `knightcode --mode rpc`: a script that spins runs in the sandbox worker, so the process
 * keeps answering RPC commands until the deadline stops the script.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("codemode in RPC mode", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-rpc-codemode-");
  const running: RpcProcess[] = [];
  afterEach(() => {
    for (const p of running.splice(0)) p.kill();
  });

  it("answers get_state while a script spins, then reports the deadline", async () => {
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    const timeoutMs = 4_000;
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ codemode: { timeoutMs } }));
    // One tool with codemode exposure, so the codemode tool is declared.
    const extension = tmp.write(
      "ext.mjs",
      `export default (kc) => kc.registerTool({
        name: "ping", description: "Answers pong.", exposure: "codemode",
        parameters: { type: "object", properties: {} },
        execute: async () => ({ content: [{ type: "text", text: "pong" }], details: undefined }),
      });`,
    );
    const script = tmp.write(
      "script.json",
      JSON.stringify({
        steps: [
          { toolCalls: [{ name: "codemode", arguments: { code: "await tools.ping({}); while (true) {}" } }] },
          { text: "stopped" },
        ],
      }),
    );
    const child = spawn(
      process.execPath,
      [
        cliBin,
        "--mode",
        "rpc",
        "--provider",
        "scripted",
        "--script",
        script,
        "--no-session",
        "-e",
        extension,
      ],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir } },
    );
    const p = new RpcProcess(child);
    running.push(p);
    expect((await p.request("p", "prompt", { message: "spin" })).success).to.equal(true);
    // The script is past its tool call and spinning once the nested call has ended.
    await p.waitFor((r) => r.type === "tool_execution_end" && r.toolName === "ping", 30_000);
    const asked = Date.now();
    const state = await p.request("s", "get_state");
    const answeredMs = Date.now() - asked;
    expect(state.success).to.equal(true);
    const end = await p.waitFor((r) => r.type === "tool_execution_end" && r.toolName === "codemode", 30_000);
    const endedMs = Date.now() - asked;
    // Answered while the script still ran: well before the deadline stopped it.
    expect(answeredMs).to.be.below(endedMs);
    expect(answeredMs).to.be.below(timeoutMs / 2);
    expect(end.isError).to.equal(true);
    expect(JSON.stringify(end.result)).to.contain(`over its ${timeoutMs} ms limit`);
    await p.waitFor((r) => r.type === "agent_settled", 30_000);
    expect(await p.end()).to.equal(0);
  });
});

/**
 * builtin:mcp through the built CLI (issue 32): replacing the session (RPC `fork`) does not report the old session's
 * stale context as extension errors, and the new session reaches the server; a server with `exposure: "codemode"`
 * stays reachable when the session starts with `--tools read`, because the MCP built-in activates `codemode` for it.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "chai";
import { faultServer } from "../../builtin-extensions/mcp/servers.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type Wire = { type: string; [k: string]: any };

describe("builtin:mcp across session replacement and exposure (built CLI)", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-mcp-replace-");
  const agentDir = () => join(tmp.path, "agent");

  it("forks over RPC without extension errors, and the forked session calls the server's tools", async () => {
    const ext = tmp.write(
      "register.ts",
      `export default (kc: any) => kc.registerMcpServer("fs", { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(faultServer)}] });`,
    );
    const script = tmp.write(
      "script.json",
      JSON.stringify({
        steps: [{ toolCalls: [{ name: "mcp__fs__pid", arguments: {} }] }, { text: "done" }],
      }),
    );
    const child = spawn(
      process.execPath,
      [cliBin, "--provider", "scripted", "--script", script, "--mode", "rpc", "-e", ext],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir() } },
    );
    const rpc = new RpcProcess(child);
    try {
      await rpc.request("1", "prompt", { message: "hello" });
      await rpc.waitFor((r) => r.type === "agent_settled");
      const entries = (await rpc.request("2", "get_entries")).data as { entries: Wire[] };
      const user = entries.entries.find((e) => e.type === "message" && e.message.role === "user")!;
      const forked = await rpc.request("3", "fork", { entryId: user.id });
      expect(forked.success, JSON.stringify(forked)).to.equal(true);
      // The forked session's MCP client connects the server again; the model calls one of its tools.
      const settled = rpc.records.length;
      await rpc.request("4", "prompt", { message: "call it" });
      const end = await rpc.waitFor(
        (r) => r.type === "tool_execution_end" && rpc.records.indexOf(r) > settled,
        30_000,
      );
      expect(end.isError, JSON.stringify(end)).to.equal(false);
      await rpc.waitFor((r) => r.type === "agent_settled" && rpc.records.indexOf(r) > settled);
      expect(rpc.records.filter((r) => r.type === "extension_error")).to.deep.equal([]);
      expect(rpc.stderr).to.not.contain("builtin:mcp");
    } finally {
      await rpc.end();
    }
  });

  it("activates codemode for a codemode-exposed server when the session starts with --tools read", async () => {
    tmp.write(
      "agent/mcp.json",
      JSON.stringify({
        mcpServers: { fs: { command: process.execPath, args: [faultServer], exposure: "codemode" } },
      }),
    );
    const script = tmp.write(
      "script.json",
      JSON.stringify({
        steps: [
          {
            toolCalls: [
              { name: "codemode", arguments: { code: "const r = await tools.fs.pid({}); return r;" } },
            ],
          },
          { text: "done" },
        ],
      }),
    );
    const { code, stdout, stderr } = await runCli(
      [
        "--provider",
        "scripted",
        "--script",
        script,
        "--no-session",
        "--tools",
        "read",
        "--mode",
        "json",
        "go",
      ],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agentDir() } },
    );
    expect(code, stderr).to.equal(0);
    const records = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Wire);
    const end = records.find((r) => r.type === "tool_execution_end" && r.toolName === "codemode")!;
    expect(end, stdout.slice(-2000)).to.not.equal(undefined);
    expect(end.isError, JSON.stringify(end.result)).to.equal(false);
    expect(JSON.stringify(end.result.content)).to.match(/\d+/);
  });
});

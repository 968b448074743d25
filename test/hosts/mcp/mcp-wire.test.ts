/**
 * An MCP tool end to end, as a user meets it: the built `knightcode` in JSON mode and in RPC mode, a models.json
 * provider pointing at a local OpenAI Chat Completions server that asks for `mcp__everything__echo`, and the real
 * server-everything over stdio from the agent dir's mcp.json. The tool's result must reach the model's next request.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { everythingServer } from "../../builtin-extensions/mcp/servers.js";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("MCP tools through the CLI's JSON and RPC modes", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-mcp-wire-");
  let server: TestServer;
  let agentDir: string;

  beforeEach(async () => {
    server = await startTestServer();
    server.respondInOrder(
      (_req, res) =>
        writeSse(res, toolCallStream("call_m1", "mcp__everything__echo", { message: "over the wire" })),
      (_req, res) => writeSse(res, textStream("The server echoed it")),
    );
    agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-local",
      models: [{ id: "m", contextWindow: 32000, maxTokens: 1024 }],
    });
    writeFileSync(
      join(agentDir, "mcp.json"),
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [everythingServer, "stdio"] } },
      }),
    );
  });
  afterEach(() => server.close());

  const checkRequests = () => {
    expect(server.requests).to.have.length(2);
    const declared = server.requests[0]!.body.tools.map(
      (t: { function: { name: string } }) => t.function.name,
    );
    expect(declared).to.include("mcp__everything__echo");
    const toolMessage = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
    expect(JSON.stringify(toolMessage.content)).to.contain("Echo: over the wire");
  };

  it("JSON mode: the model calls an MCP tool and gets its result", async () => {
    const result = await runCli(
      ["--mode", "json", "--no-session", "--provider", "local", "--model", "m", "echo it"],
      {
        cwd: tmp.path,
        env: { KNIGHTCODE_AGENT_DIR: agentDir },
        timeoutMs: 50_000,
      },
    );
    expect(result.code, result.stderr).to.equal(0);
    const records = result.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    const end = records.find((r) => r.type === "tool_execution_end") as unknown as {
      toolName: string;
      result: unknown;
    };
    expect(end.toolName).to.equal("mcp__everything__echo");
    expect(JSON.stringify(end.result)).to.contain("Echo: over the wire");
    checkRequests();
  });

  it("RPC mode: the same call, and /mcp answers through get_commands and a prompt", async () => {
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--no-session", "--provider", "local", "--model", "m"],
      {
        cwd: tmp.path,
        env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir },
      },
    );
    const rpc = new RpcProcess(child);
    try {
      const commands = await rpc.request("c1", "get_commands");
      expect(JSON.stringify(commands)).to.contain('"name":"mcp"');
      const ack = await rpc.request("p1", "prompt", { message: "echo it" });
      expect(ack.success, JSON.stringify(ack)).to.equal(true);
      await rpc.waitFor((r) => r.type === "agent_end", 50_000);
      const end = rpc.records.find((r) => r.type === "tool_execution_end")!;
      expect(JSON.stringify(end.result)).to.contain("Echo: over the wire");
      checkRequests();
    } finally {
      child.stdin.end();
      const code = await rpc.exit(15_000);
      if (code === -1) child.kill("SIGKILL");
    }
  });
});

/**
 * examples/extensions/mini-mcp.ts replaces builtin:mcp, and the rest of KnightCode uses it: against the real
 * server-everything (stdio, started by the client from mcp.json), its tools are called by the model, `/mcp`
 * (builtin:mcp-command) lists its servers and their tools, and another extension reads their resources through
 * `mcpClientService`; in the built CLI, a JSON-mode run calls its tool. Run `npm run build` first.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ExtensionAPI, type McpClient, mcpClientService } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { toolName } from "../../examples/extensions/mini-mcp.js";
import { everythingServer } from "../builtin-extensions/mcp/servers.js";
import { runCli } from "../helpers/cli.js";
import { useTempDir } from "../helpers/temp-dir.js";

const miniMcpPath = fileURLToPath(new URL("../../examples/extensions/mini-mcp.ts", import.meta.url));
const SWAP = { extensions: ["-builtin:mcp"] };
const echoCall = (message: string) => ({
  toolCalls: [{ name: "mcp__everything__echo", arguments: { message } }],
});

describe("example: mini-mcp in place of builtin:mcp", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-mini-mcp-");
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  /** The agent dir with an mcp.json naming server-everything over stdio. */
  const agentDir = () => {
    const dir = join(tmp.path, "agent");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "mcp.json"),
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [everythingServer, "stdio"] } },
      }),
    );
    return dir;
  };
  const notes = async (command: string) => {
    const before = t!.ui.notifications.length;
    await t!.prompt(command);
    return t!.ui.notifications
      .slice(before)
      .map((n) => n.message)
      .join("\n");
  };

  it("connects the server itself; the model calls its tools, /mcp shows them, another extension reads resources", async () => {
    let api: ExtensionAPI | undefined;
    let client: McpClient | undefined;
    // Another extension that knows only the service reference, not which extension provides it.
    const reader = (kc: ExtensionAPI) => {
      api = kc;
      kc.on("session_start", () => {
        client = kc.services.require(mcpClientService);
      });
    };
    t = await createTestSession({
      agentDir: agentDir(),
      cwd: tmp.path,
      settings: SWAP,
      extensions: [miniMcpPath, reader],
      script: [echoCall("through mini-mcp"), { text: "done" }] as never,
    });
    await t.prompt("go");
    const [echo] = t.toolCalls();
    expect(echo).to.deep.include({ toolName: "mcp__everything__echo", isError: false });
    expect((echo!.result!.content[0] as { text: string }).text).to.equal("Echo: through mini-mcp");
    const tools = api!.getAllTools().filter((tool) => tool.name.startsWith("mcp__everything__"));
    expect(tools.length).to.be.greaterThan(5);
    expect(new Set(tools.map((tool) => tool.owner))).to.deep.equal(new Set([`cli:${miniMcpPath}`]));

    const listing = await notes("/mcp");
    expect(listing).to.match(
      new RegExp(
        `everything: connected, stdio, ${tools.length} tools \\(${join(tmp.path, "agent", "mcp.json")}\\)`,
      ),
    );
    const details = await notes("/mcp everything");
    expect(details)
      .to.match(/tools: .*\becho\b/)
      .and.match(/resources: demo:\/\//);

    expect(client, "the reader got the replacement through the service").to.not.equal(undefined);
    expect(client!.servers().map((s) => [s.name, s.state])).to.deep.equal([["everything", "connected"]]);
    const resources = await client!.listResources("everything");
    expect(resources.length).to.be.greaterThan(0);
    const read = (await client!.readResource("everything", resources[0]!.uri)) as { contents: unknown[] };
    expect(read.contents.length).to.be.greaterThan(0);
    await client!.listResources("nothing").then(
      () => expect.fail("an unknown server is an error"),
      (error: Error) => expect(error.message).to.contain('No MCP server named "nothing"'),
    );
  });

  it("/mcp runs the actions the client offers and says which it cannot", async () => {
    t = await createTestSession({
      agentDir: agentDir(),
      cwd: tmp.path,
      settings: SWAP,
      extensions: [miniMcpPath],
      script: [{ text: "done" }] as never,
    });
    await t.prompt("go");
    expect(await notes("/mcp disable everything")).to.contain(
      "The MCP client of this session cannot disable a server.",
    );
    expect(await notes("/mcp reconnect everything")).to.contain("everything: connected, stdio");
    expect(await notes("/mcp login everything")).to.contain("is not an HTTP server");
  });

  it("names tools as builtin:mcp does, so permission rules keep matching", () => {
    expect(toolName("everything", "echo")).to.equal("mcp__everything__echo");
    expect(toolName("my.docs", "get/page")).to.equal("mcp__my_docs__get_page");
  });

  it("in the built CLI, a JSON-mode run calls the replacement's tool", async () => {
    const agent = agentDir();
    writeFileSync(join(agent, "settings.json"), JSON.stringify(SWAP));
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps: [echoCall("over the CLI"), { text: "finished" }] }));
    const result = await runCli(
      ["-e", miniMcpPath, "--mode", "json", "--provider", "scripted", "--script", script, "go"],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agent } },
    );
    expect(result.code, result.stderr).to.equal(0);
    const end = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .find((r) => r.type === "tool_execution_end");
    expect(end, result.stdout).to.deep.include({ toolName: "mcp__everything__echo", isError: false });
    expect(end.result.content[0].text).to.equal("Echo: over the CLI");
    expect(end.result.details).to.deep.equal({ server: "everything", tool: "echo" });
  });
});

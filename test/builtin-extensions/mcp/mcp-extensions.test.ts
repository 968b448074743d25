/**
 * builtin:mcp and other extensions: servers registered with registerMcpServer (precedence of mcp.json, late
 * registration, unregistering), a reaching tool waiting for a server still connecting, prompts as commands,
 * resources through `mcpClientService`, abort, default exposure of large servers, and /mcp saving a change.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ExtensionAPI, type McpClient, type McpServerConfig, mcpClientService } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import { createTestSession, type TestSession } from "../../../hosts/testing/test-session.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { everythingServer, faultServer } from "./servers.js";

type Step = { toolCalls?: { name: string; arguments: Record<string, unknown> }[]; text?: string };

describe("builtin:mcp with other extensions", function () {
  this.timeout(60_000);
  const temp = useTempDir("kc-mcp-ext-");
  const sessions: TestSession[] = [];

  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.dispose();
  });

  const fault = (env: Record<string, string> = {}): McpServerConfig => ({
    command: process.execPath,
    args: [faultServer],
    env,
  });

  async function open(options: {
    file?: Record<string, unknown>;
    script: Step[];
    extension?: (kc: ExtensionAPI) => void;
    settings?: Record<string, unknown>;
  }) {
    const agentDir = join(temp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    if (options.file) writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: options.file }));
    let api: ExtensionAPI | undefined;
    const session = await createTestSession({
      agentDir,
      cwd: temp.path,
      script: options.script as never,
      settings: { mcp: { startupWaitMs: 30_000 }, ...options.settings },
      extensions: [
        (kc: ExtensionAPI) => {
          api = kc;
          options.extension?.(kc);
        },
      ],
    });
    sessions.push(session);
    return Object.assign(session, { api: () => api! });
  }

  const toolNames = (s: { api(): ExtensionAPI }) =>
    s
      .api()
      .getAllTools()
      .map((t) => t.name);
  const lastNotes = async (s: TestSession, command: string) => {
    const before = s.ui.notifications.length;
    await s.prompt(command);
    return s.ui.notifications
      .slice(before)
      .map((n) => n.message)
      .join("\n");
  };
  const waitFor = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it("connects a server an extension registers, lets an mcp.json entry of the same name win, and shows the override", async () => {
    const s = await open({
      file: { shared: fault() },
      script: [{ text: "done" }],
      extension: (kc) => {
        kc.registerMcpServer("shared", { command: process.execPath, args: [everythingServer, "stdio"] });
        kc.registerMcpServer("own", fault());
      },
    });
    await s.prompt("go");
    expect(toolNames(s)).to.include.members(["mcp__shared__crash", "mcp__own__crash"]);
    expect(toolNames(s)).to.not.include("mcp__shared__echo");
    const listing = await lastNotes(s, "/mcp");
    expect(listing).to.contain("shared: connected").and.contain("overrides the registration of ");
    expect(listing).to.match(/own: connected, stdio, \d+ tools \(registered by /);
  });

  it("connects a server registered later right away, and unregistering it makes its tools unreachable", async () => {
    const s = await open({ script: [{ text: "one" }, { text: "two" }] });
    await s.prompt("go");
    s.api().registerMcpServer("late", fault());
    await waitFor(() => toolNames(s).includes("mcp__late__crash"), "the late server's tools");
    s.api().unregisterMcpServer("late");
    await waitFor(() => !toolNames(s).includes("mcp__late__crash"), "the tools to go");
    expect(await lastNotes(s, "/mcp")).to.contain("No MCP servers");
  });

  it("holds a call of a tool that reaches MCP tools until a server still connecting is ready", async () => {
    const s = await open({
      file: { slow: fault({ FAULT_SERVER_DELAY_MS: "1500" }) },
      settings: { mcp: { startupWaitMs: 0 } },
      script: [
        { toolCalls: [{ name: "reacher", arguments: { target: "mcp__slow__fail" } }] },
        { text: "done" },
      ],
      extension: (kc) => {
        kc.registerTool({
          name: "reacher",
          description: "calls another tool by name",
          parameters: Type.Object({ target: Type.String() }),
          reachesTools: (input) => [input.target],
          async execute(_id, params, _signal, _update, ctx) {
            const result = await ctx.executeTool(params.target, {});
            return { content: result.content, details: { nestedError: result.isError === true } };
          },
        });
      },
    });
    await s.prompt("go");
    const reacher = s.toolCalls().find((c) => c.toolName === "reacher")!;
    expect(JSON.stringify(reacher.result!.content)).to.contain("it broke");
  });

  it("offers a server's tools from the last session's list at once, and a call waits for the connection", async () => {
    const slow = { slow: fault({ FAULT_SERVER_DELAY_MS: "1500" }) };
    const waited = (s: TestSession) =>
      s.ui.calls.some(
        (c) => c.method === "setWorkingMessage" && String(c.args[0]).includes("Connecting MCP servers"),
      );
    const first = await open({ file: slow, script: [{ text: "first" }] });
    await first.prompt("go");
    expect(waited(first), "a server never seen before is waited for").to.equal(true);
    const second = await open({
      file: slow,
      script: [{ toolCalls: [{ name: "mcp__slow__fail", arguments: {} }] }, { text: "done" }],
    });
    expect(toolNames(second), "cached tools are registered before the server connects").to.include(
      "mcp__slow__fail",
    );
    await second.prompt("go");
    expect(waited(second)).to.equal(false);
    const call = second.toolCalls().find((c) => c.toolName === "mcp__slow__fail")!;
    expect(JSON.stringify(call.result!.content)).to.contain("it broke");
    expect(call.result!.structuredContent).to.deep.equal({ code: 42 });
  });

  it("offers a server's prompts as /mcp__<server>__<prompt> commands that send the prompt's text", async () => {
    const s = await open({
      file: { everything: { command: process.execPath, args: [everythingServer, "stdio"] } },
      script: [{ text: "first" }, { text: "answered" }],
    });
    await s.prompt("go");
    await waitFor(
      () => s.session.getCommands().some((c) => c.name === "mcp__everything__args-prompt"),
      "the prompt commands",
    );
    await s.prompt("/mcp__everything__args-prompt Paris TX");
    const users = s
      .eventsOfType("message_end")
      .map((e) => e.message as { role: string; content: unknown })
      .filter((m) => m.role === "user");
    expect(JSON.stringify(users.at(-1)!.content)).to.contain("What's weather in Paris, TX?");
  });

  it("gives other extensions the servers' resources through mcpClientService", async () => {
    let client: McpClient | undefined;
    const s = await open({
      file: { everything: { command: process.execPath, args: [everythingServer, "stdio"] } },
      script: [{ text: "done" }],
      extension: (kc) => {
        kc.on("session_start", () => {
          client = kc.services.get(mcpClientService);
        });
      },
    });
    await s.prompt("go");
    expect(client, "builtin:mcp provides mcpClientService").to.not.equal(undefined);
    expect(client!.servers().map((server) => server.name)).to.deep.equal(["everything"]);
    expect((await client!.listTools("everything")).map((tool) => tool.name)).to.include("echo");
    const resources = await client!.listResources("everything");
    expect(resources.length).to.be.greaterThan(0);
    const read = (await client!.readResource("everything", resources[0]!.uri)) as { contents: unknown[] };
    expect(read.contents.length).to.be.greaterThan(0);
    expect(await lastNotes(s, "/mcp everything")).to.contain("resources: demo://");
  });

  it("cancels an MCP call when the run is aborted", async () => {
    const s = await open({
      file: { fault: { ...fault(), timeout: 120_000 } },
      script: [{ toolCalls: [{ name: "mcp__fault__hang", arguments: {} }] }, { text: "never" }],
    });
    const run = s.prompt("go");
    await waitFor(() => s.eventsOfType("tool_execution_start").length > 0, "the call to start");
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    s.session.abort();
    await run;
    expect(Date.now() - started).to.be.lessThan(10_000);
    const hang = s.toolCalls().find((c) => c.toolName === "mcp__fault__hang")!;
    expect(hang.isError).to.equal(true);
  });

  it("defers the tools of a server with many tools unless the entry says otherwise", async () => {
    const s = await open({
      file: {
        big: fault({ FAULT_SERVER_EXTRA_TOOLS: "20" }),
        bigDirect: {
          ...fault({ FAULT_SERVER_EXTRA_TOOLS: "20" }),
          exposure: "direct",
          toolExposure: { crash: "hidden" },
        },
        small: fault(),
      },
      script: [{ text: "done" }],
    });
    await s.prompt("go");
    const exposure = (name: string) =>
      s
        .api()
        .getAllTools()
        .find((t) => t.name === name)?.exposure;
    expect(exposure("mcp__big__extra_0")).to.equal("deferred");
    expect(exposure("mcp__bigDirect__extra_0")).to.equal("direct");
    expect(exposure("mcp__bigDirect__crash")).to.equal("hidden");
    expect(exposure("mcp__small__crash")).to.equal("direct");
  });

  it("/mcp disable saves enabled: false in the file that defines the server and disconnects it", async () => {
    const s = await open({ file: { fault: fault() }, script: [{ text: "done" }] });
    await s.prompt("go");
    expect(toolNames(s)).to.include("mcp__fault__crash");
    const note = await lastNotes(s, "/mcp disable fault");
    expect(note).to.contain('MCP server "fault" disabled (saved in');
    const file = JSON.parse(readFileSync(join(temp.path, "agent", "mcp.json"), "utf8"));
    expect(file.mcpServers.fault.enabled).to.equal(false);
    expect(toolNames(s)).to.not.include("mcp__fault__crash");
    await lastNotes(s, "/mcp enable fault");
    expect(toolNames(s)).to.include("mcp__fault__crash");
  });
});

describe("registerMcpServer without an MCP extension", () => {
  it("reports each registration as an extension error when builtin:mcp is turned off", async () => {
    let api: ExtensionAPI | undefined;
    const s = await createTestSession({
      disableBuiltins: ["builtin:mcp"],
      script: [{ text: "done" }] as never,
      extensions: [
        (kc: ExtensionAPI) => {
          api = kc;
          kc.registerMcpServer("early", { command: "node" });
        },
      ],
    });
    try {
      await s.prompt("go");
      expect(s.warnings.join("\n")).to.contain(
        'MCP server "early" is registered but no MCP extension is loaded',
      );
      api!.registerMcpServer("late", { url: "https://late.example.test/mcp" });
      expect(s.warnings.join("\n")).to.contain(
        'MCP server "late" is registered but no MCP extension is loaded',
      );
      // /mcp (builtin:mcp-command) stays, and says that no extension provides the client it shows.
      await s.prompt("/mcp");
      expect(s.ui.notifications.at(-1)).to.deep.include({ level: "error" });
      expect(s.ui.notifications.at(-1)!.message).to.contain("No MCP client in this session");
    } finally {
      await s.dispose();
    }
  });
});

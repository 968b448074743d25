/**
 * builtin:mcp in real sessions against real MCP servers started by the tests: the pinned reference servers
 * (server-everything over stdio, streamable HTTP and SSE; server-filesystem on a temp dir) and a small fault server
 * (pages, a crash, a hang, a long name, list_changed). The model is the scripted provider; every server binds or
 * talks over 127.0.0.1 and is stopped by the test.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@knightcodeai/cli";
import { expect } from "chai";
import { createTestSession, type TestSession } from "../../../hosts/testing/test-session.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import {
  everythingServer,
  faultServer,
  filesystemServer,
  type HttpServer,
  startEverythingHttp,
} from "./servers.js";

type Step = { toolCalls?: { name: string; arguments: Record<string, unknown> }[]; text?: string };

describe("builtin:mcp with real servers", function () {
  this.timeout(60_000);
  const temp = useTempDir("kc-mcp-");
  const sessions: TestSession[] = [];
  const httpServers: HttpServer[] = [];

  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.dispose();
    for (const h of httpServers.splice(0)) await h.close();
  });

  async function open(
    mcpServers: Record<string, unknown>,
    script: Step[],
    extra: { approve?: boolean } = {},
  ) {
    const agentDir = join(temp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers }));
    let api: ExtensionAPI | undefined;
    const session = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) => {
          api = kc;
        },
      ],
      agentDir,
      cwd: temp.path,
      script: script as never,
      settings: { mcp: { startupWaitMs: 30_000 } },
      ...(extra.approve !== undefined ? { approve: extra.approve } : {}),
    });
    sessions.push(session);
    return Object.assign(session, { tools: () => api!.getAllTools() });
  }

  const call = (name: string, args: Record<string, unknown> = {}): Step => ({
    toolCalls: [{ name, arguments: args }],
  });
  const resultText = (s: TestSession, i = 0) =>
    (s.toolCalls()[i]!.result!.content as { type: string; text?: string }[])
      .map((c) => c.text ?? "")
      .join("");
  const mcpCommand = async (s: TestSession, args = "") => {
    const before = s.ui.notifications.length;
    await s.prompt(`/mcp${args ? ` ${args}` : ""}`);
    return s.ui.notifications
      .slice(before)
      .map((n) => n.message)
      .join("\n");
  };

  it("connects server-everything over stdio, registers its tools with namespace and annotations, and calls one", async () => {
    const s = await open({ everything: { command: process.execPath, args: [everythingServer, "stdio"] } }, [
      call("mcp__everything__echo", { message: "hi there" }),
      { text: "done" },
    ]);
    await s.prompt("go");
    expect(resultText(s)).to.equal("Echo: hi there");
    const echo = s.tools().find((t) => t.name === "mcp__everything__echo")!;
    expect(echo.owner).to.equal("builtin:mcp");
    expect(echo.exposure).to.equal("direct");
    expect(echo.namespace?.name).to.equal("mcp__everything");
    expect(echo.namespace?.aliases).to.deep.equal(["everything"]);
    expect(echo.namespace?.instructions).to.contain("Everything Server");
    expect(echo.annotations).to.include({ readOnlyHint: true, destructiveHint: false });
    const offered = s.tools().filter((t) => t.name.startsWith("mcp__everything__")).length;
    expect(offered).to.be.greaterThan(10);
    // /mcp counts the tools offered: not simulate-research-query, which runs only as a task and is left out.
    expect(s.tools().map((t) => t.name)).to.not.include("mcp__everything__simulate-research-query");
    expect(await mcpCommand(s)).to.contain(`everything: connected, stdio, ${offered} tools`);
  });

  it("passes structuredContent through and keeps provider keys out of a stdio server's environment", async () => {
    process.env.KC_MCP_TEST_SECRET_KEY = "sk-should-not-leak";
    try {
      const s = await open(
        {
          everything: {
            command: process.execPath,
            args: [everythingServer, "stdio"],
            env: { GIVEN_BY_CONFIG: "yes" },
          },
        },
        [
          call("mcp__everything__get-structured-content", { location: "Chicago" }),
          call("mcp__everything__get-env"),
          { text: "done" },
        ],
      );
      await s.prompt("go");
      const structured = s.toolCalls()[0]!.result!.structuredContent as Record<string, unknown>;
      expect(structured).to.be.an("object").that.has.property("temperature");
      const env = resultText(s, 1);
      expect(env).to.contain("GIVEN_BY_CONFIG").and.contain("PATH");
      expect(env).to.not.contain("sk-should-not-leak");
    } finally {
      delete process.env.KC_MCP_TEST_SECRET_KEY;
    }
  });

  it("reads every page of a tool list, shortens a long name and calls the tool by its original name", async () => {
    const long = "a_tool_whose_name_is_far_too_long_for_the_sixty_four_character_limit.v2";
    const s = await open({ fault: { command: process.execPath, args: [faultServer] } }, [{ text: "listed" }]);
    await s.prompt("go");
    const names = s
      .tools()
      .filter((t) => t.owner === "builtin:mcp")
      .map((t) => t.name);
    expect(names).to.include.members([
      "mcp__fault__crash",
      "mcp__fault__hang",
      "mcp__fault__fail",
      "mcp__fault__add_tool",
    ]);
    const longName = names.find((n) => n.startsWith("mcp__fault__a_tool"))!;
    expect(longName).to.have.length(64);
    expect(long.length + "mcp__fault__".length).to.be.greaterThan(64);
    const s2 = await open({ fault: { command: process.execPath, args: [faultServer] } }, [
      call(longName, { x: "42" }),
      { text: "done" },
    ]);
    await s2.prompt("go");
    expect(resultText(s2)).to.equal("long tool got 42");
  });

  it("keeps an error result's data and reports a server that crashes mid-call with its stderr, then reconnects it", async () => {
    const s = await open({ fault: { command: process.execPath, args: [faultServer] } }, [
      call("mcp__fault__fail"),
      call("mcp__fault__crash"),
      { text: "done" },
    ]);
    await s.prompt("go");
    const [fail, crash] = s.toolCalls();
    expect(fail!.isError).to.equal(true);
    expect(fail!.result!.structuredContent).to.deep.equal({ code: 42 });
    expect(crash!.isError).to.equal(true);
    expect(resultText(s, 1)).to.contain("MCP fault/crash failed");
    const listing = await mcpCommand(s);
    expect(listing).to.match(/fault: (failed|connecting|connected)/);
    expect(listing).to.contain("fault-server: crashing on purpose");
    await mcpCommand(s, "reconnect fault");
    expect(await mcpCommand(s)).to.contain("fault: connected");
  });

  it("times out a call the server never answers, with the entry's timeout", async () => {
    const s = await open({ fault: { command: process.execPath, args: [faultServer], timeout: 500 } }, [
      call("mcp__fault__hang"),
      { text: "done" },
    ]);
    const started = Date.now();
    await s.prompt("go");
    expect(Date.now() - started).to.be.lessThan(15_000);
    expect(s.toolCalls()[0]!.isError).to.equal(true);
    expect(resultText(s)).to.match(/timed out|timeout/i);
  });

  it("re-lists the tools after notifications/tools/list_changed, so a tool added by the server can be called", async () => {
    const s = await open({ fault: { command: process.execPath, args: [faultServer] } }, [
      call("mcp__fault__add_tool"),
      { text: "added" },
    ]);
    await s.prompt("go");
    expect(resultText(s)).to.equal("added");
    const deadline = Date.now() + 10_000;
    while (!s.tools().some((t) => t.name === "mcp__fault__added") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(s.tools().map((t) => t.name)).to.include("mcp__fault__added");
  });

  it("reports a server that fails to start and never hangs a call to it", async () => {
    const s = await open(
      {
        broken: { command: process.execPath, args: [faultServer], env: { FAULT_SERVER_EXIT_AT_START: "1" } },
      },
      [{ text: "done" }],
    );
    await s.prompt("go");
    const listing = await mcpCommand(s);
    expect(listing).to.contain("broken: failed");
    expect(listing).to.contain("fault-server: refusing to start");
  });

  it("serves an allowed path of server-filesystem and answers a denied one with an error result", async () => {
    const allowed = join(temp.path, "allowed");
    mkdirSync(allowed);
    writeFileSync(join(allowed, "note.txt"), "inside\n");
    writeFileSync(join(temp.path, "secret.txt"), "outside\n");
    const s = await open({ fs: { command: process.execPath, args: [filesystemServer, allowed] } }, [
      call("mcp__fs__read_text_file", { path: join(allowed, "note.txt") }),
      call("mcp__fs__read_text_file", { path: join(temp.path, "secret.txt") }),
      { text: "done" },
    ]);
    await s.prompt("go");
    const [inside, outside] = s.toolCalls();
    expect(inside!.isError).to.equal(false);
    expect(resultText(s, 0)).to.contain("inside");
    expect(outside!.isError).to.equal(true);
    expect(resultText(s, 1)).to.not.contain("outside\n");
  });

  for (const mode of ["streamableHttp", "sse"] as const) {
    it(`connects server-everything over ${mode === "sse" ? "SSE (after streamable HTTP is refused)" : "streamable HTTP"} on 127.0.0.1`, async () => {
      const http = await startEverythingHttp(mode);
      httpServers.push(http);
      const s = await open({ remote: { url: http.url } }, [
        call("mcp__remote__get-sum", { a: 2, b: 3 }),
        { text: "done" },
      ]);
      await s.prompt("go");
      expect(resultText(s)).to.contain("5");
      expect(await mcpCommand(s)).to.contain(`remote: connected, ${mode === "sse" ? "sse" : "http"}`);
    });
  }

  it("ignores a project mcp.json until the project is trusted", async () => {
    temp.write(
      ".knightcode/mcp.json",
      JSON.stringify({ mcpServers: { proj: { command: process.execPath, args: [faultServer] } } }),
    );
    const untrusted = await open({}, [{ text: "done" }], { approve: false });
    await untrusted.prompt("go");
    expect(untrusted.tools().some((t) => t.name.startsWith("mcp__proj__"))).to.equal(false);
    const trusted = await open({}, [{ text: "done" }], { approve: true });
    await trusted.prompt("go");
    expect(trusted.tools().some((t) => t.name === "mcp__proj__crash")).to.equal(true);
  });
});

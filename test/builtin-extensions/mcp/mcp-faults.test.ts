/**
 * builtin:mcp under two faults, against the fault server over stdio: a tool result of about 50 MB (once closed the
 * connection at the SDK's 10 MB read limit, after which the server's tools vanished) and a server process killed
 * between two calls. Also the reader that takes the SDK's place, on its own, and a connection's limit for one
 * message, with a small limit so the test stays light.
 */
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@knightcodeai/cli";
import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { expect } from "chai";
import { McpConnection } from "../../../builtin-extensions/mcp/connection.js";
import {
  MESSAGE_TOO_LARGE_CODE,
  MessageBuffer,
  messageId,
} from "../../../builtin-extensions/mcp/stdio-buffer.js";
import { createTestSession, type TestSession } from "../../../hosts/testing/test-session.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { faultServer } from "./servers.js";

type Step = { toolCalls?: { name: string; arguments: Record<string, unknown> }[]; text?: string };

const call = (name: string, args: Record<string, unknown> = {}): Step => ({
  toolCalls: [{ name, arguments: args }],
});

/** Polls `check` every 50 ms until it holds or `ms` pass; says whether it held. */
async function waitFor(check: () => boolean, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("builtin:mcp faults", function () {
  this.timeout(120_000);
  const temp = useTempDir("kc-mcp-faults-");
  const sessions: TestSession[] = [];
  const files: string[] = [];
  const pids: number[] = [];

  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.dispose();
    for (const f of files.splice(0)) rmSync(f, { force: true });
    for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
  });

  async function open(script: Step[]) {
    const agentDir = join(temp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "mcp.json"),
      JSON.stringify({ mcpServers: { fault: { command: process.execPath, args: [faultServer] } } }),
    );
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
    });
    sessions.push(session);
    return Object.assign(session, { tools: () => api!.getAllTools() });
  }

  const resultText = (s: TestSession, i: number) =>
    (s.toolCalls()[i]!.result!.content as { type: string; text?: string }[])
      .map((c) => c.text ?? "")
      .join("");
  const warnings = (s: TestSession) => s.logs.filter((l) => l.level === "warn").map((l) => l.message);

  it("receives a 50 MB result whole, which reaches the model cut with a notice and the whole text in a private temp file, and the next call works", async () => {
    const s = await open([call("mcp__fault__big", { mb: 50 }), call("mcp__fault__pid"), { text: "done" }]);
    await s.prompt("go");
    const [big, pid] = s.toolCalls();
    const text = resultText(s, 0);
    const path = /The full output is in (\S+)\]$/.exec(text)?.[1];
    if (path) files.push(path);
    expect(big!.isError, text.slice(-500)).to.equal(false);
    expect(Buffer.byteLength(text)).to.be.at.most(100 * 1024);
    expect(text).to.match(/^0000000 x+ line\n0000001 /);
    expect(text).to.contain('the "mcp__fault__big" result had 50.0 MB of text');
    expect(path, text.slice(-500)).to.be.a("string");
    expect(statSync(path!).mode & 0o777).to.equal(0o600);
    expect(statSync(path!).size).to.be.greaterThan(50 * 1024 * 1024 - 1024);
    expect(pid!.isError).to.equal(false);
    expect(resultText(s, 1)).to.match(/^\d+$/);
    pids.push(Number(resultText(s, 1)));
  });

  it("reconnects a server whose process was killed between calls, says so, and the next call succeeds", async () => {
    const s = await open([
      call("mcp__fault__pid"),
      { text: "first" },
      call("mcp__fault__pid"),
      { text: "second" },
    ]);
    await s.prompt("go");
    const first = Number(resultText(s, 0));
    expect(first).to.be.greaterThan(0);
    process.kill(first, "SIGKILL");
    expect(await waitFor(() => !alive(first))).to.equal(true);
    // Call again as soon as the client has noticed (it reports the loss, or, before the fix, dropped the tools).
    const noticed = () =>
      warnings(s).some((w) => w.includes("lost its connection")) ||
      !s.tools().some((t) => t.name === "mcp__fault__pid");
    expect(await waitFor(noticed)).to.equal(true);
    await s.prompt("again");
    const second = s.toolCalls()[1]!;
    expect(second.isError, resultText(s, 1)).to.equal(false);
    const pid = Number(resultText(s, 1));
    pids.push(pid);
    expect(pid).to.be.greaterThan(0).and.not.equal(first);
    expect(warnings(s).join("\n"))
      .to.contain('MCP server "fault" lost its connection')
      .and.contain('MCP server "fault" reconnected');
  });

  it("fails a call cut off by a crash with an error saying so, and the call after it reconnects and runs", async () => {
    const s = await open([call("mcp__fault__crash"), call("mcp__fault__pid"), { text: "done" }]);
    await s.prompt("go");
    const [crash, pid] = s.toolCalls();
    expect(crash!.isError).to.equal(true);
    expect(resultText(s, 0)).to.contain('the connection to MCP server "fault" closed during the call');
    expect(pid!.isError, resultText(s, 1)).to.equal(false);
    expect(resultText(s, 1)).to.match(/^\d+$/);
    pids.push(Number(resultText(s, 1)));
  });

  describe("a server that keeps dying soon after it connects", () => {
    let connection: McpConnection | undefined;
    afterEach(async () => {
      await connection?.close();
      connection = undefined;
    });

    it("is reconnected at once, then with back-off, then left failed", async () => {
      const lost: (number | undefined)[] = [];
      connection = new McpConnection(
        "flaky",
        { command: process.execPath, args: [faultServer], env: { FAULT_SERVER_EXIT_AFTER_LIST_MS: "100" } },
        { cwd: temp.path, retryDelaysMs: [20, 40] },
        { tools: () => {}, status: () => {}, lost: (_why, retryInMs) => lost.push(retryInMs) },
      );
      connection.start();
      const settled = await waitFor(() => lost.length >= 4 && connection!.state === "failed", 60_000);
      expect(settled, JSON.stringify({ lost, state: connection.state })).to.equal(true);
      expect(lost).to.deep.equal([0, 20, 40, undefined]);
      // No retry is left pending: the state stays failed.
      await new Promise((r) => setTimeout(r, 300));
      expect(connection.state).to.equal("failed");
      expect(lost).to.have.length(4);
    });
  });

  describe("one message over the limit", () => {
    let connection: McpConnection | undefined;
    afterEach(async () => {
      await connection?.close();
      connection = undefined;
    });

    it("fails only its own call, naming the server, the tool and the size, and the connection stays usable", async () => {
      connection = new McpConnection(
        "fault",
        { command: process.execPath, args: [faultServer] },
        { cwd: temp.path, maxMessageBytes: 1024 * 1024, retryDelaysMs: [] },
        { tools: () => {}, status: () => {} },
      );
      connection.start();
      await connection.whenSettled();
      expect(connection.state, connection.lastError).to.equal("connected");
      let failure: Error | undefined;
      await connection.callTool("big", { mb: 3 }).catch((error: Error) => {
        failure = error;
      });
      expect(failure?.message).to.match(/3\.0 MB, over the 1\.0 MB limit/);
      expect(failure?.message).to.contain('tool "big" of MCP server "fault"');
      expect(connection.state).to.equal("connected");
      const small = await connection.callTool("big", { mb: 0.5 });
      expect((small.content[0] as { text: string }).text).to.match(/the end$/);
      const pid = await connection.callTool("pid", {});
      pids.push(Number((pid.content[0] as { text: string }).text));
    });
  });

  describe("MessageBuffer", () => {
    const buffer = (max = 64) => new MessageBuffer({ maxMessageBytes: max, parse: deserializeMessage });
    const drain = (b: MessageBuffer) => {
      const out: unknown[] = [];
      for (let m = b.readMessage(); m !== null; m = b.readMessage()) out.push(m);
      return out;
    };

    it("reads messages split across chunks and several in one chunk", () => {
      const b = buffer(1024);
      const one = '{"jsonrpc":"2.0","id":1,"result":{}}\n';
      const two = '{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n';
      b.append(Buffer.from(one.slice(0, 10)));
      expect(b.readMessage()).to.equal(null);
      b.append(Buffer.from(one.slice(10) + two));
      expect(drain(b)).to.deep.equal([
        { jsonrpc: "2.0", id: 1, result: {} },
        { jsonrpc: "2.0", method: "notifications/initialized" },
      ]);
    });

    it("answers the request of an oversized response with an error and reads on", () => {
      const b = buffer(64);
      const payload = "y".repeat(200);
      b.append(Buffer.from(`{"result":{"text":"${payload.slice(0, 50)}`));
      b.append(
        Buffer.from(`${payload.slice(50)}"},"jsonrpc":"2.0","id":7}\n{"jsonrpc":"2.0","id":8,"result":{}}\n`),
      );
      const [dropped, next] = drain(b) as { id: number; error?: { code: number; message: string } }[];
      expect(dropped!.id).to.equal(7);
      expect(dropped!.error!.code).to.equal(MESSAGE_TOO_LARGE_CODE);
      expect(dropped!.error!.message).to.contain("over the 64 B limit");
      expect(next).to.deep.equal({ jsonrpc: "2.0", id: 8, result: {} });
    });

    it("finds the id at the start or the end of a response, never in a request", () => {
      expect(messageId('{"jsonrpc":"2.0","id":"a-1","result":{"x', "")).to.equal("a-1");
      expect(messageId('{"result":{"content":[', 'xx"}]},"jsonrpc":"2.0","id":12}')).to.equal(12);
      expect(messageId('{"result":{"content":[', '"id":3}]},"jsonrpc":"2.0"}')).to.equal(undefined);
      expect(messageId('{"method":"sampling/createMessage",', ',"jsonrpc":"2.0","id":4}')).to.equal(
        undefined,
      );
    });
  });
});

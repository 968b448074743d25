/**
 * RPC `export_html` against the built `knightcode --mode rpc` child process: a session file written here (tool
 * call with a nested call, a compaction, a branch summary, a branch point) is opened and exported.
 */

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = join(root, "dist", "hosts", "cli", "main.js");

const usage = {
  input: 10,
  output: 5,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 15,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** A session file as KnightCode writes it: the header, then entries that form a tree. */
function sessionFile(cwd: string): string {
  let n = 0;
  const at = () => `2026-12-01T10:00:${String(n++).padStart(2, "0")}.000Z`;
  const message = (id: string, parentId: string | null, msg: Record<string, unknown>) => ({
    type: "message",
    id,
    parentId,
    timestamp: at(),
    message: { timestamp: 0, ...msg },
  });
  const assistant = (content: unknown[]) => ({
    role: "assistant",
    content,
    api: "scripted",
    provider: "scripted",
    model: "scripted",
    usage,
    stopReason: "stop",
  });
  const lines = [
    { type: "session", version: 3, id: "5e55a0e1-0000-4000-8000-000000000001", timestamp: at(), cwd },
    message("a0000001", null, { role: "user", content: "Look at <b>the repo</b>" }),
    message(
      "a0000002",
      "a0000001",
      assistant([{ type: "toolCall", id: "call_1", name: "survey", arguments: { depth: 2 } }]),
    ),
    message("a0000003", "a0000002", {
      role: "toolResult",
      toolCallId: "call_1",
      toolName: "survey",
      content: [{ type: "text", text: "found </pre><script>alert(1)</script>" }],
      isError: false,
      nestedCalls: {
        calls: [
          {
            toolCallId: "call_1/1",
            toolName: "read",
            arguments: { path: "a.ts" },
            status: "ok",
            durationMs: 3,
          },
          { toolCallId: "call_1/2", toolName: "bash", status: "error", error: "exit <1>" },
        ],
        complete: false,
      },
    }),
    message("a0000004", "a0000003", assistant([{ type: "text", text: "The repo has two parts." }])),
    {
      type: "compaction",
      id: "a0000005",
      parentId: "a0000004",
      timestamp: at(),
      summary: "Earlier: surveyed the repo",
      firstKeptEntryId: "a0000004",
      tokensBefore: 9000,
    },
    // Two continuations of the compaction: an abandoned one, then the one the file ends on.
    message("b0000001", "a0000005", { role: "user", content: "Try plan A" }),
    message("b0000002", "b0000001", assistant([{ type: "text", text: "Plan A failed" }])),
    {
      type: "branch_summary",
      id: "c0000001",
      parentId: "a0000005",
      timestamp: at(),
      fromId: "b0000002",
      summary: "Plan A did not work because of <locks>",
    },
    message("c0000002", "c0000001", { role: "user", content: "Try plan B" }),
    message("c0000003", "c0000002", assistant([{ type: "text", text: "Plan B works" }])),
  ];
  const file = join(cwd, "session.jsonl");
  writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return file;
}

describe("RPC export_html", () => {
  const tmp = useTempDir("kc-rpc-export-");
  const running: RpcProcess[] = [];
  afterEach(() => {
    for (const p of running.splice(0)) p.kill();
  });

  function start(args: string[]): RpcProcess {
    const child = spawn(process.execPath, [bin, "--mode", "rpc", "--provider", "scripted", ...args], {
      cwd: tmp.path,
      env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
    });
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }

  it("exports the active branch of a session file and answers the path", async () => {
    const p = start(["--session", sessionFile(tmp.path)]);
    const response = await p.request("1", "export_html", { path: "exports/page.html" });
    expect(response.success).to.equal(false);
    expect(String(response.error)).to.contain(`the folder ${join(tmp.path, "exports")} does not exist`);
    mkdirSync(join(tmp.path, "exports"));
    const written = await p.request("2", "export_html", { path: "exports/page.html" });
    expect(written).to.deep.include({ type: "response", command: "export_html", success: true });
    const path = join(tmp.path, "exports", "page.html");
    expect(written.data).to.deep.equal({ path });
    const html = readFileSync(path, "utf8");

    expect(html).to.not.match(/<script/i);
    expect(html).to.contain("Look at &lt;b&gt;the repo&lt;/b&gt;");
    expect(html).to.contain('<span class="tool-name">survey</span>');
    expect(html).to.contain("found &lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).to.contain("2 nested calls (some were left out to stay within the limits)");
    expect(html).to.contain("exit &lt;1&gt;");
    expect(html).to.contain("Earlier: surveyed the repo");
    expect(html).to.contain("Branch summary");
    expect(html).to.contain("Plan A did not work because of &lt;locks&gt;");
    expect(html).to.contain("Plan B works");
    expect(html).to.not.contain("Plan A failed");
    expect(html).to.contain("The session branches after entry a0000005: 2 continuations");
    expect(html).to.contain("user: Try plan A");
    // The dialog-free notification reaches the client as well.
    expect(
      p.records.some(
        (r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).includes(path),
      ),
    ).to.equal(true);
    expect(await p.end()).to.equal(0);
  });

  it("writes <session id>.html in the working folder without a path, and refuses a folder", async () => {
    const p = start(["--no-session"]);
    const state = await p.request("1", "get_state");
    const id = (state.data as { sessionId: string }).sessionId;
    const written = await p.request("2", "export_html");
    expect(written.data).to.deep.equal({ path: join(tmp.path, `${id}.html`) });
    expect(readFileSync(join(tmp.path, `${id}.html`), "utf8")).to.contain(id);
    const folder = await p.request("3", "export_html", { path: tmp.path });
    expect(folder.success).to.equal(false);
    expect(String(folder.error)).to.contain(`${tmp.path} is a folder`);
    const bad = await p.request("4", "export_html", { path: 7 });
    expect(bad.success).to.equal(false);
    expect(String(bad.error)).to.contain("/path");
    expect(await p.end()).to.equal(0);
  });

  it("answers a clear error when builtin:html-export is disabled", async () => {
    mkdirSync(join(tmp.path, "agent"), { recursive: true });
    writeFileSync(
      join(tmp.path, "agent", "settings.json"),
      JSON.stringify({ extensions: ["-builtin:html-export"] }),
    );
    const p = start(["--no-session"]);
    const response = await p.request("1", "export_html", { path: "x.html" });
    expect(response.success).to.equal(false);
    expect(String(response.error)).to.contain("No /export command is registered");
    expect(existsSync(join(tmp.path, "x.html"))).to.equal(false);
    expect(await p.end()).to.equal(0);
  });
});

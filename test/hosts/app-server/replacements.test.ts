/**
 * Proof by replacement: the built-ins the app-server leans on are switched off in the settings and replaced by
 * extensions written against the published kit only (`replacements/`, loaded as personal extension files), and the
 * real `knightcode app-server` answers from the replacements: `thread/diff/read` from a replacement git service,
 * `mcp/list`'s live status from a replacement MCP client.
 */
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";
import { rpcError } from "./git-harness.js";
import { type Harness, harness } from "./harness.js";

const source = (name: string) => readFileSync(new URL(`./replacements/${name}`, import.meta.url), "utf8");

describe("knightcode app-server: built-ins replaced by extensions", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-swap-");

  it("answers thread/diff/read from a replacement git service when builtin:worktrees is off", async () => {
    h = await harness(
      tmp.path,
      { "git-service.ts": source("git-service.ts") },
      { extensions: ["-builtin:worktrees"] },
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    // The project is not even a git repository: only the replacement can answer.
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const first = await client.request("thread/diff/read", { threadId: thread.id, context: 5 });
    expect(first).to.deep.include({ scope: "uncommitted", root: h.project });
    expect(first.files.map((f) => [f.path, f.hunks[0]?.lines])).to.deep.equal([
      ["from-the-replacement.txt", ["+context 5"]],
    ]);
    // The same instance answers again (it counts its reads).
    const second = await client.request("thread/diff/read", { threadId: thread.id });
    expect(second.files[0]?.hunks[0]?.id).to.equal("read-2");
    const status = await rpcError(client.request("git/status", { threadId: thread.id }), "invalidParams");
    expect(status.message).to.contain("the replacement git service does not report a status");
  });

  it("answers git methods with a clear error when nothing provides the git service", async () => {
    h = await harness(tmp.path, {}, { extensions: ["-builtin:worktrees"] });
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const error = await rpcError(client.request("thread/diff/read", { threadId: thread.id }), "internal");
    expect(error.message).to.match(
      /No extension provides knightcode\.git .*builtin:worktrees is switched off/,
    );
    // The server keeps serving.
    expect((await client.request("thread/list", {})).data).to.have.length(1);
  });

  it("shows a replacement MCP client's servers and their state in mcp/list when builtin:mcp is off", async () => {
    h = await harness(
      tmp.path,
      { "mcp-client.ts": source("mcp-client.ts") },
      { extensions: ["-builtin:mcp"] },
    );
    const { client } = await h.start();
    await client.initialize();
    const listing = await client.request("mcp/list", {});
    expect(listing.servers).to.deep.equal([]);
    expect(listing.status).to.deep.equal([
      {
        name: "replacement-docs",
        state: "connected",
        transport: "http",
        tools: 3,
        source: { kind: "extension", owner: "mcp-client.ts" },
      },
      {
        name: "replacement-broken",
        state: "failed",
        transport: "stdio",
        tools: 0,
        source: { kind: "file", path: "/nowhere/mcp.json", scope: "global" },
        error: "spawn ENOENT",
      },
    ]);
  });
});

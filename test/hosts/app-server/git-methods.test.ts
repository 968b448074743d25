/**
 * `git/*` and `environment/*` over `knightcode app-server` on real repositories in temp dirs: status, staging a
 * hunk, commits (a message from the thread's model, `concurrentChange`), branches (`branchExists`,
 * `localChanges`), log, push to a local bare repository (upstream set the first time, `pushRejected`), a pull
 * request through a fake `gh` on PATH and `toolMissing` without it, `authRequired` from a loopback remote that answers 401, environments in trusted projects only, and
 * restore's `submodules` and `worktreeMissing` refusals.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { delimiter, join } from "node:path";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";
import { git, initRepo, read, rpcError, runTurn, startGitServer, TEN, write } from "./git-harness.js";
import { type Harness, harness } from "./harness.js";

describe("knightcode app-server: git methods", function () {
  this.timeout(120_000);
  let h: Harness;
  afterEach(async function () {
    if (this.currentTest?.state === "failed") for (const s of h?.servers ?? []) console.log(s.stderr());
    await h?.close();
  });
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-git-");

  async function start(env: Record<string, string> = {}) {
    h = await harness(tmp.path);
    const { server, model } = await startGitServer(h, env);
    const { thread } = await server.client.request("thread/start", { cwd: h.project });
    return { server, client: server.client, model, threadId: thread.id };
  }

  it("stages a hunk, commits with the model's message, and answers concurrentChange when the checkout moved", async () => {
    const { client, model, threadId } = await start();
    write(h.project, "a.txt", TEN.replace("one", "ONE").replace("nine", "NINE"));
    write(h.project, "b.txt", "b\n");
    const status = await client.request("git/status", { threadId });
    expect(status).to.include({ root: h.project, branch: "main", staged: 0, unstaged: 1, untracked: 1 });

    const unstaged = await client.request("thread/diff/read", { threadId, scope: "unstaged" });
    const hunk = unstaged.files.find((f) => f.path === "a.txt")?.hunks[0];
    await client.request("git/stage", { threadId, path: "a.txt", hunkId: hunk?.id ?? "" });
    const staged = await client.request("thread/diff/read", { threadId, scope: "staged" });
    expect(staged.files.map((f) => [f.path, f.additions])).to.deep.equal([["a.txt", 1]]);
    expect(staged.files[0]?.hunks[0]?.lines).to.include("+ONE");
    await client.request("git/unstage", { threadId });
    expect((await client.request("git/status", { threadId })).staged).to.equal(0);

    // An empty message is the model's, written from the staged diff outside the conversation.
    model.next("Shout two lines and add b");
    const commit = await client.request("git/commit", { threadId });
    expect(commit.message).to.equal("Shout two lines and add b");
    expect(git(h.project, ["log", "-1", "--format=%s"]).trim()).to.equal("Shout two lines and add b");
    expect(git(h.project, ["status", "--porcelain"])).to.equal("");
    const asked = JSON.stringify(h.model.requests.at(-1)?.body);
    expect(asked).to.contain("+NINE");
    expect((await client.request("thread/read", { threadId, includeTurns: true })).turns).to.deep.equal([]);

    // The checkout changes while the model writes: nothing is committed.
    write(h.project, "c.txt", "c\n");
    model.next("Add c", () => {
      write(h.project, "d.txt", "d\n");
      git(h.project, ["add", "d.txt"]);
    });
    await rpcError(client.request("git/commit", { threadId }), "gitConflict", "concurrentChange");
    expect(git(h.project, ["log", "-1", "--format=%s"]).trim()).to.equal("Shout two lines and add b");
    const explicit = await client.request("git/commit", { threadId, message: "Add c and d" });
    expect(explicit.commit).to.equal(git(h.project, ["rev-parse", "HEAD"]).trim());

    const log = await client.request("git/log", { threadId, limit: 2 });
    expect(log.commits.map((c) => c.subject)).to.deep.equal(["Add c and d", "Shout two lines and add b"]);
  });

  it("creates and switches branches, pushes with the upstream set once, and refuses what it must", async () => {
    const { server, client, model, threadId } = await start();
    const created = await client.request("git/branch/create", { threadId, name: "feature" });
    expect(created.branch).to.equal("feature");
    await rpcError(
      client.request("git/branch/create", { threadId, name: "main" }),
      "gitConflict",
      "branchExists",
    );
    const branches = await client.request("git/branches", { threadId });
    expect(branches.current).to.equal("feature");
    expect(branches.branches.map((b) => b.name).sort()).to.deep.equal(["feature", "main"]);

    model.turn({ "a.txt": TEN.replace("two", "TWO") });
    await runTurn(server, threadId, "edit");
    git(h.project, ["commit", "-qam", "two"]);
    write(h.project, "a.txt", "local edit\n");
    await rpcError(
      client.request("git/branch/switch", { threadId, name: "main" }),
      "gitConflict",
      "localChanges",
    );
    expect(read(h.project, "a.txt")).to.equal("local edit\n");
    git(h.project, ["checkout", "-q", "--", "a.txt"]);

    const bare = join(tmp.path, "remote.git");
    git(tmp.path, ["init", "-q", "--bare", bare]);
    git(h.project, ["remote", "add", "origin", bare]);
    const pushed = await client.request("git/push", { threadId });
    expect(pushed).to.deep.equal({ remote: "origin", branch: "feature", upstream: "origin/feature" });
    expect(git(h.project, ["rev-parse", "--abbrev-ref", "feature@{upstream}"]).trim()).to.equal(
      "origin/feature",
    );
    expect(git(bare, ["rev-parse", "feature"]).trim()).to.equal(git(h.project, ["rev-parse", "HEAD"]).trim());

    // Someone else pushed meanwhile: a non-forcing push is rejected, and nothing is forced.
    const other = join(tmp.path, "other");
    git(tmp.path, ["clone", "-q", "-b", "feature", bare, other]);
    write(other, "theirs.txt", "theirs\n");
    git(other, ["add", "-A"]);
    git(other, ["commit", "-q", "-m", "theirs"]);
    git(other, ["push", "-q", "origin", "feature"]);
    write(h.project, "mine.txt", "mine\n");
    git(h.project, ["add", "-A"]);
    git(h.project, ["commit", "-q", "-m", "mine"]);
    const rejected = await rpcError(client.request("git/push", { threadId }), "gitConflict", "pushRejected");
    expect(String(rejected.data?.output)).to.match(/rejected|fetch first|non-fast-forward/);
    expect(git(bare, ["log", "-1", "--format=%s", "feature"]).trim()).to.equal("theirs");

    await client.request("git/branch/switch", { threadId, name: "main" });
    expect(git(h.project, ["branch", "--show-current"]).trim()).to.equal("main");
  });

  it("answers authRequired when the remote wants credentials, and pushes nothing", async () => {
    // A loopback server that answers every request of git's smart HTTP with 401, as a private remote does.
    const asked: string[] = [];
    const remote = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="private"' }).end("credentials needed");
    });
    await new Promise<void>((done) => remote.listen(0, "127.0.0.1", done));
    try {
      const { client, threadId } = await start();
      const { port } = remote.address() as AddressInfo;
      git(h.project, ["remote", "add", "origin", `http://127.0.0.1:${port}/private.git`]);
      const refused = await rpcError(client.request("git/push", { threadId }), "authRequired");
      expect(refused.message).to.contain("origin");
      expect(asked.length).to.be.greaterThan(0);
      expect(asked[0]).to.match(/^GET \/private\.git\/info\/refs/);
      // No upstream was set by the failed push.
      expect(() => git(h.project, ["rev-parse", "--abbrev-ref", "@{upstream}"])).to.throw(/no upstream/);
    } finally {
      await new Promise((done) => remote.close(done));
    }
  });

  it("opens a pull request with gh on PATH and answers toolMissing without it", async () => {
    const bin = join(tmp.path, "bin");
    mkdirSync(bin, { recursive: true });
    const gh = join(bin, "gh");
    write(
      bin,
      "gh",
      `#!/bin/sh\necho "$@" > "${join(tmp.path, "gh-args")}"\necho https://example.invalid/pull/7\n`,
    );
    chmodSync(gh, 0o755);
    // No other gh on PATH: the test machine's own would answer instead.
    const path = [
      bin,
      ...(process.env.PATH ?? "").split(delimiter).filter((d) => d && !existsSync(join(d, "gh"))),
    ];
    const { client, threadId } = await start({ PATH: path.join(delimiter) });
    const pr = await client.request("git/pr/create", { threadId, title: "Fix", body: "Body", draft: true });
    expect(pr.url).to.equal("https://example.invalid/pull/7");
    expect(readFileSync(join(tmp.path, "gh-args"), "utf8").trim()).to.equal(
      "pr create --title Fix --body Body --draft",
    );
    rmSync(gh);
    await rpcError(client.request("git/pr/create", { threadId }), "toolMissing");
  });

  it("lists environments, and saves them only in a trusted project", async () => {
    const { client } = await start();
    expect(await client.request("environment/list", { cwd: h.project })).to.deep.equal({
      environments: [],
      trusted: false,
    });
    const environments = [{ name: "node", setup: { default: "npm ci" }, cleanup: { linux: "rm -rf out" } }];
    await rpcError(
      client.request("environment/save", { cwd: h.project, environments }),
      "invalidParams",
      "untrusted",
    );
    expect(existsSync(join(h.project, ".knightcode", "environments.json"))).to.equal(false);
    await client.request("project/trust/write", { cwd: h.project, trusted: true });
    expect(await client.request("environment/save", { cwd: h.project, environments })).to.deep.equal({
      environments,
    });
    expect(await client.request("environment/list", { cwd: h.project })).to.deep.equal({
      environments,
      trusted: true,
    });
    const twice = [...environments, { name: "node" }];
    await rpcError(
      client.request("environment/save", { cwd: h.project, environments: twice }),
      "invalidParams",
    );
  });

  it("refuses to restore a worktree holding a submodule (submodules) or deleted without a snapshot (worktreeMissing)", async () => {
    const { server, client } = await start();
    const lib = join(tmp.path, "lib");
    initRepo(lib);
    git(h.project, ["-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib"]);
    git(h.project, ["commit", "-q", "-m", "add lib"]);

    const { thread } = await client.request("thread/start", {
      cwd: h.project,
      workspace: { mode: "worktree" },
    });
    const wt = (thread.workspace as { path: string }).path;
    await runTurn(server, thread.id, "hello");
    // The submodule is not initialised in the worktree, so archive can snapshot and delete it; the snapshot
    // keeps the submodule's entry, which a worktree cannot rebuild.
    await client.request("thread/archive", { threadId: thread.id });
    expect(existsSync(wt)).to.equal(false);
    await client.request("thread/unarchive", { threadId: thread.id });
    await rpcError(
      client.request("thread/worktree/restore", { threadId: thread.id }),
      "gitConflict",
      "submodules",
    );

    const second = await client.request("thread/start", { cwd: h.project, workspace: { mode: "worktree" } });
    const gone = (second.thread.workspace as { path: string }).path;
    await runTurn(server, second.thread.id, "hello");
    rmSync(gone, { recursive: true, force: true });
    const listed = (await client.request("worktree/list", { cwd: h.project })).worktrees;
    expect(listed.find((w) => w.path === gone)?.deleted).to.equal(true);
    await rpcError(
      client.request("thread/worktree/restore", { threadId: second.thread.id }),
      "gitConflict",
      "worktreeMissing",
    );
  });
});

/**
 * Worktree threads over `knightcode app-server` on real git repositories in temp dirs: `thread/start` with a
 * worktree workspace (detached, same subfolder, no hook run, the user's index untouched, local changes carried,
 * an environment's setup streamed), joining a managed worktree, handoff both ways with `thread/replaced` and a
 * queued input following the thread, each handoff `gitConflict` reason, archive and `thread/worktree/restore`,
 * and `worktree/delete`'s refusals.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "chai";
import type { SpawnedAppServer } from "../../../hosts/sdk/app-server-client.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import {
  git,
  indexBytes,
  read,
  rpcError,
  runTurn,
  type ScriptedModel,
  startGitServer,
  TEN,
  write,
} from "./git-harness.js";
import { type Harness, harness, notifications } from "./harness.js";

describe("knightcode app-server: worktree threads", function () {
  this.timeout(120_000);
  let h: Harness;
  afterEach(async function () {
    if (this.currentTest?.state === "failed") for (const s of h?.servers ?? []) console.log(s.stderr());
    await h?.close();
  });
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-worktrees-");

  async function start(): Promise<{ server: SpawnedAppServer; model: ScriptedModel }> {
    h = await harness(tmp.path);
    return startGitServer(h);
  }

  it("starts a thread in a new detached worktree: same subfolder, no hook, index untouched, changes carried, setup streamed", async () => {
    const { server } = await start();
    const { client } = server;
    write(h.project, "pkg/lib/x.txt", "x\n");
    write(h.project, ".gitignore", "*.log\n");
    write(
      h.project,
      ".knightcode/environments.json",
      JSON.stringify({
        environments: [{ name: "node", setup: { default: 'echo "ready in $KNIGHTCODE_WORKTREE_PATH"' } }],
      }),
    );
    git(h.project, ["add", "-A"]);
    git(h.project, ["commit", "-q", "-m", "pkg"]);
    // A hook that must not run when the worktree is made.
    write(h.project, ".git/hooks/post-checkout", `#!/bin/sh\ntouch "${join(tmp.path, "hook-ran")}"\n`);
    chmodSync(join(h.project, ".git/hooks/post-checkout"), 0o755);
    write(h.project, "a.txt", TEN.replace("one", "staged"));
    git(h.project, ["add", "a.txt"]);
    write(h.project, "pkg/lib/x.txt", "unstaged\n");
    write(h.project, "untracked.txt", "untracked\n");
    write(h.project, "debug.log", "ignored\n");
    const indexBefore = indexBytes(h.project);
    await client.request("project/trust/write", { cwd: h.project, trusted: true });

    const { thread, warnings } = await client.request("thread/start", {
      cwd: join(h.project, "pkg/lib"),
      workspace: { mode: "worktree", carryLocalChanges: true, environment: "node" },
    });
    expect(warnings).to.deep.equal([]);
    const workspace = thread.workspace as {
      mode: string;
      path: string;
      projectCwd: string;
      deleted: boolean;
    };
    expect(workspace.mode).to.equal("worktree");
    expect(workspace.projectCwd).to.equal(h.project);
    expect(workspace.deleted).to.equal(false);
    expect(relative(join(h.agentDir, "worktrees"), workspace.path)).to.match(/^[0-9a-f]{4}\/project$/);
    expect(thread.cwd).to.equal(join(workspace.path, "pkg/lib"));
    const wt = workspace.path;
    expect(git(wt, ["status", "--porcelain", "--branch"])).to.match(/^## HEAD \(no branch\)/);
    expect(existsSync(join(tmp.path, "hook-ran"))).to.equal(false);
    expect(indexBytes(h.project).equals(indexBefore)).to.equal(true);
    expect(read(wt, "a.txt")).to.equal(TEN.replace("one", "staged"));
    expect(read(wt, "pkg/lib/x.txt")).to.equal("unstaged\n");
    expect(read(wt, "untracked.txt")).to.equal("untracked\n");
    expect(existsSync(join(wt, "debug.log"))).to.equal(false);
    const progress = notifications(server, "thread/workspace/progress");
    expect(progress.every((p) => p.threadId === thread.id && p.phase === "setup")).to.equal(true);
    expect(progress.map((p) => p.output).join("")).to.contain(`ready in ${wt}`);

    await runTurn(server, thread.id, "hello");
    const listed = await client.request("thread/list", {});
    expect(listed.data.find((s) => s.id === thread.id)?.workspaceMode).to.equal("worktree");
    // A start inside the managed worktree joins it.
    const joined = await client.request("thread/start", { cwd: wt, workspace: { mode: "worktree" } });
    expect(joined.thread.cwd).to.equal(wt);
    const { worktrees } = await client.request("worktree/list", { cwd: h.project });
    expect(worktrees).to.have.length(1);
    expect(worktrees[0]?.threadIds.sort()).to.deep.equal([thread.id, joined.thread.id].sort());
    expect(worktrees[0]?.deleted).to.equal(false);

    // A start whose session cannot open (no such model) leaves no worktree behind.
    await rpcError(
      client.request("thread/start", {
        cwd: h.project,
        model: "nosuch/model",
        workspace: { mode: "worktree" },
      }),
      "invalidParams",
      "model",
    );
    const after = (await client.request("worktree/list", { cwd: h.project })).worktrees;
    expect(after.filter((w) => !w.deleted).map((w) => w.path)).to.deep.equal([wt]);
    expect(git(h.project, ["worktree", "list", "--porcelain"]).match(/^worktree /gm)).to.have.length(2);

    // An untrusted project's scripts never run, and a start needs a commit to branch from.
    await client.request("project/trust/write", { cwd: h.project, trusted: false });
    const untrusted = await client.request("thread/start", {
      cwd: h.project,
      workspace: { mode: "worktree", environment: "node" },
    });
    expect(untrusted.warnings.map((w) => w.source)).to.deep.equal(["trust"]);
    const unborn = join(tmp.path, "unborn");
    mkdirSync(unborn);
    git(unborn, ["init", "-q"]);
    const before = readdirSync(join(h.agentDir, "worktrees")).length;
    await rpcError(
      client.request("thread/start", { cwd: unborn, workspace: { mode: "worktree" } }),
      "invalidParams",
    );
    expect(readdirSync(join(h.agentDir, "worktrees")).length).to.equal(before);
  });

  it("hands a thread to the main checkout and back: thread/replaced, same id, a queued input follows", async () => {
    const { server, model } = await start();
    const { client } = server;
    const { thread } = await client.request("thread/start", {
      cwd: h.project,
      name: "Fix the thing",
      workspace: { mode: "worktree" },
    });
    const wt = (thread.workspace as { path: string }).path;
    model.turn({ "a.txt": TEN.replace("three", "THREE"), "new.txt": "from the worktree\n" });
    await runTurn(server, thread.id, "edit in the worktree");
    expect(read(wt, "new.txt")).to.equal("from the worktree\n");

    // Refusals first: a dirty main checkout, a merge under way, a diverged branch of the chosen name.
    write(h.project, "mine.txt", "mine\n");
    const dirty = await rpcError(
      client.request("thread/handoff", { threadId: thread.id, to: "local" }),
      "gitConflict",
      "localChanges",
    );
    expect(dirty.message).to.contain("Stash or commit your local changes to hand off.");
    rmSync(join(h.project, "mine.txt"));
    write(h.project, ".git/MERGE_HEAD", `${git(h.project, ["rev-parse", "HEAD"]).trim()}\n`);
    await rpcError(
      client.request("thread/handoff", { threadId: thread.id, to: "local" }),
      "gitConflict",
      "operationInProgress",
    );
    rmSync(join(h.project, ".git/MERGE_HEAD"));
    git(h.project, ["switch", "-q", "-c", "taken"]);
    write(h.project, "a.txt", "diverged\n");
    git(h.project, ["commit", "-qam", "diverge"]);
    git(h.project, ["switch", "-q", "main"]);
    await rpcError(
      client.request("thread/handoff", { threadId: thread.id, to: "local", branch: "taken" }),
      "gitConflict",
      "branchExists",
    );
    await rpcError(
      client.request("thread/handoff", { threadId: thread.id, to: "worktree" }),
      "invalidParams",
    );

    // The handoff holds the thread: a queued input sent meanwhile starts where the thread went.
    model.turn({ "after.txt": "written after the handoff\n" });
    const handoff = client.request("thread/handoff", { threadId: thread.id, to: "local" });
    const queued = client.request("turn/queue/add", {
      threadId: thread.id,
      input: [{ type: "text", text: "continue" }],
    });
    const moved = await handoff;
    await queued;
    expect(moved.branch).to.equal("knightcode/fix-the-thing");
    expect(moved.thread.id).to.equal(thread.id);
    expect(moved.thread.cwd).to.equal(h.project);
    expect(moved.thread.workspace).to.deep.equal({ mode: "local" });
    const replaced = await client.waitFor("thread/replaced", (n) => n.threadId === thread.id);
    expect(replaced.thread.cwd).to.equal(h.project);
    expect(git(h.project, ["branch", "--show-current"]).trim()).to.equal("knightcode/fix-the-thing");
    expect(read(h.project, "new.txt")).to.equal("from the worktree\n");
    expect(read(h.project, "a.txt")).to.equal(TEN.replace("three", "THREE"));
    expect(git(wt, ["status", "--porcelain"])).to.equal("");
    const patches = readdirSync(join(h.agentDir, "handoff"));
    expect(patches.length).to.be.greaterThan(0);
    expect(readFileSync(join(h.agentDir, "handoff", patches[0] ?? ""), "utf8")).to.contain("new.txt");
    await client.waitFor(
      "turn/completed",
      (n) => n.threadId === thread.id && n.turn.files?.[0]?.path === "after.txt",
    );
    expect(read(h.project, "after.txt")).to.equal("written after the handoff\n");
    // A resumed thread is where it was handed to.
    const readBack = await client.request("thread/read", { threadId: thread.id });
    expect(readBack.thread.cwd).to.equal(h.project);

    const back = await client.request("thread/handoff", { threadId: thread.id, to: "worktree" });
    expect(back.thread.cwd).to.equal(wt);
    expect(read(wt, "after.txt")).to.equal("written after the handoff\n");
    expect(git(h.project, ["status", "--porcelain"])).to.equal("");
    expect(git(wt, ["status", "--porcelain", "--branch"])).to.match(/^## HEAD \(no branch\)/);

    // A worktree deleted behind the server's back.
    rmSync(wt, { recursive: true, force: true });
    await rpcError(
      client.request("thread/handoff", { threadId: thread.id, to: "local" }),
      "gitConflict",
      "worktreeDeleted",
    );
    await rpcError(client.request("git/status", { threadId: thread.id }), "gitConflict", "worktreeDeleted");
  });

  it("gives a thread born in the main checkout a worktree of its own when handed off to one", async () => {
    const { server, model } = await start();
    const { client } = server;
    const { thread } = await client.request("thread/start", { cwd: h.project, name: "Local work" });
    model.turn({ "a.txt": TEN.replace("six", "SIX"), "local.txt": "made in the checkout\n" });
    await runTurn(server, thread.id, "edit locally");
    const moved = await client.request("thread/handoff", { threadId: thread.id, to: "worktree" });
    const workspace = moved.thread.workspace as { mode: string; path: string; projectCwd: string };
    expect(workspace).to.deep.include({ mode: "worktree", projectCwd: h.project });
    expect(moved.thread.cwd).to.equal(workspace.path);
    expect((await client.waitFor("thread/replaced", (n) => n.threadId === thread.id)).thread.cwd).to.equal(
      workspace.path,
    );
    expect(read(workspace.path, "local.txt")).to.equal("made in the checkout\n");
    expect(read(workspace.path, "a.txt")).to.equal(TEN.replace("six", "SIX"));
    expect(git(h.project, ["status", "--porcelain"])).to.equal("");
    expect(read(h.project, "a.txt")).to.equal(TEN);
    // The next turn runs in the worktree.
    model.turn({ "next.txt": "in the worktree\n" });
    await runTurn(server, thread.id, "go on");
    expect(read(workspace.path, "next.txt")).to.equal("in the worktree\n");
    expect(existsSync(join(h.project, "next.txt"))).to.equal(false);
  });

  it("answers recoveryRequired with the saved patch when the changes cannot land", async () => {
    const { server } = await start();
    const { client } = server;
    write(h.project, ".gitignore", "*.log\n");
    git(h.project, ["add", "-A"]);
    git(h.project, ["commit", "-q", "-m", "ignore logs"]);
    const { thread } = await client.request("thread/start", {
      cwd: h.project,
      name: "Logs",
      workspace: { mode: "worktree" },
    });
    const wt = (thread.workspace as { path: string }).path;
    await runTurn(server, thread.id, "hello");
    write(wt, "build.log", "forced into the worktree's index\n");
    git(wt, ["add", "-f", "build.log"]);
    // Ignored in the main checkout, so it looks clean there, but the patch cannot create the file.
    write(h.project, "build.log", "the user's own log\n");
    const failed = await rpcError(
      client.request("thread/handoff", { threadId: thread.id, to: "local" }),
      "gitConflict",
      "recoveryRequired",
    );
    expect(readFileSync(String(failed.data?.patch), "utf8")).to.contain("build.log");
    expect(read(h.project, "build.log")).to.equal("the user's own log\n");
    expect(read(wt, "build.log")).to.equal("forced into the worktree's index\n");
    // The thread stayed where it was, and takes turns again.
    expect((await client.request("thread/read", { threadId: thread.id })).thread.cwd).to.equal(wt);
    await runTurn(server, thread.id, "still here");
  });

  it("streams the environment's cleanup script to the connection that archives, before the worktree goes", async () => {
    const { server } = await start();
    const { client } = server;
    write(
      h.project,
      ".knightcode/environments.json",
      JSON.stringify({
        environments: [
          {
            name: "node",
            setup: { default: "echo set up" },
            cleanup: { default: 'echo "tidying $KNIGHTCODE_WORKTREE_PATH"' },
          },
        ],
      }),
    );
    git(h.project, ["add", "-A"]);
    git(h.project, ["commit", "-q", "-m", "environments"]);
    await client.request("project/trust/write", { cwd: h.project, trusted: true });
    const { thread } = await client.request("thread/start", {
      cwd: h.project,
      workspace: { mode: "worktree", environment: "node" },
    });
    const wt = (thread.workspace as { path: string }).path;
    await runTurn(server, thread.id, "hello");
    await client.request("thread/archive", { threadId: thread.id });
    expect(existsSync(wt)).to.equal(false);
    const cleanup = notifications(server, "thread/workspace/progress").filter((p) => p.phase === "cleanup");
    expect(cleanup.every((p) => p.threadId === thread.id)).to.equal(true);
    expect(cleanup.map((p) => p.output).join("")).to.contain(`tidying ${wt}`);
  });

  it("archive deletes the worktree after a snapshot and thread/worktree/restore rebuilds it; worktree/delete refuses in use and nested repositories", async () => {
    const { server, model } = await start();
    const { client } = server;
    const { thread } = await client.request("thread/start", {
      cwd: h.project,
      workspace: { mode: "worktree" },
    });
    const wt = (thread.workspace as { path: string }).path;
    model.turn({ "a.txt": TEN.replace("four", "FOUR"), "notes.txt": "notes\n" });
    await runTurn(server, thread.id, "edit");
    git(wt, ["add", "notes.txt"]);
    await rpcError(client.request("worktree/delete", { path: wt }), "gitConflict", "worktreeInUse");

    await client.request("thread/archive", { threadId: thread.id });
    expect(existsSync(wt)).to.equal(false);
    const listed = (await client.request("worktree/list", {})).worktrees;
    expect(listed.map((w) => [w.path, w.deleted])).to.deep.equal([[wt, true]]);
    expect(git(h.project, ["for-each-ref", "refs/knightcode/snapshots/"])).to.match(/worktree-[0-9a-f]{4}/);

    await client.request("thread/unarchive", { threadId: thread.id });
    expect((await client.request("thread/read", { threadId: thread.id })).thread.workspace).to.deep.include({
      mode: "worktree",
      deleted: true,
    });
    const restored = await client.request("thread/worktree/restore", { threadId: thread.id });
    expect(restored.thread.cwd).to.equal(wt);
    expect(restored.thread.workspace).to.deep.include({ mode: "worktree", deleted: false });
    expect(read(wt, "a.txt")).to.equal(TEN.replace("four", "FOUR"));
    expect(read(wt, "notes.txt")).to.equal("notes\n");
    expect(git(wt, ["diff", "--cached", "--name-only"]).trim()).to.equal("notes.txt");
    await rpcError(client.request("thread/worktree/restore", { threadId: thread.id }), "invalidParams");
    // The restored thread works there.
    const status = await client.request("git/status", { threadId: thread.id });
    expect(status).to.include({ root: wt, staged: 1, unstaged: 1 });

    // A repository inside the worktree: archive keeps it, and worktree/delete answers submodules.
    git(wt, ["init", "-q", "vendored"]);
    await client.request("thread/archive", { threadId: thread.id });
    expect(existsSync(wt)).to.equal(true);
    const nested = await rpcError(
      client.request("worktree/delete", { path: wt }),
      "gitConflict",
      "submodules",
    );
    expect(nested.data?.paths).to.deep.equal(["vendored"]);
    rmSync(join(wt, "vendored"), { recursive: true, force: true });
    const deleted = await client.request("worktree/delete", { path: wt });
    expect(deleted.snapshot).to.match(/^refs\/knightcode\/snapshots\/worktree-/);
    expect(existsSync(wt)).to.equal(false);
    // The user's own worktrees are never listed or touched.
    const own = join(tmp.path, "own-worktree");
    git(h.project, ["worktree", "add", "-q", "--detach", own]);
    expect((await client.request("worktree/list", {})).worktrees.map((w) => w.path)).to.deep.equal([wt]);
    await rpcError(client.request("worktree/delete", { path: own }), "invalidParams");
    expect(existsSync(own)).to.equal(true);
  });
});

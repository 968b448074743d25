import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { expect } from "chai";
import {
  createWorktree,
  deleteWorktree,
  listWorktrees,
  pruneWorktrees,
  restoreWorktree,
  type WorktreeSettings,
  worktreeSettings,
} from "../../../../builtin-extensions/worktrees/git/worktrees.js";
import { rejection, useGitRepo } from "./git-fixture.js";

describe("builtin:worktrees git engine: worktrees", () => {
  const fx = useGitRepo();
  let settings: WorktreeSettings;
  beforeEach(() => {
    settings = worktreeSettings(join(fx.dir, "agent"), { keep: 15 });
  });

  function hook(name: string): string {
    const marker = join(fx.dir, `${name}-ran`);
    fx.write(`.git/hooks/${name}`, `#!/bin/sh\ntouch "${marker}"\n`);
    chmodSync(join(fx.repo, ".git/hooks", name), 0o755);
    return marker;
  }

  it("creates a detached worktree under <root>/<4 hex>/<repo name> at cwd's subfolder, running no hook or filter", async () => {
    fx.write("pkg/inner/file.txt", "inner\n");
    fx.write(".gitattributes", "*.txt filter=shout\n");
    fx.commitAll("sub");
    fx.git(["config", "filter.shout.smudge", "tr a-z A-Z"]);
    fx.git(["config", "filter.shout.clean", "cat"]);
    fx.git(["config", "filter.shout.required", "true"]);
    const marker = hook("post-checkout");
    const created = await createWorktree({ cwd: join(fx.repo, "pkg/inner"), settings, threadId: "th1" });
    const { path } = created.record;
    expect(dirname(dirname(path))).to.equal(settings.root);
    expect(basename(dirname(path))).to.match(/^[0-9a-f]{4}$/);
    expect(basename(path)).to.equal("repo");
    expect(created.cwd).to.equal(join(path, "pkg/inner/"));
    expect(existsSync(marker), "post-checkout hook ran").to.equal(false);
    expect(readFileSync(join(path, "pkg/inner/file.txt"), "utf8")).to.equal("inner\n");
    expect(fx.git(["status", "--porcelain", "--branch"], path)).to.match(/^## HEAD \(no branch\)\n$/);
    expect(fx.git(["branch", "--list"]).trim()).to.equal("* main");
    expect(created.record.threadIds).to.deep.equal(["th1"]);
  });

  it("carries staged, unstaged and untracked changes (not ignored ones) and leaves the user's index alone", async () => {
    fx.write(".gitignore", "ignored.log\n");
    fx.commitAll("ignore");
    fx.write("staged.txt", "staged\n");
    fx.git(["add", "staged.txt"]);
    fx.write("a.txt", "unstaged\n");
    fx.write("untracked.bin", Buffer.from([0, 1, 2, 255]));
    fx.write("ignored.log", "noise\n");
    const index = fx.indexBytes();
    const { record } = await createWorktree({ cwd: fx.repo, settings, carryLocalChanges: true });
    expect(fx.indexBytes().equals(index)).to.equal(true);
    expect(readFileSync(join(record.path, "staged.txt"), "utf8")).to.equal("staged\n");
    expect(readFileSync(join(record.path, "a.txt"), "utf8")).to.equal("unstaged\n");
    expect([...readFileSync(join(record.path, "untracked.bin"))]).to.deep.equal([0, 1, 2, 255]);
    expect(existsSync(join(record.path, "ignored.log"))).to.equal(false);
    // Still uncommitted edits in the worktree.
    expect(fx.git(["status", "--porcelain"], record.path)).to.match(/ M a\.txt/);
  });

  it("leaves nothing behind when creation fails", async () => {
    fx.write("a.txt", "conflicting local edit\n");
    fx.write("a.txt", "changed later\n");
    fx.git(["commit", "-qam", "second"]);
    fx.write("a.txt", "local edit on top of second\n");
    const error = await rejection(
      createWorktree({ cwd: fx.repo, settings, baseRef: "HEAD~1", carryLocalChanges: true }),
    );
    expect(error.data?.reason).to.equal("patchFailed");
    expect(readdirSync(settings.root)).to.deep.equal([]);
    expect(fx.git(["worktree", "list"]).trim().split("\n")).to.have.length(1);
    const bad = await rejection(createWorktree({ cwd: fx.repo, settings, baseRef: "no-such-ref" }));
    expect(bad.errorName).to.equal("invalidParams");
  });

  it("joins the managed worktree a cwd is inside", async () => {
    const first = await createWorktree({ cwd: fx.repo, settings, threadId: "a" });
    const second = await createWorktree({ cwd: first.cwd, settings, threadId: "b" });
    expect(second.joined).to.equal(true);
    expect(second.record.path).to.equal(first.record.path);
    const list = await listWorktrees(settings);
    expect(list).to.have.length(1);
    expect(list[0]?.threadIds).to.deep.equal(["a", "b"]);
  });

  it("refuses an unborn HEAD with invalidParams", async () => {
    fx.git(["checkout", "-q", "--orphan", "empty"]);
    fx.git(["rm", "-rfq", "."]);
    const error = await rejection(createWorktree({ cwd: fx.repo, settings }));
    expect(error.errorName).to.equal("invalidParams");
  });

  it("lists, deletes after a snapshot, and restores with the working files and staged state", async () => {
    const { record } = await createWorktree({ cwd: fx.repo, settings, threadId: "t" });
    fx.write("a.txt", "modified\n", record.path);
    fx.write("new.txt", "staged new\n", record.path);
    fx.git(["add", "new.txt"], record.path);
    fx.write("new.txt", "staged new, then edited\n", record.path);
    fx.write("dir/untracked.txt", "u\n", record.path);
    const status = fx.git(["status", "--porcelain"], record.path);
    const head = fx.git(["rev-parse", "HEAD"], record.path);
    const listed = await listWorktrees(settings, fx.repo);
    expect(listed[0]).to.include({
      path: record.path,
      projectCwd: fx.repo,
      deleted: false,
      head: head.trim(),
    });

    const inUse = await rejection(
      deleteWorktree(settings, record.path, { isInUse: (p) => p === record.path }),
    );
    expect(inUse.data?.reason).to.equal("worktreeInUse");

    const { snapshot } = await deleteWorktree(settings, record.path);
    expect(snapshot).to.match(/^refs\/knightcode\/snapshots\/worktree-[0-9a-f]{4}\/\d+$/);
    expect(existsSync(record.path)).to.equal(false);
    expect(existsSync(dirname(record.path))).to.equal(false);
    expect((await listWorktrees(settings))[0]?.deleted).to.equal(true);

    await restoreWorktree(settings, record.path);
    expect(fx.git(["status", "--porcelain"], record.path)).to.equal(status);
    expect(fx.git(["rev-parse", "HEAD"], record.path)).to.equal(head);
    expect(fx.git(["diff", "--cached", "--name-only"], record.path).trim()).to.equal("new.txt");
    expect((await rejection(restoreWorktree(settings, record.path))).errorName).to.equal("invalidParams");
  });

  it("refuses to delete a worktree holding a nested repository", async () => {
    const { record } = await createWorktree({ cwd: fx.repo, settings });
    mkdirSync(join(record.path, "nested"));
    fx.git(["init", "-q"], join(record.path, "nested"));
    const error = await rejection(deleteWorktree(settings, record.path));
    expect(error.data?.reason).to.equal("submodules");
    expect(existsSync(record.path)).to.equal(true);
  });

  it("treats a locked worktree as in use", async () => {
    const { record } = await createWorktree({ cwd: fx.repo, settings });
    fx.git(["worktree", "lock", record.path]);
    const error = await rejection(deleteWorktree(settings, record.path));
    expect(error.data?.reason).to.equal("worktreeInUse");
    expect(existsSync(record.path)).to.equal(true);
  });

  it("works in a repository with a submodule, and refuses to restore a snapshot holding it", async () => {
    const lib = join(fx.dir, "lib");
    mkdirSync(lib);
    fx.git(["init", "-q", "-b", "main"], lib);
    fx.write("lib.txt", "lib\n", lib);
    fx.commitAll("lib", lib);
    fx.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "sub"]);
    fx.commitAll("add submodule");
    const { record } = await createWorktree({ cwd: fx.repo, settings, carryLocalChanges: true });
    // New worktrees do not initialise submodules: the folder is there, empty.
    expect(readdirSync(join(record.path, "sub"))).to.deep.equal([]);
    fx.write("a.txt", "changed\n", record.path);
    const { snapshot } = await deleteWorktree(settings, record.path);
    expect(snapshot).to.be.a("string");
    const error = await rejection(restoreWorktree(settings, record.path));
    expect(error.data?.reason).to.equal("submodules");
    expect(existsSync(record.path)).to.equal(false);
  });

  it("unregisters a worktree deleted behind its back, which then cannot be restored", async () => {
    const { record } = await createWorktree({ cwd: fx.repo, settings });
    fx.git(["worktree", "remove", "--force", record.path]);
    expect((await listWorktrees(settings))[0]?.deleted).to.equal(true);
    expect(await deleteWorktree(settings, record.path)).to.deep.equal({});
    const error = await rejection(restoreWorktree(settings, record.path));
    expect(error.data?.reason).to.equal("worktreeMissing");
  });

  it("never touches the user's own worktrees", async () => {
    const own = join(fx.dir, "own");
    fx.git(["worktree", "add", "-q", "--detach", own]);
    expect(await listWorktrees(settings)).to.deep.equal([]);
    expect((await rejection(deleteWorktree(settings, own))).errorName).to.equal("invalidParams");
    expect(existsSync(own)).to.equal(true);
  });

  it("prunes the least recently used past worktrees.keep, after a snapshot", async () => {
    const small = { ...settings, keep: 1 };
    const older = await createWorktree({ cwd: fx.repo, settings: small });
    await new Promise((r) => setTimeout(r, 5));
    const newer = await createWorktree({ cwd: fx.repo, settings: small });
    expect(await pruneWorktrees(small)).to.deep.equal([older.record.path]);
    expect(existsSync(newer.record.path)).to.equal(true);
    const list = await listWorktrees(small);
    expect(list.find((w) => w.path === older.record.path)?.deleted).to.equal(true);
  });
});

describe("builtin:worktrees git engine: worktree environments", () => {
  const fx = useGitRepo();

  it("runs the environment's setup in a new worktree of a trusted project and its cleanup before deletion", async () => {
    const settings = worktreeSettings(join(fx.dir, "agent"), {});
    const log = join(fx.dir, "env.log");
    fx.write(
      ".knightcode/environments.json",
      JSON.stringify({
        environments: [
          {
            name: "node",
            setup: { default: `echo "setup $KNIGHTCODE_WORKTREE_PATH" >> "${log}"; echo progress` },
            cleanup: { default: `echo "cleanup $KNIGHTCODE_WORKTREE_PATH" >> "${log}"` },
          },
        ],
      }),
    );
    const progress: string[] = [];
    const created = await createWorktree({
      cwd: fx.repo,
      settings,
      environment: "node",
      trusted: true,
      onProgress: (phase, output) => progress.push(`${phase}:${output}`),
    });
    expect(created.setup?.exitCode).to.equal(0);
    expect(progress.join("")).to.equal("setup:progress\n");
    await deleteWorktree(settings, created.record.path, { trusted: true });
    const path = created.record.path;
    expect(readFileSync(log, "utf8")).to.equal(`setup ${path}\ncleanup ${path}\n`);

    const untrusted = await createWorktree({ cwd: fx.repo, settings, environment: "node", trusted: false });
    expect(untrusted.setup?.skipped).to.equal("untrusted");
    const missing = await rejection(createWorktree({ cwd: fx.repo, settings, environment: "none" }));
    expect(missing.errorName).to.equal("invalidParams");
  });
});

import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { readChanges } from "../../../../builtin-extensions/worktrees/git/changes.js";
import { handoffToLocal, handoffToWorktree } from "../../../../builtin-extensions/worktrees/git/handoff.js";
import {
  gitBranchCreate,
  gitBranches,
  gitBranchSwitch,
  gitCommit,
  gitLog,
  gitPrCreate,
  gitPush,
  gitStage,
  gitStatus,
  gitUnstage,
} from "../../../../builtin-extensions/worktrees/git/ops.js";
import {
  createWorktree,
  findWorktree,
  type WorktreeSettings,
  worktreeSettings,
} from "../../../../builtin-extensions/worktrees/git/worktrees.js";
import { rejection, TEN, useGitRepo } from "./git-fixture.js";

describe("builtin:worktrees git engine: operations", () => {
  const fx = useGitRepo();

  it("reports status counts and an operation in progress", async () => {
    fx.write("a.txt", "changed\n");
    fx.write("s.txt", "s\n");
    fx.git(["add", "s.txt"]);
    fx.write("u.txt", "u\n");
    const status = await gitStatus(fx.repo);
    expect(status).to.include({ branch: "main", staged: 1, unstaged: 1, untracked: 1, conflicted: 0 });
    expect(status.operation).to.equal(undefined);
    fx.write(".git/MERGE_HEAD", `${fx.git(["rev-parse", "HEAD"]).trim()}\n`);
    expect((await gitStatus(fx.repo)).operation).to.equal("a merge");
  });

  it("stages and unstages a path and a single hunk", async () => {
    fx.write("a.txt", TEN.replace("two", "TWO").replace("nine", "NINE"));
    const unstaged = await readChanges(fx.repo, { scope: "unstaged", context: 1 });
    const hunk = unstaged.files[0]?.hunks[1];
    await gitStage(fx.repo, { path: "a.txt", hunkId: hunk?.id ?? "", context: 1 });
    expect(fx.git(["diff", "--cached"]))
      .to.match(/\+NINE/)
      .and.not.match(/\+TWO/);
    const staged = await readChanges(fx.repo, { scope: "staged", context: 1 });
    await gitUnstage(fx.repo, { path: "a.txt", hunkId: staged.files[0]?.hunks[0]?.id ?? "", context: 1 });
    expect(fx.git(["diff", "--cached"])).to.equal("");
    await gitStage(fx.repo, { path: "a.txt" });
    expect(fx.git(["diff", "--cached", "--name-only"]).trim()).to.equal("a.txt");
    await gitUnstage(fx.repo);
    expect(fx.git(["diff", "--cached"])).to.equal("");
    fx.write("a.txt", TEN.replace("nine", "NINE!"));
    const stale = await rejection(gitStage(fx.repo, { path: "a.txt", hunkId: hunk?.id ?? "", context: 1 }));
    expect(stale.data?.reason).to.equal("diffChanged");
  });

  it("commits with a message the model writes from the staged diff, and answers concurrentChange", async () => {
    fx.write("a.txt", "changed\n");
    let seen = "";
    const done = await gitCommit(fx.repo, {
      writeMessage: async (diff) => {
        seen = diff;
        return "Change a.txt";
      },
    });
    expect(seen).to.match(/\+changed/);
    expect(fx.git(["log", "-1", "--format=%s"]).trim()).to.equal("Change a.txt");
    expect(done.commit).to.equal(fx.git(["rev-parse", "HEAD"]).trim());
    fx.write("a.txt", "again\n");
    const raced = await rejection(
      gitCommit(fx.repo, {
        writeMessage: async () => {
          fx.write("b.txt", "b\n");
          fx.git(["add", "b.txt"]);
          return "late";
        },
      }),
    );
    expect(raced.data?.reason).to.equal("concurrentChange");
    expect(fx.git(["log", "-1", "--format=%s"]).trim()).to.equal("Change a.txt");
  });

  it("pushes with an explicit refspec, sets the upstream, and answers pushRejected", async () => {
    const bare = join(fx.dir, "remote.git");
    fx.git(["init", "-q", "--bare", "-b", "main", bare], fx.dir);
    fx.git(["remote", "add", "origin", bare]);
    const pushed = await gitPush(fx.repo);
    expect(pushed).to.deep.equal({ remote: "origin", branch: "main", upstream: "origin/main" });
    expect(fx.git(["rev-parse", "--abbrev-ref", "main@{upstream}"]).trim()).to.equal("origin/main");
    // Someone else pushes; ours no longer fast-forwards.
    const other = join(fx.dir, "other");
    fx.git(["clone", "-q", bare, other], fx.dir);
    fx.write("x.txt", "x\n", other);
    fx.commitAll("theirs", other);
    fx.git(["push", "-q", "origin", "main"], other);
    fx.write("y.txt", "y\n");
    fx.commitAll("ours");
    const rejected = await rejection(gitPush(fx.repo));
    expect(rejected.data?.reason).to.equal("pushRejected");
    expect(rejected.data?.output).to.match(/rejected/);
  });

  it("creates a pull request with gh, and answers toolMissing without it", async () => {
    const gh = fx.write(
      "bin/gh",
      '#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\necho https://example.test/pr/1\n',
      fx.dir,
    );
    chmodSync(gh, 0o755);
    const made = await gitPrCreate(fx.repo, { title: "T", body: "B", draft: true, gh });
    expect(made.url).to.equal("https://example.test/pr/1");
    expect(readFileSync(join(fx.dir, "bin/args"), "utf8").trim()).to.equal(
      "pr create --title T --body B --draft",
    );
    const missing = await rejection(gitPrCreate(fx.repo, { gh: join(fx.dir, "bin/none") }));
    expect(missing.errorName).to.equal("toolMissing");
  });

  it("creates a branch here, lists branches, refuses an existing name and a switch over local changes", async () => {
    await gitBranchCreate(fx.repo, "feature");
    expect((await gitBranches(fx.repo)).current).to.equal("feature");
    expect((await rejection(gitBranchCreate(fx.repo, "main"))).data?.reason).to.equal("branchExists");
    fx.write("a.txt", "on feature\n");
    fx.commitAll("feature change");
    fx.write("a.txt", "uncommitted\n");
    const refused = await rejection(gitBranchSwitch(fx.repo, "main"));
    expect(refused.data?.reason).to.equal("localChanges");
    expect(refused.data?.paths).to.deep.equal(["a.txt"]);
    fx.git(["checkout", "--", "a.txt"]);
    await gitBranchSwitch(fx.repo, "main");
    expect(fx.read("a.txt")).to.equal(TEN);
    const log = await gitLog(fx.repo, { base: "main", limit: 5 });
    expect(log.commits).to.deep.equal([]);
    expect((await gitLog(fx.repo, { limit: 1 })).commits[0]?.subject).to.equal("first");
  });

  it("refuses a switch that would overwrite an ignored file the branch tracks", async () => {
    fx.git(["switch", "-q", "-c", "tracks-env"]);
    fx.write(".env", "tracked\n");
    fx.commitAll("env");
    fx.git(["switch", "-q", "main"]);
    fx.write(".gitignore", ".env\n");
    fx.write(".env", "my secret\n");
    const refused = await rejection(gitBranchSwitch(fx.repo, "tracks-env"));
    expect(refused.data?.reason).to.equal("localChanges");
    expect(fx.read(".env")).to.equal("my secret\n");
  });
});

describe("builtin:worktrees git engine: handoff", () => {
  const fx = useGitRepo();
  let settings: WorktreeSettings;
  let agentDir: string;
  beforeEach(() => {
    agentDir = join(fx.dir, "agent");
    settings = worktreeSettings(agentDir, {});
  });

  it("hands a worktree's changes to the main checkout on a new branch and back again", async () => {
    const { record } = await createWorktree({ cwd: fx.repo, settings });
    fx.write("a.txt", "from the worktree\n", record.path);
    fx.write("new.txt", "new\n", record.path);
    const result = await handoffToLocal({ record, settings, agentDir, title: "Fix the thing" });
    expect(result.branch).to.equal("knightcode/fix-the-thing");
    expect(existsSync(result.patch)).to.equal(true);
    expect(result.patch.startsWith(join(agentDir, "handoff"))).to.equal(true);
    expect(fx.git(["branch", "--show-current"]).trim()).to.equal("knightcode/fix-the-thing");
    expect(fx.read("a.txt")).to.equal("from the worktree\n");
    expect(fx.read("new.txt")).to.equal("new\n");
    expect(fx.git(["status", "--porcelain"], record.path)).to.equal("");
    expect(existsSync(join(record.path, "new.txt"))).to.equal(false);

    const back = await handoffToWorktree({
      cwd: fx.repo,
      settings,
      agentDir,
      record: findWorktree(settings.root, record.path),
    });
    expect(back.record.path).to.equal(record.path);
    expect(fx.read("a.txt", record.path)).to.equal("from the worktree\n");
    expect(fx.git(["status", "--porcelain"])).to.equal("");
    expect(fx.git(["status", "--porcelain", "--branch"], record.path)).to.match(/^## HEAD \(no branch\)/);
  });

  it("refuses a dirty destination, an existing diverged branch, and a deleted worktree", async () => {
    const { record } = await createWorktree({ cwd: fx.repo, settings });
    fx.write("dirty.txt", "mine\n");
    const dirty = await rejection(handoffToLocal({ record, settings, agentDir, title: "x" }));
    expect(dirty.data?.reason).to.equal("localChanges");
    expect(dirty.message).to.equal("Stash or commit your local changes to hand off.");
    fx.git(["clean", "-fq"]);
    fx.git(["branch", "taken"]);
    fx.write("a.txt", "diverge\n");
    fx.git(["commit", "-qam", "diverge"]);
    fx.git(["switch", "-q", "--detach"]);
    fx.git(["branch", "-f", "taken", "HEAD"]);
    fx.git(["switch", "-q", "main"]);
    const exists = await rejection(
      handoffToLocal({ record, settings, agentDir, title: "x", branch: "taken" }),
    );
    expect(exists.data?.reason).to.equal("branchExists");
    fx.git(["worktree", "remove", "--force", record.path]);
    const gone = await rejection(handoffToLocal({ record, settings, agentDir, title: "x" }));
    expect(gone.data?.reason).to.equal("worktreeDeleted");
  });

  it("answers operationInProgress during a merge in the destination", async () => {
    const { record } = await createWorktree({ cwd: fx.repo, settings });
    fx.write(".git/MERGE_HEAD", `${fx.git(["rev-parse", "HEAD"]).trim()}\n`);
    const busy = await rejection(handoffToLocal({ record, settings, agentDir, title: "x" }));
    expect(busy.data?.reason).to.equal("operationInProgress");
  });

  it("answers recoveryRequired with the saved patch when the changes do not land, leaving the worktree as it was", async () => {
    fx.write(".gitignore", "*.log\n");
    fx.commitAll("ignore logs");
    const { record } = await createWorktree({ cwd: fx.repo, settings });
    fx.write("build.log", "forced into the worktree's index\n", record.path);
    fx.git(["add", "-f", "build.log"], record.path);
    // An ignored file of the same name in the main checkout: clean by status, but the patch cannot create it.
    fx.write("build.log", "the user's own log\n");
    const failed = await rejection(handoffToLocal({ record, settings, agentDir, title: "x" }));
    expect(failed.data?.reason).to.equal("recoveryRequired");
    expect(readFileSync(failed.data?.patch ?? "", "utf8")).to.match(/build\.log/);
    expect(fx.read("build.log")).to.equal("the user's own log\n");
    expect(fx.read("build.log", record.path)).to.equal("forced into the worktree's index\n");
  });
});

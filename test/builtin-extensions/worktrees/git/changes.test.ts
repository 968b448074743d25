import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  readChanges,
  revertChanges,
  type TurnRecord,
} from "../../../../builtin-extensions/worktrees/git/changes.js";
import { snapshotTurnEnd, snapshotTurnStart } from "../../../../builtin-extensions/worktrees/git/turns.js";
import { rejection, TEN, useGitRepo } from "./git-fixture.js";

describe("builtin:worktrees git engine: changes", () => {
  const fx = useGitRepo();

  it("reads the uncommitted scope with untracked files and leaves the index file byte-identical", async () => {
    fx.write("a.txt", TEN.replace("two", "TWO"));
    fx.write("new.txt", "fresh\n");
    fx.write(".gitignore", "ignored.txt\n");
    fx.write("ignored.txt", "secret\n");
    const index = fx.indexBytes();
    const result = await readChanges(fx.repo, { context: 1 });
    expect(fx.indexBytes().equals(index)).to.equal(true);
    expect(result.scope).to.equal("uncommitted");
    expect(result.root).to.equal(fx.repo);
    const byPath = Object.fromEntries(result.files.map((f) => [f.path, f]));
    expect(Object.keys(byPath).sort()).to.deep.equal([".gitignore", "a.txt", "new.txt"]);
    expect(byPath["a.txt"]).to.include({ status: "modified", binary: false, additions: 1, deletions: 1 });
    expect(byPath["a.txt"]?.hunks[0]?.lines).to.deep.equal([" one", "-two", "+TWO", " three"]);
    expect(byPath["new.txt"]).to.include({ status: "added", additions: 1, deletions: 0 });
  });

  it("tells staged from unstaged and reports paths from the root, not the subfolder cwd", async () => {
    fx.write("pkg/b.txt", "b\n");
    fx.git(["add", "pkg/b.txt"]);
    fx.write("a.txt", "changed\n");
    const staged = await readChanges(join(fx.repo, "pkg"), { scope: "staged" });
    expect(staged.files.map((f) => f.path)).to.deep.equal(["pkg/b.txt"]);
    const unstaged = await readChanges(join(fx.repo, "pkg"), { scope: "unstaged" });
    expect(unstaged.files.map((f) => f.path)).to.deep.equal(["a.txt"]);
  });

  it("gives hunk ids that are stable across reads and change with the file or the context", async () => {
    fx.write("a.txt", TEN.replace("two", "TWO").replace("nine", "NINE"));
    const first = await readChanges(fx.repo, { context: 1 });
    const again = await readChanges(fx.repo, { context: 1 });
    const ids = first.files[0]?.hunks.map((h) => h.id);
    expect(ids).to.have.length(2);
    expect(again.files[0]?.hunks.map((h) => h.id)).to.deep.equal(ids);
    const wider = await readChanges(fx.repo, { context: 3 });
    expect(wider.files[0]?.hunks.map((h) => h.id)).to.not.include(ids?.[0]);
    fx.write("a.txt", TEN.replace("two", "TWO").replace("nine", "NINE").replace("ten", "TEN"));
    const after = await readChanges(fx.repo, { context: 1 });
    expect(after.files[0]?.hunks.map((h) => h.id)).to.not.include(ids?.[0]);
  });

  it("reverts one hunk by id and answers diffChanged for a hunk that changed", async () => {
    fx.write("a.txt", TEN.replace("two", "TWO").replace("nine", "NINE"));
    const read = await readChanges(fx.repo, { context: 1 });
    const [first, second] = read.files[0]?.hunks ?? [];
    const reverted = await revertChanges(fx.repo, { path: "a.txt", hunkId: first?.id ?? "", context: 1 });
    expect(reverted.paths).to.deep.equal(["a.txt"]);
    expect(fx.read("a.txt")).to.equal(TEN.replace("nine", "NINE"));
    // The other hunk's id hashed the file's old blob id, which the revert changed.
    const stale = await rejection(
      revertChanges(fx.repo, { path: "a.txt", hunkId: second?.id ?? "", context: 1 }),
    );
    expect(stale.errorName).to.equal("gitConflict");
    expect(stale.data?.reason).to.equal("diffChanged");
    expect(fx.read("a.txt")).to.equal(TEN.replace("nine", "NINE"));
  });

  it("reverts a hunk whatever diff.noprefix and diff.mnemonicPrefix say", async () => {
    fx.git(["config", "diff.noprefix", "true"]);
    fx.git(["config", "diff.mnemonicPrefix", "true"]);
    fx.write("a.txt", TEN.replace("two", "TWO"));
    const read = await readChanges(fx.repo);
    await revertChanges(fx.repo, { path: "a.txt", hunkId: read.files[0]?.hunks[0]?.id ?? "" });
    expect(fx.read("a.txt")).to.equal(TEN);
  });

  it("matches no action with an id from a context 0 or ignoreWhitespace read", async () => {
    fx.write("a.txt", TEN.replace("two", "TWO"));
    const zero = await readChanges(fx.repo, { context: 0 });
    const z = await rejection(
      revertChanges(fx.repo, { path: "a.txt", hunkId: zero.files[0]?.hunks[0]?.id ?? "", context: 0 }),
    );
    expect(z.data?.reason).to.equal("diffChanged");
    const ws = await readChanges(fx.repo, { ignoreWhitespace: true });
    const w = await rejection(
      revertChanges(fx.repo, { path: "a.txt", hunkId: ws.files[0]?.hunks[0]?.id ?? "" }),
    );
    expect(w.data?.reason).to.equal("diffChanged");
    expect(fx.read("a.txt")).to.equal(TEN.replace("two", "TWO"));
  });

  it("reverts a whole file, deleting an added one, and refuses staged and paths outside the diff", async () => {
    fx.write("a.txt", "gone\n");
    fx.write("added.txt", "new\n");
    await revertChanges(fx.repo, { path: "added.txt" });
    expect(existsSync(join(fx.repo, "added.txt"))).to.equal(false);
    await revertChanges(fx.repo, { path: "a.txt" });
    expect(fx.read("a.txt")).to.equal(TEN);
    expect((await rejection(revertChanges(fx.repo, { scope: "staged" }))).errorName).to.equal(
      "invalidParams",
    );
    expect((await rejection(revertChanges(fx.repo, { path: "nope.txt" }))).errorName).to.equal(
      "invalidParams",
    );
  });

  it("reports and reverts a binary file and a mode change as whole files", async () => {
    fx.write("bin.dat", Buffer.from([0, 1, 2, 3]));
    fx.write("run.sh", "echo hi\n");
    fx.commitAll("more");
    fx.write("bin.dat", Buffer.from([0, 9, 9, 9, 9]));
    chmodSync(join(fx.repo, "run.sh"), 0o755);
    const read = await readChanges(fx.repo);
    const bin = read.files.find((f) => f.path === "bin.dat");
    expect(bin).to.include({ binary: true, additions: 0, deletions: 0 });
    expect(bin?.hunks).to.deep.equal([]);
    expect(read.files.find((f) => f.path === "run.sh")?.status).to.equal("modified");
    await revertChanges(fx.repo, {});
    expect([...readFileSync(join(fx.repo, "bin.dat"))]).to.deep.equal([0, 1, 2, 3]);
    expect(statSync(join(fx.repo, "run.sh")).mode & 0o111).to.equal(0);
  });

  it("shows a rename with its old path", async () => {
    fx.git(["mv", "a.txt", "b.txt"]);
    const read = await readChanges(fx.repo);
    expect(read.files).to.have.length(1);
    expect(read.files[0]).to.include({ path: "b.txt", oldPath: "a.txt", status: "renamed" });
    await revertChanges(fx.repo, { path: "b.txt" });
    expect(existsSync(join(fx.repo, "b.txt"))).to.equal(false);
    expect(fx.read("a.txt")).to.equal(TEN);
  });

  it("counts untracked files past 500 and leaves them out", async () => {
    for (let i = 0; i < 503; i++) fx.write(`u/${String(i).padStart(3, "0")}.txt`, `${i}\n`);
    const read = await readChanges(fx.repo);
    expect(read.files).to.have.length(500);
    expect(read.untrackedSkipped).to.equal(3);
  });

  it("puts files past the budget without hunks and counts files past the limit", async () => {
    fx.write("big.txt", `${"line\n".repeat(300_000)}`);
    const read = await readChanges(fx.repo);
    expect(read.files[0]).to.include({ path: "big.txt", tooLarge: true });
    expect(read.files[0]?.hunks).to.deep.equal([]);
  });

  it("shows a committed commit and a branch against its base, echoing against", async () => {
    fx.git(["switch", "-q", "-c", "feature"]);
    fx.write("f.txt", "f\n");
    fx.commitAll("feature work");
    const head = fx.git(["rev-parse", "HEAD"]).trim();
    const committed = await readChanges(fx.repo, { scope: "committed", commit: head });
    expect(committed.files.map((f) => f.path)).to.deep.equal(["f.txt"]);
    fx.write("g.txt", "g\n");
    const branch = await readChanges(fx.repo, { scope: "branch" });
    expect(branch.against).to.equal("main");
    expect(branch.files.map((f) => f.path)).to.deep.equal(["f.txt", "g.txt"]);
    expect((await rejection(readChanges(fx.repo, { scope: "committed" }))).errorName).to.equal(
      "invalidParams",
    );
  });

  it("answers notGitRepo outside a repository", async () => {
    expect((await rejection(readChanges(fx.dir))).errorName).to.equal("notGitRepo");
  });

  describe("last turn", () => {
    async function turn(edit: () => void, turnId = "t1"): Promise<TurnRecord> {
      const start = await snapshotTurnStart(fx.repo, "thread-1");
      if (!start) throw new Error("no repo");
      edit();
      return snapshotTurnEnd(start, turnId);
    }

    it("records net totals of the files changed while the turn ran, without touching the index", async () => {
      fx.write("pre.txt", "was dirty before\n");
      const index = fx.indexBytes();
      const record = await turn(() => {
        fx.write("a.txt", TEN.replace("two", "TWO"));
        fx.write("c.txt", "c1\nc2\n");
      });
      expect(fx.indexBytes().equals(index)).to.equal(true);
      expect(record.files).to.deep.equal([
        { path: "a.txt", additions: 1, deletions: 1 },
        { path: "c.txt", additions: 2, deletions: 0 },
      ]);
      const read = await readChanges(fx.repo, { scope: "lastTurn", lastTurn: record });
      expect(read.turnId).to.equal("t1");
      expect(read.stale).to.equal(false);
      expect(read.files.map((f) => f.path)).to.deep.equal(["a.txt", "c.txt"]);
    });

    it("undoes a turn and reapplies it, only over files as the turn left or found them", async () => {
      const record = await turn(() => {
        fx.write("a.txt", TEN.replace("two", "TWO"));
        fx.write("c.txt", "c\n");
      });
      const undone = await revertChanges(fx.repo, { scope: "lastTurn", lastTurn: record, turnId: "t1" });
      expect(undone.paths.sort()).to.deep.equal(["a.txt", "c.txt"]);
      expect(fx.read("a.txt")).to.equal(TEN);
      expect(existsSync(join(fx.repo, "c.txt"))).to.equal(false);
      await revertChanges(fx.repo, { scope: "lastTurn", lastTurn: record, reapply: true });
      expect(fx.read("c.txt")).to.equal("c\n");
      fx.write("a.txt", "edited by hand\n");
      const refused = await rejection(revertChanges(fx.repo, { scope: "lastTurn", lastTurn: record }));
      expect(refused.data?.reason).to.equal("diffChanged");
      expect(fx.read("a.txt")).to.equal("edited by hand\n");
      expect(existsSync(join(fx.repo, "c.txt"))).to.equal(true);
      expect((await readChanges(fx.repo, { scope: "lastTurn", lastTurn: record })).stale).to.equal(true);
    });

    it("undoes one hunk of the turn over later edits elsewhere in the file", async () => {
      const record = await turn(() => fx.write("a.txt", TEN.replace("two", "TWO")));
      fx.write("a.txt", TEN.replace("two", "TWO").replace("nine", "NINE"));
      const read = await readChanges(fx.repo, { scope: "lastTurn", lastTurn: record });
      expect(read.stale).to.equal(true);
      const hunkId = read.files[0]?.hunks[0]?.id ?? "";
      await revertChanges(fx.repo, { scope: "lastTurn", lastTurn: record, path: "a.txt", hunkId });
      expect(fx.read("a.txt")).to.equal(TEN.replace("nine", "NINE"));
      const again = await rejection(
        revertChanges(fx.repo, { scope: "lastTurn", lastTurn: record, path: "a.txt", hunkId }),
      );
      expect(again.data?.reason).to.equal("patchFailed");
    });

    it("answers diffChanged for an undo naming an older turn", async () => {
      const record = await turn(() => fx.write("c.txt", "c\n"), "t2");
      const refused = await rejection(
        revertChanges(fx.repo, { scope: "lastTurn", lastTurn: record, turnId: "t1" }),
      );
      expect(refused.data?.reason).to.equal("diffChanged");
      expect(existsSync(join(fx.repo, "c.txt"))).to.equal(true);
    });

    it("keeps the snapshot refs under refs/knightcode/snapshots/<bucket>/", async () => {
      await turn(() => fx.write("c.txt", "c\n"));
      const refs = fx.git(["for-each-ref", "--format=%(refname)", "refs/knightcode/"]).trim().split("\n");
      expect(refs).to.have.length(2);
      for (const ref of refs) expect(ref).to.match(/^refs\/knightcode\/snapshots\/thread-1\/\d+$/);
    });
  });
});

describe("builtin:worktrees git engine: changes on an unborn HEAD", () => {
  const fx = useGitRepo({ empty: true });

  it("diffs and snapshots a repository with no commit", async () => {
    fx.write("x.txt", "x\n");
    const read = await readChanges(fx.repo);
    expect(read.files.map((f) => [f.path, f.status])).to.deep.equal([["x.txt", "added"]]);
    const start = await snapshotTurnStart(fx.repo, "t");
    fx.write("y.txt", "y\n");
    if (!start) throw new Error("no snapshot");
    const record = await snapshotTurnEnd(start, "1");
    expect(record.files.map((f) => f.path)).to.deep.equal(["y.txt"]);
  });
});

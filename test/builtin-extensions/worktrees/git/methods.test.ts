import { join } from "node:path";
import { expect } from "chai";
import { CheckoutLock } from "../../../../builtin-extensions/worktrees/checkout-lock.js";
import type { GitServiceError } from "../../../../builtin-extensions/worktrees/git/errors.js";
import {
  gitLogMethod,
  type ThreadCheckout,
  threadDiffRead,
  threadDiffRevert,
  threadHandoff,
} from "../../../../builtin-extensions/worktrees/git/methods.js";
import {
  snapshotTurnEnd,
  snapshotTurnStart,
  TURN_ENTRY_TYPE,
} from "../../../../builtin-extensions/worktrees/git/turns.js";
import { createWorktree, worktreeSettings } from "../../../../builtin-extensions/worktrees/git/worktrees.js";
import { useGitRepo } from "./git-fixture.js";

describe("builtin:worktrees git engine: methods", () => {
  const fx = useGitRepo();
  const lock = new CheckoutLock();

  it("reads and undoes the last turn from the session's entries, echoing the host's turn id", async () => {
    const start = await snapshotTurnStart(fx.repo, "s1");
    fx.write("t.txt", "turn\n");
    if (!start) throw new Error("no snapshot");
    const record = await snapshotTurnEnd(start);
    const thread: ThreadCheckout = {
      cwd: fx.repo,
      settings: worktreeSettings(join(fx.dir, "agent")),
      entries: [{ type: "custom", customType: TURN_ENTRY_TYPE, data: record }],
      lastTurnId: "turn-7",
    };
    const read = await threadDiffRead(thread, { scope: "lastTurn" });
    expect(read).to.include({ turnId: "turn-7", stale: false });
    const stale = await threadDiffRevert(lock, thread, { scope: "lastTurn", turnId: "turn-6" }).catch(
      (e: unknown) => e,
    );
    expect((stale as GitServiceError).data?.reason).to.equal("diffChanged");
    const end = lock.beginTurn(fx.repo);
    const busy = await threadDiffRevert(lock, thread, { scope: "lastTurn", turnId: "turn-7" }).catch(
      (e: unknown) => e,
    );
    end();
    expect((busy as GitServiceError).errorName).to.equal("turnInProgress");
    expect(await threadDiffRevert(lock, thread, { scope: "lastTurn", turnId: "turn-7" })).to.deep.equal({
      paths: ["t.txt"],
    });
  });

  it("compares a worktree thread's branch scope and log with the worktree's base", async () => {
    const settings = worktreeSettings(join(fx.dir, "agent"));
    const { record, cwd } = await createWorktree({ cwd: fx.repo, settings });
    fx.write("w.txt", "w\n", record.path);
    fx.commitAll("in the worktree", record.path);
    const thread: ThreadCheckout = { cwd, settings, entries: [] };
    const branch = await threadDiffRead(thread, { scope: "branch" });
    expect(branch.against).to.equal(record.baseCommit);
    expect(branch.files.map((f) => f.path)).to.deep.equal(["w.txt"]);
    expect((await gitLogMethod(thread, {})).commits.map((c) => c.subject)).to.deep.equal(["in the worktree"]);
  });

  it("hands a local thread to a new worktree of its own and back, keeping its subfolder", async () => {
    const agentDir = join(fx.dir, "agent");
    const settings = worktreeSettings(agentDir);
    fx.write("pkg/x.txt", "x\n");
    fx.commitAll("pkg");
    fx.write("pkg/x.txt", "edited locally\n");
    const base = { settings, entries: [], threadId: "th", agentDir, title: "Tidy up" };
    const there = await threadHandoff(lock, { ...base, cwd: join(fx.repo, "pkg") }, { to: "worktree" });
    expect(fx.read("x.txt", there.cwd)).to.equal("edited locally\n");
    expect(fx.read("pkg/x.txt")).to.equal("x\n");
    const again = await threadHandoff(lock, { ...base, cwd: there.cwd }, { to: "worktree" }).catch(
      (e: unknown) => e,
    );
    expect((again as GitServiceError).errorName).to.equal("invalidParams");
    const back = await threadHandoff(lock, { ...base, cwd: there.cwd }, { to: "local" });
    expect(back.cwd).to.equal(join(fx.repo, "pkg"));
    expect(back.branch).to.equal("knightcode/tidy-up");
    expect(fx.read("pkg/x.txt")).to.equal("edited locally\n");
    // The second trip back reuses the thread's worktree.
    const reused = await threadHandoff(lock, { ...base, cwd: back.cwd }, { to: "worktree" });
    expect(reused.cwd).to.equal(there.cwd);
  });
});

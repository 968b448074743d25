/**
 * builtin:worktrees in real sessions: the scripted model writes files with the core `write` tool in a real git
 * repository, and the extension records the turn's snapshots and totals.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI, TurnRecord } from "@knightcodeai/cli/kit";
import { loadGitServices } from "@knightcodeai/cli/kit";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import { useGitRepo } from "../../plugins/git/git-fixture.js";

describe("builtin:worktrees", () => {
  const fx = useGitRepo();
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  function writeStep(path: string, content: string) {
    return { toolCalls: [{ name: "write", arguments: { path, content } }] };
  }

  it("records each turn's net file totals as a worktrees.turn entry and on the worktrees:turn channel", async () => {
    const emitted: unknown[] = [];
    let entries: () => { type: string; customType?: string; data?: unknown }[] = () => [];
    fx.write("dirty.txt", "dirty before the turn\n");
    const index = fx.indexBytes();
    t = await createTestSession({
      cwd: fx.repo,
      script: [writeStep("a.txt", "rewritten\n"), writeStep("b/new.txt", "x\ny\n"), { text: "done" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.events.on("worktrees:turn", (record) => {
            emitted.push(record);
          });
          kc.on("session_start", (_e, ctx) => {
            entries = () => ctx.sessionManager.getEntries();
          });
        },
      ],
    });
    await t.prompt("edit");
    expect(fx.indexBytes().equals(index), "the user's index changed").to.equal(true);
    const git = await loadGitServices();
    const record = git.lastTurnRecord(entries());
    expect(record?.files).to.deep.equal([
      { path: "a.txt", additions: 1, deletions: 10 },
      { path: "b/new.txt", additions: 2, deletions: 0 },
    ]);
    expect(emitted).to.deep.equal([record]);
    const diff = await git.readChanges(fx.repo, {
      scope: "lastTurn",
      lastTurn: { ...(record as TurnRecord), turnId: "T" },
    });
    expect(diff).to.include({ turnId: "T", stale: false });
    expect(diff.files.map((f) => f.path)).to.deep.equal(["a.txt", "b/new.txt"]);
    await git.revertChanges(fx.repo, { scope: "lastTurn", lastTurn: record as TurnRecord });
    expect(existsSync(join(fx.repo, "b/new.txt"))).to.equal(false);
    expect(fx.read("dirty.txt")).to.equal("dirty before the turn\n");
  });

  it("holds tool calls while a revert holds the checkout, and refuses a revert while a turn runs", async () => {
    const git = await loadGitServices();
    let release: () => void = () => {};
    let refusal: unknown;
    t = await createTestSession({
      cwd: fx.repo,
      script: [
        { toolCalls: [{ name: "probe", arguments: {} }] },
        writeStep("late.txt", "late\n"),
        { text: "done" },
      ],
      extensions: [
        (kc: ExtensionAPI) =>
          kc.registerTool({
            name: "probe",
            description: "Tries a git action during the turn, then holds the checkout with one",
            parameters: Type.Object({}),
            execute: async () => {
              refusal = await git.runExclusive(fx.repo, async () => "ran").catch((e: unknown) => e);
              return { content: [{ type: "text", text: "probed" }], details: undefined };
            },
          }),
      ],
    });
    await t.prompt("probe");
    expect((refusal as { errorName?: string }).errorName).to.equal("turnInProgress");

    // Now an action holds the checkout: the next run's first tool call waits for it.
    await t.dispose();
    const held = git.runExclusive(fx.repo, () => new Promise<void>((resolve) => (release = resolve)));
    t = await createTestSession({ cwd: fx.repo, script: [writeStep("waited.txt", "w\n"), { text: "done" }] });
    const running = t.prompt("write");
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(join(fx.repo, "waited.txt")), "the tool ran during the action").to.equal(false);
    release();
    await held;
    await running;
    expect(fx.read("waited.txt")).to.equal("w\n");
  });

  it("records nothing outside a git repository", async () => {
    const emitted: unknown[] = [];
    t = await createTestSession({
      script: [writeStep("a.txt", "a\n"), { text: "done" }],
      extensions: [(kc: ExtensionAPI) => kc.events.on("worktrees:turn", (r) => void emitted.push(r))],
    });
    await t.prompt("edit");
    expect(emitted).to.deep.equal([]);
  });
});

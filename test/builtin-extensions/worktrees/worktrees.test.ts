/**
 * builtin:worktrees in real sessions: the scripted model writes files with the core `write` tool in a real git
 * repository, and the extension records the turn's snapshots and totals, hands them to `worktreesService`
 * listeners, and provides the git engine as the `process`-scoped `gitService` whose lock keeps runs and git
 * actions in one checkout apart.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createAgentSession, createStandardKernel } from "@knightcodeai/cli";
import {
  type ExtensionAPI,
  type ExtensionContext,
  type GitService,
  gitService,
  type ThreadCheckout,
  TURN_ENTRY_TYPE,
  type TurnRecord,
  worktreeSettings,
  worktreesService,
} from "@knightcodeai/cli/kit";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import { createScriptedProvider } from "../../../builtin-extensions/scripted-provider/index.js";
import { useGitRepo } from "./git/git-fixture.js";

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

  /** An extension that keeps the session's git service and context. */
  function grab() {
    const got: { git?: GitService; ctx?: ExtensionContext } = {};
    const extension = (kc: ExtensionAPI) => {
      kc.on("session_start", (_e, ctx) => {
        got.ctx = ctx;
        got.git = kc.services.get(gitService);
      });
    };
    const thread = (): ThreadCheckout => ({
      cwd: fx.repo,
      settings: worktreeSettings(join(fx.dir, "agent")),
      entries: got.ctx?.sessionManager.getBranch() ?? [],
    });
    return { got, extension, thread };
  }

  it("records each turn's net file totals as a worktrees.turn entry and tells worktreesService listeners", async () => {
    const heard: TurnRecord[] = [];
    const { got, extension, thread } = grab();
    fx.write("dirty.txt", "dirty before the turn\n");
    const index = fx.indexBytes();
    t = await createTestSession({
      cwd: fx.repo,
      script: [writeStep("a.txt", "rewritten\n"), writeStep("b/new.txt", "x\ny\n"), { text: "done" }],
      extensions: [
        extension,
        (kc: ExtensionAPI) => {
          kc.services.watch(worktreesService, (worktrees) =>
            worktrees?.onTurn((record) => heard.push(record)),
          );
        },
      ],
    });
    await t.prompt("edit");
    expect(fx.indexBytes().equals(index), "the user's index changed").to.equal(true);
    const entries = thread().entries.filter((e) => e.type === "custom" && e.customType === TURN_ENTRY_TYPE);
    expect(entries).to.have.length(1);
    const record = entries[0]!.data as TurnRecord;
    expect(record.files).to.deep.equal([
      { path: "a.txt", additions: 1, deletions: 10 },
      { path: "b/new.txt", additions: 2, deletions: 0 },
    ]);
    expect(heard).to.deep.equal([record]);
    const git = got.git!;
    const diff = await git.readDiff({ ...thread(), lastTurnId: "T" }, { scope: "lastTurn" });
    expect(diff).to.include({ turnId: "T", stale: false });
    expect(diff.files.map((f) => f.path)).to.deep.equal(["a.txt", "b/new.txt"]);
    await git.revertDiff(thread(), { scope: "lastTurn" });
    expect(existsSync(join(fx.repo, "b/new.txt"))).to.equal(false);
    expect(fx.read("dirty.txt")).to.equal("dirty before the turn\n");
  });

  it("refuses a git action while a run goes, and holds the next run while an action holds the checkout", async () => {
    const { got, extension, thread } = grab();
    let refusal: unknown;
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let writing: () => void = () => {};
    const messageAsked = new Promise<void>((resolve) => (writing = resolve));
    t = await createTestSession({
      cwd: fx.repo,
      script: [
        { toolCalls: [{ name: "probe", arguments: {} }] },
        { text: "probed" },
        // The commit message, written by this session's model once the test lets it.
        async () => {
          writing();
          await released;
          return { text: "Add c" };
        },
        writeStep("waited.txt", "w\n"),
        { text: "done" },
      ],
      extensions: [
        extension,
        (kc: ExtensionAPI) =>
          kc.registerTool({
            name: "probe",
            description: "Tries a git action during the run",
            parameters: Type.Object({}),
            execute: async () => {
              refusal = await got.git!.stage(thread(), {}).catch((e: unknown) => e);
              return { content: [{ type: "text", text: "probed" }], details: undefined };
            },
          }),
      ],
    });
    await t.prompt("probe");
    expect((refusal as { errorName?: string }).errorName).to.equal("turnInProgress");

    // A commit whose message the model is still writing holds the checkout: the next run waits for it.
    fx.write("c.txt", "c\n");
    const ctx = got.ctx!;
    const commit = got.git!.commit(thread(), { writer: { models: ctx.modelRegistry, model: ctx.model! } });
    await messageAsked;
    const running = t.prompt("write");
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(join(fx.repo, "waited.txt")), "the run went on during the action").to.equal(false);
    release();
    expect((await commit).message).to.equal("Add c");
    await running;
    expect(fx.read("waited.txt")).to.equal("w\n");
    expect(fx.git(["log", "-1", "--format=%s"]).trim()).to.equal("Add c");
  });

  it("records nothing outside a git repository", async () => {
    const heard: unknown[] = [];
    t = await createTestSession({
      script: [writeStep("a.txt", "a\n"), { text: "done" }],
      extensions: [
        (kc: ExtensionAPI) =>
          kc.services.watch(worktreesService, (w) => w?.onTurn((r) => void heard.push(r))),
      ],
    });
    await t.prompt("edit");
    expect(heard).to.deep.equal([]);
  });

  it("is one git service (and one lock) for every session of a process", async () => {
    const agentDir = join(fx.dir, "agent");
    const kernel = await createStandardKernel({ agentDir, cacheDir: false });
    const seen: GitService[] = [];
    const open = () =>
      createAgentSession({
        cwd: fx.repo,
        agentDir,
        kernel,
        session: { inMemory: true },
        warn: () => {},
        provider: "scripted",
        model: "scripted",
        extensions: [
          createScriptedProvider([{ text: "ok" }]),
          (kc: ExtensionAPI) => {
            kc.on("session_start", () => {
              const git = kc.services.get(gitService);
              if (git) seen.push(git);
            });
          },
        ],
      });
    const a = await open();
    const b = await open();
    try {
      expect(seen).to.have.length(2);
      expect(seen[0]).to.equal(seen[1]);
      // A run marked in one session's service refuses an action through the other's.
      const root = (await seen[0]!.repoRoot(fx.repo))!;
      const end = await seen[0]!.enterTurn(root);
      const refused = await seen[1]!
        .stage({ cwd: fx.repo, settings: worktreeSettings(agentDir), entries: [] }, {})
        .catch((e: unknown) => e);
      end();
      expect((refused as { errorName?: string }).errorName).to.equal("turnInProgress");
    } finally {
      await a.dispose();
      await b.dispose();
      await kernel.dispose();
    }
  });
});

/**
 * builtin:worktrees — records a snapshot of the checkout before and after each run (a "turn" of the app-server),
 * so `turn/diff/updated`, `Turn.files` and the `lastTurn` diff scope know what changed while it ran, and keeps
 * turns, tools and git actions in one checkout from overlapping.
 *
 * - `agent_start` starts the snapshot without holding the run up; the first tool call waits for it, so nothing
 *   the agent does can land before it. The snapshot goes through a temporary index (the user's is untouched).
 * - `agent_settled` records the second snapshot and appends a `worktrees.turn` custom entry holding the
 *   `TurnRecord` (`{root, before, after, files}`), and emits it on the `worktrees:turn` channel of
 *   `knightcode.events` for hosts that stream it (`turn/diff/updated`).
 * - While a revert or a handoff holds the checkout (`runExclusive` of the git services), a run waits before it
 *   starts and each tool call waits before it runs; while a run is going, such actions answer `turnInProgress`.
 * - In a managed worktree, a session's first run marks the worktree used (`lastUsedAt`), which `worktrees.keep`
 *   pruning reads.
 * - Nothing happens at session start: the services load and the repository is found on the first run.
 *
 * Nothing is recorded outside a git repository, nor in the one-shot `print` and `json` modes, where nobody can
 * review or undo a turn. The services themselves are `loadGitServices()` of the kit (docs/worktrees.md).
 */
import type { ExtensionAPI, ExtensionContext, GitServices, TurnRecord } from "@knightcodeai/cli/kit";
import { errorMessage, loadGitServices } from "@knightcodeai/cli/kit";

/** The `knightcode.events` channel each finished turn's `TurnRecord` is emitted on. */
export const TURN_CHANNEL = "worktrees:turn";

const ONE_SHOT_MODES = new Set(["print", "json"]);

interface RunState {
  /** The snapshot before the run, once taken; undefined outside a repository. */
  start: Promise<Awaited<ReturnType<GitServices["snapshotTurnStart"]>>>;
  endTurn: () => void;
}

export default function worktrees(knightcode: ExtensionAPI): void {
  let git: GitServices | undefined;
  /** The checkout's root once known; `null` when the cwd is in no repository. */
  let root: string | null | undefined;
  let run: RunState | undefined;

  const bucketOf = (ctx: ExtensionContext) => ctx.sessionManager.getSessionId();

  /** Loads the services and finds the repository on the first run, so a session start costs nothing. */
  async function checkout(ctx: ExtensionContext): Promise<string | null> {
    if (root !== undefined) return root;
    git ??= await loadGitServices();
    try {
      root = (await git.openRepo(ctx.cwd)).root;
    } catch {
      // Not a repository (or no git): nothing to snapshot in this session.
      root = null;
      return root;
    }
    const settings = (knightcode.getSettings().worktrees ?? {}) as { root?: string };
    git.touchWorktree(git.worktreeSettings(ctx.agentDir, settings).root, ctx.cwd);
    return root;
  }

  /** Waits while a revert or handoff holds this checkout. */
  async function waitForActions(): Promise<void> {
    if (git && root && git.isCheckoutBusy(root)) await git.waitForCheckout(root);
  }

  knightcode.on("agent_start", async (_event, ctx) => {
    if (ONE_SHOT_MODES.has(ctx.mode)) return;
    const found = await checkout(ctx);
    if (!git || !found) return;
    const endTurn = await git.enterCheckoutTurn(found);
    run = {
      start: git.snapshotTurnStart(ctx.cwd, bucketOf(ctx)).catch((error: unknown) => {
        knightcode.log.warn(`turn snapshot failed: ${errorMessage(error)}`);
        return undefined;
      }),
      endTurn,
    };
  });

  knightcode.on("tool_call", async () => {
    if (!run) return undefined;
    await run.start;
    await waitForActions();
    return undefined;
  });

  knightcode.on("agent_settled", async () => {
    const state = run;
    run = undefined;
    if (!state || !git) return;
    try {
      const start = await state.start;
      if (!start) return;
      const record: TurnRecord = await git.snapshotTurnEnd(start);
      knightcode.appendEntry(git.TURN_ENTRY_TYPE, record);
      knightcode.events.emit(TURN_CHANNEL, record);
    } catch (error) {
      knightcode.log.warn(`turn snapshot failed: ${errorMessage(error)}`);
    } finally {
      state.endTurn();
    }
  });

  knightcode.on("session_shutdown", () => {
    run?.endTurn();
    run = undefined;
  });
}

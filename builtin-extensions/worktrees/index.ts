/**
 * builtin:worktrees — git for threads: it provides the git engine as `gitService` (the kit's typed, `process`-scoped
 * reference; the app-server's diff, worktree, environment and git methods use it), and records a snapshot of the
 * checkout before and after each run (a "turn" of the app-server), so `turn/diff/updated`, `Turn.files` and the
 * `lastTurn` diff scope know what changed while it ran, and keeps turns, tools and git actions in one checkout from
 * overlapping.
 *
 * - `agent_start` starts the snapshot without holding the run up; the first tool call waits for it, so nothing
 *   the agent does can land before it. The snapshot goes through a temporary index (the user's is untouched).
 * - `agent_settled` records the second snapshot and appends a `worktrees.turn` custom entry holding the
 *   `TurnRecord` (`{root, before, after, files}`), then hands it to the listeners of `worktreesService`
 *   (`onTurn`), the session-scoped reference hosts that stream it use.
 * - While a revert or a handoff holds the checkout (the service's lock), a run waits before it starts and each
 *   tool call waits before it runs; while a run is going, such actions answer `turnInProgress`.
 * - In a managed worktree, a session's first run marks the worktree used (`lastUsedAt`), which `worktrees.keep`
 *   pruning reads.
 * - Nothing happens at session start: the engine loads and the repository is found on the first run.
 *
 * Snapshots go through whichever extension provides `gitService` (this one unless a replacement does). Nothing is
 * recorded outside a git repository, nor in the one-shot `print` and `json` modes, where nobody can review or undo
 * a turn (docs/worktrees.md).
 */
import {
  type ExtensionAPI,
  type ExtensionContext,
  errorMessage,
  type GitService,
  gitService,
  TURN_ENTRY_TYPE,
  type TurnRecord,
  type TurnSnapshot,
  worktreeSettings,
  worktreesService,
} from "@knightcodeai/cli/kit";
import { createGitService } from "./service.js";

const ONE_SHOT_MODES = new Set(["print", "json"]);

interface RunState {
  git: GitService;
  root: string;
  /** The snapshot before the run, once taken; undefined when it failed. */
  start: Promise<TurnSnapshot | undefined>;
  endTurn: () => void;
}

export default function worktrees(knightcode: ExtensionAPI): void {
  // A default: an extension that provides the same reference replaces it (and this extension's turn records go
  // through the replacement).
  knightcode.services.provide(gitService, createGitService, { fallback: true });
  const listeners = new Set<(record: TurnRecord) => void>();
  knightcode.services.provide(worktreesService, () => ({
    onTurn: (listener) => {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  }));

  /** The checkout's root once known; `null` when the cwd is in no repository. */
  let root: string | null | undefined;
  let run: RunState | undefined;

  /** Finds the repository on the first run (and marks a managed worktree used), so a session start costs nothing. */
  async function checkout(git: GitService, ctx: ExtensionContext): Promise<string | null> {
    if (root !== undefined) return root;
    try {
      root = (await git.repoRoot(ctx.cwd)) ?? null;
    } catch {
      // No git: nothing to snapshot in this session.
      root = null;
    }
    if (root === null) return root;
    const settings = (knightcode.getSettings().worktrees ?? {}) as { root?: string };
    await git.touchWorktree(worktreeSettings(ctx.agentDir, settings), ctx.cwd);
    return root;
  }

  knightcode.on("agent_start", async (_event, ctx) => {
    if (ONE_SHOT_MODES.has(ctx.mode)) return;
    const git = knightcode.services.get(gitService);
    if (!git) return;
    const found = await checkout(git, ctx);
    if (!found) return;
    const endTurn = await git.enterTurn(found);
    run = {
      git,
      root: found,
      start: git.snapshotTurn(ctx.cwd, ctx.sessionManager.getSessionId()).catch((error: unknown) => {
        knightcode.log.warn(`turn snapshot failed: ${errorMessage(error)}`);
        return undefined;
      }),
      endTurn,
    };
  });

  knightcode.on("tool_call", async () => {
    const state = run;
    if (!state) return undefined;
    await state.start;
    // A revert or a handoff that holds the checkout finishes first.
    await state.git.waitForActions(state.root);
    return undefined;
  });

  knightcode.on("agent_settled", async () => {
    const state = run;
    run = undefined;
    if (!state) return;
    try {
      const start = await state.start;
      if (!start) return;
      const record = await start.end();
      knightcode.appendEntry(TURN_ENTRY_TYPE, record);
      for (const listener of [...listeners]) {
        try {
          listener(record);
        } catch (error) {
          knightcode.log.warn(`a worktreesService.onTurn listener failed: ${errorMessage(error)}`);
        }
      }
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

/**
 * The `gitService` `builtin:worktrees` provides: a thin front over the engine in `git/`, which it imports on the
 * first call that needs it (a session that never touches git loads none of it). The lock on checkouts is state of
 * this instance; the service is `process`-scoped, so every session of the process whose provider is this extension
 * shares the instance and with it the lock.
 */
import { type GitService, GitServiceError } from "@knightcodeai/cli/kit";
import { CheckoutLock } from "./checkout-lock.js";

type Engine = typeof import("./git/index.js");

export function createGitService(): GitService {
  const lock = new CheckoutLock();
  let loading: Promise<Engine> | undefined;
  const engine = (): Promise<Engine> => {
    loading ??= import("./git/index.js");
    return loading;
  };
  return {
    readDiff: async (thread, params) => (await engine()).threadDiffRead(thread, params),
    revertDiff: async (thread, params) => (await engine()).threadDiffRevert(lock, thread, params),
    status: async (cwd) => (await engine()).gitStatus(cwd),
    stage: async (thread, params) => (await engine()).gitStageMethod(lock, thread, params),
    unstage: async (thread, params) => (await engine()).gitStageMethod(lock, thread, params, true),
    commit: async (thread, params) => (await engine()).gitCommitMethod(lock, thread, params),
    push: async (cwd) => (await engine()).gitPush(cwd),
    createPullRequest: async (cwd, params) => (await engine()).gitPrCreate(cwd, params),
    branches: async (cwd) => (await engine()).gitBranches(cwd),
    createBranch: async (thread, name) => (await engine()).gitBranchMethod(lock, thread, { name }, "create"),
    switchBranch: async (thread, name) => (await engine()).gitBranchMethod(lock, thread, { name }, "switch"),
    log: async (thread, params) => (await engine()).gitLogMethod(thread, params),
    handoff: async (thread, params) => (await engine()).threadHandoff(lock, thread, params),

    createWorktree: async (options) => (await engine()).createWorktree(options),
    findWorktree: async (settings, path) => (await engine()).findWorktree(settings.root, path),
    touchWorktree: async (settings, path, threadId) =>
      (await engine()).touchWorktree(settings.root, path, threadId),
    listWorktrees: async (settings, cwd) => (await engine()).listWorktrees(settings, cwd),
    deleteWorktree: async (settings, path, options) =>
      (await engine()).deleteWorktree(settings, path, options),
    pruneWorktrees: async (settings, options) => (await engine()).pruneWorktrees(settings, options),
    restoreWorktree: async (settings, path) => (await engine()).restoreWorktree(settings, path),

    environments: async (cwd, trusted) => (await engine()).environmentList({ cwd }, trusted),
    saveEnvironments: async (cwd, environments) => (await engine()).environmentSave({ cwd, environments }),
    runEnvironmentScript: async (projectCwd, name, phase, options) => {
      const git = await engine();
      return git.runEnvironmentScript(git.findEnvironment(projectCwd, name), phase, options);
    },

    repoRoot: async (cwd) => {
      try {
        return (await (await engine()).openRepo(cwd)).root;
      } catch (error) {
        // Not a repository (or no git): nothing to snapshot or diff there.
        if (error instanceof GitServiceError && error.errorName === "notGitRepo") return undefined;
        throw error;
      }
    },
    enterTurn: (root) => lock.enterTurn(root),
    waitForActions: (root) => lock.waitForActions(root),
    snapshotTurn: async (cwd, bucket) => {
      const git = await engine();
      const start = await git.snapshotTurnStart(cwd, bucket);
      return start ? { root: start.root, end: () => git.snapshotTurnEnd(start) } : undefined;
    },
  };
}

/**
 * A replacement of builtin:worktrees' git service, written against the published kit only: with
 * `-builtin:worktrees` in the settings and this file as an extension, the app-server's git methods answer from it.
 * Its diff is canned (one added file) and it counts the reads; everything else is refused as `invalidParams`.
 */
import { type ExtensionAPI, type GitService, GitServiceError, gitService } from "@knightcodeai/cli/kit";

export const REPLACEMENT_FILE = "from-the-replacement.txt";

function notHere(what: string): () => Promise<never> {
  return async () => {
    throw new GitServiceError("invalidParams", `the replacement git service does not ${what}`);
  };
}

export function createReplacementGit(): GitService {
  let reads = 0;
  return {
    readDiff: async (thread, params) => ({
      scope: params.scope ?? "uncommitted",
      root: thread.cwd,
      files: [
        {
          path: REPLACEMENT_FILE,
          status: "added",
          binary: false,
          additions: 1,
          deletions: 0,
          hunks: [
            {
              id: `read-${++reads}`,
              header: "@@ -0,0 +1 @@",
              oldStart: 0,
              oldLines: 0,
              newStart: 1,
              newLines: 1,
              lines: [`+context ${params.context ?? 3}`],
            },
          ],
        },
      ],
    }),
    revertDiff: notHere("revert"),
    status: notHere("report a status"),
    stage: notHere("stage"),
    unstage: notHere("unstage"),
    commit: notHere("commit"),
    push: notHere("push"),
    createPullRequest: notHere("open pull requests"),
    branches: notHere("list branches"),
    createBranch: notHere("create branches"),
    switchBranch: notHere("switch branches"),
    log: notHere("log"),
    handoff: notHere("hand off"),
    createWorktree: notHere("create worktrees"),
    findWorktree: async () => undefined,
    touchWorktree: async () => undefined,
    listWorktrees: async () => [],
    deleteWorktree: notHere("delete worktrees"),
    pruneWorktrees: async () => [],
    restoreWorktree: notHere("restore worktrees"),
    environments: async (_cwd, trusted) => ({ environments: [], trusted }),
    saveEnvironments: notHere("save environments"),
    runEnvironmentScript: notHere("run scripts"),
    repoRoot: async () => undefined,
    enterTurn: async () => () => {},
    waitForActions: async () => {},
    snapshotTurn: async () => undefined,
  };
}

export default function (knightcode: ExtensionAPI) {
  knightcode.services.provide(gitService, createReplacementGit);
}

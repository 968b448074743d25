/**
 * The git engine of `builtin:worktrees` (docs/worktrees.md): what its `gitService` loads on first use, so a session
 * that never reads a diff or makes a worktree pays nothing for it. Each function takes the thread's checkout (its
 * cwd) and returns results in the app-server protocol's shapes (the kit's types); refusals are the kit's
 * `GitServiceError`s carrying the protocol's error name and `gitConflict` data.
 */
export { readChanges, revertChanges } from "./changes.js";
export { findEnvironment, runEnvironmentScript } from "./environments.js";
export {
  environmentList,
  environmentSave,
  gitBranchMethod,
  gitCommitMethod,
  gitLogMethod,
  gitStageMethod,
  threadDiffRead,
  threadDiffRevert,
  threadHandoff,
} from "./methods.js";
export { gitBranches, gitPrCreate, gitPush, gitStatus } from "./ops.js";
export { openRepo } from "./repo.js";
export { snapshotTurnEnd, snapshotTurnStart } from "./turns.js";
export {
  createWorktree,
  deleteWorktree,
  findWorktree,
  listWorktrees,
  pruneWorktrees,
  restoreWorktree,
  touchWorktree,
} from "./worktrees.js";

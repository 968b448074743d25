/**
 * The git services behind issue 18's app-server methods (docs/worktrees.md): what `loadGitServices()` in the kit
 * returns. Each function takes the thread's checkout (its cwd) and returns results in the app-server spec's wire
 * shapes; refusals are `GitServiceError`s carrying the spec's error name and `gitConflict` data.
 */
export {
  type ChangesQuery,
  DIFF_SCOPES,
  type DiffReadResult,
  type DiffScope,
  type RevertRequest,
  readChanges,
  revertChanges,
  type TurnRecord,
  UNTRACKED_LIMIT,
} from "./changes.js";
export {
  beginCheckoutTurn,
  enterCheckoutTurn,
  isCheckoutBusy,
  isTurnRunning,
  runExclusive,
  waitForCheckout,
} from "./checkout-lock.js";
export { COMMIT_DIFF_BUDGET_CHARS, commitMessageWriter } from "./commit-message.js";
export type { DiffFile, DiffFileStatus, DiffHunk, FileTotals } from "./diff.js";
export {
  type Environment,
  type EnvironmentScript,
  environmentsPath,
  findEnvironment,
  listEnvironments,
  MAX_ENVIRONMENTS,
  type RunScriptOptions,
  runEnvironmentScript,
  type ScriptPhase,
  type ScriptRun,
  saveEnvironments,
  validateEnvironments,
} from "./environments.js";
export {
  type GitConflictData,
  type GitConflictReason,
  type GitErrorName,
  GitServiceError,
} from "./errors.js";
export {
  branchNameFromTitle,
  HANDOFF_DIRTY_MESSAGE,
  type HandoffToLocalOptions,
  type HandoffToWorktreeOptions,
  handoffToLocal,
  handoffToWorktree,
} from "./handoff.js";
export {
  type DiffReadParams,
  type DiffRevertParams,
  environmentList,
  environmentSave,
  gitBranchMethod,
  gitCommitMethod,
  gitLogMethod,
  gitStageMethod,
  type HandoffOutcome,
  type HandoffParams,
  type HandoffThread,
  type ThreadCheckout,
  threadDiffRead,
  threadDiffRevert,
  threadHandoff,
  threadLastTurn,
} from "./methods.js";
export {
  type BranchInfo,
  type CommitRequest,
  type GitStatus,
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
  type LogEntry,
  type PrCreateRequest,
  type StageRequest,
} from "./ops.js";
export { openRepo, type RepoInfo } from "./repo.js";
export { GitCommandError, GitOutputTooLargeError } from "./runner.js";
export {
  listSnapshots,
  pruneSnapshots,
  SNAPSHOT_KEEP_PER_BUCKET,
  SNAPSHOT_MAX_AGE_MS,
  SNAPSHOT_REF_PREFIX,
} from "./snapshots.js";
export {
  lastTurnRecord,
  snapshotTurnEnd,
  snapshotTurnStart,
  TURN_ENTRY_TYPE,
  type TurnStart,
  turnRecords,
} from "./turns.js";
export {
  type CreatedWorktree,
  type CreateWorktreeOptions,
  createWorktree,
  DEFAULT_BRANCH_PREFIX,
  DEFAULT_WORKTREES_KEEP,
  type DeleteWorktreeOptions,
  deleteWorktree,
  findWorktree,
  listWorktrees,
  pruneWorktrees,
  restoreWorktree,
  touchWorktree,
  type WorktreeListEntry,
  type WorktreeRecord,
  type WorktreeSettings,
  worktreeSettings,
} from "./worktrees.js";

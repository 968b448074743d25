/**
 * `gitService`: the git engine behind worktree threads, diffs, reverts, handoffs and the `git/*` actions, with the
 * shapes the app-server's protocol sends (`DiffFile`, `DiffHunk`, `TurnRecord`, `GitConflictData`, ...).
 * `builtin:worktrees` provides it; an extension that replaces git support provides the same reference (with
 * `-builtin:worktrees` in the `extensions` setting), and the app-server's `thread/diff/*`, `worktree/*`,
 * `environment/*` and `git/*` methods answer from it.
 *
 * It is a `process` service: the sessions of one process whose provider is the same extension share one instance,
 * so the lock on a checkout (a revert runs alone; a run waits for it) holds across all of an app-server's threads.
 *
 * `worktreesService` is the session side: each finished run's `TurnRecord`, for hosts that stream it
 * (`turn/diff/updated`).
 *
 * A refusal is a `GitServiceError` whose `errorName` is the protocol's error name and, for `gitConflict`, whose
 * `data` holds the reason and its details; a host forwards both as they are.
 */
import { join, resolve } from "node:path";
import type { ModelInfo, ModelRuntime } from "../../../kernel/index.js";
import { defineService } from "../../../kernel/index.js";

// ---- the protocol's shapes ------------------------------------------------------------------------------

export type DiffScope = "lastTurn" | "uncommitted" | "unstaged" | "staged" | "committed" | "branch";
export type DiffFileStatus = "added" | "deleted" | "modified" | "renamed" | "copied" | "typeChanged";

export interface DiffHunk {
  /** Hash of the file's header (paths, blob ids, modes), the read's context and the hunk's text. */
  id: string;
  /** The `@@ -a,b +c,d @@` line. */
  header: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Each line with its `" "`, `"+"`, `"-"` or `"\"` prefix. */
  lines: string[];
}

export interface DiffFile {
  /** Relative to the repository's root. */
  path: string;
  oldPath?: string;
  status: DiffFileStatus;
  binary: boolean;
  additions: number;
  deletions: number;
  /** Past the response budget: no hunks. */
  tooLarge?: boolean;
  hunks: DiffHunk[];
}

/** `{path, additions, deletions}`: a file of `turn/diff/updated` and `Turn.files`. */
export interface FileTotals {
  path: string;
  additions: number;
  deletions: number;
}

/** `thread/diff/read`'s result. */
export interface DiffReadResult {
  scope: DiffScope;
  /** The repository's root; file paths are relative to it. */
  root: string;
  files: DiffFile[];
  filesOmitted?: number;
  untrackedSkipped?: number;
  turnId?: string;
  stale?: boolean;
  against?: string;
}

/** A run as `builtin:worktrees` recorded it: the snapshots before and after, and its net totals per file. */
export interface TurnRecord {
  /** The host's id of the turn, when it gave one. */
  turnId?: string;
  /** The checkout's root when the turn ran. */
  root: string;
  /** Snapshot commit (or ref) taken before the turn. */
  before: string;
  /** Snapshot commit (or ref) taken after it. */
  after: string;
  files: FileTotals[];
}

/** The custom entry type `builtin:worktrees` appends each run's `TurnRecord` under. */
export const TURN_ENTRY_TYPE = "worktrees.turn";

/** The protocol's error names the git engine raises. */
export type GitErrorName =
  | "notGitRepo"
  | "invalidParams"
  | "gitConflict"
  | "toolMissing"
  | "authRequired"
  | "turnInProgress";

/** `gitConflict`'s `data.reason` values. */
export type GitConflictReason =
  | "diffChanged"
  | "patchFailed"
  | "concurrentChange"
  | "pushRejected"
  | "localChanges"
  | "operationInProgress"
  | "branchExists"
  | "recoveryRequired"
  | "worktreeDeleted"
  | "worktreeMissing"
  | "worktreeInUse"
  | "submodules";

/** `data` of a `gitConflict` error: the reason, and the paths, output or recovery text where they apply. */
export interface GitConflictData {
  reason: GitConflictReason;
  paths?: string[];
  output?: string;
  recoveryInstructions?: string;
  /** `recoveryRequired`: the saved patch of the changes that did not land. */
  patch?: string;
}

/** A refusal a host answers with the protocol's error name and, for `gitConflict`, its `data`. */
export class GitServiceError extends Error {
  readonly errorName: GitErrorName;
  readonly data: GitConflictData | undefined;
  constructor(errorName: GitErrorName, message: string, data?: GitConflictData) {
    super(message);
    this.name = "GitServiceError";
    this.errorName = errorName;
    this.data = data;
  }
}

/** `git/status`'s result. */
export interface GitStatus {
  root: string;
  /** The branch checked out; absent when detached or unborn. */
  branch?: string;
  head?: string;
  upstream?: string;
  ahead: number;
  behind: number;
  staged: number;
  unstaged: number;
  untracked: number;
  conflicted: number;
  /** A merge, rebase, cherry-pick, revert or bisect under way. */
  operation?: string;
}

export interface BranchInfo {
  name: string;
  head: string;
  upstream?: string;
  current: boolean;
}

export interface LogEntry {
  commit: string;
  subject: string;
  author: string;
  /** ISO 8601 author date. */
  date: string;
}

/** A script per platform (`process.platform` names), `default` for the others. */
export interface EnvironmentScript {
  default?: string;
  linux?: string;
  darwin?: string;
  win32?: string;
}

/** An entry of a project's `.knightcode/environments.json`. */
export interface Environment {
  name: string;
  setup?: EnvironmentScript;
  cleanup?: EnvironmentScript;
}

export type ScriptPhase = "setup" | "cleanup";

export interface ScriptRun {
  phase: ScriptPhase;
  /** Why nothing ran: the project is not trusted, or the environment has no script for this platform. */
  skipped?: "untrusted" | "noScript";
  exitCode?: number | null;
  output?: string;
}

// ---- worktrees ------------------------------------------------------------------------------------------

/** The `worktrees.*` settings in force. */
export interface WorktreeSettings {
  /** Where managed worktrees live; default `<agentDir>/worktrees`. */
  root: string;
  /** Managed worktrees kept; past it the least recently used are deleted after a snapshot. */
  keep: number;
  /** Prefix of the branch a handoff to the main checkout names after the thread's title. */
  branchPrefix: string;
}

export const DEFAULT_WORKTREES_KEEP = 15;
export const DEFAULT_BRANCH_PREFIX = "knightcode/";

/** The settings in force from the `worktrees` setting: `root` (`~` is the home folder), else `<agentDir>/worktrees`. */
export function worktreeSettings(
  agentDir: string,
  settings: { root?: string; keep?: number; branchPrefix?: string } = {},
): WorktreeSettings {
  const home = process.env.HOME ?? "";
  const root = settings.root
    ? resolve(settings.root.replace(/^~(?=$|\/)/, home))
    : join(agentDir, "worktrees");
  return {
    root,
    keep: settings.keep ?? DEFAULT_WORKTREES_KEEP,
    branchPrefix: settings.branchPrefix ?? DEFAULT_BRANCH_PREFIX,
  };
}

/** What is kept about a managed worktree (`<root>/<4 hex>.json`). */
export interface WorktreeRecord {
  /** The worktree's top folder, `<root>/<id>/<repo name>`. */
  path: string;
  /** The `<4 hex>` folder name. */
  id: string;
  /** The top folder of the checkout it was created from. */
  projectCwd: string;
  /** The repository's shared git dir. */
  commonDir: string;
  /** The commit it was created at (the `branch` scope's default base). */
  baseCommit: string;
  threadIds: string[];
  createdAt: number;
  lastUsedAt: number;
  deleted: boolean;
  /** The snapshot taken when it was deleted; `restoreWorktree` rebuilds from it. */
  snapshot?: string;
  /** The branch the last handoff to the main checkout used (fast-forwarded by the next one). */
  handoffBranch?: string;
  /** The environment whose setup ran at creation; its cleanup runs before deletion. */
  environment?: string;
}

/** `worktree/list`'s entries. */
export interface WorktreeListEntry {
  path: string;
  projectCwd: string;
  head?: string;
  branch?: string;
  threadIds: string[];
  lastUsedAt: number;
  deleted: boolean;
}

export interface CreateWorktreeOptions {
  /** The thread's cwd: a folder of the checkout the worktree is made from. */
  cwd: string;
  settings: WorktreeSettings;
  /** The commit the worktree starts at; default the checkout's `HEAD`. */
  baseRef?: string;
  /** Brings the checkout's staged, unstaged and untracked (not ignored) changes along, uncommitted. */
  carryLocalChanges?: boolean;
  threadId?: string;
  /** An environment of the project's `.knightcode/environments.json` whose setup script runs in the new worktree. */
  environment?: string;
  /** Whether the project is trusted; an untrusted project's scripts never run. */
  trusted?: boolean;
  /** The setup script's output as it comes (`thread/workspace/progress`). */
  onProgress?: (phase: ScriptPhase, output: string) => void;
}

export interface CreatedWorktree {
  record: WorktreeRecord;
  /** The environment's setup run, when one was asked for: its exit code and output, or why it was skipped. */
  setup?: ScriptRun;
  /** Where the thread runs: the same subfolder of the worktree as `cwd` was of its checkout. */
  cwd: string;
  /** The cwd was already inside a managed worktree, which the thread joins. */
  joined: boolean;
}

export interface DeleteWorktreeOptions {
  /** True for a worktree a thread is loaded in: it is never deleted. */
  isInUse?: (path: string) => boolean;
  /** Whether the project is trusted, so its environment's cleanup script may run first. */
  trusted?: boolean;
  onProgress?: (phase: ScriptPhase, output: string) => void;
}

export interface RunScriptOptions {
  worktreePath: string;
  trusted: boolean;
  /** Each chunk of the script's output (stdout and stderr), for `thread/workspace/progress`. */
  onOutput?: (phase: ScriptPhase, output: string) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
  platform?: NodeJS.Platform;
}

// ---- a thread's checkout and the methods' params -------------------------------------------------------

/** What a host knows about the thread a method names. */
export interface ThreadCheckout {
  /** The thread's cwd (in its worktree, or in the user's checkout). */
  cwd: string;
  settings: WorktreeSettings;
  /** The session's entries on the active branch (`sessionManager.getBranch()`), for the last turn's record. */
  entries: readonly { type: string; customType?: string; data?: unknown }[];
  /** The host's id of the thread's last turn, echoed as `turnId` and checked by an undo's `turnId`. */
  lastTurnId?: string;
}

export interface DiffReadParams {
  scope?: DiffScope;
  against?: string;
  commit?: string;
  context?: number;
  ignoreWhitespace?: boolean;
}

export interface DiffRevertParams extends DiffReadParams {
  path?: string;
  hunkId?: string;
  reapply?: boolean;
  turnId?: string;
}

export interface StageParams {
  /** Literal path relative to the checkout's root; absent: everything. */
  path?: string;
  /** A hunk of `path` from an `unstaged` (stage) or `staged` (unstage) read with the same `context`. */
  hunkId?: string;
  context?: number;
}

/** The model that writes an empty commit message: the thread's own. */
export interface CommitMessageModel {
  /** The thread session's model runtime (`ctx.modelRegistry`), so the call goes to that session's providers. */
  models: Pick<ModelRuntime, "streamSimple">;
  model: ModelInfo;
  signal?: AbortSignal;
}

export interface CommitParams {
  /** Empty or absent: `writer`'s model writes it from the staged diff. */
  message?: string;
  /** Default true: stage everything first. */
  includeUnstaged?: boolean;
  writer?: CommitMessageModel;
}

export interface PullRequestParams {
  title?: string;
  body?: string;
  draft?: boolean;
  /** The `gh` to run (default `gh` on PATH). */
  gh?: string;
}

export interface HandoffParams {
  to: "local" | "worktree";
  branch?: string;
  environment?: string;
}

export interface HandoffThread extends ThreadCheckout {
  threadId: string;
  agentDir: string;
  /** The thread's title, for a `<worktrees.branchPrefix><title>` branch. */
  title: string;
  /** Whether the project is trusted (a new worktree's environment setup runs only then). */
  trusted?: boolean;
  onProgress?: (phase: ScriptPhase, output: string) => void;
}

export interface HandoffOutcome {
  /** Where the thread runs now: the host reloads it there. */
  cwd: string;
  /** The branch checked out in the main checkout (to `local`). */
  branch?: string;
  /** The saved patch under `<agentDir>/handoff/`. */
  patch: string;
  /** A new worktree's environment setup run, when one ran. */
  setup?: ScriptRun;
}

/** A run's first snapshot; `end()` takes the second and gives the run's record. */
export interface TurnSnapshot {
  /** The checkout's root. */
  readonly root: string;
  end(): Promise<TurnRecord>;
}

// ---- the service ----------------------------------------------------------------------------------------

/**
 * The git engine. Every method takes the folder (or the thread's checkout) it acts on; actions that write a
 * checkout run alone in it (refused with `turnInProgress` while a run is recorded there).
 */
export interface GitService {
  /** `thread/diff/read`: the thread's changes in one Changes scope. */
  readDiff(thread: ThreadCheckout, params: DiffReadParams): Promise<DiffReadResult>;
  /** `thread/diff/revert`: puts one hunk, one file or a scope back; `reapply` redoes the last turn. */
  revertDiff(thread: ThreadCheckout, params: DiffRevertParams): Promise<{ paths: string[] }>;
  status(cwd: string): Promise<GitStatus>;
  stage(thread: ThreadCheckout, params: StageParams): Promise<{ paths: string[] }>;
  unstage(thread: ThreadCheckout, params: StageParams): Promise<{ paths: string[] }>;
  /** Commits the staged changes with the user's hooks; an empty message is written by `params.writer`'s model. */
  commit(thread: ThreadCheckout, params: CommitParams): Promise<{ commit: string; message: string }>;
  push(cwd: string): Promise<{ remote: string; branch: string; upstream: string }>;
  createPullRequest(cwd: string, params: PullRequestParams): Promise<{ url: string }>;
  branches(cwd: string): Promise<{ current?: string; branches: BranchInfo[] }>;
  createBranch(thread: ThreadCheckout, name: string): Promise<{ branch: string }>;
  switchBranch(thread: ThreadCheckout, name: string): Promise<{ branch: string }>;
  /** The commits since the worktree's base (else the upstream), newest first. */
  log(thread: ThreadCheckout, params: { limit?: number }): Promise<{ commits: LogEntry[] }>;
  /** `thread/handoff`: moves the uncommitted changes; the host reloads the thread at the returned `cwd`. */
  handoff(thread: HandoffThread, params: HandoffParams): Promise<HandoffOutcome>;

  createWorktree(options: CreateWorktreeOptions): Promise<CreatedWorktree>;
  /** The managed worktree `path` lies in. */
  findWorktree(settings: WorktreeSettings, path: string): Promise<WorktreeRecord | undefined>;
  /** Marks a managed worktree used now (by `threadId` when given). */
  touchWorktree(
    settings: WorktreeSettings,
    path: string,
    threadId?: string,
  ): Promise<WorktreeRecord | undefined>;
  listWorktrees(settings: WorktreeSettings, cwd?: string): Promise<WorktreeListEntry[]>;
  deleteWorktree(
    settings: WorktreeSettings,
    path: string,
    options?: DeleteWorktreeOptions,
  ): Promise<{ snapshot?: string }>;
  /** Deletes the least recently used managed worktrees past `settings.keep`; returns their paths. */
  pruneWorktrees(settings: WorktreeSettings, options?: DeleteWorktreeOptions): Promise<string[]>;
  restoreWorktree(settings: WorktreeSettings, path: string): Promise<WorktreeRecord>;

  /** The project's `.knightcode/environments.json`, read from the top of `cwd`'s checkout. */
  environments(cwd: string, trusted: boolean): Promise<{ environments: Environment[]; trusted: boolean }>;
  saveEnvironments(cwd: string, environments: unknown): Promise<{ environments: Environment[] }>;
  /** Runs the named environment's script of `projectCwd` in a worktree; never in an untrusted project. */
  runEnvironmentScript(
    projectCwd: string,
    name: string,
    phase: ScriptPhase,
    options: RunScriptOptions,
  ): Promise<ScriptRun>;

  /** The top folder of `cwd`'s repository; undefined outside one. */
  repoRoot(cwd: string): Promise<string | undefined>;
  /** Marks a run going in the checkout `root`, once no exclusive action runs there; call the result when it ends. */
  enterTurn(root: string): Promise<() => void>;
  /** Resolves once no exclusive action (a revert, a handoff, a commit, ...) runs in the checkout `root`. */
  waitForActions(root: string): Promise<void>;
  /**
   * Snapshots `cwd`'s checkout before a run (through a temporary index; the user's is untouched); undefined outside
   * a repository. `bucket` groups the snapshots (the session id).
   */
  snapshotTurn(cwd: string, bucket: string): Promise<TurnSnapshot | undefined>;
}

export const gitService = defineService<GitService>("knightcode.git", {
  description: "the git engine: diffs, reverts, worktrees, handoffs, environments and git actions",
  scope: "process",
  providedBy: "builtin:worktrees",
});

/** The session side of `builtin:worktrees`. */
export interface Worktrees {
  /** Calls `listener` with each run's record once it is appended to the session; returns the unsubscribe function. */
  onTurn(listener: (record: TurnRecord) => void): () => void;
}

export const worktreesService = defineService<Worktrees>("knightcode.worktrees", {
  description: "each finished run's files (a TurnRecord), as builtin:worktrees records them",
  providedBy: "builtin:worktrees",
});

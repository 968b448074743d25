/**
 * The app-server methods of issue 18 over the git services, one function per method, taking what the host knows
 * about the thread (`ThreadCheckout`) and the method's params, and returning the method's result. The host's
 * handlers stay thin: look the thread up, call one of these, send the result or map a `GitServiceError` to the
 * error it names. Actions that write the checkout run under `runExclusive`, so they answer `turnInProgress`
 * while a turn runs there and hold off turns and tool calls while they run.
 */
import {
  type ChangesQuery,
  type DiffReadResult,
  type DiffScope,
  readChanges,
  revertChanges,
  type TurnRecord,
} from "./changes.js";
import { runExclusive } from "./checkout-lock.js";
import { type Environment, listEnvironments, saveEnvironments } from "./environments.js";
import { invalidParams } from "./errors.js";
import {
  type CommitRequest,
  gitBranchCreate,
  gitBranchSwitch,
  gitCommit,
  gitLog,
  gitStage,
  gitUnstage,
  type StageRequest,
} from "./ops.js";
import { openRepo } from "./repo.js";
import { lastTurnRecord } from "./turns.js";
import { findWorktree, type WorktreeSettings } from "./worktrees.js";

/** What a handler knows about the thread a method names. */
export interface ThreadCheckout {
  /** The thread's cwd (in its worktree, or in the user's checkout). */
  cwd: string;
  settings: WorktreeSettings;
  /** The session's entries on the active branch (`sessionManager.getBranch()`), for the last turn's record. */
  entries: readonly { type: string; customType?: string; data?: unknown }[];
  /** The host's id of the thread's last turn, echoed as `turnId` and checked by an undo's `turnId`. */
  lastTurnId?: string;
}

/** The thread's last turn, with the host's turn id. */
export function threadLastTurn(thread: ThreadCheckout): TurnRecord | undefined {
  const record = lastTurnRecord(thread.entries);
  if (!record) return undefined;
  return thread.lastTurnId !== undefined ? { ...record, turnId: thread.lastTurnId } : record;
}

function threadQuery(thread: ThreadCheckout): Pick<ChangesQuery, "lastTurn" | "base"> {
  const lastTurn = threadLastTurn(thread);
  const base = findWorktree(thread.settings.root, thread.cwd)?.baseCommit;
  return { ...(lastTurn ? { lastTurn } : {}), ...(base ? { base } : {}) };
}

export interface DiffReadParams {
  scope?: DiffScope;
  against?: string;
  commit?: string;
  context?: number;
  ignoreWhitespace?: boolean;
}

/** `thread/diff/read`. */
export function threadDiffRead(thread: ThreadCheckout, params: DiffReadParams): Promise<DiffReadResult> {
  return readChanges(thread.cwd, { ...params, ...threadQuery(thread) });
}

export interface DiffRevertParams extends DiffReadParams {
  path?: string;
  hunkId?: string;
  reapply?: boolean;
  turnId?: string;
}

/** `thread/diff/revert` → `{paths}`. */
export async function threadDiffRevert(
  thread: ThreadCheckout,
  params: DiffRevertParams,
): Promise<{ paths: string[] }> {
  const repo = await openRepo(thread.cwd);
  return runExclusive(repo.root, () => revertChanges(thread.cwd, { ...params, ...threadQuery(thread) }));
}

/** `git/stage` and `git/unstage` → `{paths}`. */
export async function gitStageMethod(
  thread: ThreadCheckout,
  params: StageRequest,
  unstage = false,
): Promise<{ paths: string[] }> {
  const repo = await openRepo(thread.cwd);
  return runExclusive(repo.root, () =>
    unstage ? gitUnstage(thread.cwd, params) : gitStage(thread.cwd, params),
  );
}

/** `git/commit`; `writeMessage` asks the thread's model for a message from the staged diff. */
export async function gitCommitMethod(thread: ThreadCheckout, params: CommitRequest) {
  const repo = await openRepo(thread.cwd);
  return runExclusive(repo.root, () => gitCommit(thread.cwd, params));
}

/** `git/branch/create` and `git/branch/switch` → `{branch}`. */
export async function gitBranchMethod(
  thread: ThreadCheckout,
  params: { name?: unknown },
  action: "create" | "switch",
) {
  if (typeof params.name !== "string" || params.name === "")
    throw invalidParams("`name` must be a non-empty string");
  const name = params.name;
  const repo = await openRepo(thread.cwd);
  return runExclusive(repo.root, () =>
    action === "create" ? gitBranchCreate(thread.cwd, name) : gitBranchSwitch(thread.cwd, name),
  );
}

/** `git/log` → `{commits}`: the commits since the worktree's base (else the upstream). */
export function gitLogMethod(thread: ThreadCheckout, params: { limit?: number }) {
  const base = findWorktree(thread.settings.root, thread.cwd)?.baseCommit;
  return gitLog(thread.cwd, {
    ...(params.limit !== undefined ? { limit: params.limit } : {}),
    ...(base ? { base } : {}),
  });
}

/** `environment/list` → `{environments, trusted}`, read from the top of `cwd`'s checkout. */
export async function environmentList(params: { cwd: string }, trusted: boolean) {
  const repo = await openRepo(params.cwd).catch(() => undefined);
  return listEnvironments(repo?.root ?? params.cwd, trusted);
}

/** `environment/save` → `{environments}` as written. */
export async function environmentSave(params: {
  cwd: string;
  environments: unknown;
}): Promise<{ environments: Environment[] }> {
  const repo = await openRepo(params.cwd).catch(() => undefined);
  return { environments: saveEnvironments(repo?.root ?? params.cwd, params.environments) };
}

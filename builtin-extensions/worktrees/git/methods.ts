/**
 * The app-server's git methods over the engine, one function per method, taking what the host knows about the
 * thread (`ThreadCheckout`) and the method's params, and returning the method's result. The host's handlers stay
 * thin: look the thread up, call one of these (through `gitService`), send the result or map a `GitServiceError`
 * to the error it names. Actions that write the checkout run under the service's `CheckoutLock`, so they answer
 * `turnInProgress` while a turn runs there and hold off turns and tool calls while they run.
 */
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import type {
  CommitParams,
  DiffReadParams,
  DiffReadResult,
  DiffRevertParams,
  Environment,
  HandoffOutcome,
  HandoffParams,
  HandoffThread,
  ThreadCheckout,
  TurnRecord,
} from "@knightcodeai/cli/kit";
import type { CheckoutLock } from "../checkout-lock.js";
import { type ChangesQuery, readChanges, revertChanges } from "./changes.js";
import { commitMessageWriter } from "./commit-message.js";
import { listEnvironments, saveEnvironments } from "./environments.js";
import { gitConflict, invalidParams } from "./errors.js";
import { handoffToLocal, handoffToWorktree } from "./handoff.js";
import {
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
import { findWorktree, readRecords } from "./worktrees.js";

export type {
  DiffReadParams,
  DiffRevertParams,
  HandoffOutcome,
  HandoffParams,
  HandoffThread,
  ThreadCheckout,
};

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

/** `thread/diff/read`. */
export function threadDiffRead(thread: ThreadCheckout, params: DiffReadParams): Promise<DiffReadResult> {
  return readChanges(thread.cwd, { ...params, ...threadQuery(thread) });
}

/** `thread/diff/revert` → `{paths}`. */
export async function threadDiffRevert(
  lock: CheckoutLock,
  thread: ThreadCheckout,
  params: DiffRevertParams,
): Promise<{ paths: string[] }> {
  const repo = await openRepo(thread.cwd);
  return lock.runExclusive(repo.root, () => revertChanges(thread.cwd, { ...params, ...threadQuery(thread) }));
}

/** `git/stage` and `git/unstage` → `{paths}`. */
export async function gitStageMethod(
  lock: CheckoutLock,
  thread: ThreadCheckout,
  params: StageRequest,
  unstage = false,
): Promise<{ paths: string[] }> {
  const repo = await openRepo(thread.cwd);
  return lock.runExclusive(repo.root, () =>
    unstage ? gitUnstage(thread.cwd, params) : gitStage(thread.cwd, params),
  );
}

/** `git/commit`; an empty message is written by `params.writer` (the thread's model) from the staged diff. */
export async function gitCommitMethod(lock: CheckoutLock, thread: ThreadCheckout, params: CommitParams) {
  const repo = await openRepo(thread.cwd);
  const { writer, ...rest } = params;
  return lock.runExclusive(repo.root, () =>
    gitCommit(thread.cwd, { ...rest, ...(writer ? { writeMessage: commitMessageWriter(writer) } : {}) }),
  );
}

/** `git/branch/create` and `git/branch/switch` → `{branch}`. */
export async function gitBranchMethod(
  lock: CheckoutLock,
  thread: ThreadCheckout,
  params: { name?: unknown },
  action: "create" | "switch",
) {
  if (typeof params.name !== "string" || params.name === "")
    throw invalidParams("`name` must be a non-empty string");
  const name = params.name;
  const repo = await openRepo(thread.cwd);
  return lock.runExclusive(repo.root, () =>
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

/** Runs `fn` holding both checkouts, always in the same order so two handoffs cannot wait on each other. */
async function holdingBoth<T>(lock: CheckoutLock, a: string, b: string, fn: () => Promise<T>): Promise<T> {
  if (a === b) return lock.runExclusive(a, fn);
  const [first, second] = a < b ? [a, b] : [b, a];
  return lock.runExclusive(first, () => lock.runExclusive(second, fn));
}

/**
 * `thread/handoff`: moves the thread's uncommitted changes between its worktree and the main checkout. The host
 * checks that no turn runs and the thread has a message, then reloads the thread at the returned `cwd`.
 */
export async function threadHandoff(
  lock: CheckoutLock,
  thread: HandoffThread,
  params: HandoffParams,
): Promise<HandoffOutcome> {
  const here = findWorktree(thread.settings.root, thread.cwd);
  if (params.to === "local") {
    if (!here) throw invalidParams("the thread already runs in the main checkout");
    if (here.deleted || !existsSync(here.path)) {
      throw gitConflict("worktreeDeleted", `the worktree ${here.path} was deleted; restore it first`, {
        paths: [here.path],
      });
    }
    const inside = relative(here.path, thread.cwd);
    const done = await holdingBoth(lock, here.path, here.projectCwd, () =>
      handoffToLocal({
        record: here,
        settings: thread.settings,
        agentDir: thread.agentDir,
        title: thread.title,
        ...(params.branch !== undefined ? { branch: params.branch } : {}),
      }),
    );
    return { cwd: join(here.projectCwd, inside), branch: done.branch, patch: done.patch };
  }
  if (here) throw invalidParams("the thread already runs in its worktree");
  const main = await openRepo(thread.cwd);
  const own = readRecords(thread.settings.root).find((r) => r.threadIds.includes(thread.threadId));
  if (own && (own.deleted || !existsSync(own.path))) {
    throw gitConflict("worktreeDeleted", `the thread's worktree ${own.path} was deleted; restore it first`, {
      paths: [own.path],
    });
  }
  const moved = await holdingBoth(lock, main.root, own?.path ?? main.root, () =>
    handoffToWorktree({
      cwd: thread.cwd,
      settings: thread.settings,
      agentDir: thread.agentDir,
      threadId: thread.threadId,
      ...(own ? { record: own } : {}),
      ...(params.environment !== undefined ? { environment: params.environment } : {}),
      ...(thread.trusted !== undefined ? { trusted: thread.trusted } : {}),
      ...(thread.onProgress ? { onProgress: thread.onProgress } : {}),
    }),
  );
  return { cwd: moved.cwd, patch: moved.patch, ...(moved.setup ? { setup: moved.setup } : {}) };
}

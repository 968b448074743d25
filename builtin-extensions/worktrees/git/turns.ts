/**
 * Turn snapshots: the checkout's working files recorded before and after a turn (through a temporary index, so
 * the user's index is untouched), giving `turn/diff/updated`'s net totals and the `lastTurn` scope. They are
 * snapshot refs in the thread's bucket, pruned like every snapshot (snapshots.ts).
 */

import { TURN_ENTRY_TYPE, type TurnRecord } from "@knightcodeai/cli/kit";
import { diffTotals } from "./diff.js";
import { GitServiceError } from "./errors.js";
import { openRepo } from "./repo.js";
import { pruneSnapshots, type Snapshot, writeSnapshot } from "./snapshots.js";

export interface TurnStart {
  root: string;
  bucket: string;
  before: Snapshot;
}

/** Records the state before a turn; undefined outside a git repository (there is nothing to diff then). */
export async function snapshotTurnStart(cwd: string, bucket: string): Promise<TurnStart | undefined> {
  let repo: Awaited<ReturnType<typeof openRepo>>;
  try {
    repo = await openRepo(cwd);
  } catch (error) {
    if (error instanceof GitServiceError && error.errorName === "notGitRepo") return undefined;
    throw error;
  }
  return { root: repo.root, bucket, before: await writeSnapshot(repo, bucket) };
}

/** Records the state after the turn and the net line totals of every file changed while it ran. */
export async function snapshotTurnEnd(start: TurnStart, turnId?: string): Promise<TurnRecord> {
  const repo = await openRepo(start.root);
  const after = await writeSnapshot(repo, start.bucket);
  const files = await diffTotals(repo, start.before.workTree, after.workTree);
  await pruneSnapshots(repo);
  return {
    ...(turnId !== undefined ? { turnId } : {}),
    root: repo.root,
    before: start.before.commit,
    after: after.commit,
    files,
  };
}

export { TURN_ENTRY_TYPE };

interface EntryLike {
  type: string;
  customType?: string;
  data?: unknown;
}

function isTurnRecord(data: unknown): data is TurnRecord {
  const record = data as TurnRecord | undefined;
  return (
    typeof record?.before === "string" && typeof record.after === "string" && Array.isArray(record.files)
  );
}

/** The turn records among session entries (`getBranch()` gives the active branch's), oldest first. */
export function turnRecords(entries: readonly EntryLike[]): TurnRecord[] {
  return entries
    .filter((entry) => entry.type === "custom" && entry.customType === TURN_ENTRY_TYPE)
    .map((entry) => entry.data)
    .filter(isTurnRecord);
}

/** The last turn's record, for the `lastTurn` scope. */
export function lastTurnRecord(entries: readonly EntryLike[]): TurnRecord | undefined {
  return turnRecords(entries).at(-1);
}

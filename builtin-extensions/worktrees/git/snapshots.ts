/**
 * Snapshots of a checkout as commits under `refs/knightcode/snapshots/<bucket>/<time>`, laid out like a stash
 * commit: the snapshot's tree is the working files, its first parent the `HEAD` it was taken on (absent on an
 * unborn `HEAD`), its last parent a commit of the index. The refs live in the shared git dir, so they outlive a
 * removed worktree, and they keep their objects from `git gc` until pruned.
 */
import { invalidParams } from "./errors.js";
import type { RepoInfo } from "./repo.js";
import { gitText, runGit } from "./runner.js";
import { captureState, type WorkingState } from "./state.js";

export const SNAPSHOT_REF_PREFIX = "refs/knightcode/snapshots/";
/** Snapshots older than this are pruned. */
export const SNAPSHOT_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** Snapshots kept per bucket, newest first. */
export const SNAPSHOT_KEEP_PER_BUCKET = 100;

export interface Snapshot {
  ref: string;
  commit: string;
  head: string | undefined;
  indexTree: string;
  workTree: string;
}

/** A bucket name usable in a ref: thread ids and worktree ids pass unchanged. */
export function snapshotBucket(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_-]/g, "-").replace(/^-+/, "");
  if (!clean) throw invalidParams(`"${name}" cannot name a snapshot bucket`);
  return clean;
}

/** Records `state` (captured now when not given) as a snapshot commit and a ref in `bucket`. */
export async function writeSnapshot(repo: RepoInfo, bucket: string, state?: WorkingState): Promise<Snapshot> {
  const taken = state ?? (await captureState(repo));
  const run = { cwd: repo.root, identity: true };
  const headParent = taken.head ? ["-p", taken.head] : [];
  const indexCommit = await gitText(
    ["commit-tree", ...headParent, "-m", "knightcode index", taken.indexTree],
    run,
  );
  const commit = await gitText(
    ["commit-tree", ...headParent, "-p", indexCommit, "-m", "knightcode snapshot", taken.workTree],
    run,
  );
  const prefix = `${SNAPSHOT_REF_PREFIX}${snapshotBucket(bucket)}/`;
  // `<time>` in milliseconds; two snapshots in the same millisecond take the next free one.
  for (let time = Date.now(); ; time++) {
    const ref = `${prefix}${time}`;
    // The empty old value makes update-ref create the ref only when it does not exist yet.
    const out = await runGit(["update-ref", ref, commit, ""], { cwd: repo.root, okCodes: [128] });
    if (out.code === 0)
      return { ref, commit, head: taken.head, indexTree: taken.indexTree, workTree: taken.workTree };
  }
}

/** Reads a snapshot back from its ref or commit. */
export async function readSnapshot(repo: RepoInfo, refOrCommit: string): Promise<Snapshot> {
  const line = await gitText(["rev-list", "--parents", "-n", "1", refOrCommit], {
    cwd: repo.root,
    read: true,
  });
  const [commit = "", ...parents] = line.split(" ");
  const indexCommit = parents[parents.length - 1];
  if (!indexCommit) throw invalidParams(`${refOrCommit} is not a KnightCode snapshot`);
  const head = parents.length === 2 ? parents[0] : undefined;
  const [workTree, indexTree] = await Promise.all([
    gitText(["rev-parse", `${commit}^{tree}`], { cwd: repo.root, read: true }),
    gitText(["rev-parse", `${indexCommit}^{tree}`], { cwd: repo.root, read: true }),
  ]);
  return { ref: refOrCommit, commit, head, indexTree, workTree };
}

export interface SnapshotRef {
  ref: string;
  bucket: string;
  time: number;
  commit: string;
}

/** The snapshot refs of the repository (of one bucket when given), oldest first. */
export async function listSnapshots(repo: RepoInfo, bucket?: string): Promise<SnapshotRef[]> {
  const pattern = bucket ? `${SNAPSHOT_REF_PREFIX}${snapshotBucket(bucket)}/` : SNAPSHOT_REF_PREFIX;
  const out = await gitText(["for-each-ref", "--format=%(refname) %(objectname)", pattern], {
    cwd: repo.root,
    read: true,
  });
  const refs: SnapshotRef[] = [];
  for (const line of out.split("\n")) {
    const [ref = "", commit = ""] = line.split(" ");
    const rest = ref.slice(SNAPSHOT_REF_PREFIX.length).split("/");
    const time = Number(rest[rest.length - 1]);
    if (!ref || !Number.isFinite(time)) continue;
    refs.push({ ref, bucket: rest.slice(0, -1).join("/"), time, commit });
  }
  return refs.sort((a, b) => a.time - b.time);
}

export interface PruneOptions {
  maxAgeMs?: number;
  keepPerBucket?: number;
  now?: number;
  /** Refs never pruned (a deleted worktree's restore point). */
  keep?: ReadonlySet<string>;
}

/** Deletes snapshot refs older than `maxAgeMs` or past the newest `keepPerBucket` of their bucket. */
export async function pruneSnapshots(repo: RepoInfo, options: PruneOptions = {}): Promise<string[]> {
  const maxAge = options.maxAgeMs ?? SNAPSHOT_MAX_AGE_MS;
  const keepCount = options.keepPerBucket ?? SNAPSHOT_KEEP_PER_BUCKET;
  const now = options.now ?? Date.now();
  const byBucket = new Map<string, SnapshotRef[]>();
  for (const snap of await listSnapshots(repo)) {
    const list = byBucket.get(snap.bucket) ?? [];
    list.push(snap);
    byBucket.set(snap.bucket, list);
  }
  const doomed: string[] = [];
  for (const list of byBucket.values()) {
    list.forEach((snap, index) => {
      if (options.keep?.has(snap.ref)) return;
      if (now - snap.time > maxAge || index < list.length - keepCount) doomed.push(snap.ref);
    });
  }
  if (doomed.length > 0) {
    await runGit(["update-ref", "--stdin", "-z"], {
      cwd: repo.root,
      input: doomed.map((ref) => `delete ${ref}\0\0`).join(""),
    });
  }
  return doomed;
}

/**
 * The working tree's state as git trees, taken through a temporary copy of the index so the user's index file is
 * never written: the index as it stands (`indexTree`) and every tracked and untracked, not ignored, file as it is
 * on disk (`workTree`). Diffs and snapshots are then comparisons of trees, which take no lock.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitConflict } from "./errors.js";
import type { RepoInfo } from "./repo.js";
import { GitCommandError, gitText, runGit, splitNul } from "./runner.js";

export interface WorkingState {
  head: string | undefined;
  /** The tree of the user's index as it stands (the staged state). */
  indexTree: string;
  /** The tree of the working files: tracked ones as on disk, plus the untracked ones not ignored. */
  workTree: string;
  /** Untracked files left out because there were more than `untrackedLimit`. */
  untrackedSkipped: number;
}

export interface CaptureOptions {
  /** Take at most this many untracked files (the first ones by path); the rest are counted. */
  untrackedLimit?: number;
}

/**
 * The private index folders in use. A process that exits while one is in use (a quit during a turn's capture)
 * removes them on its way out, since the `finally` below never runs then. One `exit` listener for the process.
 */
const liveIndexDirs = new Set<string>();
let exitCleanup = false;

function trackIndexDir(dir: string): void {
  liveIndexDirs.add(dir);
  if (exitCleanup) return;
  exitCleanup = true;
  process.once("exit", () => {
    for (const live of liveIndexDirs) rmSync(live, { recursive: true, force: true });
  });
}

/** Runs `fn` with a private copy of `repo`'s index, removed afterwards whatever happens. */
export async function withTempIndex<T>(
  repo: RepoInfo,
  fn: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "kc-git-index-"));
  trackIndexDir(dir);
  try {
    const file = join(dir, "index");
    const real = repo.indexFile;
    if (existsSync(real)) {
      copyFileSync(real, file);
      // git trusts an entry's stat data only when the file is older than the index file (its "racy git" rule). The
      // copy keeps the original's time, a millisecond earlier to stay on the safe side of the rounding, so a file
      // edited just before the index was written is still compared by content.
      const seconds = (statSync(real).mtimeMs - 1) / 1000;
      utimesSync(file, seconds, seconds);
    }
    return await fn({ GIT_INDEX_FILE: file });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    liveIndexDirs.delete(dir);
  }
}

/** Captures the index and the working files of `repo` as trees without writing its index. */
export async function captureState(repo: RepoInfo, options: CaptureOptions = {}): Promise<WorkingState> {
  return withTempIndex(repo, async (env) => {
    const run = { cwd: repo.root, env };
    // The index's tree and the untracked list only read the copy: they run side by side (fewer steps in turn).
    const limited = options.untrackedLimit;
    const [written, untracked] = await Promise.all([
      gitText(["write-tree"], run).then(
        (tree) => ({ tree }),
        (error: unknown) => ({ error }),
      ),
      limited === undefined
        ? Promise.resolve(undefined)
        : runGit(["ls-files", "-z", "--others", "--exclude-standard", "--", "."], run).then((out) =>
            splitNul(out.stdout).sort(),
          ),
    ]);
    if ("error" in written) {
      if (written.error instanceof GitCommandError) {
        throw gitConflict("operationInProgress", `the index of ${repo.root} has unresolved conflicts`, {
          output: written.error.stderr,
        });
      }
      throw written.error;
    }
    const indexTree = written.tree;
    let untrackedSkipped = 0;
    if (untracked === undefined || untracked.length <= (limited ?? 0)) {
      // Every untracked file is taken: one `add -A` does what `add -u` and adding them would.
      await runGit(["add", "-A", "--", "."], run);
    } else {
      await runGit(["add", "-u", "--", "."], run);
      const taken = untracked.slice(0, limited);
      untrackedSkipped = untracked.length - taken.length;
      if (taken.length > 0) {
        await runGit(["add", "--pathspec-from-file=-", "--pathspec-file-nul"], {
          ...run,
          input: `${taken.map((p) => `:(literal)${p}`).join("\0")}\0`,
        });
      }
    }
    const workTree = await gitText(["write-tree"], run);
    return { head: repo.head, indexTree, workTree, untrackedSkipped };
  });
}

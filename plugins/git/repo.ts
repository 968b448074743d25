/** Finding the repository a path belongs to, and the states of it the services refuse to act in. */
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { GitServiceError, gitConflict } from "./errors.js";
import { GitCommandError, gitText, runGit } from "./runner.js";

export interface RepoInfo {
  /** The checkout's top folder (a linked worktree's own folder for a worktree). */
  root: string;
  /** This checkout's git dir (`.git`, or `.git/worktrees/<name>` in a linked worktree). */
  gitDir: string;
  /** The repository's shared git dir, where refs, objects and the worktree registry live. */
  commonDir: string;
  /** `cwd` relative to `root`, `""` at the top, with a trailing `/` otherwise. */
  prefix: string;
  /** The commit checked out; undefined in a repository with no commit yet (unborn `HEAD`). */
  head: string | undefined;
  /** The branch checked out (short name); undefined when detached or unborn. */
  branch: string | undefined;
  /** The id of the empty tree in this repository's hash. */
  emptyTree: string;
}

/** Resolves `cwd`'s repository; `notGitRepo` outside one. */
export async function openRepo(cwd: string): Promise<RepoInfo> {
  let lines: string[];
  try {
    const out = await gitText(
      ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--show-prefix"],
      {
        cwd,
        read: true,
      },
    );
    lines = out.split("\n");
  } catch (error) {
    if (error instanceof GitCommandError || (error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new GitServiceError("notGitRepo", `${cwd} is not inside a git repository`);
    }
    throw error;
  }
  const [root = "", gitDir = "", common = "", prefix = ""] = lines;
  if (!root) throw new GitServiceError("notGitRepo", `${cwd} is not inside a git work tree`);
  const commonDir = isAbsolute(common) ? common : resolve(cwd, common);
  const head = await resolveCommit(root, "HEAD");
  const branchOut = await runGit(["symbolic-ref", "-q", "--short", "HEAD"], {
    cwd: root,
    read: true,
    okCodes: [1],
  });
  const branch = head && branchOut.code === 0 ? branchOut.stdout.toString("utf8").trim() : undefined;
  const emptyTree = await gitText(["hash-object", "-t", "tree", "--stdin"], { cwd: root, read: true });
  return { root, gitDir, commonDir, prefix, head, branch, emptyTree };
}

/** The commit `rev` names, or undefined when it names none. */
export async function resolveCommit(cwd: string, rev: string): Promise<string | undefined> {
  const out = await runGit(["rev-parse", "--verify", "-q", `${rev}^{commit}`], {
    cwd,
    read: true,
    okCodes: [1, 128],
  });
  return out.code === 0 ? out.stdout.toString("utf8").trim() : undefined;
}

/** The tree of `rev`, or the empty tree when `rev` is undefined (an unborn `HEAD`). */
export async function treeOf(repo: RepoInfo, rev: string | undefined): Promise<string> {
  if (!rev) return repo.emptyTree;
  return gitText(["rev-parse", "--verify", `${rev}^{tree}`], { cwd: repo.root, read: true });
}

const IN_PROGRESS: readonly [string, string][] = [
  ["MERGE_HEAD", "a merge"],
  ["rebase-merge", "a rebase"],
  ["rebase-apply", "a rebase or am"],
  ["CHERRY_PICK_HEAD", "a cherry-pick"],
  ["REVERT_HEAD", "a revert"],
  ["BISECT_LOG", "a bisect"],
];

/** The operation (merge, rebase, ...) in progress in this checkout, if any. */
export function operationInProgress(repo: RepoInfo): string | undefined {
  for (const [file, what] of IN_PROGRESS) {
    if (existsSync(resolve(repo.gitDir, file))) return what;
  }
  return undefined;
}

/** Refuses with `operationInProgress` while a merge, rebase, cherry-pick, revert or bisect is under way. */
export function assertNoOperation(repo: RepoInfo): void {
  const what = operationInProgress(repo);
  if (what) {
    throw gitConflict(
      "operationInProgress",
      `${what} is in progress in ${repo.root}; finish or abort it first`,
      {
        recoveryInstructions: `Finish or abort ${what} in ${repo.root} (for example \`git status\` shows how).`,
      },
    );
  }
}

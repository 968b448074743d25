/** Finding the repository a path belongs to, and the states of it the services refuse to act in. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { GitServiceError, gitConflict } from "./errors.js";
import { GitCommandError, gitText, runGit } from "./runner.js";

export interface RepoInfo {
  /** The checkout's top folder (a linked worktree's own folder for a worktree). */
  root: string;
  /** This checkout's git dir (`.git`, or `.git/worktrees/<name>` in a linked worktree). */
  gitDir: string;
  /** The repository's shared git dir, where refs, objects and the worktree registry live. */
  commonDir: string;
  /** This checkout's index file (read, never written, by diffs and snapshots). */
  indexFile: string;
  /** `cwd` relative to `root`, `""` at the top, with a trailing `/` otherwise. */
  prefix: string;
  /** The commit checked out; undefined in a repository with no commit yet (unborn `HEAD`). */
  head: string | undefined;
  /** The tree of `head`, read in the same call (so a diff against `HEAD` needs no call of its own). */
  headTree?: string;
  /** The branch checked out (short name); undefined when detached or unborn. */
  branch: string | undefined;
  /** The id of the empty tree in this repository's hash. */
  emptyTree: string;
}

/** The empty tree's id in each object format git supports. */
const EMPTY_TREES: Record<string, string> = {
  sha1: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
  sha256: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
};

/** Resolves `cwd`'s repository and `HEAD`'s tree in one git call (two on an unborn `HEAD`); `notGitRepo` outside one. */
export async function openRepo(cwd: string): Promise<RepoInfo> {
  const args = [
    "rev-parse",
    "--path-format=absolute",
    "--show-toplevel",
    "--absolute-git-dir",
    "--git-common-dir",
    "--show-object-format",
    "--git-path",
    "index",
    "--show-prefix",
    "HEAD",
    "HEAD^{tree}",
    "--symbolic-full-name",
    "HEAD",
  ];
  let out: { stdout: Buffer; code: number };
  try {
    // An unborn HEAD fails the last two arguments (exit 128) after the others printed.
    out = await runGit(args, { cwd, read: true, okCodes: [128] });
  } catch (error) {
    if (error instanceof GitCommandError)
      throw new GitServiceError("notGitRepo", `${cwd} is not inside a git repository`);
    throw error;
  }
  const lines = out.stdout.toString("utf8").split("\n");
  const [
    root = "",
    gitDir = "",
    commonDir = "",
    format = "sha1",
    indexFile = "",
    prefix = "",
    head = "",
    headTree = "",
    symbolic = "",
  ] = lines;
  if (!root || !indexFile) throw new GitServiceError("notGitRepo", `${cwd} is not inside a git work tree`);
  const emptyTree =
    EMPTY_TREES[format] ??
    (await gitText(["hash-object", "-t", "tree", "--stdin"], { cwd: root, read: true }));
  if (out.code === 0) {
    const branch = symbolic.startsWith("refs/heads/") ? symbolic.slice(11) : undefined;
    return { root, gitDir, commonDir, indexFile, prefix, head, headTree, branch, emptyTree };
  }
  return { root, gitDir, commonDir, indexFile, prefix, head: undefined, branch: undefined, emptyTree };
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
  if (rev === repo.head && repo.headTree) return repo.headTree;
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

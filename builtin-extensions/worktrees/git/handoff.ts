/**
 * `thread/handoff`: moves a thread's uncommitted changes between its managed worktree and the main checkout. The
 * changes are saved as a patch under `<agentDir>/handoff/` before anything moves, land in the destination, and
 * only then leave the source; a failure after the save answers `recoveryRequired` with the patch's path.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GitServiceError, gitConflict, invalidParams } from "./errors.js";
import { assertNoOperation, openRepo, type RepoInfo, resolveCommit } from "./repo.js";
import { GitCommandError, runGit, splitNul } from "./runner.js";
import { insideRoot } from "./tree-files.js";
import {
  type CreatedWorktree,
  type CreateWorktreeOptions,
  createWorktree,
  localChangesPatch,
  saveRecord,
  type WorktreeRecord,
  type WorktreeSettings,
} from "./worktrees.js";

export const HANDOFF_DIRTY_MESSAGE = "Stash or commit your local changes to hand off.";

async function openOrDeleted(record: WorktreeRecord): Promise<RepoInfo> {
  try {
    return await openRepo(record.path);
  } catch (error) {
    if (error instanceof GitServiceError && error.errorName === "notGitRepo") {
      throw gitConflict("worktreeDeleted", `the worktree ${record.path} was deleted; restore it first`, {
        paths: [record.path],
      });
    }
    throw error;
  }
}

/** The uncommitted paths of a checkout (untracked included, ignored not). */
async function dirtyPaths(repo: RepoInfo): Promise<string[]> {
  const out = await runGit(["status", "--porcelain=v1", "-z", "--untracked-files=all"], {
    cwd: repo.root,
    read: true,
  });
  const paths: string[] = [];
  const records = splitNul(out.stdout);
  for (let i = 0; i < records.length; i++) {
    const record = records[i] ?? "";
    paths.push(record.slice(3));
    if (record[0] === "R" || record[0] === "C") i++;
  }
  return paths;
}

async function requireClean(repo: RepoInfo): Promise<void> {
  assertNoOperation(repo);
  const dirty = await dirtyPaths(repo);
  if (dirty.length > 0) throw gitConflict("localChanges", HANDOFF_DIRTY_MESSAGE, { paths: dirty });
}

function savePatch(agentDir: string, name: string, patch: Buffer): string {
  const dir = join(agentDir, "handoff");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, "-")}-${name}.patch`);
  writeFileSync(file, patch);
  return file;
}

async function untracked(repo: RepoInfo): Promise<string[]> {
  return splitNul(
    (await runGit(["ls-files", "-z", "--others", "--exclude-standard"], { cwd: repo.root, read: true }))
      .stdout,
  );
}

/** Puts a checkout back to its `HEAD`: index and tracked files reset, and the given untracked files removed. */
async function cleanCheckout(repo: RepoInfo, carriedUntracked: readonly string[]): Promise<void> {
  await runGit(["read-tree", "-u", "--reset", "HEAD"], {
    cwd: repo.root,
    noHooks: true,
    env: { GIT_LFS_SKIP_SMUDGE: "1" },
  });
  for (const rel of carriedUntracked) rmSync(insideRoot(repo, rel), { force: true });
}

async function applyOrRecover(repo: RepoInfo, patch: Buffer, patchFile: string): Promise<void> {
  if (patch.length === 0) return;
  try {
    await runGit(["apply", "--binary", "--whitespace=nowarn", "-"], { cwd: repo.root, input: patch });
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    throw gitConflict(
      "recoveryRequired",
      `the changes did not apply in ${repo.root}; they are still in the source`,
      {
        patch: patchFile,
        output: error.stderr,
        recoveryInstructions: `Your changes are saved in ${patchFile}; apply them with \`git apply --binary ${patchFile}\`.`,
      },
    );
  }
}

/** A branch name from a thread's title: lower case, words joined by `-`. */
export function branchNameFromTitle(prefix: string, title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48);
  return `${prefix}${slug || "thread"}`;
}

export interface HandoffToLocalOptions {
  record: WorktreeRecord;
  settings: WorktreeSettings;
  agentDir: string;
  /** The thread's title, for the `<worktrees.branchPrefix><title>` branch. */
  title: string;
  /** The branch to use when the worktree has none of its own. */
  branch?: string;
}

/**
 * To the main checkout: the worktree's `HEAD` becomes a branch checked out there (the worktree's own branch, else
 * `branch`, else the previous handoff's branch fast-forwarded, else `<branchPrefix><title>`), the uncommitted
 * changes move, and the worktree stays, detached and clean.
 */
export async function handoffToLocal(
  options: HandoffToLocalOptions,
): Promise<{ branch: string; patch: string }> {
  const { record } = options;
  const worktree = await openOrDeleted(record);
  const main = await openRepo(record.projectCwd);
  assertNoOperation(worktree);
  await requireClean(main);
  const head = worktree.head;
  if (!head) throw invalidParams(`${record.path} has no commit`);
  const branch =
    worktree.branch ??
    options.branch ??
    record.handoffBranch ??
    branchNameFromTitle(options.settings.branchPrefix, options.title);
  if (!worktree.branch) {
    const ok = await runGit(["check-ref-format", "--branch", branch], {
      cwd: main.root,
      read: true,
      okCodes: [1, 128],
    });
    if (ok.code !== 0) throw invalidParams(`"${branch}" is not a valid branch name`);
    const existing = await resolveCommit(main.root, `refs/heads/${branch}`);
    if (existing && existing !== head) {
      const ancestor = await runGit(["merge-base", "--is-ancestor", existing, head], {
        cwd: main.root,
        read: true,
        okCodes: [1],
      });
      if (ancestor.code !== 0) {
        throw gitConflict(
          "branchExists",
          `the branch ${branch} exists and does not lead to the worktree's HEAD`,
          {
            recoveryInstructions: "Pass another `branch`, or move or delete the existing one.",
          },
        );
      }
    }
  }
  const carried = await untracked(worktree);
  const patch = await localChangesPatch(worktree);
  const patchFile = savePatch(options.agentDir, `to-local-${record.id}`, patch);
  // The branch can be checked out in one checkout only: the worktree lets go of it (only HEAD changes).
  if (worktree.branch) await runGit(["update-ref", "--no-deref", "HEAD", head], { cwd: worktree.root });
  if (main.branch === branch) {
    await runGit(["merge", "--ff-only", "-q", head], { cwd: main.root, noHooks: true });
  } else {
    await runGit(["branch", "-f", branch, head], { cwd: main.root });
    await runGit(["switch", "-q", branch], { cwd: main.root, noHooks: true });
  }
  await applyOrRecover(main, patch, patchFile);
  await cleanCheckout(worktree, carried);
  record.handoffBranch = branch;
  record.lastUsedAt = Date.now();
  saveRecord(options.settings.root, record);
  return { branch, patch: patchFile };
}

export interface HandoffToWorktreeOptions {
  /** The main checkout the thread runs in now. */
  cwd: string;
  settings: WorktreeSettings;
  agentDir: string;
  /** The thread's worktree, when it has one; without it one is created. */
  record?: WorktreeRecord;
  threadId?: string;
  /** For a new worktree: the environment whose setup runs there (trusted projects only). */
  environment?: string;
  trusted?: boolean;
  onProgress?: CreateWorktreeOptions["onProgress"];
}

/**
 * Back to the worktree: it is detached at the main checkout's `HEAD` and the changes move into it; a thread born
 * in the main checkout gets a new worktree. Returns the worktree and the cwd the thread runs in there.
 */
export async function handoffToWorktree(
  options: HandoffToWorktreeOptions,
): Promise<CreatedWorktree & { patch: string }> {
  const main = await openRepo(options.cwd);
  assertNoOperation(main);
  if (!main.head) throw invalidParams(`${main.root} has no commit yet`);
  const carried = await untracked(main);
  const patch = await localChangesPatch(main);
  const patchFile = savePatch(options.agentDir, "to-worktree", patch);
  let created: CreatedWorktree;
  if (!options.record) {
    created = await createWorktree({
      cwd: options.cwd,
      settings: options.settings,
      carryLocalChanges: true,
      ...(options.threadId !== undefined ? { threadId: options.threadId } : {}),
      ...(options.environment !== undefined ? { environment: options.environment } : {}),
      ...(options.trusted !== undefined ? { trusted: options.trusted } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
  } else {
    const worktree = await openOrDeleted(options.record);
    await requireClean(worktree);
    await runGit(["switch", "-q", "--detach", main.head], { cwd: worktree.root, noHooks: true });
    await applyOrRecover(worktree, patch, patchFile);
    options.record.lastUsedAt = Date.now();
    saveRecord(options.settings.root, options.record);
    created = { record: options.record, cwd: join(options.record.path, main.prefix), joined: true };
  }
  await cleanCheckout(main, carried);
  return { ...created, patch: patchFile };
}

/**
 * Managed worktrees: a thread's own detached checkout under `<worktrees.root>/<4 hex>/<repo name>`. Creation runs
 * no hook and no filter and leaves nothing behind when it fails; deletion takes a snapshot first, so
 * `restoreWorktree` can rebuild the folder. Each managed worktree has a record `<worktrees.root>/<4 hex>.json`
 * beside its folder (it outlives the folder). Only worktrees with a record are ever changed; the user's own
 * worktrees, and the registry as a whole (`git worktree prune`), are never touched.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import {
  type CreatedWorktree,
  type CreateWorktreeOptions,
  DEFAULT_BRANCH_PREFIX,
  DEFAULT_WORKTREES_KEEP,
  type DeleteWorktreeOptions,
  type WorktreeListEntry,
  type WorktreeRecord,
  type WorktreeSettings,
  worktreeSettings,
  writeFileAtomic,
} from "@knightcodeai/cli/kit";
import { PATCH_PREFIXES } from "./diff.js";
import { findEnvironment, listEnvironments, runEnvironmentScript } from "./environments.js";
import { GitServiceError, gitConflict, invalidParams } from "./errors.js";
import { assertNoOperation, openRepo, type RepoInfo, resolveCommit } from "./repo.js";
import { GitCommandError, gitText, runGit, splitNul } from "./runner.js";
import { readSnapshot, writeSnapshot } from "./snapshots.js";
import { withTempIndex } from "./state.js";

export {
  type CreatedWorktree,
  type CreateWorktreeOptions,
  DEFAULT_BRANCH_PREFIX,
  DEFAULT_WORKTREES_KEEP,
  type DeleteWorktreeOptions,
  type WorktreeListEntry,
  type WorktreeRecord,
  type WorktreeSettings,
  worktreeSettings,
};

function recordFile(root: string, id: string): string {
  return join(root, `${id}.json`);
}

export function saveRecord(root: string, record: WorktreeRecord): void {
  mkdirSync(root, { recursive: true });
  writeFileAtomic(recordFile(root, record.id), `${JSON.stringify(record, null, 2)}\n`);
}

/** Every managed worktree record under `root`. */
export function readRecords(root: string): WorktreeRecord[] {
  if (!existsSync(root)) return [];
  const records: WorktreeRecord[] = [];
  for (const name of readdirSync(root)) {
    if (!/^[0-9a-f]{4}\.json$/.test(name)) continue;
    try {
      const record = JSON.parse(readFileSync(join(root, name), "utf8")) as WorktreeRecord;
      if (typeof record.path === "string" && typeof record.id === "string") records.push(record);
    } catch {
      // A record being rewritten or damaged by hand is skipped: it names no worktree this process may change.
    }
  }
  return records;
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The managed worktree holding `path` (its folder or anything inside it), if any. */
export function findWorktree(root: string, path: string): WorktreeRecord | undefined {
  const target = real(path);
  return readRecords(root).find(
    (record) => isInside(real(record.path), target) || isInside(record.path, target),
  );
}

/** Marks a worktree used now, by `threadId` when given. */
export function touchWorktree(root: string, path: string, threadId?: string): WorktreeRecord | undefined {
  const record = findWorktree(root, path);
  if (!record) return undefined;
  record.lastUsedAt = Date.now();
  if (threadId !== undefined && !record.threadIds.includes(threadId)) record.threadIds.push(threadId);
  saveRecord(root, record);
  return record;
}

/** The options of `git` calls that must run no hook and no filter (smudge, clean or process) of the repository. */
async function noUserCodeConfig(repo: RepoInfo): Promise<string[]> {
  const out = await runGit(["config", "--name-only", "--get-regexp", "^filter\\."], {
    cwd: repo.root,
    read: true,
    okCodes: [1],
  });
  const drivers = new Set<string>();
  for (const name of out.stdout.toString("utf8").split("\n")) {
    const match = /^filter\.(.+)\.(?:smudge|clean|process|required)$/.exec(name);
    if (match?.[1]) drivers.add(match[1]);
  }
  const args: string[] = [];
  for (const driver of drivers) {
    args.push(
      "-c",
      `filter.${driver}.smudge=`,
      "-c",
      `filter.${driver}.clean=`,
      "-c",
      `filter.${driver}.process=`,
    );
    args.push("-c", `filter.${driver}.required=false`);
  }
  return args;
}

/** The uncommitted changes of `repo` against its `HEAD` (untracked included, ignored not) as a binary patch. */
export async function localChangesPatch(repo: RepoInfo): Promise<Buffer> {
  return withTempIndex(repo, async (env) => {
    const run = { cwd: repo.root, env };
    await runGit(["add", "-A", "--", "."], run);
    const out = await runGit(
      ["diff", "--cached", "--binary", "--no-ext-diff", "--no-color", ...PATCH_PREFIXES, repo.head ?? "HEAD"],
      run,
    );
    return out.stdout;
  });
}

function newId(root: string): string {
  for (let tries = 0; tries < 1000; tries++) {
    const id = randomBytes(2).toString("hex");
    if (!existsSync(join(root, id)) && !existsSync(recordFile(root, id))) return id;
  }
  throw new Error(`no free worktree folder name under ${root}`);
}

/** Removes a worktree this module created; used when creation fails and on deletion. */
async function removeWorktreeFolder(
  commonDir: string,
  record: Pick<WorktreeRecord, "path">,
  root: string,
  id: string,
) {
  // From the shared git dir, so it works whether or not the worktree's folder still exists.
  await runGit(["worktree", "remove", "--force", record.path], { cwd: commonDir, okCodes: [128] });
  rmSync(join(root, id), { recursive: true, force: true });
}

/** `thread/start` with `workspace: {mode: "worktree"}`: a new detached worktree, or the managed one `cwd` is in. */
export async function createWorktree(options: CreateWorktreeOptions): Promise<CreatedWorktree> {
  const { settings } = options;
  const existing = findWorktree(settings.root, options.cwd);
  if (existing && !existing.deleted) {
    const record = touchWorktree(settings.root, existing.path, options.threadId) ?? existing;
    return { record, cwd: options.cwd, joined: true };
  }
  const repo = await openRepo(options.cwd);
  if (!repo.head)
    throw invalidParams(`${repo.root} has no commit yet; commit once before starting a worktree thread`);
  const base = await resolveCommit(repo.root, options.baseRef ?? "HEAD");
  if (!base) throw invalidParams(`"${options.baseRef}" names no commit`);
  const environment =
    options.environment !== undefined ? findEnvironment(repo.root, options.environment) : undefined;
  let patch: Buffer | undefined;
  if (options.carryLocalChanges) {
    assertNoOperation(repo);
    patch = await localChangesPatch(repo);
  }
  mkdirSync(settings.root, { recursive: true });
  const id = newId(settings.root);
  const path = join(settings.root, id, basename(repo.root));
  mkdirSync(dirname(path), { recursive: true });
  const noUserCode = await noUserCodeConfig(repo);
  let added = false;
  try {
    await runGit([...noUserCode, "worktree", "add", "--no-checkout", "--detach", path, base], {
      cwd: repo.root,
      noHooks: true,
    });
    added = true;
    await runGit([...noUserCode, "read-tree", "-u", "--reset", "HEAD"], {
      cwd: path,
      noHooks: true,
      env: { GIT_LFS_SKIP_SMUDGE: "1" },
    });
    if (patch && patch.length > 0) {
      try {
        await runGit([...noUserCode, "apply", "--binary", "--whitespace=nowarn", "-"], {
          cwd: path,
          input: patch,
        });
      } catch (error) {
        if (error instanceof GitCommandError) {
          throw gitConflict("patchFailed", `the local changes do not apply at ${options.baseRef ?? "HEAD"}`, {
            output: error.stderr,
          });
        }
        throw error;
      }
    }
    const now = Date.now();
    const record: WorktreeRecord = {
      path,
      id,
      projectCwd: repo.root,
      commonDir: repo.commonDir,
      baseCommit: base,
      threadIds: options.threadId !== undefined ? [options.threadId] : [],
      createdAt: now,
      lastUsedAt: now,
      deleted: false,
      ...(environment ? { environment: environment.name } : {}),
    };
    saveRecord(settings.root, record);
    const cwd = join(path, repo.prefix);
    mkdirSync(cwd, { recursive: true });
    if (!environment) return { record, cwd, joined: false };
    // The worktree stands once git made it; a failing setup script is reported, not rolled back.
    const setup = await runEnvironmentScript(environment, "setup", {
      worktreePath: path,
      trusted: options.trusted ?? false,
      ...(options.onProgress ? { onOutput: options.onProgress } : {}),
    });
    return { record, cwd, joined: false, setup };
  } catch (error) {
    if (added) await removeWorktreeFolder(repo.commonDir, { path }, settings.root, id);
    else rmSync(join(settings.root, id), { recursive: true, force: true });
    throw error;
  }
}

/** `worktree/list`: the managed worktrees, of `cwd`'s repository when given. */
export async function listWorktrees(settings: WorktreeSettings, cwd?: string): Promise<WorktreeListEntry[]> {
  let commonDir: string | undefined;
  if (cwd !== undefined) commonDir = real((await openRepo(cwd)).commonDir);
  const entries: WorktreeListEntry[] = [];
  for (const record of readRecords(settings.root)) {
    if (commonDir !== undefined && real(record.commonDir) !== commonDir) continue;
    const entry: WorktreeListEntry = {
      path: record.path,
      projectCwd: record.projectCwd,
      threadIds: record.threadIds,
      lastUsedAt: record.lastUsedAt,
      deleted: record.deleted || !existsSync(record.path),
    };
    if (!entry.deleted) {
      const head = await resolveCommit(record.path, "HEAD");
      if (head) entry.head = head;
      const branch = await runGit(["symbolic-ref", "-q", "--short", "HEAD"], {
        cwd: record.path,
        read: true,
        okCodes: [1],
      });
      const name = branch.stdout.toString("utf8").trim();
      if (name) entry.branch = name;
    }
    entries.push(entry);
  }
  return entries.sort((a, b) => b.lastUsedAt - a.lastUsedAt);
}

/** Nested repositories in a worktree: initialised submodules and repositories inside it (tracked or not). */
export async function nestedRepositories(path: string): Promise<string[]> {
  const nested: string[] = [];
  const staged = await gitText(["ls-files", "-s", "-z"], { cwd: path, read: true });
  for (const record of splitNul(staged)) {
    if (!record.startsWith("160000 ")) continue;
    const rel = record.slice(record.indexOf("\t") + 1);
    if (existsSync(join(path, rel, ".git"))) nested.push(rel);
  }
  const others = await runGit(["ls-files", "-z", "--others", "--directory", "--exclude-standard"], {
    cwd: path,
    read: true,
  });
  for (const rel of splitNul(others.stdout)) {
    if (rel.endsWith("/") && existsSync(join(path, rel, ".git"))) nested.push(rel.slice(0, -1));
  }
  return nested;
}

async function isLocked(record: WorktreeRecord): Promise<boolean> {
  const out = await gitText(["worktree", "list", "--porcelain"], { cwd: record.commonDir, read: true });
  let current = "";
  for (const line of out.split("\n")) {
    if (line.startsWith("worktree ")) current = line.slice(9);
    else if ((line === "locked" || line.startsWith("locked ")) && real(current) === real(record.path))
      return true;
  }
  return false;
}

/** Refuses to delete a worktree in use, locked, or holding a nested repository. */
async function assertDeletable(record: WorktreeRecord, options: DeleteWorktreeOptions): Promise<void> {
  if (options.isInUse?.(record.path) || (await isLocked(record))) {
    throw gitConflict("worktreeInUse", `${record.path} is in use by a loaded thread or locked`, {
      paths: [record.path],
    });
  }
  if (existsSync(record.path)) {
    const nested = await nestedRepositories(record.path);
    if (nested.length > 0) {
      throw gitConflict(
        "submodules",
        `${record.path} holds nested repositories, which a snapshot cannot keep`,
        { paths: nested },
      );
    }
  }
}

/**
 * `worktree/delete`: snapshots a managed worktree and removes it (its record stays, marked deleted, for
 * restore). A folder already gone is unregistered without a snapshot.
 */
export async function deleteWorktree(
  settings: WorktreeSettings,
  path: string,
  options: DeleteWorktreeOptions = {},
): Promise<{ snapshot?: string }> {
  const record = findWorktree(settings.root, path);
  if (!record || real(record.path) !== real(path)) throw invalidParams(`${path} is not a managed worktree`);
  if (record.deleted) throw invalidParams(`${path} is already deleted`);
  await assertDeletable(record, options);
  let snapshot: string | undefined;
  if (existsSync(record.path)) {
    const repo = await openRepo(record.path);
    assertNoOperation(repo);
    snapshot = (await writeSnapshot(repo, `worktree-${record.id}`)).ref;
    // After the snapshot: whatever the cleanup script removes can still be restored.
    if (record.environment !== undefined && options.trusted) {
      const environment = listEnvironments(record.projectCwd, true).environments.find(
        (e) => e.name === record.environment,
      );
      if (environment) {
        await runEnvironmentScript(environment, "cleanup", {
          worktreePath: record.path,
          trusted: true,
          ...(options.onProgress ? { onOutput: options.onProgress } : {}),
        });
      }
    }
  }
  await removeWorktreeFolder(record.commonDir, record, settings.root, record.id);
  record.deleted = true;
  if (snapshot) record.snapshot = snapshot;
  else delete record.snapshot;
  saveRecord(settings.root, record);
  return snapshot ? { snapshot } : {};
}

/**
 * `thread/worktree/restore`: rebuilds a deleted worktree at its old path from its snapshot, detached at the old
 * `HEAD`, with its working files and staged state (ignored files were never kept).
 */
export async function restoreWorktree(settings: WorktreeSettings, path: string): Promise<WorktreeRecord> {
  const record = findWorktree(settings.root, path);
  if (!record) throw invalidParams(`${path} is not a managed worktree`);
  if (!record.deleted && existsSync(record.path)) throw invalidParams(`${record.path} is not deleted`);
  if (!record.snapshot) {
    throw gitConflict(
      "worktreeMissing",
      `${record.path} was deleted without a snapshot; fork the chat into a new worktree instead`,
    );
  }
  const project = await openRepo(record.projectCwd);
  let snap: Awaited<ReturnType<typeof readSnapshot>>;
  try {
    snap = await readSnapshot(project, record.snapshot);
  } catch (error) {
    if (error instanceof GitCommandError) {
      throw gitConflict(
        "worktreeMissing",
        `the snapshot of ${record.path} was pruned; fork the chat into a new worktree instead`,
      );
    }
    throw error;
  }
  const gitlinks = await gitText(["ls-tree", "-r", "-z", snap.workTree], { cwd: project.root, read: true });
  if (splitNul(gitlinks).some((entry) => entry.startsWith("160000 "))) {
    throw gitConflict(
      "submodules",
      `the snapshot of ${record.path} holds submodules, which a worktree cannot rebuild`,
    );
  }
  if (!snap.head) throw invalidParams(`the snapshot of ${record.path} has no commit to start from`);
  // A registration left behind by a folder removed by hand would block the path.
  await runGit(["worktree", "remove", "--force", record.path], { cwd: record.commonDir, okCodes: [128] });
  const noUserCode = await noUserCodeConfig(project);
  mkdirSync(dirname(record.path), { recursive: true });
  let added = false;
  try {
    await runGit([...noUserCode, "worktree", "add", "--no-checkout", "--detach", record.path, snap.head], {
      cwd: project.root,
      noHooks: true,
    });
    added = true;
    const inside = { cwd: record.path, noHooks: true, env: { GIT_LFS_SKIP_SMUDGE: "1" } };
    await runGit([...noUserCode, "read-tree", "-u", "--reset", snap.workTree], inside);
    await runGit(["read-tree", snap.indexTree], inside);
  } catch (error) {
    if (added) await removeWorktreeFolder(record.commonDir, record, settings.root, record.id);
    throw error;
  }
  record.deleted = false;
  record.lastUsedAt = Date.now();
  saveRecord(settings.root, record);
  return record;
}

/**
 * Deletes the least recently used managed worktrees past `settings.keep`, each after a snapshot. Worktrees in use
 * or holding nested repositories are skipped (and still count).
 */
export async function pruneWorktrees(
  settings: WorktreeSettings,
  options: DeleteWorktreeOptions = {},
): Promise<string[]> {
  const live = readRecords(settings.root)
    .filter((record) => !record.deleted)
    .sort((a, b) => b.lastUsedAt - a.lastUsedAt);
  const pruned: string[] = [];
  for (const record of live.slice(settings.keep)) {
    try {
      await deleteWorktree(settings, record.path, options);
      pruned.push(record.path);
    } catch (error) {
      if (!(error instanceof GitServiceError)) throw error;
    }
  }
  return pruned;
}

/**
 * The Changes scopes of `thread/diff/read` and `thread/diff/revert` (app-server spec, "Workspaces, diffs and
 * git"): `lastTurn`, `uncommitted` (the default), `unstaged`, `staged`, `committed` and `branch`. Each scope is a
 * pair of trees; reads diff them, reverts put working files back to the first one.
 */

import type { DiffReadResult, DiffScope, TurnRecord } from "@knightcodeai/cli/kit";
import { DEFAULT_CONTEXT, diffTrees, hunkPatch, type ParsedFileDiff, treesDiffer } from "./diff.js";
import { gitConflict, invalidParams } from "./errors.js";
import { openRepo, type RepoInfo, resolveCommit, treeOf } from "./repo.js";
import { GitCommandError, gitText, runGit } from "./runner.js";
import { readSnapshot, type Snapshot } from "./snapshots.js";
import { captureState } from "./state.js";
import { writePathsFromTree } from "./tree-files.js";

export type { DiffReadResult, DiffScope, TurnRecord };

export const DIFF_SCOPES: readonly DiffScope[] = [
  "lastTurn",
  "uncommitted",
  "unstaged",
  "staged",
  "committed",
  "branch",
];

/** Untracked files a read takes; past this they are counted in `untrackedSkipped`. */
export const UNTRACKED_LIMIT = 500;

export interface ChangesQuery {
  scope?: DiffScope;
  /** `branch`: the ref to compare with. */
  against?: string;
  /** `committed`: the commit to show. */
  commit?: string;
  context?: number;
  ignoreWhitespace?: boolean;
  /** `lastTurn`: the thread's last turn; without it the scope is empty. */
  lastTurn?: TurnRecord;
  /** `branch` without `against`: the worktree's base, tried before the upstream and the default branch. */
  base?: string;
}

interface ScopeTrees {
  from: string;
  to: string;
  untrackedSkipped: number;
  against?: string;
}

async function branchBase(repo: RepoInfo, query: ChangesQuery): Promise<string> {
  const candidates =
    query.against !== undefined
      ? [query.against]
      : [query.base, "@{upstream}", "origin/HEAD", "main", "master"];
  for (const ref of candidates) {
    if (!ref) continue;
    if (await resolveCommit(repo.root, ref)) return ref;
    if (query.against !== undefined) throw invalidParams(`"${ref}" names no commit to compare with`);
  }
  throw invalidParams("no branch to compare with: pass `against`");
}

async function scopeTrees(repo: RepoInfo, scope: DiffScope, query: ChangesQuery): Promise<ScopeTrees> {
  switch (scope) {
    case "committed": {
      if (!query.commit) throw invalidParams("the committed scope needs `commit`");
      const commit = await resolveCommit(repo.root, query.commit);
      if (!commit) throw invalidParams(`"${query.commit}" names no commit`);
      const parent = await resolveCommit(repo.root, `${commit}^`);
      return { from: await treeOf(repo, parent), to: await treeOf(repo, commit), untrackedSkipped: 0 };
    }
    case "lastTurn": {
      const turn = query.lastTurn;
      if (!turn) return { from: repo.emptyTree, to: repo.emptyTree, untrackedSkipped: 0 };
      let trees: [Snapshot, Snapshot];
      try {
        trees = await Promise.all([readSnapshot(repo, turn.before), readSnapshot(repo, turn.after)]);
      } catch (error) {
        if (error instanceof GitCommandError) throw invalidParams("the last turn's snapshots were pruned");
        throw error;
      }
      return { from: trees[0].workTree, to: trees[1].workTree, untrackedSkipped: 0 };
    }
    case "staged": {
      const state = await captureState(repo, { untrackedLimit: 0 });
      return { from: await treeOf(repo, repo.head), to: state.indexTree, untrackedSkipped: 0 };
    }
    case "unstaged": {
      const state = await captureState(repo, { untrackedLimit: UNTRACKED_LIMIT });
      return { from: state.indexTree, to: state.workTree, untrackedSkipped: state.untrackedSkipped };
    }
    case "uncommitted": {
      const state = await captureState(repo, { untrackedLimit: UNTRACKED_LIMIT });
      return {
        from: await treeOf(repo, repo.head),
        to: state.workTree,
        untrackedSkipped: state.untrackedSkipped,
      };
    }
    case "branch": {
      const against = await branchBase(repo, query);
      const state = await captureState(repo, { untrackedLimit: UNTRACKED_LIMIT });
      let base: string;
      try {
        base = await gitText(["merge-base", against, repo.head ?? against], { cwd: repo.root, read: true });
      } catch (error) {
        if (error instanceof GitCommandError) throw invalidParams(`${against} shares no history with HEAD`);
        throw error;
      }
      return {
        from: await treeOf(repo, base),
        to: state.workTree,
        untrackedSkipped: state.untrackedSkipped,
        against,
      };
    }
  }
}

function checkScope(scope: string | undefined): DiffScope {
  const chosen = scope ?? "uncommitted";
  if (!(DIFF_SCOPES as readonly string[]).includes(chosen)) {
    throw invalidParams(`unknown scope "${chosen}"; one of ${DIFF_SCOPES.join(", ")}`);
  }
  return chosen as DiffScope;
}

function checkContext(context: number | undefined): number {
  const value = context ?? DEFAULT_CONTEXT;
  if (!Number.isInteger(value) || value < 0 || value > 1000) {
    throw invalidParams("`context` must be an integer from 0 to 1000");
  }
  return value;
}

/** Whether any of `paths` differs in the working tree from `tree`. */
async function workingDiffers(repo: RepoInfo, tree: string, paths: readonly string[]): Promise<boolean> {
  const state = await captureState(repo);
  return treesDiffer(repo, tree, state.workTree, paths);
}

/** `thread/diff/read`: the diff of one scope of the checkout at `cwd`. Takes no lock; writes no index. */
export async function readChanges(cwd: string, query: ChangesQuery = {}): Promise<DiffReadResult> {
  const scope = checkScope(query.scope);
  const context = checkContext(query.context);
  const repo = await openRepo(cwd);
  const trees = await scopeTrees(repo, scope, query);
  const diff = await diffTrees(repo, trees.from, trees.to, {
    context,
    ignoreWhitespace: query.ignoreWhitespace ?? false,
  });
  const result: DiffReadResult = { scope, root: repo.root, files: diff.files.map((f) => f.file) };
  if (diff.filesOmitted > 0) result.filesOmitted = diff.filesOmitted;
  if (trees.untrackedSkipped > 0) result.untrackedSkipped = trees.untrackedSkipped;
  if (trees.against !== undefined) result.against = trees.against;
  if (scope === "lastTurn" && query.lastTurn) {
    if (query.lastTurn.turnId !== undefined) result.turnId = query.lastTurn.turnId;
    result.stale = await workingDiffers(repo, trees.to, affectedPaths(diff.files));
  }
  return result;
}

export interface RevertRequest extends ChangesQuery {
  /** One file (its path in the diff); without it the whole scope. */
  path?: string;
  /** One hunk of `path`, as a read with the same `context` gave it. */
  hunkId?: string;
  /** `lastTurn` only, no hunk: apply the turn's changes again. */
  reapply?: boolean;
  /** `lastTurn` only: the turn the client means; another last turn answers `diffChanged`. */
  turnId?: string;
}

function affectedPaths(files: readonly ParsedFileDiff[]): string[] {
  const paths = new Set<string>();
  for (const { file } of files) {
    paths.add(file.path);
    if (file.oldPath !== undefined) paths.add(file.oldPath);
  }
  return [...paths];
}

/** A hunk of this file cannot be reversed on its own: the whole file is put back instead. */
function wholeFileOnly(parsed: ParsedFileDiff): boolean {
  const { file } = parsed;
  return (
    file.status !== "modified" || file.binary || parsed.oldMode !== parsed.newMode || file.hunks.length === 0
  );
}

/**
 * `thread/diff/revert`: reverse-applies one hunk, one file or a whole scope to the working tree (`reapply` applies
 * a last turn again). Returns the paths it changed. The user's index is not written; the caller runs it under
 * `runExclusive` so no turn or tool acts in the checkout meanwhile.
 */
export async function revertChanges(cwd: string, request: RevertRequest): Promise<{ paths: string[] }> {
  const scope = checkScope(request.scope);
  if (scope === "staged" || scope === "committed") {
    throw invalidParams(`the ${scope} scope cannot be reverted in the working tree`);
  }
  if (request.hunkId !== undefined && request.path === undefined)
    throw invalidParams("`hunkId` needs `path`");
  if (request.reapply && (scope !== "lastTurn" || request.hunkId !== undefined)) {
    throw invalidParams("`reapply` applies to the lastTurn scope, without `hunkId`");
  }
  if (request.turnId !== undefined && scope !== "lastTurn")
    throw invalidParams("`turnId` applies to lastTurn only");
  const context = checkContext(request.context);
  const repo = await openRepo(cwd);
  if (scope === "lastTurn") {
    if (!request.lastTurn) throw invalidParams("this thread has no turn to revert");
    if (request.turnId !== undefined && request.turnId !== request.lastTurn.turnId) {
      throw gitConflict("diffChanged", `turn ${request.turnId} is not the last turn any more`);
    }
  }
  const trees = await scopeTrees(repo, scope, request);
  const diff = await diffTrees(repo, trees.from, trees.to, {
    // No path limit: it would hide a renamed file's other side from rename detection and change its hunk ids.
    context: Math.max(context, 1),
    budgetBytes: Number.MAX_SAFE_INTEGER,
    maxFiles: Number.MAX_SAFE_INTEGER,
    // Whole files are written back from the tree: only a hunk needs the patch.
    patch: request.hunkId !== undefined,
  });
  let files = diff.files;
  if (request.path !== undefined) {
    files = files.filter(({ file }) => file.path === request.path || file.oldPath === request.path);
    if (files.length === 0) throw invalidParams(`${request.path} is not in the ${scope} diff`);
  }
  const paths = affectedPaths(files);
  const target = request.reapply ? trees.to : trees.from;

  if (scope === "lastTurn" && request.hunkId === undefined) {
    // Whole files are written back: only over files exactly as the turn left them (reapply: as it found them).
    // A single hunk needs no such check: `git apply` refuses it when its lines moved on.
    const expected = request.reapply ? trees.from : trees.to;
    if (await workingDiffers(repo, expected, paths)) {
      throw gitConflict(
        "diffChanged",
        request.reapply
          ? "files the turn changed were edited since it was undone; nothing was reapplied"
          : "files the turn changed were edited since; nothing was reverted",
        { paths },
      );
    }
  }

  const parsed = files[0];
  if (request.hunkId !== undefined && parsed) {
    // context 0 ids and `ignoreWhitespace` ids were never computed here, so they find nothing.
    const hunk = context === 0 ? undefined : parsed.file.hunks.find((h) => h.id === request.hunkId);
    if (!hunk) {
      throw gitConflict(
        "diffChanged",
        `the hunk ${request.hunkId} of ${request.path} changed since it was read; read the diff again`,
        {
          paths: [parsed.file.path],
        },
      );
    }
    if (!wholeFileOnly(parsed)) {
      try {
        await runGit(["apply", "-R", "--whitespace=nowarn", "-"], {
          cwd: repo.root,
          input: hunkPatch(parsed, hunk),
        });
      } catch (error) {
        if (error instanceof GitCommandError) {
          throw gitConflict(
            "patchFailed",
            `the hunk no longer applies to ${parsed.file.path}; nothing was changed`,
            {
              paths: [parsed.file.path],
              output: error.stderr,
            },
          );
        }
        throw error;
      }
      return { paths: [parsed.file.path] };
    }
  }
  await writePathsFromTree(repo, target, paths);
  return { paths };
}

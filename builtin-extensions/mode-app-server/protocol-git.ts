/**
 * The workspace, diff and git part of the protocol (issue 18): its requests and notifications, spread into
 * protocol.ts's tables, so they are validated and written into the generated schema like every other method.
 * Shapes follow the app-server spec's "Workspaces, diffs and git" and its method reference.
 *
 * The results that carry a `Thread` take it from protocol.ts through `gitSpecs`, so this file imports nothing
 * from there at run time (the two would import each other).
 */
import { type TSchema, Type } from "@sinclair/typebox";
import type { MethodSpec, NotificationSpec } from "./protocol.js";
import { Arr, Bool, Lit, Num, Obj, Opt, Str, ThreadId } from "./protocol-base.js";

const Paths = Obj({ paths: Arr(Str(), { description: "Paths relative to the repository's root" }) });

/** `{path, additions, deletions}`: a file of `turn/diff/updated` and `Turn.files`. */
export const FileTotals = Obj(
  { path: Str(), additions: Num(), deletions: Num() },
  {
    $id: "FileTotals",
    description: "Net line totals of a file between the working tree before and after a turn",
  },
);

export const DiffHunk = Obj(
  {
    id: Str({ description: "Hash of the file's header, the read's context and the hunk" }),
    header: Str({ description: "The @@ line" }),
    oldStart: Num(),
    oldLines: Num(),
    newStart: Num(),
    newLines: Num(),
    lines: Arr(Str(), { description: 'Each line with its " ", "+", "-" or "\\" prefix' }),
  },
  { $id: "DiffHunk" },
);

export const DiffFile = Obj(
  {
    path: Str(),
    oldPath: Opt(Str()),
    status: Type.Union([
      Lit("added"),
      Lit("deleted"),
      Lit("modified"),
      Lit("renamed"),
      Lit("copied"),
      Lit("typeChanged"),
    ]),
    binary: Bool(),
    additions: Num(),
    deletions: Num(),
    tooLarge: Opt(Bool({ description: "Past the response budget: no hunks" })),
    hunks: Arr(DiffHunk),
  },
  { $id: "DiffFile" },
);

/** `Thread.workspace`: where the thread runs. */
export const ThreadWorkspace = Obj(
  {
    mode: Type.Union([Lit("local"), Lit("worktree")]),
    path: Opt(Str({ description: "worktree: the managed worktree's top folder" })),
    projectCwd: Opt(Str({ description: "worktree: the top folder of the checkout it was made from" })),
    deleted: Opt(Bool({ description: "worktree: deleted (archived, pruned or removed); restorable" })),
  },
  { $id: "ThreadWorkspace" },
);

const Script = Obj(
  { default: Opt(Str()), linux: Opt(Str()), darwin: Opt(Str()), win32: Opt(Str()) },
  { additionalProperties: false },
);
export const Environment = Obj(
  { name: Str({ minLength: 1 }), setup: Opt(Script), cleanup: Opt(Script) },
  { $id: "Environment" },
);

const Scope = Type.Union([
  Lit("lastTurn"),
  Lit("uncommitted"),
  Lit("unstaged"),
  Lit("staged"),
  Lit("committed"),
  Lit("branch"),
]);
const Context = Type.Integer({ minimum: 0, maximum: 1000, description: "Lines of context (default 3)" });
const ScopeParams = {
  threadId: ThreadId,
  scope: Opt(Scope),
  against: Opt(Str({ description: "branch: the ref to compare with" })),
  commit: Opt(Str({ description: "committed: the commit to show" })),
  context: Opt(Context),
};
const WithThread = Obj({ threadId: ThreadId });
const StageParams = Obj({ threadId: ThreadId, path: Opt(Str()), hunkId: Opt(Str()), context: Opt(Context) });
const BranchName = Obj({ threadId: ThreadId, name: Str({ minLength: 1 }) });

/** The specs that need protocol.ts's shared `Thread` and `Warning`. */
export function gitSpecs<T extends TSchema, W extends TSchema>(shared: { Thread: T; Warning: W }) {
  const { Thread, Warning } = shared;
  const requests = {
    "thread/diff/read": {
      description: "The thread's changes in one Changes scope, with a content-hash id per hunk",
      params: Obj({ ...ScopeParams, ignoreWhitespace: Opt(Bool()) }),
      result: Obj({
        scope: Scope,
        root: Str({ description: "The repository's root; file paths are relative to it" }),
        files: Arr(DiffFile),
        filesOmitted: Opt(Num()),
        untrackedSkipped: Opt(Num()),
        turnId: Opt(Str()),
        stale: Opt(Bool({ description: "lastTurn: the files moved on since the turn" })),
        against: Opt(Str()),
      }),
    },
    "thread/diff/revert": {
      description: "Reverts one hunk, one file or a scope in the working tree; reapply redoes the last turn",
      params: Obj({
        ...ScopeParams,
        path: Opt(Str()),
        hunkId: Opt(Str()),
        reapply: Opt(Bool()),
        turnId: Opt(Str({ description: "lastTurn: the turn an Undo was shown on" })),
      }),
      result: Paths,
    },
    "thread/handoff": {
      description: "Moves a thread and its uncommitted changes between its worktree and the main checkout",
      params: Obj({
        threadId: ThreadId,
        to: Type.Union([Lit("local"), Lit("worktree")]),
        branch: Opt(Str({ minLength: 1 })),
        environment: Opt(Str()),
      }),
      result: Obj({ thread: Thread, branch: Opt(Str()), warnings: Arr(Warning) }),
    },
    "thread/worktree/restore": {
      description: "Rebuilds a thread's deleted worktree from its snapshot and loads the thread there",
      params: WithThread,
      result: Obj({ thread: Thread }),
    },
    "worktree/list": {
      description: "The managed worktrees (of cwd's repository when given)",
      params: Obj({ cwd: Opt(Str()) }),
      result: Obj({
        worktrees: Arr(
          Obj({
            path: Str(),
            projectCwd: Str(),
            head: Opt(Str()),
            branch: Opt(Str()),
            threadIds: Arr(Str()),
            lastUsedAt: Num(),
            deleted: Bool(),
          }),
        ),
      }),
    },
    "worktree/delete": {
      description: "Deletes a managed worktree after a snapshot",
      params: Obj({ path: Str({ minLength: 1 }) }),
      result: Obj({ snapshot: Opt(Str({ description: "The snapshot ref it can be restored from" })) }),
    },
    "environment/list": {
      description: "The project's .knightcode/environments.json, and whether its scripts may run",
      params: Obj({ cwd: Str({ minLength: 1 }) }),
      result: Obj({ environments: Arr(Environment), trusted: Bool() }),
    },
    "environment/save": {
      description: "Writes the project's .knightcode/environments.json (trusted projects only)",
      params: Obj({ cwd: Str({ minLength: 1 }), environments: Arr(Environment, { maxItems: 50 }) }),
      result: Obj({ environments: Arr(Environment) }),
    },
    "git/status": {
      description: "Branch, upstream, ahead/behind, change counts and an operation in progress",
      params: WithThread,
      result: Obj({
        root: Str(),
        branch: Opt(Str()),
        head: Opt(Str()),
        upstream: Opt(Str()),
        ahead: Num(),
        behind: Num(),
        staged: Num(),
        unstaged: Num(),
        untracked: Num(),
        conflicted: Num(),
        operation: Opt(Str({ description: "merge, rebase, cherry-pick, revert or bisect" })),
      }),
    },
    "git/stage": {
      description: "Stages everything, one literal path, or one hunk of an unstaged read",
      params: StageParams,
      result: Paths,
    },
    "git/unstage": {
      description: "Unstages everything, one literal path, or one hunk of a staged read",
      params: StageParams,
      result: Paths,
    },
    "git/commit": {
      description:
        "Commits (staging everything first unless includeUnstaged is false); no message: the model writes one",
      params: Obj({ threadId: ThreadId, message: Opt(Str()), includeUnstaged: Opt(Bool()) }),
      result: Obj({ commit: Str(), message: Str() }),
    },
    "git/push": {
      description:
        "Pushes the current branch with one explicit non-forcing refspec; sets the upstream the first time",
      params: WithThread,
      result: Obj({ remote: Str(), branch: Str(), upstream: Str() }),
    },
    "git/pr/create": {
      description: "Opens a pull request with gh pr create",
      params: Obj({ threadId: ThreadId, title: Opt(Str()), body: Opt(Str()), draft: Opt(Bool()) }),
      result: Obj({ url: Str() }),
    },
    "git/branches": {
      description: "The local branches, the current one marked",
      params: WithThread,
      result: Obj({
        current: Opt(Str()),
        branches: Arr(Obj({ name: Str(), head: Str(), upstream: Opt(Str()), current: Bool() })),
      }),
    },
    "git/branch/create": {
      description: "Creates a branch at HEAD and checks it out (Create branch here)",
      params: BranchName,
      result: Obj({ branch: Str() }),
    },
    "git/branch/switch": {
      description: "Checks out a branch; refused when it would overwrite local changes",
      params: BranchName,
      result: Obj({ branch: Str() }),
    },
    "git/log": {
      description: "The commits since the worktree's base (else the upstream), newest first",
      params: Obj({ threadId: ThreadId, limit: Opt(Type.Integer({ minimum: 1, maximum: 1000 })) }),
      result: Obj({
        commits: Arr(Obj({ commit: Str(), subject: Str(), author: Str(), date: Str() })),
      }),
    },
  } as const satisfies Record<string, MethodSpec>;

  const notifications = {
    "thread/workspace/progress": {
      description: "Output of an environment's setup or cleanup script, to the connection that asked",
      params: Obj({ threadId: Str(), phase: Type.Union([Lit("setup"), Lit("cleanup")]), output: Str() }),
    },
    "turn/diff/updated": {
      description: "After turn/completed: the files changed while the turn ran, with net line totals",
      params: Obj({ threadId: Str(), turnId: Str(), files: Arr(FileTotals) }),
    },
    "thread/replaced": {
      description: "The thread was reloaded where it now runs (a handoff, a restore); same id, new state",
      params: Obj({ threadId: Str(), thread: Thread }),
    },
  } as const satisfies Record<string, NotificationSpec>;

  return { requests, notifications };
}

/** Shared schemas of this part, written as definitions of their own. */
export const gitSharedSchemas = [FileTotals, DiffHunk, DiffFile, ThreadWorkspace, Environment] as const;

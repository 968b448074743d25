/**
 * The workspace, diff and git methods (protocol-git.ts defines their shapes) over the git engine: the kit's
 * `gitService`, which the server's own session's extensions provide (`builtin:worktrees`, or a replacement; its
 * engine loads on the first call that needs it, docs/worktrees.md). Each handler finds the thread's checkout
 * (loaded or from its file), calls the service once, and turns a `GitServiceError` into the JSON-RPC error it
 * names (`data.code`, with its `data`: `reason`, `paths`, `output`, `recoveryInstructions`, `patch`).
 *
 * The thread-level parts live here too: `thread/start` with a worktree workspace (`prepareWorkspace`), archive
 * deleting a thread's worktree (`archiveWorkspace`), and reloading a thread where it now runs after a handoff or
 * a restore, with `thread/replaced` to its subscribers and its queued inputs following it.
 */
import { existsSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import {
  errorMessage,
  type GitService,
  GitServiceError,
  gitService,
  type SessionEntry,
  type WorktreeSettings,
  worktreeSettings,
} from "@knightcodeai/cli/kit";
import type { Connection } from "./connection.js";
import { installMethods, type MethodRow, method, type ServerContext } from "./context.js";
import { AppServerError, invalidParams, threadNotFound } from "./errors.js";
import { historyTurns, PayloadStore, textOf } from "./items.js";
import type { WarningWire } from "./protocol.js";
import type { AppServer } from "./server.js";
import type { LoadedThread } from "./thread.js";
import { inManagedWorktree, TURN_ENTRY_TYPE } from "./workspace.js";

type Warning = WarningWire;

/** Runs a service call; its `GitServiceError` becomes the protocol error of the same name and data. */
async function call<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof GitServiceError)
      throw new AppServerError(error.errorName, error.message, { ...(error.data ?? {}) });
    throw error;
  }
}

/** The git service in force (from the services of the server's own session), or an error that says why there is none. */
export function gitOf(server: AppServer): GitService {
  const git = server.options.services?.get(gitService);
  if (!git)
    throw new AppServerError(
      "internal",
      `No extension provides ${gitService.id} (${gitService.description}): ${gitService.providedBy} is switched off and nothing replaces it`,
    );
  return git;
}

/** The `worktrees` settings in force, as the git service takes them. */
export function settingsOf(ctx: ServerContext): WorktreeSettings {
  return worktreeSettings(ctx.agentDir, ctx.threads.worktrees.get());
}

function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A worktree some loaded thread runs in is never deleted (archive, pruning, `worktree/delete`). */
function inUse(ctx: ServerContext): (path: string) => boolean {
  return (path) =>
    [...ctx.threads.threads.values()].some(
      (t) => !t.disposed && isInside(path, t.session.sessionManager.getCwd()),
    );
}

/** A thread's checkout as the handlers need it: the loaded thread if any, else what its file says. */
interface Checkout {
  threadId: string;
  thread: LoadedThread | undefined;
  cwd: string;
  entries: readonly SessionEntry[];
  sessionFile: string | undefined;
  name: string | undefined;
}

/** The helpers the git handlers share, over one server context. */
function gitTools(ctx: ServerContext) {
  const agentDir = ctx.agentDir;
  const services = async () => ctx.git();
  const trusted = (cwd: string) => ctx.host.trust.trusted(cwd) === true;

  function checkout(threadId: string): Checkout {
    const thread = ctx.threads.loaded(threadId);
    if (thread) {
      const manager = thread.session.sessionManager;
      return {
        threadId,
        thread,
        cwd: manager.getCwd(),
        entries: manager.getBranch(),
        sessionFile: thread.session.getState().sessionFile,
        name: thread.session.getState().sessionName,
      };
    }
    const info = ctx.threads.findSession(threadId);
    if (!info) throw threadNotFound(threadId);
    return {
      threadId,
      thread: undefined,
      cwd: info.cwd,
      entries: ctx.host.sessions.readBranch(info.path).entries,
      sessionFile: info.path,
      name: info.name,
    };
  }

  /** The checkout must still exist: a worktree deleted behind the server's back is `worktreeDeleted`. */
  function requireFolder(c: Checkout): void {
    if (existsSync(c.cwd)) return;
    if (inManagedWorktree(ctx.threads.worktreesRoot(), c.cwd))
      throw new AppServerError(
        "gitConflict",
        `The thread's worktree ${c.cwd} was deleted; restore it first`,
        {
          reason: "worktreeDeleted",
          paths: [c.cwd],
        },
      );
    throw new AppServerError("notGitRepo", `${c.cwd} does not exist`);
  }

  function requireIdle(c: Checkout, what: string): void {
    if (c.thread?.isBusy())
      throw new AppServerError("turnInProgress", `A turn is running on this thread; ${what} after it ends`);
  }

  /**
   * The thread's last recorded turn by the ids a client may hold: this load's live turn id, and the history id
   * (`thread/resume`, `thread/read`). `asked` is taken when it names that turn either way.
   */
  function lastTurnId(c: Checkout, asked: string | undefined): string | undefined {
    let entryId: string | undefined;
    for (let i = c.entries.length - 1; i >= 0 && entryId === undefined; i--) {
      const entry = c.entries[i];
      if (entry?.type === "custom" && entry.customType === TURN_ENTRY_TYPE) entryId = entry.id;
    }
    if (entryId === undefined) return undefined;
    const live = c.thread?.liveTurnIds.get(entryId);
    const history = historyTurns(c.entries, new PayloadStore()).findLast((t) => t.files !== undefined)?.id;
    if (asked !== undefined && (asked === live || asked === history)) return asked;
    return live ?? history;
  }

  /** The services' view of the thread; the last turn's id is worked out only for the `lastTurn` scope. */
  function threadCheckout(c: Checkout, lastTurn?: { turnId?: string }) {
    const last = lastTurn ? lastTurnId(c, lastTurn.turnId) : undefined;
    return {
      cwd: c.cwd,
      settings: settingsOf(ctx),
      entries: c.entries,
      ...(last !== undefined ? { lastTurnId: last } : {}),
    };
  }

  /** Loads the thread's git checkout for a method; the services and the checkout are checked in this order. */
  async function prepare(threadId: string, options: { write?: string; lastTurn?: { turnId?: string } } = {}) {
    const c = checkout(threadId);
    if (options.write) requireIdle(c, options.write);
    requireFolder(c);
    const git = await services();
    return { git, c, thread: threadCheckout(c, options.lastTurn) };
  }
  return { agentDir, services, trusted, checkout, requireIdle, threadCheckout, prepare };
}

/** The workspace, diff and git methods, one row each. */
export const gitMethods: MethodRow[] = [
  method("thread/diff/read", async (ctx, { threadId, ...params }) => {
    const { prepare } = gitTools(ctx);
    const { git, thread } = await prepare(threadId, params.scope === "lastTurn" ? { lastTurn: {} } : {});
    return await call(() => git.readDiff(thread, params));
  }),

  method("thread/diff/revert", async (ctx, { threadId, ...params }) => {
    const { prepare } = gitTools(ctx);
    const { git, thread } = await prepare(threadId, {
      write: "revert",
      ...(params.scope === "lastTurn" ? { lastTurn: { turnId: params.turnId } } : {}),
    });
    return call(() => git.revertDiff(thread, params));
  }),

  method("git/status", async (ctx, { threadId }) => {
    const { prepare } = gitTools(ctx);
    const { git, c } = await prepare(threadId);
    return call(() => git.status(c.cwd));
  }),

  method("git/stage", async (ctx, { threadId, ...params }) => {
    const { prepare } = gitTools(ctx);
    const { git, thread } = await prepare(threadId, { write: "stage" });
    return call(() => git.stage(thread, params));
  }),

  method("git/unstage", async (ctx, { threadId, ...params }) => {
    const { prepare } = gitTools(ctx);
    const { git, thread } = await prepare(threadId, { write: "unstage" });
    return call(() => git.unstage(thread, params));
  }),

  method("git/commit", async (ctx, { threadId, ...params }) => {
    const { prepare } = gitTools(ctx);
    const { git, c, thread } = await prepare(threadId, { write: "commit" });
    const wantsMessage = !params.message?.trim();
    // An empty message is written by the thread's own model: the thread is loaded for it if it was not.
    let loadedHere: LoadedThread | undefined;
    let loaded = c.thread;
    if (wantsMessage && !loaded) {
      loadedHere = (await ctx.threads.load(threadId, undefined)).thread;
      loaded = loadedHere;
    }
    try {
      const model = loaded?.session.getState().model;
      const models = loaded?.modelRuntime();
      if (wantsMessage && (!model || !models))
        throw invalidParams("The thread has no model to write the commit message; pass `message`", {
          reason: "model",
        });
      return await call(() =>
        git.commit(thread, {
          ...params,
          ...(wantsMessage && model && models ? { writer: { models, model } } : {}),
        }),
      );
    } finally {
      loadedHere?.checkIdle();
    }
  }),

  method("git/push", async (ctx, { threadId }) => {
    const { prepare } = gitTools(ctx);
    const { git, c } = await prepare(threadId, { write: "push" });
    return call(() => git.push(c.cwd));
  }),

  method("git/pr/create", async (ctx, { threadId, ...params }) => {
    const { prepare } = gitTools(ctx);
    const { git, c } = await prepare(threadId);
    return call(() => git.createPullRequest(c.cwd, params));
  }),

  method("git/branches", async (ctx, { threadId }) => {
    const { prepare } = gitTools(ctx);
    const { git, c } = await prepare(threadId);
    return call(() => git.branches(c.cwd));
  }),

  method("git/branch/create", async (ctx, { threadId, name }) => {
    const { prepare } = gitTools(ctx);
    const { git, thread } = await prepare(threadId, { write: "create a branch" });
    return call(() => git.createBranch(thread, name));
  }),

  method("git/branch/switch", async (ctx, { threadId, name }) => {
    const { prepare } = gitTools(ctx);
    const { git, thread } = await prepare(threadId, { write: "switch a branch" });
    return call(() => git.switchBranch(thread, name));
  }),

  method("git/log", async (ctx, { threadId, ...params }) => {
    const { prepare } = gitTools(ctx);
    const { git, thread } = await prepare(threadId);
    return call(() => git.log(thread, params));
  }),

  method("worktree/list", async (ctx, params) => {
    const { services } = gitTools(ctx);
    const git = await services();
    const cwd = params.cwd !== undefined ? resolve(params.cwd) : undefined;
    return { worktrees: await call(() => git.listWorktrees(settingsOf(ctx), cwd)) };
  }),

  method("worktree/delete", async (ctx, params, { connection }) => {
    const { services, trusted } = gitTools(ctx);
    const git = await services();
    const settings = settingsOf(ctx);
    const path = resolve(params.path);
    const record = await git.findWorktree(settings, path);
    // The cleanup script's output goes out under the worktree's most recent thread.
    const threadId = record?.threadIds.at(-1);
    return call(() =>
      git.deleteWorktree(settings, path, {
        isInUse: inUse(ctx),
        trusted: record ? trusted(record.projectCwd) : false,
        ...(threadId !== undefined ? { onProgress: progressTo(connection, threadId) } : {}),
      }),
    );
  }),

  method("environment/list", async (ctx, params) => {
    const { services, trusted } = gitTools(ctx);
    const git = await services();
    const cwd = resolve(params.cwd);
    return call(() => git.environments(cwd, trusted(cwd)));
  }),

  method("environment/save", async (ctx, params) => {
    const { services, trusted } = gitTools(ctx);
    const git = await services();
    const cwd = resolve(params.cwd);
    // The file names scripts that run on this machine: only a trusted project's may be written.
    if (!trusted(cwd)) throw invalidParams(`${cwd} is not a trusted project`, { reason: "untrusted" });
    return call(() => git.saveEnvironments(cwd, params.environments));
  }),

  method("thread/handoff", async (ctx, params, { connection }) => {
    const { agentDir, services, trusted, checkout, requireIdle, threadCheckout } = gitTools(ctx);
    const c = checkout(params.threadId);
    requireIdle(c, "hand it off");
    const title = c.name ?? firstUserText(c.entries);
    if (title === undefined || !c.sessionFile || !existsSync(c.sessionFile))
      throw invalidParams("The thread has no message yet; there is nothing to hand off", { reason: "empty" });
    // A file another process owns cannot be pointed at the new cwd: refuse before anything moves.
    if (!c.thread && existsSync(`${c.sessionFile}.lock`))
      throw new AppServerError(
        "threadLocked",
        `Another process owns ${c.sessionFile}; close it there first`,
        {
          reason: "ownedByAnotherProcess",
          path: c.sessionFile,
        },
      );
    const warnings: Warning[] = [];
    // Held from here: a turn/start answers turnInProgress and a queued input waits to start where the thread goes.
    c.thread?.hold("The thread is being handed off; wait for thread/replaced");
    let outcome: Awaited<ReturnType<GitService["handoff"]>>;
    try {
      const git = await services();
      outcome = await call(() =>
        git.handoff(
          {
            ...threadCheckout(c),
            threadId: c.threadId,
            agentDir,
            title,
            trusted: trusted(c.cwd),
            onProgress: progressTo(connection, c.threadId),
          },
          {
            to: params.to,
            ...(params.branch !== undefined ? { branch: params.branch } : {}),
            ...(params.environment !== undefined ? { environment: params.environment } : {}),
          },
        ),
      );
    } catch (error) {
      c.thread?.release();
      throw error;
    }
    if (outcome.setup) warnings.push(...setupWarnings(outcome.setup));
    const file = c.sessionFile;
    let thread: LoadedThread | undefined;
    if (c.thread) thread = await relocate(ctx, c.thread, outcome.cwd, warnings);
    else rewriteCwd(ctx, file, outcome.cwd);
    return {
      thread: thread ? thread.info() : ctx.threads.threadInfo(c.threadId),
      ...(outcome.branch !== undefined ? { branch: outcome.branch } : {}),
      warnings: warnings,
    };
  }),

  method("thread/worktree/restore", async (ctx, params, { connection }) => {
    const { services, checkout, requireIdle } = gitTools(ctx);
    const c = checkout(params.threadId);
    requireIdle(c, "restore its worktree");
    const git = await services();
    const settings = settingsOf(ctx);
    const record = await git.findWorktree(settings, c.cwd);
    if (!record)
      throw invalidParams("The thread does not run in a managed worktree", { reason: "notWorktree" });
    await call(() => git.restoreWorktree(settings, record.path));
    if (c.thread) {
      c.thread.hold("The thread is being reloaded in its restored worktree; wait for thread/replaced");
      const thread = await relocate(ctx, c.thread, c.cwd, []);
      return { thread: thread.info() };
    }
    const { thread } = await ctx.threads.load(c.threadId, connection);
    return { thread: thread.info() };
  }),
];

/** Registers the workspace, diff and git methods. */
export function registerGitMethods(server: AppServer): void {
  installMethods(server, gitMethods);
}

/** Sends a setup or cleanup script's output to the connection that asked. */
function progressTo(connection: Connection, threadId: string) {
  return (phase: "setup" | "cleanup", output: string) =>
    connection.notify("thread/workspace/progress", { threadId, phase, output });
}

/** What a setup run that did not succeed tells the user. */
function setupWarnings(run: { skipped?: string; exitCode?: number | null }): Warning[] {
  if (run.skipped === "untrusted")
    return [
      { message: "The environment's setup script did not run: the project is not trusted", source: "trust" },
    ];
  if (run.exitCode !== undefined && run.exitCode !== 0)
    return [{ message: `The environment's setup script exited with code ${run.exitCode}`, source: "server" }];
  return [];
}

function firstUserText(entries: readonly SessionEntry[]): string | undefined {
  for (const entry of entries) {
    if (entry.type === "message" && entry.message.role === "user") return textOf(entry.message.content);
  }
  return undefined;
}

/** Points the thread's session file at its new cwd (where it runs and is listed); the session must not be open. */
function rewriteCwd(ctx: ServerContext, file: string, cwd: string): void {
  ctx.threads.storeChange(file, () => ctx.host.sessions.setCwd(file, cwd));
}

/**
 * Reloads a held thread with its session file at `cwd`: the old session closes, the file is pointed at `cwd`, the
 * same thread opens there, and subscribers and queued inputs move to it (`thread/replaced`).
 */
async function relocate(
  ctx: ServerContext,
  old: LoadedThread,
  cwd: string,
  warnings: Warning[],
): Promise<LoadedThread> {
  const file = old.session.getState().sessionFile;
  if (!file) throw new Error("a thread with no session file cannot move");
  const was = old.session.sessionManager.getCwd();
  if (ctx.threads.threads.get(old.id) === old) ctx.threads.threads.delete(old.id);
  await old.dispose();
  try {
    if (resolve(cwd) !== resolve(was)) rewriteCwd(ctx, file, cwd);
    const opened = await ctx.threads.openThread({ cwd: resolve(cwd), sessionFile: file }, undefined);
    opened.thread.forkedFromId = old.forkedFromId;
    warnings.push(...opened.warnings);
    old.handOver(opened.thread);
    return opened.thread;
  } catch (error) {
    // The thread could not open where it now runs: its subscribers learn it closed; resuming it tries again.
    old.broadcast("thread/closed", {});
    throw error;
  }
}

// ---- thread/start and archive ---------------------------------------------------------------------

export interface PreparedWorkspace {
  /** Where the thread runs. */
  cwd: string;
  /** Once the thread exists: records it on its worktree and runs the environment's setup; returns warnings. */
  opened(thread: LoadedThread): Promise<Warning[]>;
  /**
   * When the session could not open: a worktree made for it is deleted (after a snapshot, so carried changes can
   * be restored), so a failed start leaves no worktree behind. A joined worktree stays.
   */
  abandon(): Promise<void>;
}

/**
 * `thread/start`'s workspace: a new worktree (or the managed one `cwd` is in) for `{mode: "worktree"}`; a start
 * whose cwd already lies in a managed worktree joins it whatever the mode. Undefined: the checkout as it is.
 */
export async function prepareWorkspace(
  ctx: ServerContext,
  cwd: string,
  workspace:
    | { mode: string; baseRef?: string; carryLocalChanges?: boolean; environment?: string }
    | undefined,
  connection: Connection,
): Promise<PreparedWorkspace | undefined> {
  const joins = inManagedWorktree(ctx.threads.worktreesRoot(), cwd);
  if (workspace?.mode !== "worktree" && !joins) return undefined;
  const git = ctx.git();
  const settings = settingsOf(ctx);
  // The environment's setup runs once the thread exists, so its progress names the thread: creation only
  // checks the name and records it (an untrusted run skips the script).
  const created = await call(() =>
    git.createWorktree({
      cwd,
      settings,
      ...(workspace?.baseRef !== undefined ? { baseRef: workspace.baseRef } : {}),
      ...(workspace?.carryLocalChanges ? { carryLocalChanges: true } : {}),
      ...(workspace?.environment !== undefined && !joins ? { environment: workspace.environment } : {}),
      trusted: false,
    }),
  );
  return {
    cwd: created.cwd,
    async abandon() {
      if (created.joined) return;
      await git
        .deleteWorktree(settings, created.record.path, { trusted: false })
        .catch((error: unknown) =>
          ctx.log(`removing the worktree of a thread that failed to start: ${errorMessage(error)}`),
        );
    },
    async opened(thread) {
      await git.touchWorktree(settings, created.record.path, thread.id);
      const warnings: Warning[] = [];
      const name = created.joined ? undefined : created.record.environment;
      if (name !== undefined) {
        const project = created.record.projectCwd;
        const run = await call(() =>
          git.runEnvironmentScript(project, name, "setup", {
            worktreePath: created.record.path,
            trusted: ctx.host.trust.trusted(project) === true,
            onOutput: progressTo(connection, thread.id),
          }),
        );
        warnings.push(...setupWarnings(run));
      }
      if (!created.joined) {
        // Past `worktrees.keep`, the least recently used go (after a snapshot); no cleanup script runs for them.
        void git
          .pruneWorktrees(settings, { isInUse: inUse(ctx) })
          .catch((error: unknown) => ctx.log(`pruning worktrees failed: ${errorMessage(error)}`));
      }
      return warnings;
    },
  };
}

/**
 * After `thread/archive`: the thread's managed worktree is deleted after a snapshot (its environment's cleanup
 * script streaming to the connection that archived), unless another thread that is not archived still uses it,
 * or it cannot be deleted (in use, nested repositories): then it stays.
 */
export async function archiveWorkspace(
  ctx: ServerContext,
  threadId: string,
  cwd: string,
  connection: Connection,
): Promise<void> {
  if (!inManagedWorktree(ctx.threads.worktreesRoot(), cwd)) return;
  const git = ctx.git();
  const settings = settingsOf(ctx);
  const record = await git.findWorktree(settings, cwd);
  if (!record || record.deleted || !existsSync(record.path)) return;
  if (record.threadIds.some((id) => id !== threadId && ctx.threads.findSession(id) !== undefined)) return;
  try {
    await git.deleteWorktree(settings, record.path, {
      isInUse: inUse(ctx),
      trusted: ctx.host.trust.trusted(record.projectCwd) === true,
      onProgress: progressTo(connection, threadId),
    });
  } catch (error) {
    // The thread is archived either way; the worktree stays, and `worktree/delete` can try again.
    ctx.log(`archive kept the worktree ${record.path}: ${errorMessage(error)}`);
  }
}

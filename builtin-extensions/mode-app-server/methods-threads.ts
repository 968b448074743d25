/** The handshake, thread, turn and diagnostics methods (protocol.ts defines their shapes). */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { VERSION } from "@knightcodeai/cli/kit";
import { installMethods, type MethodRow, method, type ServerContext } from "./context.js";
import { AppServerError, invalidParams, threadNotFound } from "./errors.js";
import { archiveWorkspace, prepareWorkspace } from "./methods-git.js";
import type { AppServer } from "./server.js";
import type { LoadedThread } from "./thread.js";

const PAGE_DEFAULT = 50;

/** A loaded thread, with `connection` subscribed to it. */
function subscribed(
  ctx: ServerContext,
  threadId: string,
  connection: Parameters<LoadedThread["subscribe"]>[0],
): LoadedThread {
  const thread = ctx.threads.requireLoaded(threadId);
  thread.subscribe(connection);
  return thread;
}

/** The handshake, thread, turn and diagnostics methods, one row each. */
export const threadMethods: MethodRow[] = [
  method("initialize", (ctx, params, { connection }) => {
    connection.initialized = true;
    connection.handshaking = true;
    connection.clientName = params.clientInfo.name;
    connection.setOptOut(params.capabilities?.optOutNotificationMethods ?? []);
    return {
      userAgent: ctx.threads.userAgent(params.clientInfo.name),
      serverInfo: { name: "knightcode", version: VERSION },
      platformOs: process.platform,
    };
  }),

  method("thread/start", async (ctx, params, { connection, afterResponse }) => {
    const cwd = resolve(params.cwd);
    if (!existsSync(cwd)) throw invalidParams(`cwd ${cwd} does not exist`, { reason: "cwd" });
    const workspace = await prepareWorkspace(ctx, cwd, params.workspace, connection);
    let opened: Awaited<ReturnType<AppServer["openThread"]>>;
    try {
      opened = await ctx.threads.openThread(
        { cwd: workspace?.cwd ?? cwd, ...(params.model ? { model: params.model } : {}) },
        connection,
      );
    } catch (error) {
      await workspace?.abandon();
      throw error;
    }
    const { thread, warnings } = opened;
    if (params.name) thread.session.setSessionName(params.name);
    if (workspace) warnings.push(...(await workspace.opened(thread)));
    const info = thread.info();
    afterResponse(() => connection.notify("thread/started", { thread: info }));
    return { thread: info, warnings: warnings, ui: thread.ui.snapshot() };
  }),

  method("thread/resume", async (ctx, params, { connection }) => {
    // An invalid cursor subscribes nobody: check it against the history before loading or subscribing.
    if (params.cursor !== undefined && !/^\d+$/.test(params.cursor))
      throw invalidParams(`Invalid cursor "${params.cursor}"`, { reason: "cursor" });
    const { thread, warnings } = await ctx.threads.load(params.threadId, undefined);
    let history: ReturnType<AppServer["pageHistory"]>;
    try {
      history = ctx.threads.pageHistory(thread.history(), params.cursor);
    } catch (error) {
      thread.checkIdle();
      throw error;
    }
    // Snapshots and the subscription are taken in the same synchronous step as the response is written.
    thread.subscribe(connection);
    const runningTurn = thread.runningTurn();
    return {
      thread: thread.info(),
      turns: history.turns,
      ...(history.nextCursor ? { nextCursor: history.nextCursor } : {}),
      ...(runningTurn ? { runningTurn: runningTurn } : {}),
      queue: thread.queueSnapshot(),
      usage: thread.usage(),
      ui: thread.ui.snapshot(),
      warnings: warnings,
    };
  }),

  method("thread/fork", async (ctx, params, { connection, afterResponse }) => {
    const loaded = ctx.threads.loaded(params.threadId);
    let fork: { path: string; id: string };
    let name: string;
    if (loaded) {
      const source = loaded.session.getState().sessionFile;
      if (!source || !existsSync(source))
        throw invalidParams("The thread has nothing saved to fork yet", { reason: "empty" });
      fork = ctx.host.sessions.fork(source, loaded.session.sessionManager.getBranch());
      name = String(loaded.info().name ?? loaded.info().preview ?? "");
    } else {
      const info = ctx.threads.findSession(params.threadId);
      if (!info) throw threadNotFound(params.threadId);
      fork = ctx.host.sessions.fork(info.path);
      name = info.name ?? (info.firstMessage === "(no messages)" ? "" : info.firstMessage);
    }
    const { thread, warnings } = await ctx.threads.load(fork.id, connection);
    thread.session.setSessionName(`${(name || "Untitled").slice(0, 200)} (fork)`);
    const info = thread.info();
    afterResponse(() => connection.notify("thread/started", { thread: info }));
    return { thread: info, warnings: warnings, ui: thread.ui.snapshot() };
  }),

  method("thread/list", (ctx, params) => {
    const archived = params.archived === true;
    let page: ReturnType<typeof ctx.host.sessions.page>;
    try {
      page = ctx.host.sessions.page({
        ...(params.cwd !== undefined ? { cwd: resolve(params.cwd) } : {}),
        ...(params.cursor !== undefined ? { cursor: params.cursor } : {}),
        limit: params.limit ?? PAGE_DEFAULT,
        ...(archived ? { archived } : { writing: ctx.threads.writing() }),
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === "KC_ERR_SESSION_CURSOR")
        throw invalidParams(`Invalid cursor "${params.cursor}"`, { reason: "cursor" });
      throw error;
    }
    const root = ctx.threads.worktreesRoot();
    const data = page.sessions.map((info) => {
      const { path: _path, ...summary } = ctx.threads.summarize(info, root);
      return summary;
    });
    return {
      data: data,
      ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
    };
  }),

  method("thread/read", (ctx, params) => {
    const thread = ctx.threads.threadInfo(params.threadId);
    if (!params.includeTurns) return { thread: thread };
    const page = ctx.threads.pageHistory(ctx.threads.newestHistory(params.threadId), undefined);
    return {
      thread: thread,
      turns: page.turns,
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  }),

  method("thread/name/set", async (ctx, params) => {
    const loaded = ctx.threads.loaded(params.threadId);
    if (loaded) {
      loaded.session.setSessionName(params.name === "" ? undefined : params.name);
      return {};
    }
    // Not loaded: load it just for this (the owner lock keeps the file safe), then let it unload.
    const { thread } = await ctx.threads.load(params.threadId, undefined);
    thread.session.setSessionName(params.name === "" ? undefined : params.name);
    await ctx.threads.unload(thread);
    return {};
  }),

  method("thread/unsubscribe", (ctx, params, { connection }) => {
    const thread = ctx.threads.loaded(params.threadId);
    return {
      status: thread?.unsubscribe(connection) ? ("unsubscribed" as const) : ("notSubscribed" as const),
    };
  }),

  method("thread/archive", async (ctx, params, { connection }) => {
    const loaded = ctx.threads.loaded(params.threadId);
    if (loaded?.isBusy())
      throw new AppServerError("turnInProgress", "A turn is running; interrupt it before archiving");
    const info = ctx.threads.findSession(params.threadId);
    if (!info) {
      if (loaded) throw invalidParams("The thread has nothing saved to archive yet", { reason: "empty" });
      throw threadNotFound(params.threadId);
    }
    if (loaded) await ctx.threads.unload(loaded);
    ctx.threads.moveSessionFile(info.path, "archive");
    await archiveWorkspace(ctx, params.threadId, info.cwd, connection);
    return {};
  }),

  method("thread/unarchive", (ctx, params) => {
    const info = ctx.threads.findSession(params.threadId, true);
    if (!info) throw threadNotFound(params.threadId);
    ctx.threads.moveSessionFile(info.path, "active");
    return { thread: ctx.threads.threadInfo(params.threadId) };
  }),

  method("thread/delete", (ctx, params) => {
    const info = ctx.threads.findSession(params.threadId, true);
    if (!info) {
      if (ctx.threads.loaded(params.threadId) || ctx.threads.findSession(params.threadId))
        throw invalidParams("Only an archived thread can be deleted; archive it first", {
          reason: "notArchived",
        });
      throw threadNotFound(params.threadId);
    }
    ctx.threads.deleteFile(info.path);
    return {};
  }),

  method("thread/payload/read", (ctx, params) => {
    const chunk = ctx.threads.readPayload(params.threadId, params.ref, params.offset ?? 0);
    if (chunk) return chunk;
    if (!ctx.threads.loaded(params.threadId) && !ctx.threads.findSession(params.threadId))
      throw threadNotFound(params.threadId);
    throw invalidParams(
      `No payload "${params.ref}" on this thread (kept while it is loaded, or after a read while it is not)`,
      { reason: "ref" },
    );
  }),

  method("turn/start", (ctx, params, { connection, afterResponse }) => {
    const thread = subscribed(ctx, params.threadId, connection);
    const started = thread.startTurn(params.input, params.clientMessageId, params.comments);
    afterResponse(started.announce);
    return { turn: started.turn };
  }),

  method("turn/steer", (ctx, params, { connection }) => {
    const thread = subscribed(ctx, params.threadId, connection);
    return { turnId: thread.steer(params.input, params.expectedTurnId) };
  }),

  method("turn/interrupt", (ctx, params) => {
    ctx.threads.requireLoaded(params.threadId).interrupt(params.turnId);
    return {};
  }),

  method("turn/queue/add", (ctx, params, { connection }) => {
    const thread = subscribed(ctx, params.threadId, connection);
    return {
      id: thread.enqueue(params.input, params.clientMessageId, params.comments),
    };
  }),

  method("turn/queue/remove", (ctx, params) => {
    return { removed: ctx.threads.requireLoaded(params.threadId).dequeue(params.id) };
  }),

  method("server/diagnostics", (ctx) => {
    const memory = process.memoryUsage();
    return {
      process: {
        pid: process.pid,
        residentMemoryBytes: memory.rss,
        heapUsedBytes: memory.heapUsed,
        uptimeMs: Date.now() - ctx.threads.startedAt,
      },
      threads: [...ctx.threads.threads.values()].map((t) => ({
        id: t.id,
        status: t.getStatus(),
        subscribers: t.subscriberCount(),
        queued: t.queuedCount(),
      })),
      connections: [...ctx.threads.connections].map((c) => ({
        id: c.id,
        transport: c.transport.kind,
        initialized: c.initialized,
        queuedBytes: c.transport.bufferedBytes(),
        inFlight: c.inFlight,
      })),
    };
  }),
];

/** Registers the thread, turn and diagnostics methods. */
export function registerThreadMethods(server: AppServer): void {
  installMethods(server, threadMethods);
}

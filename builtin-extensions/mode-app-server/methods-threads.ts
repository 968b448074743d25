/** The handshake, thread, turn and diagnostics methods (protocol.ts defines their shapes). */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { VERSION } from "@knightcodeai/cli/kit";
import { AppServerError, invalidParams, threadNotFound } from "./errors.js";
import { archiveWorkspace, prepareWorkspace } from "./methods-git.js";
import { requestSpecs as R } from "./protocol.js";
import type { AppServer } from "./server.js";
import type { LoadedThread } from "./thread.js";

const PAGE_DEFAULT = 50;

export function registerThreadMethods(server: AppServer): void {
  const m = server.methods;

  m.register("initialize", R.initialize, (params, { connection }) => {
    connection.initialized = true;
    connection.handshaking = true;
    connection.clientName = params.clientInfo.name;
    connection.setOptOut(params.capabilities?.optOutNotificationMethods ?? []);
    return {
      userAgent: server.userAgent(params.clientInfo.name),
      serverInfo: { name: "knightcode", version: VERSION },
      platformOs: process.platform,
    };
  });

  m.register("thread/start", R["thread/start"], async (params, { connection, afterResponse }) => {
    const cwd = resolve(params.cwd);
    if (!existsSync(cwd)) throw invalidParams(`cwd ${cwd} does not exist`, { reason: "cwd" });
    const workspace = await prepareWorkspace(server, cwd, params.workspace, connection);
    let opened: Awaited<ReturnType<AppServer["openThread"]>>;
    try {
      opened = await server.openThread(
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
  });

  m.register("thread/resume", R["thread/resume"], async (params, { connection }) => {
    // An invalid cursor subscribes nobody: check it against the history before loading or subscribing.
    if (params.cursor !== undefined && !/^\d+$/.test(params.cursor))
      throw invalidParams(`Invalid cursor "${params.cursor}"`, { reason: "cursor" });
    const { thread, warnings } = await server.load(params.threadId, undefined);
    let history: ReturnType<AppServer["pageHistory"]>;
    try {
      history = server.pageHistory(thread.history(), params.cursor);
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
  });

  m.register("thread/fork", R["thread/fork"], async (params, { connection, afterResponse }) => {
    const loaded = server.loaded(params.threadId);
    let fork: { path: string; id: string };
    let name: string;
    if (loaded) {
      const source = loaded.session.getState().sessionFile;
      if (!source || !existsSync(source))
        throw invalidParams("The thread has nothing saved to fork yet", { reason: "empty" });
      fork = server.host.sessions.fork(source, loaded.session.sessionManager.getBranch());
      name = String(loaded.info().name ?? loaded.info().preview ?? "");
    } else {
      const info = server.findSession(params.threadId);
      if (!info) throw threadNotFound(params.threadId);
      fork = server.host.sessions.fork(info.path);
      name = info.name ?? (info.firstMessage === "(no messages)" ? "" : info.firstMessage);
    }
    const { thread, warnings } = await server.load(fork.id, connection);
    thread.session.setSessionName(`${(name || "Untitled").slice(0, 200)} (fork)`);
    const info = thread.info();
    afterResponse(() => connection.notify("thread/started", { thread: info }));
    return { thread: info, warnings: warnings, ui: thread.ui.snapshot() };
  });

  m.register("thread/list", R["thread/list"], (params) => {
    const archived = params.archived === true;
    let page: ReturnType<typeof server.host.sessions.page>;
    try {
      page = server.host.sessions.page({
        ...(params.cwd !== undefined ? { cwd: resolve(params.cwd) } : {}),
        ...(params.cursor !== undefined ? { cursor: params.cursor } : {}),
        limit: params.limit ?? PAGE_DEFAULT,
        ...(archived ? { archived } : { writing: server.writing() }),
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === "KC_ERR_SESSION_CURSOR")
        throw invalidParams(`Invalid cursor "${params.cursor}"`, { reason: "cursor" });
      throw error;
    }
    const root = server.worktreesRoot();
    const data = page.sessions.map((info) => {
      const { path: _path, ...summary } = server.summarize(info, root);
      return summary;
    });
    return {
      data: data,
      ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
    };
  });

  m.register("thread/read", R["thread/read"], (params) => {
    const thread = server.threadInfo(params.threadId);
    if (!params.includeTurns) return { thread: thread };
    const page = server.pageHistory(server.history(params.threadId), undefined);
    return {
      thread: thread,
      turns: page.turns,
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  });

  m.register("thread/name/set", R["thread/name/set"], async (params) => {
    const loaded = server.loaded(params.threadId);
    if (loaded) {
      loaded.session.setSessionName(params.name === "" ? undefined : params.name);
      return {};
    }
    // Not loaded: load it just for this (the owner lock keeps the file safe), then let it unload.
    const { thread } = await server.load(params.threadId, undefined);
    thread.session.setSessionName(params.name === "" ? undefined : params.name);
    await server.unload(thread);
    return {};
  });

  m.register("thread/unsubscribe", R["thread/unsubscribe"], (params, { connection }) => {
    const thread = server.loaded(params.threadId);
    return {
      status: thread?.unsubscribe(connection) ? ("unsubscribed" as const) : ("notSubscribed" as const),
    };
  });

  m.register("thread/archive", R["thread/archive"], async (params, { connection }) => {
    const loaded = server.loaded(params.threadId);
    if (loaded?.isBusy())
      throw new AppServerError("turnInProgress", "A turn is running; interrupt it before archiving");
    const info = server.findSession(params.threadId);
    if (!info) {
      if (loaded) throw invalidParams("The thread has nothing saved to archive yet", { reason: "empty" });
      throw threadNotFound(params.threadId);
    }
    if (loaded) await server.unload(loaded);
    server.moveSessionFile(info.path, "archive");
    await archiveWorkspace(server, params.threadId, info.cwd, connection);
    return {};
  });

  m.register("thread/unarchive", R["thread/unarchive"], (params) => {
    const info = server.findSession(params.threadId, true);
    if (!info) throw threadNotFound(params.threadId);
    server.moveSessionFile(info.path, "active");
    return { thread: server.threadInfo(params.threadId) };
  });

  m.register("thread/delete", R["thread/delete"], (params) => {
    const info = server.findSession(params.threadId, true);
    if (!info) {
      if (server.loaded(params.threadId) || server.findSession(params.threadId))
        throw invalidParams("Only an archived thread can be deleted; archive it first", {
          reason: "notArchived",
        });
      throw threadNotFound(params.threadId);
    }
    server.deleteFile(info.path);
    return {};
  });

  m.register("thread/payload/read", R["thread/payload/read"], (params) => {
    const chunk = server.readPayload(params.threadId, params.ref, params.offset ?? 0);
    if (chunk) return chunk;
    if (!server.loaded(params.threadId) && !server.findSession(params.threadId))
      throw threadNotFound(params.threadId);
    throw invalidParams(
      `No payload "${params.ref}" on this thread (kept while it is loaded, or after a read while it is not)`,
      { reason: "ref" },
    );
  });

  const subscribed = (
    threadId: string,
    connection: Parameters<LoadedThread["subscribe"]>[0],
  ): LoadedThread => {
    const thread = server.requireLoaded(threadId);
    thread.subscribe(connection);
    return thread;
  };

  m.register("turn/start", R["turn/start"], (params, { connection, afterResponse }) => {
    const thread = subscribed(params.threadId, connection);
    const started = thread.startTurn(params.input, params.clientMessageId, params.comments);
    afterResponse(started.announce);
    return { turn: started.turn };
  });

  m.register("turn/steer", R["turn/steer"], (params, { connection }) => {
    const thread = subscribed(params.threadId, connection);
    return { turnId: thread.steer(params.input, params.expectedTurnId) };
  });

  m.register("turn/interrupt", R["turn/interrupt"], (params) => {
    server.requireLoaded(params.threadId).interrupt(params.turnId);
    return {};
  });

  m.register("turn/queue/add", R["turn/queue/add"], (params, { connection }) => {
    const thread = subscribed(params.threadId, connection);
    return {
      id: thread.enqueue(params.input, params.clientMessageId, params.comments),
    };
  });

  m.register("turn/queue/remove", R["turn/queue/remove"], (params) => {
    return { removed: server.requireLoaded(params.threadId).dequeue(params.id) };
  });

  m.register("server/diagnostics", R["server/diagnostics"], () => {
    const memory = process.memoryUsage();
    return {
      process: {
        pid: process.pid,
        residentMemoryBytes: memory.rss,
        heapUsedBytes: memory.heapUsed,
        uptimeMs: Date.now() - server.startedAt,
      },
      threads: [...server.threads.values()].map((t) => ({
        id: t.id,
        status: t.getStatus(),
        subscribers: t.subscriberCount(),
        queued: t.queuedCount(),
      })),
      connections: [...server.connections].map((c) => ({
        id: c.id,
        transport: c.transport.kind,
        initialized: c.initialized,
        queuedBytes: c.transport.bufferedBytes(),
        inFlight: c.inFlight,
      })),
    };
  });
}

/**
 * The app-server: JSON-RPC 2.0 messages (with or without `"jsonrpc": "2.0"`) from any number of connections,
 * many threads in one process, each thread a session of its own opened through the host's SDK
 * (`ModeContext.openSession`).
 *
 * A connection first does the handshake (`initialize`; anything else before it answers `notInitialized`, a
 * second one `alreadyInitialized`). A request's params are checked against its schema before its handler runs.
 * Malformed input gets an error response and the connection keeps serving. Errors carry the spec's name in
 * `data.code` (errors.ts).
 *
 * Threads unload `unloadDelayMs` after their last subscriber left while nothing runs (default 60 s, the
 * `KNIGHTCODE_APP_SERVER_UNLOAD_MS` environment variable changes it).
 */
import { statSync } from "node:fs";
import {
  type ExtensionContext,
  type ExtensionServices,
  errorMessage,
  type HostServices,
  type ListedSession,
  type ModeSessionOptions,
  mcpClientService,
  type SessionController,
  VERSION,
} from "@knightcodeai/cli/kit";
import { Connection, DEFAULT_QUEUE_LIMIT_BYTES, type Transport } from "./connection.js";
import type { ServerContext } from "./context.js";
import { AppServerError, invalidParams, threadNotFound } from "./errors.js";
import { exactId, type RequestId } from "./exact-id.js";
import { type History, history, holdsNewestPage, PayloadStore, pageTurns, type Turn } from "./items.js";
import { gitOf } from "./methods-git.js";
import { registerThreadMethods } from "./methods-threads.js";
import { registerUiMethods } from "./methods-ui.js";
import type { ThreadSummaryWire, ThreadWire, WarningWire } from "./protocol.js";
import { type CallContext, checkParams, MethodRegistry } from "./registry.js";
import { LoadedThread, type ThreadStatus } from "./thread.js";
import { cleanText } from "./ui.js";
import { describeWorkspace, inManagedWorktree, WorktreesSetting } from "./workspace.js";

export const DEFAULT_UNLOAD_DELAY_MS = 60_000;
/** How many unloaded threads keep the values their last history read sent by reference. */
const READ_PAYLOAD_THREADS = 16;
/** How many of those keep their turns too, so the next page of the same file is not built again. */
const READ_TURNS_THREADS = 4;
/** How many entries at the end of a branch a history read of an unloaded thread starts with. */
const HISTORY_TAIL_ENTRIES = 2048;

/** The last history read of an unloaded thread: its payloads, and its turns while the file is unchanged. */
interface HistoryRead {
  payloads: PayloadStore;
  key: string | undefined;
  history?: History;
}

export interface AppServerOptions {
  openSession(options: ModeSessionOptions): Promise<SessionController>;
  agentDir: string;
  /** The stores and settings of any folder (`ModeContext.host`): sessions, settings, trust, packages, MCP. */
  host: HostServices;
  /** The services of the server's own session (the git engine, the MCP client): `knightcode.services`. */
  services?: ExtensionServices;
  /** The server's own session, and its extension context once it started. */
  session?: SessionController;
  hostContext?: () => ExtensionContext | undefined;
  /** Diagnostics for the server's log (stderr): never on a protocol stream. */
  log(message: string): void;
  unloadDelayMs?: number;
  queueLimitBytes?: number;
}

/** A listed thread, and its file. */
export type Summary = ThreadSummaryWire & { path: string };

export class AppServer {
  readonly methods = new MethodRegistry();
  readonly connections = new Set<Connection>();
  readonly threads = new Map<string, LoadedThread>();
  private readonly loading = new Map<string, Promise<LoadedThread>>();
  private readonly unloadTimers = new Map<string, NodeJS.Timeout>();
  private readonly pending = new Set<Promise<void>>();
  /** Threads whose session failed to open, with why: their status is `systemError` until a load succeeds. */
  private readonly failures = new Map<string, string>();
  /** Payload stores of history reads of unloaded threads, oldest first. */
  private readonly readPayloads = new Map<string, HistoryRead>();
  readonly startedAt = Date.now();
  readonly host: HostServices;
  /** The `worktrees` settings, read again when the personal settings file changes. */
  readonly worktrees: WorktreesSetting;
  closing = false;

  constructor(readonly options: AppServerOptions) {
    this.host = options.host;
    this.worktrees = new WorktreesSetting(options.host);
    registerThreadMethods(this);
    registerUiMethods(this);
    // The first thread/list finds the files stat'ed; requests meanwhile do not wait for it.
    void this.host.sessions.warm();
  }

  // ---- connections and framing -------------------------------------------------------------------

  connect(transport: Transport): Connection {
    const connection = new Connection(transport, this.options.queueLimitBytes ?? DEFAULT_QUEUE_LIMIT_BYTES);
    this.connections.add(connection);
    connection.onClose.push(() => this.connections.delete(connection));
    return connection;
  }

  /** One incoming message (a line of stdio, a WebSocket text frame). */
  receive(connection: Connection, text: string): void {
    if (text.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      connection.send(errorReply(null, -32700, `Parse error: ${errorMessage(error)}`, "parseError"));
      return;
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      connection.send(
        errorReply(null, -32600, "Invalid request: a message must be a JSON object", "invalidRequest"),
      );
      return;
    }
    const m = message as Record<string, unknown>;
    const parsedId = Object.hasOwn(m, "id") ? m.id : undefined;
    const validId =
      typeof parsedId === "string" || (typeof parsedId === "number" && Number.isFinite(parsedId));
    // Echoed exactly as sent: a number past double precision keeps its source text.
    const id = validId ? exactId(text, parsedId) : parsedId;
    if (Object.hasOwn(m, "jsonrpc") && m.jsonrpc !== "2.0") {
      connection.send(
        errorReply(validId ? id : null, -32600, 'Invalid request: "jsonrpc" must be "2.0"', "invalidRequest"),
      );
      return;
    }
    if (typeof m.method !== "string") {
      // A reply to one of our server requests.
      if (validId && (Object.hasOwn(m, "result") || Object.hasOwn(m, "error"))) {
        connection.reply(id, { result: m.result, error: m.error });
        return;
      }
      connection.send(
        errorReply(
          validId ? id : null,
          -32600,
          'Invalid request: "method" must be a string',
          "invalidRequest",
        ),
      );
      return;
    }
    if (id === undefined) {
      if (m.method === "initialized") connection.handshaking = false;
      return;
    }
    if (!validId) {
      connection.send(
        errorReply(null, -32600, 'Invalid request: "id" must be a string or a number', "invalidRequest"),
      );
      return;
    }
    const work = this.dispatch(connection, id as RequestId, m.method, m.params);
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** Settles once every request received so far has been answered. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async dispatch(
    connection: Connection,
    id: RequestId,
    method: string,
    params: unknown,
  ): Promise<void> {
    const after: (() => void)[] = [];
    try {
      if (method === "initialize" && (connection.initialized || connection.handshaking))
        throw new AppServerError("alreadyInitialized", "This connection is already initialized");
      if (method !== "initialize" && !connection.initialized)
        throw new AppServerError("notInitialized", `Send "initialize" before "${method}"`);
      if (connection.overloaded()) throw new AppServerError("overloaded", "Server overloaded; retry later.");
      const entry = this.methods.get(method);
      if (!entry) throw new AppServerError("methodNotFound", `Unknown method "${method}"`, { method });
      if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params)))
        throw invalidParams("Invalid params: params must be an object");
      const checked = checkParams(entry.spec, params);
      connection.inFlight++;
      let result: unknown;
      try {
        const call: CallContext = { connection, afterResponse: (fn) => after.push(fn) };
        result = await entry.handler(checked, call);
      } finally {
        connection.inFlight--;
      }
      connection.send({ id, result: result ?? {} });
    } catch (error) {
      after.length = 0;
      if (error instanceof AppServerError) connection.send({ id, error: error.toWire() });
      else {
        this.options.log(
          `${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        connection.send(errorReply(id, -32603, `Internal error: ${errorMessage(error)}`, "internal"));
      }
    }
    for (const fn of after) {
      try {
        fn();
      } catch (error) {
        this.options.log(`${method}: ${errorMessage(error)}`);
      }
    }
  }

  // ---- threads -----------------------------------------------------------------------------------

  private threadHost = {
    log: (message: string) => this.options.log(message),
    idleWithoutSubscribers: (thread: LoadedThread) => this.scheduleUnload(thread),
    describeWorkspace: (cwd: string) => describeWorkspace(this.worktreesRoot(), cwd),
  };

  /** What a method handler may use (context.ts). */
  context(): ServerContext {
    return {
      host: this.host,
      threads: this,
      git: () => gitOf(this),
      log: (message) => this.options.log(message),
      agentDir: this.options.agentDir,
      openSession: (options) => this.options.openSession(options),
      session: this.options.session,
      hostContext: () => this.options.hostContext?.(),
      mcpClient: () => this.options.services?.get(mcpClientService),
    };
  }

  /** Where managed worktrees live (`worktrees.root`), as the global settings say now. */
  worktreesRoot(): string {
    return this.worktrees.root();
  }

  /** Opens a thread's session (a new one, or a file) with `initiator` already subscribed (trust dialogs reach it). */
  async openThread(
    options: Omit<ModeSessionOptions, "ui" | "warn">,
    initiator: Connection | undefined,
  ): Promise<{
    thread: LoadedThread;
    warnings: WarningWire[];
  }> {
    const warnings: WarningWire[] = [];
    const thread = new LoadedThread("", this.threadHost);
    thread.loadWarnings = warnings;
    if (initiator) thread.subscribe(initiator);
    let session: SessionController;
    try {
      session = await this.options.openSession({
        ...options,
        extensions: [...(options.extensions ?? []), (api) => thread.bindApi(api)],
        ui: thread.ui,
        warn: (message) => {
          this.options.log(message);
          // While the thread loads, warnings go in the result; afterwards to its subscribers.
          if (thread.id) thread.broadcast("warning", warningOf(message));
          else warnings.push(warningOf(message));
        },
      });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "KC_ERR_SESSION_LOCKED")
        throw new AppServerError("threadLocked", `${errorMessage(error)}`, {
          reason: "ownedByAnotherProcess",
          ...(options.sessionFile ? { path: options.sessionFile } : {}),
        });
      if (code === "KC_ERR_NO_MODEL") throw invalidParams(errorMessage(error), { reason: "model" });
      throw error;
    }
    const id = session.sessionManager.getSessionId();
    Object.assign(thread, { id });
    thread.loadWarnings = undefined;
    thread.attach(session);
    const parent = session.sessionManager.getHeader().parentSession;
    if (parent) thread.forkedFromId = this.host.sessions.header(parent)?.id;
    this.threads.set(id, thread);
    return { thread, warnings };
  }

  /** A loaded thread, or undefined. */
  loaded(threadId: string): LoadedThread | undefined {
    const thread = this.threads.get(threadId);
    return thread && !thread.disposed ? thread : undefined;
  }

  /** A loaded thread, or `threadNotFound`. */
  requireLoaded(threadId: string): LoadedThread {
    const thread = this.loaded(threadId);
    if (!thread) throw threadNotFound(threadId);
    return thread;
  }

  /** The thread, loaded now if it was not (one load at a time per id). */
  async load(
    threadId: string,
    initiator: Connection | undefined,
  ): Promise<{ thread: LoadedThread; warnings: WarningWire[] }> {
    const existing = this.loaded(threadId);
    if (existing) {
      if (initiator) existing.subscribe(initiator);
      this.cancelUnload(threadId);
      return { thread: existing, warnings: [] };
    }
    const pending = this.loading.get(threadId);
    if (pending) {
      const thread = await pending;
      if (initiator) thread.subscribe(initiator);
      return { thread, warnings: [] };
    }
    const info = this.findSession(threadId);
    if (!info) throw threadNotFound(threadId);
    const opening = this.openThread({ cwd: info.cwd, sessionFile: info.path }, initiator).then(
      (opened) => {
        this.failures.delete(threadId);
        return opened;
      },
      (error: unknown) => {
        // Another owner is not the thread's fault; anything else leaves it unusable until a load succeeds.
        if (!(error instanceof AppServerError && error.name_ === "threadLocked"))
          this.failures.set(threadId, errorMessage(error));
        throw error;
      },
    );
    this.loading.set(
      threadId,
      opening.then((o) => o.thread),
    );
    try {
      return await opening;
    } finally {
      this.loading.delete(threadId);
    }
  }

  /** A stored thread (in use, or archived), found through the host's session listing. */
  findSession(threadId: string, archived = false): ListedSession | undefined {
    return this.host.sessions.find(threadId, archived ? { archived } : { writing: this.writing() });
  }

  /** The files of the loaded threads: this process appends to them, so listings look at them again. */
  writing(): string[] {
    const files: string[] = [];
    for (const thread of this.threads.values()) {
      const file = thread.disposed ? undefined : thread.session.getState().sessionFile;
      if (file) files.push(file);
    }
    return files;
  }

  private scheduleUnload(thread: LoadedThread): void {
    this.cancelUnload(thread.id);
    const delay = this.options.unloadDelayMs ?? DEFAULT_UNLOAD_DELAY_MS;
    const timer = setTimeout(() => {
      this.unloadTimers.delete(thread.id);
      if (thread.subscriberCount() === 0 && !thread.isBusy()) void this.unload(thread);
    }, delay);
    timer.unref();
    this.unloadTimers.set(thread.id, timer);
  }

  private cancelUnload(threadId: string): void {
    const timer = this.unloadTimers.get(threadId);
    if (timer) clearTimeout(timer);
    this.unloadTimers.delete(threadId);
  }

  async unload(thread: LoadedThread): Promise<void> {
    this.cancelUnload(thread.id);
    if (this.threads.get(thread.id) === thread) this.threads.delete(thread.id);
    thread.broadcast("thread/closed", {});
    try {
      await thread.dispose();
    } catch (error) {
      this.options.log(`thread ${thread.id}: shutting down failed: ${errorMessage(error)}`);
    }
  }

  /** A thread's status: live when loaded, `systemError` after a failed load, `notLoaded` otherwise. */
  statusOf(threadId: string): ThreadStatus {
    const loaded = this.loaded(threadId);
    if (loaded) return loaded.getStatus();
    const failure = this.failures.get(threadId);
    return failure !== undefined ? { type: "systemError", message: failure } : { type: "notLoaded" };
  }

  /** A thread for the wire: live when loaded, from its file otherwise. */
  threadInfo(threadId: string): ThreadWire {
    const loaded = this.loaded(threadId);
    if (loaded) return loaded.info();
    const active = this.findSession(threadId);
    const info = active ?? this.findSession(threadId, true);
    if (!info) throw threadNotFound(threadId);
    const {
      path: _path,
      messageCount: _count,
      workspaceMode: _mode,
      ...summary
    } = this.summarize(info, this.worktreesRoot());
    return {
      ...summary,
      sessionFile: info.path,
      ...(active ? {} : { archived: true }),
      workspace: describeWorkspace(this.worktreesRoot(), info.cwd),
    };
  }

  /**
   * History of a thread, loaded or not. Of a thread not loaded, only the end of the branch that holds the newest
   * page is read (a long file's index and its last few thousand entries, not all of it).
   */
  newestHistory(threadId: string): History {
    const loaded = this.loaded(threadId);
    if (loaded) return loaded.history();
    const info = this.findSession(threadId) ?? this.findSession(threadId, true);
    if (!info) throw threadNotFound(threadId);
    // The file unchanged since the last read (same size and modification time): its turns are still right.
    const stat = statSync(info.path, { throwIfNoEntry: false });
    const key = stat ? `${info.path}|${stat.size}|${stat.mtimeMs}` : undefined;
    const held = this.readPayloads.get(threadId);
    if (held && key !== undefined && held.key === key && held.history) {
      this.readPayloads.delete(threadId);
      this.readPayloads.set(threadId, held);
      return held.history;
    }
    // What the last read of an unloaded thread sent by reference stays readable (for a few threads at a time).
    const read: HistoryRead = { payloads: new PayloadStore(), key };
    this.readPayloads.delete(threadId);
    this.readPayloads.set(threadId, read);
    let kept = 0;
    for (const [id, old] of [...this.readPayloads].reverse()) {
      if (++kept > READ_PAYLOAD_THREADS) this.readPayloads.delete(id);
      // Turns are kept for the few most recent reads only: a long history is large.
      else if (kept > READ_TURNS_THREADS) old.history = undefined;
    }
    // A tail long enough for most pages first; four times longer while the page could reach past its start.
    for (let count = HISTORY_TAIL_ENTRIES; ; count *= 4) {
      const tail = this.host.sessions.readBranchTail(info.path, count);
      const payloads = new PayloadStore();
      const found = history(tail.entries, payloads, undefined, tail.start, tail.length);
      if (holdsNewestPage(found)) {
        read.payloads = payloads;
        read.history = found;
        return found;
      }
    }
  }

  /** A value sent by reference: by the loaded thread, or by the last read of it while unloaded. */
  readPayload(threadId: string, ref: string, offset: number): ReturnType<PayloadStore["read"]> | undefined {
    return (
      this.loaded(threadId)?.payloads.read(ref, offset) ??
      this.readPayloads.get(threadId)?.payloads.read(ref, offset)
    );
  }

  /** A listed thread; `root` is where managed worktrees live (read once per listing). */
  summarize(info: ListedSession, root: string): Summary {
    const parent = info.parentSession ? this.host.sessions.header(info.parentSession)?.id : undefined;
    return {
      id: info.id,
      ...(info.name ? { name: info.name } : {}),
      preview: info.firstMessage === "(no messages)" ? "" : cleanText(info.firstMessage),
      cwd: info.cwd,
      createdAt: info.created.getTime(),
      updatedAt: Math.round(info.fileModified.getTime()),
      status: this.statusOf(info.id),
      ...(parent ? { forkedFromId: parent } : {}),
      messageCount: info.messageCount,
      ...(inManagedWorktree(root, info.cwd) ? { workspaceMode: "worktree" as const } : {}),
      path: info.path,
    };
  }

  /** Moves a thread's file into or out of the archive (`threadLocked` while another process has it open). */
  moveSessionFile(file: string, to: "archive" | "active"): string {
    return this.storeChange(file, () =>
      to === "archive" ? this.host.sessions.archive(file) : this.host.sessions.unarchive(file),
    );
  }

  deleteFile(file: string): void {
    this.storeChange(file, () => this.host.sessions.remove(file));
  }

  /** A change of a stored thread; a file another process owns is `threadLocked`. */
  storeChange<T>(file: string, change: () => T): T {
    try {
      return change();
    } catch (error) {
      if ((error as { code?: unknown }).code === "KC_ERR_SESSION_LOCKED")
        throw new AppServerError("threadLocked", `Another process owns ${file}; close it there first`, {
          reason: "ownedByAnotherProcess",
          path: file,
        });
      throw error;
    }
  }

  /** Ends every thread and connection. */
  async close(): Promise<void> {
    this.closing = true;
    for (const timer of this.unloadTimers.values()) clearTimeout(timer);
    this.unloadTimers.clear();
    await Promise.allSettled([...this.threads.values()].map((t) => this.unload(t)));
    for (const connection of [...this.connections]) connection.close("the server is shutting down");
  }

  userAgent(clientName: string): string {
    return `${clientName || "client"}/${VERSION} (knightcode-app-server; ${process.platform})`;
  }

  pageHistory(history: History, cursor: string | undefined): { turns: Turn[]; nextCursor?: string } {
    const page = pageTurns(history, cursor);
    if (!page) throw invalidParams(`Invalid cursor "${cursor}"`, { reason: "cursor" });
    return page;
  }
}

function errorReply(id: unknown, code: number, message: string, name: string): Record<string, unknown> {
  return { id, error: { code, message, data: { code: name } } };
}

/** A session diagnostic as a structured warning: "settings: ..." and file:line:column references are picked out. */
export function warningOf(message: string): WarningWire {
  const source = /settings/i.test(message)
    ? "settings"
    : /trust/i.test(message)
      ? "trust"
      : /extension|builtin:|\(session_start\)/i.test(message)
        ? "extension"
        : "server";
  const where = /(\/[^\s:]+):(\d+)(?::(\d+))?/.exec(message);
  return {
    message,
    source,
    ...(where
      ? { path: where[1], line: Number(where[2]), ...(where[3] ? { column: Number(where[3]) } : {}) }
      : {}),
  };
}

/**
 * A typed client for `knightcode app-server` (docs/app-server.md): requests and their results, notifications and
 * server requests are typed from the protocol table. It speaks over any line transport: `spawnAppServer()` starts
 * the server as a child process on stdio, `connectAppServer()` opens a WebSocket to a `--listen` address.
 *
 * Values the server sent by reference (`{ref, bytes}`) come back whole with `readPayload`; `resolveItem` and
 * `resolveTurn` replace every reference in an item or a turn by its value.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import type { Static } from "@sinclair/typebox";
import type {
  notificationSpecs,
  requestSpecs,
  serverRequestSpecs,
  ThreadItem,
  Turn,
} from "../../builtin-extensions/mode-app-server/protocol.js";

type Specs = typeof requestSpecs;
export type AppServerMethod = keyof Specs;
export type AppServerParams<M extends AppServerMethod> = Static<Specs[M]["params"]>;
export type AppServerResult<M extends AppServerMethod> = Static<Specs[M]["result"]>;
export type AppServerNotificationName = keyof typeof notificationSpecs;
export type AppServerNotification<N extends AppServerNotificationName> = Static<
  (typeof notificationSpecs)[N]["params"]
>;
export type AppServerServerRequest = keyof typeof serverRequestSpecs;
export type AppServerTurn = Static<typeof Turn>;
export type AppServerItem = Static<typeof ThreadItem>;

/** A JSON-RPC error answered to a request: `code` is numeric, `data.code` the spec's name. */
export class AppServerRequestError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data: { code?: string; [key: string]: unknown } | undefined,
  ) {
    super(`${method}: ${message}`);
  }
}

export interface AppServerTransport {
  send(text: string): void;
  close(): void;
}

type Listener = (params: any) => void;

/**
 * Checks what the server sent against the protocol (a test harness passes one built from the schemas); a problem
 * it returns rejects the request (a result) or is kept in `client.problems` (a notification or a server request).
 */
export interface AppServerMessageCheck {
  result?(method: string, result: unknown): string | undefined;
  notification?(method: string, params: unknown): string | undefined;
  serverRequest?(method: string, params: unknown): string | undefined;
}

export interface AppServerClientOptions {
  timeoutMs?: number;
  check?: AppServerMessageCheck;
}
type RequestHandler = (params: any) => unknown | Promise<unknown>;

export class AppServerClient {
  private nextId = 1;
  private readonly waiting = new Map<
    string,
    { method: string; resolve(v: unknown): void; reject(e: unknown): void; timer?: NodeJS.Timeout }
  >();
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly anyListeners = new Set<(method: string, params: unknown) => void>();
  private readonly handlers = new Map<string, RequestHandler>();
  /** Every message received, in order (for tests and logs). */
  readonly received: Record<string, unknown>[] = [];
  /** What `options.check` found wrong with notifications and server requests, in order. */
  readonly problems: string[] = [];
  private closedError: Error | undefined;

  constructor(
    private readonly transport: AppServerTransport,
    private readonly options: AppServerClientOptions = {},
  ) {}

  /** One message from the server (a line, a text frame). */
  receive(text: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    this.received.push(message);
    const id = message.id;
    if (typeof message.method === "string") {
      const check = id === undefined ? this.options.check?.notification : this.options.check?.serverRequest;
      const problem = check?.(message.method, message.params);
      if (problem !== undefined) this.problems.push(`${message.method}: ${problem}`);
      if (id === undefined) {
        for (const listener of this.listeners.get(message.method) ?? []) listener(message.params);
        for (const listener of this.anyListeners) listener(message.method, message.params);
      } else void this.answer(id, message.method, message.params);
      return;
    }
    const pending = this.waiting.get(String(id));
    if (!pending) return;
    this.waiting.delete(String(id));
    if (pending.timer) clearTimeout(pending.timer);
    const error = message.error as
      | { code: number; message: string; data?: Record<string, unknown> }
      | undefined;
    if (error)
      pending.reject(new AppServerRequestError(pending.method, error.code, error.message, error.data));
    else {
      const problem = this.options.check?.result?.(pending.method, message.result);
      if (problem !== undefined)
        pending.reject(new Error(`${pending.method}: the result does not match the protocol: ${problem}`));
      else pending.resolve(message.result);
    }
  }

  private async answer(id: unknown, method: string, params: unknown): Promise<void> {
    const handler = this.handlers.get(method);
    if (!handler) {
      this.transport.send(
        JSON.stringify({ id, error: { code: -32601, message: `No handler for ${method}` } }),
      );
      return;
    }
    try {
      const result = await handler(params);
      this.transport.send(JSON.stringify({ id, result: result ?? {} }));
    } catch (error) {
      this.transport.send(JSON.stringify({ id, error: { code: -32603, message: String(error) } }));
    }
  }

  /** Sends a request and resolves with its result; rejects with `AppServerRequestError` or on timeout. */
  request<M extends AppServerMethod>(method: M, params: AppServerParams<M>): Promise<AppServerResult<M>>;
  request(method: string, params?: unknown): Promise<unknown>;
  request(method: string, params: unknown = {}): Promise<unknown> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = `c${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timeoutMs = this.options.timeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no response within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(id, { method, resolve, reject, timer });
      this.transport.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Sends a notification (e.g. `initialized`). */
  notify(method: string, params?: unknown): void {
    this.transport.send(JSON.stringify({ method, ...(params !== undefined ? { params } : {}) }));
  }

  /** The handshake: `initialize`, then `initialized`. */
  async initialize(name = "knightcode-client", version = "0"): Promise<AppServerResult<"initialize">> {
    const result = await this.request("initialize", { clientInfo: { name, version } });
    this.notify("initialized");
    return result;
  }

  onNotification<N extends AppServerNotificationName>(
    method: N,
    listener: (params: AppServerNotification<N>) => void,
  ): () => void;
  onNotification(method: string, listener: Listener): () => void;
  onNotification(method: string, listener: Listener): () => void {
    const set = this.listeners.get(method) ?? new Set();
    set.add(listener);
    this.listeners.set(method, set);
    return () => set.delete(listener);
  }

  /** Every notification, whatever its method. */
  onAnyNotification(listener: (method: string, params: unknown) => void): () => void {
    this.anyListeners.add(listener);
    return () => this.anyListeners.delete(listener);
  }

  /** Answers the server's requests of one method (`ui/dialog`); the handler's value is the reply. */
  onRequest<R extends AppServerServerRequest>(
    method: R,
    handler: (
      params: Static<(typeof serverRequestSpecs)[R]["params"]>,
    ) =>
      | Static<(typeof serverRequestSpecs)[R]["result"]>
      | Promise<Static<(typeof serverRequestSpecs)[R]["result"]>>,
  ): () => void {
    this.handlers.set(method, handler as RequestHandler);
    return () => this.handlers.delete(method);
  }

  /**
   * Resolves with the first notification of `method` that `match` accepts, among those already received or the
   * ones to come (bounded by `timeoutMs`): a notification that arrived with the response it follows is not missed.
   */
  waitFor<N extends AppServerNotificationName>(
    method: N,
    match: (params: AppServerNotification<N>) => boolean = () => true,
    timeoutMs = this.options.timeoutMs ?? 30_000,
  ): Promise<AppServerNotification<N>> {
    const past = this.received.find(
      (m) => m.method === method && m.id === undefined && match(m.params as AppServerNotification<N>),
    );
    if (past) return Promise.resolve(past.params as AppServerNotification<N>);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`no ${method} notification within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.onNotification(method, (params: AppServerNotification<N>) => {
        if (!match(params)) return;
        clearTimeout(timer);
        off();
        resolve(params);
      });
    });
  }

  /** The whole value of a reference, read in chunks. */
  async readPayload(threadId: string, ref: string): Promise<string> {
    const parts: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const chunk = await this.request("thread/payload/read", { threadId, ref, offset });
      const bytes = Buffer.from(chunk.data, "base64");
      parts.push(bytes);
      offset += bytes.length;
      if (chunk.done || bytes.length === 0) break;
    }
    return Buffer.concat(parts).toString("utf8");
  }

  /** The item with every referenced value read back. */
  async resolveItem<T extends Record<string, unknown>>(threadId: string, item: T): Promise<T> {
    const out: Record<string, unknown> = { ...item };
    for (const [key, value] of Object.entries(item)) {
      if (isRef(value)) out[key] = await this.readPayload(threadId, value.ref);
    }
    return out as T;
  }

  async resolveTurn<T extends { items: Record<string, unknown>[] }>(threadId: string, turn: T): Promise<T> {
    const items = [];
    for (const item of turn.items) items.push(await this.resolveItem(threadId, item));
    return { ...turn, items };
  }

  /** No more responses can arrive: pending requests reject. */
  closed(error = new Error("the app-server connection closed")): void {
    this.closedError = error;
    for (const [id, pending] of this.waiting) {
      this.waiting.delete(id);
      if (pending.timer) clearTimeout(pending.timer);
      pending.reject(error);
    }
  }

  close(): void {
    this.transport.close();
    this.closed();
  }
}

function isRef(value: unknown): value is { ref: string; bytes: number } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { ref?: unknown }).ref === "string" &&
    typeof (value as { bytes?: unknown }).bytes === "number"
  );
}

/** Feeds LF-separated lines of a stream to `onLine`. */
function splitLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    let at = buffer.indexOf("\n");
    while (at >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (line.trim() !== "") onLine(line);
      at = buffer.indexOf("\n");
    }
  });
}

export interface SpawnedAppServer {
  client: AppServerClient;
  child: ChildProcessWithoutNullStreams;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** Ends stdin and waits (at most `ms`) for the exit; kills it after that. */
  stop(ms?: number): Promise<number | null>;
}

/** Starts `knightcode app-server` (or `command`) as a child and connects a client to its stdio. */
export function spawnAppServer(options: {
  command: string;
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Checks every result, notification and server request against the protocol (see `AppServerMessageCheck`). */
  check?: AppServerMessageCheck;
}): SpawnedAppServer {
  // Looked up here, not imported: every run of the CLI loads the SDK (and Node's child_process with its helpers
  // would load with it), while only app-server clients spawn.
  const { spawn } = process.getBuiltinModule("node:child_process");
  const child = spawn(options.command, options.args ?? ["app-server"], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d: string) => {
    stderr += d;
  });
  const client = new AppServerClient(
    {
      send: (text) => {
        if (!child.stdin.destroyed) child.stdin.write(`${text}\n`);
      },
      close: () => child.stdin.end(),
    },
    {
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.check ? { check: options.check } : {}),
    },
  );
  splitLines(child.stdout, (line) => client.receive(line));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  child.on("close", () => client.closed());
  return {
    client,
    child,
    stderr: () => stderr,
    async stop(ms = 10_000) {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Connects to a `--listen ws://...` server. */
export async function connectAppServer(
  url: string,
  options: AppServerClientOptions = {},
): Promise<AppServerClient> {
  // Loaded here, so the SDK's start-up never pays for the WebSocket library.
  const { default: WebSocket } = await import("ws");
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const client = new AppServerClient(
    { send: (text) => socket.send(text), close: () => socket.close() },
    options,
  );
  socket.on("message", (data) => client.receive(data.toString()));
  socket.on("close", () => client.closed());
  return client;
}

/**
 * Writes the protocol's JSON Schema and TypeScript types into `dir` (`knightcode app-server schema --out DIR`);
 * returns the files written. The generator loads only when called.
 */
export async function writeAppServerSchema(dir: string): Promise<string[]> {
  const { writeAppServerSchema: write } = await import(
    "../../builtin-extensions/mode-app-server/schema-gen.js"
  );
  return write(dir);
}

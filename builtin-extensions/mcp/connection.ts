/**
 * One MCP server connection over `@modelcontextprotocol/sdk`: stdio (stderr piped and kept as a short tail, never
 * written to the terminal), streamable HTTP, and the older SSE transport when a server answers streamable HTTP
 * with 400, 404 or 405 (never on 401, which means sign-in). A failed or exited server is retried with back-off up
 * to a bounded number of attempts; `reconnect()` starts over. A connection that breaks after it was up (the
 * process died, the transport closed) reconnects at once, says so through `events.lost` and `events.reconnected`,
 * and keeps its tools meanwhile; a tool call to a server left `failed` tries once more to connect before it
 * answers with the reason. A stdio server's output is read by `MessageBuffer` (stdio-buffer.ts), so a large
 * result arrives and one over `MAX_MCP_MESSAGE_BYTES` fails its own request instead of closing the connection.
 * The SDK is imported on first use, so sessions without MCP servers never load it.
 */
import type { McpServerConfig } from "@knightcodeai/cli/kit";
import { errorMessage, VERSION } from "@knightcodeai/cli/kit";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, Prompt, Resource, Tool } from "@modelcontextprotocol/sdk/types.js";
import { MAX_MCP_MESSAGE_BYTES, MESSAGE_TOO_LARGE_CODE, MessageBuffer } from "./stdio-buffer.js";

export type McpServerState = "connecting" | "connected" | "failed" | "needs-auth" | "disabled" | "closed";
export type McpTransportKind = "stdio" | "http" | "sse";

/** A request's timeout when the entry sets none (the SDK's own default too). */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
/**
 * Connecting (starting the process, `initialize`, listing tools) gets at least this long even when the entry's
 * `timeout` for calls is shorter: a server that answers calls in 500 ms may take seconds to start.
 */
export const MIN_CONNECT_TIMEOUT_MS = 30_000;
/** Delays before the retries of a failed connection; after the last one the server stays `failed`. */
export const RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 16_000];
/**
 * A connection up at least this long before it broke is reconnected at once; one that breaks sooner, again and
 * again, waits `RETRY_DELAYS_MS` between reconnections and is given up after them, so a server that dies right
 * after it starts is not restarted forever.
 */
export const STABLE_CONNECTION_MS = 30_000;
const STDERR_TAIL_LINES = 20;
const MAX_LIST_PAGES = 100;

/**
 * What a stdio server gets from KnightCode's environment: the variables a program needs to run (the SDK's
 * default list plus locale, temp folder, proxy and certificate settings), never provider keys or other secrets
 * of the user's shell. The entry's `env` adds the rest.
 */
export const INHERITED_ENV = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TMPDIR",
  "TZ",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "XDG_RUNTIME_DIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
];

export interface McpConnectionEvents {
  /** The tool list changed (first connect, `list_changed`, reconnect). */
  tools(tools: Tool[]): void;
  /** State, error or stderr changed. */
  status(): void;
  /**
   * A connection that was up broke (`why`). `retryInMs`: when it reconnects (0: now); undefined: it broke too
   * often soon after connecting and waits for a call or `reconnect()`.
   */
  lost?(why: string, retryInMs: number | undefined): void;
  /** A broken connection is up again. */
  reconnected?(): void;
}

export interface McpConnectionOptions {
  cwd: string;
  /** OAuth client provider for HTTP servers; absent = no sign-in support. */
  authProvider?: OAuthClientProvider;
  /** Overridable in tests. */
  retryDelaysMs?: readonly number[];
  /** The largest message a stdio server may send (default `MAX_MCP_MESSAGE_BYTES`). */
  maxMessageBytes?: number;
}

export class McpConnection {
  state: McpServerState = "closed";
  transport: McpTransportKind | undefined;
  lastError: string | undefined;
  tools: Tool[] = [];
  instructions: string | undefined;
  readonly stderrTail: string[] = [];
  private client: Client | undefined;
  private generation = 0;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private ready: Promise<void> = Promise.resolve();
  private settleReady: (() => void) | undefined;
  /** Set when a connection that was up broke, until it is up again (for `events.reconnected`). */
  private wasLost = false;
  /** When the connection was last up, and how many times in a row it broke soon after. */
  private connectedAt = 0;
  private losses = 0;
  /** The last error the transport reported (a dropped message, a broken pipe), for the next failed call. */
  private transportError: string | undefined;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
    private readonly events: McpConnectionEvents,
  ) {}

  get timeoutMs(): number {
    return this.config.timeout ?? DEFAULT_MCP_TIMEOUT_MS;
  }

  private get connectTimeoutMs(): number {
    return Math.max(this.timeoutMs, MIN_CONNECT_TIMEOUT_MS);
  }

  /** Starts connecting in the background; `whenSettled()` resolves once the first attempt ended either way. */
  start(): void {
    if (this.config.enabled === false) {
      this.setState("disabled");
      return;
    }
    this.attempt = 0;
    void this.connect();
  }

  /** Resolves when the server is connected or has failed (bounded by `timeoutMs`). */
  async whenSettled(signal?: AbortSignal): Promise<void> {
    if (this.state !== "connecting") return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.ready,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.connectTimeoutMs);
        signal?.addEventListener("abort", () => resolve(), { once: true });
      }),
    ]);
    clearTimeout(timer);
  }

  async reconnect(): Promise<void> {
    this.wasLost = false;
    await this.close();
    this.start();
    await this.whenSettled();
  }

  async close(state: McpServerState = "closed"): Promise<void> {
    this.generation++;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client;
    this.client = undefined;
    this.setState(state);
    this.settleReady?.();
    if (client) await client.close().catch(() => undefined);
  }

  /**
   * Calls a tool. A server left `failed` (its retries pending or spent) gets one more connection attempt first, so a
   * call after a crash reconnects it or fails with the reason; a server still connecting is waited for.
   */
  async callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    if (this.state === "failed" && this.config.enabled !== false) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      void this.connect();
    }
    if (this.state === "connecting") await this.whenSettled(signal);
    const client = this.requireClient();
    this.transportError = undefined;
    try {
      return (await client.callTool({ name, arguments: args }, undefined, {
        ...(signal ? { signal } : {}),
        timeout: this.timeoutMs,
      })) as CallToolResult;
    } catch (error) {
      throw this.callError(name, error);
    }
  }

  /** A failed call's error in words that say what happened to the server and the result. */
  private callError(tool: string, error: unknown): Error {
    const { code } = (error ?? {}) as { code?: unknown };
    if (code === MESSAGE_TOO_LARGE_CODE) {
      const { message } = error as { message: string };
      return new Error(
        `${message.replace(/^MCP error -?\d+: /, "")} (tool "${tool}" of MCP server "${this.name}"; the connection stays open)`,
      );
    }
    const transport = this.transportError ? ` (${this.transportError})` : "";
    // The SDK's ConnectionClosed; servers may use -32000 for errors of their own, so the message decides too.
    if (code === -32000 && /connection closed/i.test(errorMessage(error))) {
      return new Error(
        `the connection to MCP server "${this.name}" closed during the call${transport}, so its result is lost; KnightCode reconnects the server, and a later call can run`,
      );
    }
    return transport ? new Error(`${errorMessage(error)}${transport}`) : (error as Error);
  }

  /** The tools the server listed last; fails, as a request would, when it is not connected. */
  listedTools(): Tool[] {
    this.requireClient();
    return this.tools;
  }

  async listResources(): Promise<Resource[]> {
    const client = this.requireClient();
    if (!client.getServerCapabilities()?.resources) return [];
    return this.paginate(async (cursor) => {
      const page = await client.listResources(cursor ? { cursor } : {}, { timeout: this.timeoutMs });
      return { items: page.resources, next: page.nextCursor };
    });
  }

  async readResource(uri: string): Promise<unknown> {
    return this.requireClient().readResource({ uri }, { timeout: this.timeoutMs });
  }

  async listPrompts(): Promise<Prompt[]> {
    const client = this.requireClient();
    if (!client.getServerCapabilities()?.prompts) return [];
    return this.paginate(async (cursor) => {
      const page = await client.listPrompts(cursor ? { cursor } : {}, { timeout: this.timeoutMs });
      return { items: page.prompts, next: page.nextCursor };
    });
  }

  async getPrompt(name: string, args: Record<string, string>): Promise<unknown> {
    return this.requireClient().getPrompt({ name, arguments: args }, { timeout: this.timeoutMs });
  }

  private requireClient(): Client {
    if (this.state === "connected" && this.client) return this.client;
    const why =
      this.state === "needs-auth"
        ? `needs sign-in (/mcp login ${this.name})`
        : this.state === "disabled"
          ? "is disabled"
          : this.lastError
            ? `is ${this.state}: ${this.lastError}`
            : `is ${this.state}`;
    throw new Error(`MCP server "${this.name}" ${why}`);
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    // Each attempt gets its own promise, so a caller waiting during a retry waits for that retry.
    this.settleReady?.();
    this.ready = new Promise((resolve) => {
      this.settleReady = resolve;
    });
    this.setState("connecting");
    try {
      const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
      const client = new Client({ name: "knightcode", version: VERSION }, { capabilities: {} });
      const transport = await this.openTransport(client, generation);
      if (generation !== this.generation) {
        await client.close().catch(() => undefined);
        return;
      }
      this.client = client;
      this.instructions = client.getInstructions();
      client.onclose = () => {
        if (generation === this.generation && this.state === "connected") this.lost(generation);
      };
      client.onerror = (error) => {
        if (generation === this.generation) this.transportError = errorMessage(error);
      };
      await this.watchToolList(client, generation);
      this.tools = await this.listTools(client);
      if (generation !== this.generation) return;
      this.transport = transport;
      this.lastError = undefined;
      this.attempt = 0;
      this.connectedAt = Date.now();
      this.setState("connected");
      this.events.tools(this.tools);
      if (this.wasLost) {
        this.wasLost = false;
        this.events.reconnected?.();
      }
      this.settleReady?.();
    } catch (error) {
      if (generation !== this.generation) return;
      const { UnauthorizedError } = await import("@modelcontextprotocol/sdk/client/auth.js");
      if (error instanceof UnauthorizedError) {
        this.lastError = `sign-in needed: run /mcp login ${this.name}`;
        this.client = undefined;
        this.setState("needs-auth");
        this.settleReady?.();
        return;
      }
      this.failed(generation, error);
    }
  }

  /** Connects the client over the entry's transport; returns which one worked. */
  private async openTransport(client: Client, generation: number): Promise<McpTransportKind> {
    const config = this.config;
    if (config.command) {
      const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      const { deserializeMessage } = await import("@modelcontextprotocol/sdk/shared/stdio.js");
      const maxMessageBytes = this.options.maxMessageBytes ?? MAX_MCP_MESSAGE_BYTES;
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args ?? [],
        env: { ...inheritedEnv(), ...(config.env ?? {}) },
        cwd: config.cwd ?? this.options.cwd,
        stderr: "pipe",
        // Only used should the reader below not take the SDK's place: the SDK's limit, raised to ours.
        maxBufferSize: maxMessageBytes,
      });
      // The SDK's reader closes the connection on a message over its limit; ours drops just that message (and
      // does not copy the line on every chunk). The SDK offers no option for it, so its reader is replaced.
      const internals = transport as unknown as { _readBuffer?: { append?: unknown } };
      if (typeof internals._readBuffer?.append === "function") {
        internals._readBuffer = new MessageBuffer({ maxMessageBytes, parse: deserializeMessage });
      }
      transport.stderr?.on("data", (chunk: Buffer) => this.recordStderr(generation, chunk));
      await client.connect(transport, { timeout: this.connectTimeoutMs });
      return "stdio";
    }
    const url = new URL(config.url!);
    const requestInit = config.headers ? { headers: config.headers } : undefined;
    const auth = this.options.authProvider ? { authProvider: this.options.authProvider } : {};
    const { StreamableHTTPClientTransport, StreamableHTTPError } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    try {
      const transport: Transport = new StreamableHTTPClientTransport(url, {
        ...auth,
        ...(requestInit ? { requestInit } : {}),
      });
      await client.connect(transport, { timeout: this.connectTimeoutMs });
      return "http";
    } catch (error) {
      const code = error instanceof StreamableHTTPError ? error.code : undefined;
      if (code !== 400 && code !== 404 && code !== 405) throw error;
    }
    const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
    const transport = new SSEClientTransport(url, { ...auth, ...(requestInit ? { requestInit } : {}) });
    await client.connect(transport, { timeout: this.connectTimeoutMs });
    return "sse";
  }

  /**
   * Re-lists every page on `notifications/tools/list_changed`. The SDK's own auto-refresh reads only the first page
   * and its debounce timer outlives `close()`, so KnightCode handles the notification itself.
   */
  private async watchToolList(client: Client, generation: number): Promise<void> {
    if (!client.getServerCapabilities()?.tools?.listChanged) return;
    const { ToolListChangedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (generation !== this.generation || this.state !== "connected") return;
      try {
        const tools = await this.listTools(client);
        if (generation !== this.generation) return;
        this.tools = tools;
        this.events.tools(tools);
      } catch (error) {
        this.lastError = `re-listing tools failed: ${errorMessage(error)}`;
        this.events.status();
      }
    });
  }

  private async listTools(client: Client): Promise<Tool[]> {
    if (!client.getServerCapabilities()?.tools) return [];
    return this.paginate(async (cursor) => {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: this.connectTimeoutMs });
      return { items: page.tools, next: page.nextCursor };
    });
  }

  /** Follows `nextCursor` to the end, bounded so a server that repeats a cursor cannot loop forever. */
  private async paginate<T>(page: (cursor?: string) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
    const all: T[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < MAX_LIST_PAGES; i++) {
      const { items, next } = await page(cursor);
      all.push(...items);
      if (!next || next === cursor) return all;
      cursor = next;
    }
    throw new Error(`MCP server "${this.name}" returned more than ${MAX_LIST_PAGES} pages`);
  }

  /**
   * A connection that was up broke: report it and reconnect, at once unless it keeps breaking soon after it
   * connects (then with back-off, and not after the last delay).
   */
  private lost(generation: number): void {
    const why = this.transportError
      ? `the connection closed (${this.transportError})`
      : "the connection closed";
    this.client = undefined;
    this.wasLost = true;
    this.losses = Date.now() - this.connectedAt < STABLE_CONNECTION_MS ? this.losses + 1 : 1;
    if (this.losses === 1) {
      this.lastError = why;
      this.attempt = 0;
      this.events.lost?.(why, 0);
      void this.connect();
      return;
    }
    const delays = this.options.retryDelaysMs ?? RETRY_DELAYS_MS;
    this.attempt = this.losses - 2;
    this.events.lost?.(why, delays[this.attempt]);
    this.failed(generation, new Error(why));
  }

  private failed(generation: number, error: unknown): void {
    this.lastError = errorMessage(error);
    const client = this.client;
    this.client = undefined;
    if (client) void client.close().catch(() => undefined);
    const delays = this.options.retryDelaysMs ?? RETRY_DELAYS_MS;
    const delay = delays[this.attempt];
    this.attempt++;
    this.setState("failed");
    this.settleReady?.();
    if (delay === undefined || generation !== this.generation) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (generation === this.generation) void this.connect();
    }, delay);
    // A retry pending must not keep a finished print run alive.
    this.retryTimer.unref();
  }

  private recordStderr(generation: number, chunk: Buffer): void {
    if (generation !== this.generation) return;
    const lines = chunk
      .toString("utf8")
      .split(/\r?\n/)
      .filter((l) => l.trim() !== "");
    this.stderrTail.push(...lines.map((l) => (l.length > 500 ? `${l.slice(0, 500)}…` : l)));
    if (this.stderrTail.length > STDERR_TAIL_LINES) {
      this.stderrTail.splice(0, this.stderrTail.length - STDERR_TAIL_LINES);
    }
  }

  private setState(state: McpServerState): void {
    this.state = state;
    this.events.status();
  }
}

function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined && !value.startsWith("()")) env[name] = value;
  }
  return env;
}

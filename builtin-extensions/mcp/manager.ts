/**
 * The MCP client proper, loaded by index.ts only when there is a server to connect (a file entry or an extension's
 * registration), so a session without MCP never loads the SDK glue, the connection code or child_process.
 */
import {
  type ExtensionAPI,
  type ExtensionContext,
  errorMessage,
  type McpClient,
  type McpServerConfig,
  type McpServerSource,
  type McpServerSummary,
  type ToolCallEvent,
} from "@knightcodeai/cli/kit";
import type { GetPromptResult, Prompt, Tool } from "@modelcontextprotocol/sdk/types.js";

import { ToolListCache } from "./cache.js";
import { McpConnection } from "./connection.js";
import { mcpNamespace, mcpPromptCommand } from "./names.js";
import { AuthStore, authFilePath, McpOAuthProvider, signIn, signOut, storedRedirectUrl } from "./oauth.js";
import { toToolDefinition } from "./tools.js";

interface Server {
  name: string;
  connection: McpConnection;
  source: McpServerSource;
  /** Extensions whose registration of the same name the file entry overrides. */
  overrides: string[];
  /** Unregister functions of the tools currently registered for it, by tool name. */
  registered: Map<string, () => void>;
  /** Unregister functions of its prompts' commands. */
  prompts: (() => void)[];
  /** Task-only tools already reported. */
  skipped: Set<string>;
  /** Its tools were registered from the last session's list while it connects. */
  fromCache?: boolean;
}

/** What index.ts drives: the handlers it registers up front delegate here once the manager is loaded. */
export interface McpManager {
  sync(ctx: ExtensionContext): Promise<void>;
  sessionStart(ctx: ExtensionContext): Promise<void>;
  beforeAgentStart(ctx: ExtensionContext): Promise<void>;
  shutdown(): Promise<void>;
  names(): string[];
  /** What builtin:mcp provides as `mcpClientService`, with every optional action. */
  client: Required<McpClient>;
}

export function createMcpManager(knightcode: ExtensionAPI): McpManager {
  const servers = new Map<string, Server>();
  let cwd = process.cwd();
  /** The context of the last sync: the session's mcp.json files, for saving `/mcp enable|disable`. */
  let context: ExtensionContext | undefined;
  let authStore: AuthStore | undefined;
  let cache: ToolListCache | undefined;
  let unwatchCalls: (() => void) | undefined;

  const registerTools = (server: Server, listed: Tool[]): void => {
    const seen = new Set<string>();
    // A tool that can only run as an MCP task needs the experimental task API; it is left out and said so.
    const tools = listed.filter((tool) => tool.execution?.taskSupport !== "required");
    for (const tool of listed) {
      if (tool.execution?.taskSupport === "required" && !server.skipped.has(tool.name)) {
        server.skipped.add(tool.name);
        knightcode.log.warn(
          `MCP server "${server.name}": tool "${tool.name}" runs only as a task, which KnightCode does not support yet; left out.`,
        );
      }
    }
    const added = new Set<string>();
    for (const tool of tools) {
      const definition = toToolDefinition(server.name, tool, server.connection, tools.length);
      seen.add(definition.name);
      if (!server.registered.has(definition.name)) added.add(definition.exposure ?? "direct");
      // Registering the same name again replaces this extension's earlier tool (a changed schema, say).
      server.registered.get(definition.name)?.();
      server.registered.set(definition.name, knightcode.registerTool(definition, { fallback: true }));
    }
    // Tools the server no longer offers become unreachable; calls already in the transcript still render.
    for (const [name, unregister] of server.registered) {
      if (seen.has(name)) continue;
      unregister();
      server.registered.delete(name);
    }
    activateReachers(added);
  };

  /**
   * New `codemode` and `deferred` tools are not declared to the model: they reach it through `codemode` (or
   * `tool_search`, which finds inactive codemode tools) and `tool_search`. Those are activated for them, also when the
   * session started with another tool set (`--tools read`), but only when the tool of that name declares
   * `reachesTools` (so a replacement of another kind under the same name is left alone).
   */
  const activateReachers = (exposures: ReadonlySet<string>): void => {
    if (!exposures.has("codemode") && !exposures.has("deferred")) return;
    const all = knightcode.getAllTools();
    const reaches = (name: string) => all.some((t) => t.name === name && t.reachesTools);
    const wanted = new Set<string>();
    if (exposures.has("codemode")) {
      if (reaches("codemode")) wanted.add("codemode");
      else if (reaches("tool_search")) wanted.add("tool_search");
    }
    if (exposures.has("deferred") && reaches("tool_search")) wanted.add("tool_search");
    const active = knightcode.getActiveTools();
    const missing = [...wanted].filter((name) => !active.includes(name));
    if (missing.length > 0) knightcode.setActiveTools([...active, ...missing]);
  };

  const hideTools = (server: Server): void => {
    for (const unregister of server.registered.values()) unregister();
    server.registered.clear();
    for (const unregister of server.prompts.splice(0)) unregister();
  };

  /** Each prompt of the server as a `/mcp__<server>__<prompt> [args]` command that sends the prompt's text. */
  const registerPrompts = async (server: Server): Promise<void> => {
    let prompts: Prompt[];
    try {
      prompts = await server.connection.listPrompts();
    } catch (error) {
      knightcode.log.warn(`MCP server "${server.name}": listing prompts failed: ${errorMessage(error)}`);
      return;
    }
    for (const unregister of server.prompts.splice(0)) unregister();
    for (const prompt of prompts) {
      const names = (prompt.arguments ?? []).map((a) => a.name);
      server.prompts.push(
        knightcode.registerCommand(mcpPromptCommand(server.name, prompt.name), {
          description: `${prompt.description ?? prompt.name} (MCP ${server.name})${names.length ? ` — arguments: ${names.join(" ")}` : ""}`,
          handler: async (args, ctx) => {
            let text: string;
            try {
              const result = (await server.connection.getPrompt(
                prompt.name,
                promptArguments(args, names),
              )) as GetPromptResult;
              text = promptText(result);
            } catch (error) {
              ctx.ui.notify(
                `MCP prompt ${server.name}/${prompt.name} failed: ${errorMessage(error)}`,
                "error",
              );
              return { error: errorMessage(error) };
            }
            await ctx.sendUserMessage(text);
            return { sent: true };
          },
        }),
      );
    }
  };

  const add = (
    name: string,
    config: McpServerConfig,
    source: McpServerSource,
    overrides: string[],
  ): Server => {
    const server: Server = {
      name,
      source,
      overrides,
      registered: new Map(),
      prompts: [],
      skipped: new Set(),
      connection: new McpConnection(
        name,
        config,
        { cwd, ...(authProviderFor(config) ? { authProvider: authProviderFor(config)! } : {}) },
        {
          tools: (tools) => {
            registerTools(server, tools);
            cache?.set(name, config, tools, server.connection.instructions);
            void registerPrompts(server);
          },
          status: () => {
            const state = server.connection.state;
            // A server that failed keeps its tools: a call to one tries to connect again, then says why it
            // cannot, which tells the model more than a tool that vanished ("does not exist").
            if (state === "disabled" || state === "needs-auth" || state === "closed") hideTools(server);
            if (state === "needs-auth") {
              knightcode.log.warn(
                `MCP server "${name}" needs sign-in: run /mcp login ${name} in an interactive session.`,
              );
            }
          },
          lost: (why, retryInMs) => {
            const next =
              retryInMs === 0
                ? "reconnecting"
                : retryInMs !== undefined
                  ? `it keeps breaking soon after connecting; reconnecting in ${retryInMs / 1000} s`
                  : "it keeps breaking soon after connecting, so it is left failed: a call to one of its tools or /mcp reconnect tries again";
            knightcode.log.warn(`MCP server "${name}" lost its connection (${why}); ${next}.`);
          },
          reconnected: () => {
            knightcode.log.warn(`MCP server "${name}" reconnected after its connection was lost.`);
          },
        },
      ),
    };
    servers.set(name, server);
    const cached = config.enabled === false ? undefined : cache?.get(name, config);
    if (cached) {
      // Offered at once; a call waits for the connection, and the fresh list replaces these.
      server.connection.instructions = cached.instructions;
      server.fromCache = true;
      registerTools(server, cached.tools);
    }
    server.connection.start();
    return server;
  };

  /** HTTP servers get a provider that uses stored tokens and reports when sign-in is needed (`oauth: false`: none). */
  const authProviderFor = (config: McpServerConfig): McpOAuthProvider | undefined => {
    if (!config.url || config.oauth === (false as unknown) || !authStore) return undefined;
    return new McpOAuthProvider(
      authStore,
      config.url,
      storedRedirectUrl(authStore, config.url),
      () => {},
      oauthScope(config),
    );
  };

  const remove = async (name: string): Promise<void> => {
    const server = servers.get(name);
    if (!server) return;
    servers.delete(name);
    hideTools(server);
    await server.connection.close();
  };

  /** The wanted set: file entries first, then extension registrations whose names no file entry takes. */
  const wanted = (ctx: ExtensionContext) => {
    const files = ctx.mcpConfig.servers();
    for (const warning of files.warnings) knightcode.log.warn(warning);
    const result = new Map<
      string,
      { config: McpServerConfig; source: McpServerSource; overrides: string[] }
    >();
    for (const entry of files.servers) {
      result.set(entry.name, {
        config: entry.config,
        source: { kind: "file", path: entry.path, scope: entry.scope },
        overrides: [],
      });
    }
    for (const { name, config, owner } of knightcode.getMcpServers()) {
      const taken = result.get(name);
      if (taken) {
        taken.overrides.push(owner);
        continue;
      }
      const problem = ctx.mcpConfig.validate(name, config, "extension");
      if (problem) {
        knightcode.log.warn(`MCP server "${name}" registered by ${owner}: ${problem}`);
        continue;
      }
      result.set(name, { config, source: { kind: "extension", owner }, overrides: [] });
    }
    return result;
  };

  /** Brings the connections in line with the wanted set: new servers connect, gone ones close, changed ones restart. */
  const sync = async (ctx: ExtensionContext): Promise<void> => {
    context = ctx;
    cwd = ctx.cwd;
    authStore ??= new AuthStore(authFilePath(ctx.agentDir));
    cache ??= new ToolListCache(ctx.agentDir);
    const target = wanted(ctx);
    for (const [name, server] of servers) {
      const next = target.get(name);
      if (!next || JSON.stringify(next.config) !== JSON.stringify(server.connection.config))
        await remove(name);
    }
    for (const [name, { config, source, overrides }] of target) {
      const existing = servers.get(name);
      if (existing) {
        existing.overrides = overrides;
        continue;
      }
      add(name, config, source, overrides);
    }
    // Every tool call passes through a tool_call handler: subscribe only while there are servers to wait for.
    if (servers.size > 0 && !unwatchCalls) {
      unwatchCalls = knightcode.on("tool_call", async (event, ctx) => {
        const reached = serversReachedBy(event, [...servers.values()]);
        await Promise.all(reached.map((s) => s.connection.whenSettled(ctx.signal)));
        return undefined;
      });
    } else if (servers.size === 0 && unwatchCalls) {
      unwatchCalls();
      unwatchCalls = undefined;
    }
  };

  const summaries = (): McpServerSummary[] =>
    [...servers.values()].map((server) => ({
      name: server.name,
      state: server.connection.state,
      transport: server.connection.transport ?? (server.connection.config.command ? "stdio" : "http"),
      // The tools offered: those registered, not those the server listed and that were left out (task-only).
      tools: server.registered.size,
      source: server.source,
      overrides: server.overrides,
      ...(server.connection.lastError ? { error: server.connection.lastError } : {}),
      stderr: [...server.connection.stderrTail],
    }));

  // The first run waits (bounded) for servers connecting for the first time (no cached tool list), so a one-shot
  // `knightcode -p` sees their tools; servers with a cached list offer it at once, the session itself starts at
  // once, and later runs never wait.
  let startup: Promise<void> | undefined;
  const sessionStart = async (ctx: ExtensionContext): Promise<void> => {
    await sync(ctx);
    const waitMs = startupWaitMs(knightcode.getSettings());
    const pending = [...servers.values()].filter((s) => s.connection.state === "connecting" && !s.fromCache);
    if (waitMs > 0 && pending.length > 0) {
      startup = boundedWait(Promise.all(pending.map((s) => s.connection.whenSettled())), waitMs);
    }
  };
  const beforeAgentStart = async (ctx: ExtensionContext): Promise<void> => {
    if (!startup) return;
    const waiting = [...servers.values()]
      .filter((s) => s.connection.state === "connecting")
      .map((s) => s.name);
    if (waiting.length > 0) ctx.ui.setWorkingMessage(`Connecting MCP servers: ${waiting.join(", ")}`);
    await startup;
    startup = undefined;
    if (waiting.length > 0) ctx.ui.setWorkingMessage();
  };

  /** The server of that name, or an error naming it. */
  const find = (name: string): Server => {
    const server = servers.get(name);
    if (!server) throw new Error(`No MCP server named "${name}"`);
    return server;
  };
  /** Its connection, once it is no longer connecting (its requests fail with the reason when it is not connected). */
  const settled = async (name: string, signal?: AbortSignal): Promise<McpConnection> => {
    const { connection } = find(name);
    if (connection.state === "connecting") await connection.whenSettled(signal);
    return connection;
  };
  /** The config, auth store and URL of an HTTP server, for signing in and out. */
  const httpServer = (name: string) => {
    const server = find(name);
    const url = server.connection.config.url;
    if (!url || !authStore)
      throw new Error(`MCP server "${name}" is not an HTTP server; there is nothing to sign in to.`);
    return { server, url, store: authStore };
  };

  const client: Required<McpClient> = {
    servers: summaries,
    listTools: async (name) => (await settled(name)).listedTools(),
    listResources: async (name) => (await settled(name)).listResources(),
    readResource: async (name, uri) => (await settled(name)).readResource(uri),
    listPrompts: async (name) => (await settled(name)).listPrompts(),
    getPrompt: async (name, prompt, args = {}) => (await settled(name)).getPrompt(prompt, args),
    callTool: async (name, tool, args = {}, signal) =>
      (await settled(name, signal)).callTool(tool, args, signal),
    reconnect: (name) => find(name).connection.reconnect(),
    setEnabled: async (name, enabled) => {
      const server = find(name);
      let savedIn: string | undefined;
      if (server.source.kind === "file") {
        if (!context) throw new Error("The MCP client has not started");
        context.mcpConfig.update(server.source.scope, name, { enabled });
        savedIn = server.source.path;
      }
      const config = { ...server.connection.config, enabled };
      await remove(name);
      add(name, config, server.source, server.overrides);
      await servers.get(name)?.connection.whenSettled();
      return savedIn ? { savedIn } : {};
    },
    signIn: async (name, { show, signal }) => {
      const { server, url, store } = httpServer(name);
      const scope = oauthScope(server.connection.config);
      await signIn({
        store,
        serverUrl: url,
        ...(signal ? { signal } : {}),
        ...(scope ? { scope } : {}),
        show,
      });
      await server.connection.reconnect();
    },
    signOut: async (name) => {
      const { server, url, store } = httpServer(name);
      const had = signOut(store, url);
      await server.connection.reconnect();
      return had;
    },
  };

  return {
    sync,
    sessionStart,
    beforeAgentStart,
    shutdown: async () => {
      await Promise.all([...servers.keys()].map((name) => remove(name)));
    },
    names: () => [...servers.keys()],
    client,
  };
}

function oauthScope(config: McpServerConfig): string | undefined {
  const scope = (config.oauth as { scope?: unknown } | undefined)?.scope;
  return typeof scope === "string" ? scope : undefined;
}

/** How long the first run waits for servers still connecting: setting `mcp.startupWaitMs`, default 10 s. */
export const DEFAULT_STARTUP_WAIT_MS = 10_000;

function startupWaitMs(settings: Record<string, unknown>): number {
  const mcp = settings.mcp as { startupWaitMs?: unknown } | undefined;
  const value = mcp?.startupWaitMs;
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : DEFAULT_STARTUP_WAIT_MS;
}

function boundedWait(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    void promise.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * The servers still connecting that a call may need: its own server for an MCP tool, and for a tool that reaches
 * other tools, every server (`"all"`) or those whose name or namespace one of the reached words contains.
 */
function serversReachedBy(event: ToolCallEvent, all: Server[]): Server[] {
  const connecting = all.filter((s) => s.connection.state === "connecting");
  if (connecting.length === 0) return [];
  const reaches = event.reaches;
  return connecting.filter((server) => {
    if (event.toolName.startsWith(`${mcpNamespace(server.name)}__`)) return true;
    if (reaches === undefined) return false;
    if (reaches === "all") return true;
    const names = [server.name, mcpNamespace(server.name)];
    return reaches.some((word) => names.some((n) => word.includes(n)));
  });
}

/**
 * Command text as prompt arguments: `name=value` pairs, or plain words taken in the order the prompt declares its
 * arguments (the last one takes the rest of the line).
 */
export function promptArguments(text: string, names: string[]): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed === "") return {};
  const pairs = [...trimmed.matchAll(/(\w[\w-]*)=("([^"]*)"|(\S*))/g)];
  if (pairs.length > 0) return Object.fromEntries(pairs.map((m) => [m[1]!, m[3] ?? m[4] ?? ""]));
  const words = trimmed.split(/\s+/);
  const args: Record<string, string> = {};
  names.forEach((name, i) => {
    if (i >= words.length) return;
    args[name] = i === names.length - 1 ? words.slice(i).join(" ") : words[i]!;
  });
  return args;
}

/** The text of a prompt's messages, joined; other content is named, not sent. */
function promptText(result: GetPromptResult): string {
  return result.messages
    .map((m) => {
      const c = m.content as { type: string; text?: string; resource?: { uri: string; text?: string } };
      if (c.type === "text") return c.text ?? "";
      if (c.type === "resource" && c.resource?.text !== undefined) return c.resource.text;
      return `[${c.type} content]`;
    })
    .join("\n\n");
}

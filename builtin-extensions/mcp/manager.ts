/**
 * The MCP client proper, loaded by index.ts only when there is a server to connect (a file entry or an extension's
 * registration), so a session without MCP never loads the SDK glue, the connection code or child_process.
 */
import { spawn } from "node:child_process";
import {
  type ExtensionAPI,
  type ExtensionCommandContext,
  type ExtensionContext,
  errorMessage,
  type McpScope,
  type McpServerConfig,
  readMcpFiles,
  type ToolCallEvent,
  updateMcpServer,
  validateMcpEntry,
} from "@knightcodeai/cli/kit";
import type { GetPromptResult, Prompt, Resource, Tool } from "@modelcontextprotocol/sdk/types.js";

import { ToolListCache } from "./cache.js";
import { McpConnection } from "./connection.js";
import { MCP_ACTIONS as ACTIONS, mcpNamespace, mcpPromptCommand } from "./names.js";
import { AuthStore, authFilePath, McpOAuthProvider, signIn, signOut, storedRedirectUrl } from "./oauth.js";
import { toToolDefinition } from "./tools.js";

/** Where a server's entry comes from. */
export type McpSource =
  | { kind: "file"; path: string; scope: McpScope }
  | { kind: "extension"; owner: string };

interface Server {
  name: string;
  connection: McpConnection;
  source: McpSource;
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

/** What `knightcode.events.emit("mcp:client", (client) => ...)` hands another extension. */
export interface McpClientApi {
  servers(): McpServerSummary[];
  listResources(server: string): Promise<Resource[]>;
  readResource(server: string, uri: string): Promise<unknown>;
  listPrompts(server: string): Promise<Prompt[]>;
  getPrompt(server: string, prompt: string, args?: Record<string, string>): Promise<unknown>;
  callTool(
    server: string,
    tool: string,
    args?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<unknown>;
}

export interface McpServerSummary {
  name: string;
  state: string;
  transport: string | undefined;
  tools: number;
  source: McpSource;
  overrides: string[];
  error?: string;
  stderr: string[];
}

/** What index.ts drives: the handlers it registers up front delegate here once the manager is loaded. */
export interface McpManager {
  sync(ctx: ExtensionContext): Promise<void>;
  sessionStart(ctx: ExtensionContext): Promise<void>;
  beforeAgentStart(ctx: ExtensionContext): Promise<void>;
  shutdown(): Promise<void>;
  names(): string[];
  client: McpClientApi;
  command(args: string, ctx: ExtensionCommandContext): Promise<unknown>;
}

export function createMcpManager(knightcode: ExtensionAPI): McpManager {
  const servers = new Map<string, Server>();
  let cwd = process.cwd();
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
    for (const tool of tools) {
      const definition = toToolDefinition(server.name, tool, server.connection, tools.length);
      seen.add(definition.name);
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

  const add = (name: string, config: McpServerConfig, source: McpSource, overrides: string[]): Server => {
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
            if (state !== "connected" && state !== "connecting") hideTools(server);
            if (state === "needs-auth") {
              knightcode.log.warn(
                `MCP server "${name}" needs sign-in: run /mcp login ${name} in an interactive session.`,
              );
            }
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
    const files = readMcpFiles(ctx.agentDir, ctx.cwd, ctx.isProjectTrusted());
    for (const warning of files.warnings) knightcode.log.warn(warning);
    const result = new Map<string, { config: McpServerConfig; source: McpSource; overrides: string[] }>();
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
      const problem = validateMcpEntry(name, config, "extension");
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
      tools: server.connection.tools.length,
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

  const need = (name: string): McpConnection => {
    const server = servers.get(name);
    if (!server) throw new Error(`No MCP server named "${name}"`);
    return server.connection;
  };
  const client: McpClientApi = {
    servers: summaries,
    listResources: (name) => need(name).listResources(),
    readResource: (name, uri) => need(name).readResource(uri),
    listPrompts: (name) => need(name).listPrompts(),
    getPrompt: (name, prompt, args = {}) => need(name).getPrompt(prompt, args),
    callTool: (name, tool, args = {}, signal) => need(name).callTool(tool, args, signal),
  };

  /** `/mcp <name>`: the server's tools, prompts and resources. */
  const details = async (name: string): Promise<string> => {
    const server = servers.get(name)!;
    const lines = [formatList(summaries().filter((s) => s.name === name))];
    if (server.connection.state !== "connected") return lines.join("\n");
    lines.push(`  tools: ${server.connection.tools.map((t) => t.name).join(", ") || "none"}`);
    const [prompts, resources] = await Promise.all([
      server.connection.listPrompts().catch((e) => errorMessage(e)),
      server.connection.listResources().catch((e) => errorMessage(e)),
    ]);
    lines.push(
      `  prompts: ${typeof prompts === "string" ? `(failed: ${prompts})` : prompts.map((p) => `/${mcpPromptCommand(name, p.name)}`).join(", ") || "none"}`,
    );
    lines.push(
      `  resources: ${typeof resources === "string" ? `(failed: ${resources})` : resources.map((r) => r.uri).join(", ") || "none"}`,
    );
    return lines.join("\n");
  };

  const command = async (args: string, ctx: ExtensionCommandContext): Promise<unknown> => {
    const [action, name] = args.trim().split(/\s+/);
    if (!action) {
      const list = summaries();
      ctx.ui.notify(formatList(list), "info");
      return { servers: list };
    }
    if (!name && servers.has(action)) {
      const text = await details(action);
      ctx.ui.notify(text, "info");
      return { servers: summaries().filter((s) => s.name === action) };
    }
    const server = name ? servers.get(name) : undefined;
    if (!server || !ACTIONS.includes(action)) {
      const message = !ACTIONS.includes(action)
        ? `Unknown /mcp action "${action}": use ${ACTIONS.join(", ")} followed by a server name.`
        : `No MCP server named "${name ?? ""}". Servers: ${[...servers.keys()].join(", ") || "none"}.`;
      ctx.ui.notify(message, "error");
      return { error: message };
    }
    if (action === "login" || action === "logout") {
      const url = server.connection.config.url;
      if (!url || !authStore) {
        const message = `MCP server "${name}" is not an HTTP server; there is nothing to sign in to.`;
        ctx.ui.notify(message, "error");
        return { error: message };
      }
      if (action === "logout") {
        const had = signOut(authStore, url);
        await server.connection.reconnect();
        ctx.ui.notify(had ? `Signed out of "${name}".` : `No stored sign-in for "${name}".`, "info");
      } else {
        if (!ctx.hasUI) {
          const message = `Signing in to "${name}" needs a browser and an interactive session.`;
          ctx.ui.notify(message, "error");
          return { error: message };
        }
        try {
          await signIn({
            store: authStore,
            serverUrl: url,
            ...(ctx.signal ? { signal: ctx.signal } : {}),
            ...(oauthScope(server.connection.config) ? { scope: oauthScope(server.connection.config)! } : {}),
            show: (authUrl) => {
              ctx.ui.notify(
                `Open this address in a browser to sign in to "${name}": ${authUrl.href}`,
                "info",
              );
              if (openBrowserSetting(knightcode.getSettings())) openBrowser(authUrl.href);
            },
          });
        } catch (error) {
          const message = `Sign-in to "${name}" failed: ${errorMessage(error)}`;
          ctx.ui.notify(message, "error");
          return { error: message };
        }
        await server.connection.reconnect();
      }
    } else if (action === "reconnect") {
      await server.connection.reconnect();
    } else {
      const enabled = action === "enable";
      let saved: string | undefined;
      if (server.source.kind === "file") {
        try {
          updateMcpServer(server.source.path, name!, { enabled });
          saved = server.source.path;
        } catch (error) {
          const message = `Could not save the change: ${errorMessage(error)}`;
          ctx.ui.notify(message, "error");
          return { error: message };
        }
      }
      const config = { ...server.connection.config, enabled };
      await remove(name!);
      add(name!, config, server.source, server.overrides);
      await servers.get(name!)?.connection.whenSettled();
      ctx.ui.notify(
        `MCP server "${name}" ${enabled ? "enabled" : "disabled"}${saved ? ` (saved in ${saved})` : " for this session (registered by an extension, nothing to save)"}.`,
        "info",
      );
    }
    const summary = summaries().find((s) => s.name === name)!;
    ctx.ui.notify(formatList([summary]), summary.error ? "warning" : "info");
    return { servers: [summary] };
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
    command,
  };
}

function oauthScope(config: McpServerConfig): string | undefined {
  const scope = (config.oauth as { scope?: unknown } | undefined)?.scope;
  return typeof scope === "string" ? scope : undefined;
}

function openBrowserSetting(settings: Record<string, unknown>): boolean {
  return (settings.mcp as { openBrowser?: unknown } | undefined)?.openBrowser !== false;
}

/** Best effort: the address is also shown, so a failure to open a browser loses nothing. */
function openBrowser(url: string): void {
  const command =
    process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(command, [url], { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No opener on this machine: the person uses the address shown.
  }
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

function formatList(list: McpServerSummary[]): string {
  if (list.length === 0) return "No MCP servers. Add them to mcp.json (see docs/mcp.md).";
  return list
    .map((s) => {
      const from = s.source.kind === "file" ? s.source.path : `registered by ${s.source.owner}`;
      const lines = [`${s.name}: ${s.state}, ${s.transport ?? "?"}, ${s.tools} tools (${from})`];
      if (s.overrides.length > 0) lines.push(`  overrides the registration of ${s.overrides.join(", ")}`);
      if (s.error) lines.push(`  error: ${s.error}`);
      if (s.error && s.stderr.length > 0) lines.push(...s.stderr.slice(-5).map((l) => `  stderr: ${l}`));
      return lines.join("\n");
    })
    .join("\n");
}

/**
 * A small MCP client that replaces builtin:mcp: it connects the stdio servers of the session's `mcp.json` files
 * and of other extensions' `registerMcpServer()`, registers their tools as `mcp__<server>__<tool>`, and provides
 * `mcpClientService`, so `/mcp` shows its servers and other extensions reach their resources through it.
 *
 * Shows: what a replacement of `builtin:mcp` does so the rest of KnightCode uses it (docs/swapping-builtins.md).
 * Load it with `{"extensions": ["-builtin:mcp"]}` in the settings and `-e mini-mcp.ts`.
 * - the servers come from `ctx.mcpConfig.servers()` (the personal file, a trusted project's; `${VAR}` expanded) and
 *   `knightcode.getMcpServers()`, and it handles `mcp_servers_change` for registrations made later;
 * - the MCP SDK (`@modelcontextprotocol/sdk`, which KnightCode depends on) speaks the protocol;
 * - it provides `mcpClientService` (with `reconnect`, not the other optional actions, so `/mcp enable` answers that
 *   this client cannot).
 *
 * Deliberately small, unlike builtin:mcp: no HTTP servers, no sign-in, no retries, first pages of lists only, and
 * the first prompt waits (at most 30 s) for the servers still connecting.
 */
import {
  type ExtensionAPI,
  type ExtensionContext,
  type McpClient,
  type McpServerConfig,
  type McpServerSource,
  type McpServerSummary,
  mcpClientService,
  type TSchema,
} from "@knightcodeai/cli";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const CONNECT_WAIT_MS = 30_000;

interface Server {
  name: string;
  config: McpServerConfig;
  source: McpServerSource;
  state: "connecting" | "connected" | "failed" | "disabled" | "closed";
  error?: string;
  client?: Client;
  tools: { name: string; title?: string; description?: string }[];
  stderr: string[];
  /** Resolves when the connection attempt ended, either way. */
  settled: Promise<void>;
  unregister: (() => void)[];
}

/** `mcp__<server>__<tool>`, with the characters model APIs refuse as `_`. */
export function toolName(server: string, tool: string): string {
  const clean = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "_");
  return `mcp__${clean(server)}__${clean(tool)}`.slice(0, 64);
}

export default function miniMcp(knightcode: ExtensionAPI) {
  const servers = new Map<string, Server>();
  let cwd = process.cwd();

  const connect = async (server: Server): Promise<void> => {
    const { command, args = [], env = {} } = server.config;
    if (!command) throw new Error("mini-mcp connects stdio servers only (an entry with a command)");
    const transport = new StdioClientTransport({
      command,
      args,
      env: { ...getDefaultEnvironment(), ...env },
      cwd: server.config.cwd ?? cwd,
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      server.stderr.push(...String(chunk).split("\n").filter(Boolean));
      server.stderr.splice(0, Math.max(0, server.stderr.length - 20));
    });
    const client = new Client({ name: "mini-mcp", version: "0.1.0" });
    await client.connect(transport, { timeout: CONNECT_WAIT_MS });
    if (server.state !== "connecting") {
      await client.close(); // removed or reconnected while connecting
      return;
    }
    const { tools } = await client.listTools();
    server.client = client;
    server.tools = tools;
    for (const tool of tools) {
      server.unregister.push(
        knightcode.registerTool({
          name: toolName(server.name, tool.name),
          label: `${server.name}: ${tool.title ?? tool.name}`,
          description: tool.description ?? `${tool.name} (MCP server ${server.name})`,
          parameters: tool.inputSchema as unknown as TSchema,
          async execute(_id, params, signal) {
            const result = await client.callTool(
              { name: tool.name, arguments: (params ?? {}) as Record<string, unknown> },
              undefined,
              signal ? { signal } : {},
            );
            const blocks = (result.content ?? []) as { type: string; text?: string }[];
            const text = blocks.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n");
            return {
              content: [{ type: "text", text: text || JSON.stringify(result.structuredContent ?? null) }],
              details: { server: server.name, tool: tool.name },
              ...(result.isError ? { isError: true } : {}),
            };
          },
        }),
      );
    }
    server.state = "connected";
  };

  const start = (name: string, config: McpServerConfig, source: McpServerSource): void => {
    const server: Server = {
      name,
      config,
      source,
      state: config.enabled === false ? "disabled" : "connecting",
      tools: [],
      stderr: [],
      settled: Promise.resolve(),
      unregister: [],
    };
    servers.set(name, server);
    if (server.state === "disabled") return;
    server.settled = connect(server).catch((error: unknown) => {
      server.state = "failed";
      server.error = error instanceof Error ? error.message : String(error);
    });
  };

  const stop = async (name: string): Promise<void> => {
    const server = servers.get(name);
    if (!server) return;
    servers.delete(name);
    server.state = "closed";
    for (const unregister of server.unregister.splice(0)) unregister();
    await server.client?.close();
  };

  /** Connects what is wanted and not connected yet; closes what is no longer wanted. */
  const sync = async (ctx: ExtensionContext): Promise<void> => {
    cwd = ctx.cwd;
    const files = ctx.mcpConfig.servers();
    for (const warning of files.warnings) knightcode.log.warn(warning);
    const wanted = new Map<string, { config: McpServerConfig; source: McpServerSource }>();
    for (const entry of files.servers) {
      wanted.set(entry.name, {
        config: entry.config,
        source: { kind: "file", path: entry.path, scope: entry.scope },
      });
    }
    for (const { name, config, owner } of knightcode.getMcpServers()) {
      if (!wanted.has(name)) wanted.set(name, { config, source: { kind: "extension", owner } });
    }
    for (const name of [...servers.keys()]) if (!wanted.has(name)) await stop(name);
    for (const [name, { config, source }] of wanted) if (!servers.has(name)) start(name, config, source);
  };

  const settledAll = () => Promise.all([...servers.values()].map((s) => s.settled));

  knightcode.on("session_start", async (_event, ctx) => {
    await sync(ctx);
  });
  knightcode.on("mcp_servers_change", async (_event, ctx) => {
    await sync(ctx);
  });
  // The first prompt (and every later one) sees the tools of the servers that connect within the wait.
  knightcode.on("before_agent_start", async () => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      settledAll(),
      new Promise((resolve) => (timer = setTimeout(resolve, CONNECT_WAIT_MS))),
    ]);
    clearTimeout(timer);
    return undefined;
  });
  knightcode.on("session_shutdown", async () => {
    await Promise.all([...servers.keys()].map(stop));
  });

  /** The connected client of a server, once its attempt settled; an error naming the server otherwise. */
  const connected = async (name: string): Promise<Client> => {
    const server = servers.get(name);
    if (!server) throw new Error(`No MCP server named "${name}"`);
    await server.settled;
    if (!server.client || server.state !== "connected") {
      throw new Error(`MCP server "${name}" is ${server.state}${server.error ? `: ${server.error}` : ""}`);
    }
    return server.client;
  };

  const client: McpClient = {
    servers: (): McpServerSummary[] =>
      [...servers.values()].map((s) => ({
        name: s.name,
        state: s.state,
        transport: "stdio",
        tools: s.tools.length,
        source: s.source,
        overrides: [],
        ...(s.error ? { error: s.error } : {}),
        stderr: [...s.stderr],
      })),
    listTools: async (name) => {
      await connected(name);
      return servers.get(name)!.tools;
    },
    listResources: async (name) => {
      const c = await connected(name);
      return c.getServerCapabilities()?.resources ? (await c.listResources()).resources : [];
    },
    readResource: async (name, uri) => (await connected(name)).readResource({ uri }),
    listPrompts: async (name) => {
      const c = await connected(name);
      return c.getServerCapabilities()?.prompts ? (await c.listPrompts()).prompts : [];
    },
    getPrompt: async (name, prompt, args = {}) =>
      (await connected(name)).getPrompt({ name: prompt, arguments: args }),
    callTool: async (name, tool, args = {}, signal) =>
      (await connected(name)).callTool({ name: tool, arguments: args }, undefined, signal ? { signal } : {}),
    reconnect: async (name) => {
      const server = servers.get(name);
      if (!server) throw new Error(`No MCP server named "${name}"`);
      await stop(name);
      start(name, server.config, server.source);
      await servers.get(name)?.settled;
    },
  };
  knightcode.services.provide(mcpClientService, () => client);
}

/**
 * builtin:mcp — connects MCP servers and offers their tools, written only against the public API, so a user can
 * turn it off (`-builtin:mcp`) and load another MCP client.
 *
 * Servers come from the session's `mcp.json` files (`ctx.mcpConfig`: the personal file, and a trusted project's,
 * which overrides global entries of the same name) and extensions' `registerMcpServer()` (a file entry of the same
 * name wins). They connect when the session starts, in parallel and without holding up the first prompt; each
 * server's tools are registered as `mcp__<server>__<tool>` when it has connected. A call that may reach a server
 * still connecting (a tool declaring `reachesTools`, such as codemode) waits for it in this extension's `tool_call`
 * handler. The client is the session's `mcpClientService`, which `/mcp` (builtin:mcp-command) shows and manages,
 * and which other extensions use for resources and prompts. See docs/mcp.md.
 *
 * This file stays small: the client itself (manager.ts, with the connection code and the MCP SDK behind it) loads
 * only once there is a server to connect, so a session without MCP pays for none of it.
 */
import {
  type ExtensionAPI,
  type ExtensionContext,
  type McpClient,
  mcpClientService,
} from "@knightcodeai/cli/kit";
import type { McpManager } from "./manager.js";

export default function mcp(knightcode: ExtensionAPI): void {
  let loading: Promise<McpManager> | undefined;
  let manager: McpManager | undefined;
  const load = (): Promise<McpManager> =>
    (loading ??= import("./manager.js").then((m) => {
      manager = m.createMcpManager(knightcode);
      return manager;
    }));

  /** A file entry, a malformed file to report, or an extension's registration: anything for the client to do. */
  const anythingToDo = (ctx: ExtensionContext): boolean => {
    if (knightcode.getMcpServers().length > 0) return true;
    const files = ctx.mcpConfig.servers();
    return files.servers.length > 0 || files.warnings.length > 0;
  };

  knightcode.on("session_start", async (_event, ctx) => {
    if (manager || anythingToDo(ctx)) await (await load()).sessionStart(ctx);
  });
  // Set once the session ends: replacing it (new, fork, switch) disposes the old session's registrations, and the
  // change that reports reaches this instance with a context that no longer works. The next session has its own.
  let ended = false;
  knightcode.on("mcp_servers_change", async (_event, ctx) => {
    if (ended) return;
    if (manager || anythingToDo(ctx)) await (await load()).sync(ctx);
  });
  knightcode.on("before_agent_start", async (_event, ctx) => {
    await manager?.beforeAgentStart(ctx);
    return undefined;
  });
  knightcode.on("session_shutdown", async () => {
    ended = true;
    await manager?.shutdown();
  });

  /** The loaded client, once a server was there to connect (a server name it does not know is an error). */
  const loaded = async (name: string): Promise<Required<McpClient>> => {
    if (loading) await loading;
    if (!manager?.names().includes(name)) throw new Error(`No MCP server named "${name}"`);
    return manager.client;
  };
  // Provided from the start, as a default a replacement client takes over; the methods load nothing themselves:
  // a session that has no server to connect has no client to load.
  knightcode.services.provide(
    mcpClientService,
    (): McpClient => ({
      servers: () => manager?.client.servers() ?? [],
      listTools: async (name) => (await loaded(name)).listTools(name),
      listResources: async (name) => (await loaded(name)).listResources(name),
      readResource: async (name, uri) => (await loaded(name)).readResource(name, uri),
      listPrompts: async (name) => (await loaded(name)).listPrompts(name),
      getPrompt: async (name, prompt, args) => (await loaded(name)).getPrompt(name, prompt, args),
      callTool: async (name, tool, args, signal) => (await loaded(name)).callTool(name, tool, args, signal),
      reconnect: async (name) => (await loaded(name)).reconnect(name),
      setEnabled: async (name, enabled) => (await loaded(name)).setEnabled(name, enabled),
      signIn: async (name, options) => (await loaded(name)).signIn(name, options),
      signOut: async (name) => (await loaded(name)).signOut(name),
    }),
    { fallback: true },
  );
}

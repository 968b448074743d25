/**
 * builtin:mcp — connects MCP servers and offers their tools, written only against the public API, so a user can
 * turn it off (`-builtin:mcp`) and load another MCP client.
 *
 * Servers come from `<agentDir>/mcp.json`, a trusted project's `.knightcode/mcp.json` (it overrides global entries
 * of the same name) and extensions' `registerMcpServer()` (a file entry of the same name wins). They connect when
 * the session starts, in parallel and without holding up the first prompt; each server's tools are registered as
 * `mcp__<server>__<tool>` when it has connected. A call that may reach a server still connecting (a tool declaring
 * `reachesTools`, such as codemode) waits for it in this extension's `tool_call` handler. `/mcp` shows and manages
 * the servers. See docs/mcp.md.
 *
 * This file stays small: the client itself (manager.ts, with the connection code and the MCP SDK behind it) loads
 * only once there is a server to connect, so a session without MCP pays for none of it.
 */
import { type ExtensionAPI, type ExtensionContext, readMcpFiles } from "@knightcodeai/cli/kit";
import type { McpClientApi, McpManager } from "./manager.js";
import { MCP_ACTIONS } from "./names.js";

export type { McpClientApi, McpServerSummary, McpSource } from "./manager.js";
export { DEFAULT_STARTUP_WAIT_MS, promptArguments } from "./manager.js";

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
    const files = readMcpFiles(ctx.agentDir, ctx.cwd, ctx.isProjectTrusted());
    return files.servers.length > 0 || files.warnings.length > 0;
  };

  knightcode.on("session_start", async (_event, ctx) => {
    if (manager || anythingToDo(ctx)) await (await load()).sessionStart(ctx);
  });
  knightcode.on("mcp_servers_change", async (_event, ctx) => {
    if (manager || anythingToDo(ctx)) await (await load()).sync(ctx);
  });
  knightcode.on("before_agent_start", async (_event, ctx) => {
    await manager?.beforeAgentStart(ctx);
    return undefined;
  });
  knightcode.on("session_shutdown", async () => {
    await manager?.shutdown();
  });

  const need = async (name: string) => {
    if (!manager?.names().includes(name)) throw new Error(`No MCP server named "${name}"`);
    return manager.client;
  };
  const client: McpClientApi = {
    servers: () => manager?.client.servers() ?? [],
    listResources: async (name) => (await need(name)).listResources(name),
    readResource: async (name, uri) => (await need(name)).readResource(name, uri),
    listPrompts: async (name) => (await need(name)).listPrompts(name),
    getPrompt: async (name, prompt, args) => (await need(name)).getPrompt(name, prompt, args),
    callTool: async (name, tool, args, signal) => (await need(name)).callTool(name, tool, args, signal),
  };
  // Other extensions reach the servers' resources and prompts through the shared event bus (docs/mcp.md).
  knightcode.events.on("mcp:client", (reply) => {
    if (typeof reply === "function") reply(client);
  });

  knightcode.registerCommand("mcp", {
    description:
      "MCP servers: /mcp lists them, /mcp <name> shows one, /mcp enable|disable|reconnect|login|logout <name>",
    getArgumentCompletions(prefix) {
      const words = [...MCP_ACTIONS, ...(manager?.names() ?? [])];
      return words.filter((w) => w.startsWith(prefix)).map((value) => ({ value }));
    },
    handler: async (args, ctx) => (await load()).command(args, ctx),
  });
}

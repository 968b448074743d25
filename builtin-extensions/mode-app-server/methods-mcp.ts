/**
 * `mcp/*`: the servers of the global `mcp.json` and, for an explicitly trusted project (a saved decision, not a
 * default), its `.knightcode/mcp.json`, through the host face's `mcp(cwd)` (the same files `/mcp` and `knightcode
 * mcp` change). Loaded threads pick the changes up when they next load; connections belong to each thread's MCP
 * client. `mcp/list` adds `status`: the servers of the app-server's own session's MCP client (the kit's
 * `mcpClientService`, from `builtin:mcp` or a replacement) with their state.
 */
import { resolve } from "node:path";
import {
  errorMessage,
  type HostServices,
  type McpConfigAccess,
  type McpServerConfig,
} from "@knightcodeai/cli/kit";
import { installMethods, type MethodRow, method } from "./context.js";
import { invalidParams } from "./errors.js";
import type { AppServer } from "./server.js";

/** The `mcp.json` helpers the handlers share, over the host face. */
function mcpFiles(host: HostServices) {
  /** The host face reads a project's file only for a saved decision to trust it (not a default). */
  const files = (cwd: string | undefined): McpConfigAccess =>
    host.mcp(cwd !== undefined ? resolve(cwd) : undefined);

  /** The files a scope's write goes to; a project write needs cwd and an explicitly trusted project. */
  const writable = (scope: "global" | "project", cwd: string | undefined): McpConfigAccess => {
    if (scope === "global") return files(cwd);
    if (cwd === undefined) throw invalidParams("A project write needs cwd", { reason: "cwd" });
    const dir = resolve(cwd);
    if (host.trust.saved(dir)?.trusted !== true)
      throw invalidParams(`${dir} is not a trusted project`, { reason: "untrusted" });
    return files(dir);
  };

  /** A refusal of the files (a bad entry, a file that does not parse) is the client's to fix. */
  const refusal = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      throw invalidParams(errorMessage(error), { reason: "config" });
    }
  };
  return { files, writable, refusal };
}

/** The `mcp/*` methods, one row each. */
export const mcpMethods: MethodRow[] = [
  method("mcp/list", (ctx, params) => {
    const { files } = mcpFiles(ctx.host);
    const listing = files(params.cwd).list();
    // The live side: the MCP client of the server's own session, whichever extension provides it.
    const client = ctx.mcpClient();
    if (!client) return listing;
    const status = client.servers().map((s) => ({
      name: s.name,
      state: s.state,
      ...(s.transport !== undefined ? { transport: s.transport } : {}),
      tools: s.tools,
      source: s.source,
      ...(s.error !== undefined ? { error: s.error } : {}),
    }));
    return { ...listing, status };
  }),

  method("mcp/update", (ctx, params) => {
    const { files, refusal } = mcpFiles(ctx.host);
    const access = files(params.cwd);
    const entry = access.list().servers.find((s) => s.name === params.name);
    if (!entry) throw invalidParams(`No MCP server named "${params.name}"`, { reason: "name" });
    // Saved where /mcp would: the project's override when there is one, else the defining file.
    const scope = entry.override !== undefined ? "project" : entry.scope;
    const change: Pick<McpServerConfig, "enabled" | "exposure"> = {
      ...(params.enabled !== undefined ? { enabled: params.enabled } : {}),
      ...(params.exposure !== undefined ? { exposure: params.exposure } : {}),
    };
    refusal(() => access.update(scope, params.name, change));
    return { path: entry.override ?? entry.source };
  }),

  method("mcp/add", (ctx, params) => {
    const { writable, refusal } = mcpFiles(ctx.host);
    const access = writable(params.scope, params.cwd);
    return refusal(() => access.add(params.scope, params.name, params.config));
  }),

  method("mcp/remove", (ctx, params) => {
    const { writable, refusal } = mcpFiles(ctx.host);
    const access = writable(params.scope, params.cwd);
    return refusal(() => access.remove(params.scope, params.name));
  }),
];

export function registerMcpMethods(server: AppServer): void {
  installMethods(server, mcpMethods);
}

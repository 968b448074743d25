/**
 * `mcp/*`: the servers of the global `mcp.json` and, for an explicitly trusted project (a saved decision, not a
 * default), its `.knightcode/mcp.json`, through the same file functions `/mcp` and `knightcode mcp` use. Loaded
 * threads pick the changes up when they next load; connections belong to each thread's MCP extension.
 */
import { resolve } from "node:path";
import {
  addMcpServer,
  findSavedDecision,
  listMcpServers,
  mcpFilePaths,
  readTrustDecisions,
  removeMcpServer,
  updateMcpServer,
} from "@knightcodeai/cli/kit";
import { invalidParams } from "./errors.js";
import { requestSpecs as R } from "./protocol.js";
import type { AppServer } from "./server.js";

export function registerMcpMethods(server: AppServer): void {
  const m = server.methods;
  const agentDir = server.options.agentDir;
  const explicitlyTrusted = (cwd: string) =>
    findSavedDecision(readTrustDecisions(agentDir), cwd)?.trusted === true;

  /** The file a scope's write goes to; a project write needs cwd and a trusted project. */
  const fileOf = (scope: "global" | "project", cwd: string | undefined): string => {
    if (scope === "global") return mcpFilePaths(agentDir, cwd ?? agentDir).global;
    if (cwd === undefined) throw invalidParams("A project write needs cwd", { reason: "cwd" });
    const dir = resolve(cwd);
    if (!explicitlyTrusted(dir))
      throw invalidParams(`${dir} is not a trusted project`, { reason: "untrusted" });
    return mcpFilePaths(agentDir, dir).project;
  };

  /** A file function's refusal (a bad entry, a file that does not parse) is the client's to fix. */
  const refusal = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      throw invalidParams(error instanceof Error ? error.message : String(error), { reason: "config" });
    }
  };

  m.register("mcp/list", R["mcp/list"], (params) => {
    const cwd = params.cwd !== undefined ? resolve(params.cwd) : undefined;
    return listMcpServers(agentDir, cwd, cwd !== undefined && explicitlyTrusted(cwd)) as never;
  });

  m.register("mcp/update", R["mcp/update"], (params) => {
    const cwd = params.cwd !== undefined ? resolve(params.cwd) : undefined;
    const listing = listMcpServers(agentDir, cwd, cwd !== undefined && explicitlyTrusted(cwd));
    const entry = listing.servers.find((s) => s.name === params.name);
    if (!entry) throw invalidParams(`No MCP server named "${params.name}"`, { reason: "name" });
    const path = entry.override ?? entry.source;
    const change = {
      ...(params.enabled !== undefined ? { enabled: params.enabled } : {}),
      ...(params.exposure !== undefined ? { exposure: params.exposure } : {}),
    };
    refusal(() => updateMcpServer(path, params.name, change as never));
    return { path };
  });

  m.register("mcp/add", R["mcp/add"], (params) => {
    const file = fileOf(params.scope, params.cwd);
    return refusal(() => addMcpServer(file, params.scope, params.name, params.config));
  });

  m.register("mcp/remove", R["mcp/remove"], (params) => {
    const file = fileOf(params.scope, params.cwd);
    return refusal(() => removeMcpServer(file, params.name));
  });
}

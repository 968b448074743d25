/**
 * The `mcp.json` files of one folder as the host face offers them (`ctx.mcpConfig`, `ModeContext.host.mcp()`): the
 * personal file and, in a trusted folder, the project's. Reading and changing go through `mcp-config.ts` and
 * `mcp-files.ts`, which `knightcode mcp` uses too.
 */
import type { McpConfigAccess, McpConfigScope } from "../../kernel/index.js";
import { KernelError } from "../../kernel/index.js";
import { mcpFilePaths, readMcpFiles, validateMcpEntry } from "./mcp-config.js";
import { addMcpServer, listMcpServers, removeMcpServer, updateMcpServer } from "./mcp-files.js";

export function mcpConfigFiles(options: {
  agentDir: string;
  cwd: string;
  projectTrusted: boolean;
}): McpConfigAccess {
  const { agentDir, cwd, projectTrusted } = options;
  const paths = mcpFilePaths(agentDir, cwd);
  const file = (scope: McpConfigScope): string => {
    if (scope === "global") return paths.global;
    if (!projectTrusted)
      throw new KernelError(
        "KC_ERR_NOT_AVAILABLE",
        `${cwd} is not a trusted project; its mcp.json is not changed`,
      );
    return paths.project;
  };
  return {
    servers: () => readMcpFiles(agentDir, cwd, projectTrusted),
    list: () => listMcpServers(agentDir, cwd, projectTrusted),
    paths: () => ({ ...paths }),
    validate: (name, config, scope) => validateMcpEntry(name, config, scope),
    add: (scope, name, config) => addMcpServer(file(scope), scope, name, config),
    remove: (scope, name) => removeMcpServer(file(scope), name),
    update: (scope, name, change) => updateMcpServer(file(scope), name, change),
  };
}

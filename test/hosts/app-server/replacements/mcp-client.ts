/**
 * A replacement of builtin:mcp's client, written against the published kit only: with `-builtin:mcp` in the
 * settings and this file as an extension, the app-server's `mcp/list` shows its servers and their state.
 */
import { type ExtensionAPI, type McpClient, mcpClientService } from "@knightcodeai/cli/kit";

export function createReplacementMcpClient(): McpClient {
  const refuse = async (): Promise<never> => {
    throw new Error("the replacement MCP client serves no requests");
  };
  return {
    servers: () => [
      {
        name: "replacement-docs",
        state: "connected",
        transport: "http",
        tools: 3,
        source: { kind: "extension", owner: "mcp-client.ts" },
        overrides: [],
        stderr: [],
      },
      {
        name: "replacement-broken",
        state: "failed",
        transport: "stdio",
        tools: 0,
        source: { kind: "file", path: "/nowhere/mcp.json", scope: "global" },
        overrides: [],
        error: "spawn ENOENT",
        stderr: ["not found"],
      },
    ],
    listTools: refuse,
    listResources: refuse,
    readResource: refuse,
    listPrompts: refuse,
    getPrompt: refuse,
    callTool: refuse,
  };
}

export default function (knightcode: ExtensionAPI) {
  knightcode.services.provide(mcpClientService, createReplacementMcpClient);
}

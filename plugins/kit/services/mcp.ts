/**
 * `mcpClientService`: the MCP client of the session, for extensions that read its servers' resources and prompts or
 * call their tools themselves, and for hosts that show the servers' state (the app-server's `mcp/*`, `/mcp`).
 * `builtin:mcp` provides it; an extension that replaces the MCP client provides the same reference.
 */
import { defineService } from "../../../kernel/index.js";

/** Where a server's entry comes from. */
export type McpServerSource =
  | { kind: "file"; path: string; scope: "global" | "project" }
  | { kind: "extension"; owner: string };

/** One server as the client sees it now. */
export interface McpServerSummary {
  name: string;
  /** `connecting`, `connected`, `failed`, `disabled`, `needs-auth`, ... as the client names its states. */
  state: string;
  /** `stdio` or `http`, once known. */
  transport: string | undefined;
  /** Tools the server offers (registered as `mcp__<server>__<tool>`). */
  tools: number;
  source: McpServerSource;
  /** Extensions whose registration of the same name this entry overrides. */
  overrides: string[];
  /** Why it is not connected, when it failed. */
  error?: string;
  /** The last lines the server wrote to stderr (stdio servers). */
  stderr: string[];
}

export interface McpResourceInfo {
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}

export interface McpPromptInfo {
  name: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}

export interface McpClient {
  servers(): McpServerSummary[];
  listResources(server: string): Promise<McpResourceInfo[]>;
  /** The server's answer to `resources/read`, as it sent it. */
  readResource(server: string, uri: string): Promise<unknown>;
  listPrompts(server: string): Promise<McpPromptInfo[]>;
  /** The server's answer to `prompts/get`, as it sent it. */
  getPrompt(server: string, prompt: string, args?: Record<string, string>): Promise<unknown>;
  /** The server's answer to `tools/call`, as it sent it. */
  callTool(
    server: string,
    tool: string,
    args?: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<unknown>;
}

export const mcpClientService = defineService<McpClient>("knightcode.mcpClient", {
  description: "the session's MCP client: servers, their state, resources, prompts and tools",
  providedBy: "builtin:mcp",
});

/**
 * `mcpClientService`: the MCP client of the session, for extensions that read its servers' resources and prompts or
 * call their tools themselves, and for what shows the servers' state (`/mcp`, the app-server's `mcp/*`).
 * `builtin:mcp` provides it; an extension that replaces the MCP client provides the same reference, and `/mcp`
 * (`builtin:mcp-command`) then shows and manages that client's servers.
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
  /** `stdio`, `http` or `sse`, once known. */
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

/** A tool as the server listed it (its own name, not the name the model calls it by). */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
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

/**
 * The methods that take a server name fail with an error naming the server when there is no such server or it is
 * not connected (failed, disabled, needs sign-in); while it is still connecting they wait for it first.
 */
export interface McpClient {
  servers(): McpServerSummary[];
  /** The server's tools as it listed them last. */
  listTools(server: string): Promise<McpToolInfo[]>;
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

  // What `/mcp enable|disable|reconnect|login|logout` ask of the client. Each is optional: `/mcp` says the client
  // cannot do it when it is missing.

  /** Closes the server's connection and connects again; resolves once it connected or failed. */
  reconnect?(server: string): Promise<void>;
  /**
   * Turns a server on or off: saved in the `mcp.json` file that defines it (returned as `savedIn`), or for the
   * session only (a server an extension registered). Resolves once it connected or failed.
   */
  setEnabled?(server: string, enabled: boolean): Promise<{ savedIn?: string }>;
  /**
   * Signs in to an HTTP server: `show` receives the address the person opens in a browser; resolves once signed in
   * and connected again (or failed). Rejects when the server is not an HTTP server.
   */
  signIn?(server: string, options: { show(url: URL): void; signal?: AbortSignal }): Promise<void>;
  /** Forgets the stored sign-in of an HTTP server and connects again; whether there was one. */
  signOut?(server: string): Promise<boolean>;
}

export const mcpClientService = defineService<McpClient>("knightcode.mcpClient", {
  description: "the session's MCP client: servers, their state, resources, prompts and tools",
  providedBy: "builtin:mcp",
});

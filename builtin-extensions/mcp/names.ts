/**
 * Tool names for MCP tools: `mcp__<server>__<tool>`. Model APIs accept `^[A-Za-z0-9_-]{1,64}$` only (OpenAI and
 * Anthropic answer a longer or dotted name with a 400), while MCP allows `.` and `/` and any length. So every other
 * character becomes `_`, and a name past 64 characters keeps a readable prefix plus a hash of the original server
 * and tool names: the same tool gets the same name in every session, and two long names never collide in practice.
 * The call itself uses the server's original name.
 */
import { createHash } from "node:crypto";

export const MAX_TOOL_NAME = 64;
const HASH_CHARS = 8;

/** `mcp__<server>__<tool>`, sanitised and shortened to at most 64 characters. */
export function mcpToolName(server: string, tool: string): string {
  const full = `mcp__${sanitize(server)}__${sanitize(tool)}`;
  if (full.length <= MAX_TOOL_NAME) return full;
  const hash = createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, HASH_CHARS);
  return `${full.slice(0, MAX_TOOL_NAME - HASH_CHARS - 1)}_${hash}`;
}

/** The namespace every tool of a server shares. */
export function mcpNamespace(server: string): string {
  return `mcp__${sanitize(server)}`;
}

/** `/mcp__<server>__<prompt>`: the command name of a server's prompt. */
export function mcpPromptCommand(server: string, prompt: string): string {
  return mcpToolName(server, prompt);
}

function sanitize(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_");
  return cleaned === "" ? "_" : cleaned;
}

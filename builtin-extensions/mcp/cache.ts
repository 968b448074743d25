/**
 * The last tool list of each server, kept in `<agentDir>/mcp-cache.json`, so a session can offer a server's tools
 * from its first request while the server is still connecting: a call to one of them waits for the connection
 * (the tool's own `execute`), and the fresh list replaces the cached one once it arrives. An entry is used only for
 * the same server configuration (a hash of it), and the file holds schemas and descriptions, never secrets.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { type McpServerConfig, readJsonObjectFile, writeFileAtomic } from "@knightcodeai/cli/kit";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

interface CachedServer {
  key: string;
  tools: Tool[];
  instructions?: string;
}

export class ToolListCache {
  private readonly file: string;

  constructor(agentDir: string) {
    this.file = join(agentDir, "mcp-cache.json");
  }

  get(name: string, config: McpServerConfig): { tools: Tool[]; instructions?: string } | undefined {
    const read = readJsonObjectFile(this.file);
    if (read.status !== "ok") return undefined;
    const entry = read.value[name] as CachedServer | undefined;
    if (!entry || entry.key !== keyOf(config) || !Array.isArray(entry.tools)) return undefined;
    return { tools: entry.tools, ...(entry.instructions ? { instructions: entry.instructions } : {}) };
  }

  /** Best effort: a cache that cannot be written only costs the next session its head start. */
  set(name: string, config: McpServerConfig, tools: Tool[], instructions: string | undefined): void {
    try {
      const read = readJsonObjectFile(this.file);
      const all = read.status === "ok" ? read.value : {};
      const entry: CachedServer = { key: keyOf(config), tools, ...(instructions ? { instructions } : {}) };
      if (JSON.stringify(all[name]) === JSON.stringify(entry)) return;
      all[name] = entry;
      writeFileAtomic(this.file, `${JSON.stringify(all)}\n`);
    } catch {
      // Read-only agent dir, full disk: the next session connects without the cached list.
    }
  }
}

function keyOf(config: McpServerConfig): string {
  const { enabled: _enabled, ...rest } = config;
  return createHash("sha256").update(JSON.stringify(rest)).digest("hex").slice(0, 16);
}

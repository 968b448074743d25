/**
 * Changing mcp.json: what `/mcp`, `knightcode mcp add|remove|list` and the app-server's `mcp/*` methods share.
 * Every change reads the file again, changes one entry and writes the file back atomically, so an edit of another
 * entry made meanwhile is kept and a crash leaves the old file or the new one. A file that cannot be parsed is
 * never overwritten: the change fails with the file's own error. Listings show entries as written: `${VAR}`
 * references stay unexpanded, so a listing never prints a secret from the environment.
 */
import type { McpListing, McpServerConfig, McpServerListing } from "../../kernel/api/index.js";
import { writeFileAtomic } from "../kit/files/atomic-write.js";
import { isPlainObject, type JsonObject, readJsonObjectFile } from "../kit/files/json-file.js";
import { type McpScope, mcpFilePaths, readMcpFile, validateMcpEntry } from "./mcp-config.js";

export type { McpListing, McpServerListing };

/** The servers of the global file and, when `projectTrusted`, the project file, with overrides marked. */
export function listMcpServers(
  agentDir: string,
  cwd: string | undefined,
  projectTrusted: boolean,
): McpListing {
  const paths = mcpFilePaths(agentDir, cwd ?? ".");
  const errors: string[] = [];
  const global = readMcpFile(paths.global, "global", errors, false);
  const project = cwd && projectTrusted ? readMcpFile(paths.project, "project", errors, false) : [];
  const projectNames = new Set(project.map((s) => s.name));
  const describe = (entry: (typeof global)[number], override?: string): McpServerListing => ({
    name: entry.name,
    scope: entry.scope,
    source: entry.path,
    ...(override ? { override } : {}),
    transport: entry.config.url ? "http" : "stdio",
    target: entry.config.url ?? [entry.config.command ?? "", ...(entry.config.args ?? [])].join(" "),
    ...(entry.config.description ? { description: entry.config.description } : {}),
    enabled: entry.config.enabled !== false,
    ...(entry.config.exposure ? { exposure: entry.config.exposure } : {}),
  });
  return {
    servers: [
      ...global.map((g) => describe(g, projectNames.has(g.name) ? paths.project : undefined)),
      ...project.map((p) => describe(p)),
    ],
    errors,
    paths: { global: paths.global, ...(cwd && projectTrusted ? { project: paths.project } : {}) },
  };
}

/** Adds or replaces one entry after validating it; `replaced` says whether the name existed. */
export function addMcpServer(
  file: string,
  scope: McpScope,
  name: string,
  config: unknown,
): { replaced: boolean } {
  const problem = validateMcpEntry(name, config, scope);
  if (problem) throw new Error(`server "${name}": ${problem}`);
  let replaced = false;
  edit(file, true, (servers) => {
    replaced = Object.hasOwn(servers, name);
    servers[name] = config as JsonObject;
  });
  return { replaced };
}

/** Removes one entry; `removed` is false when it was not there (a missing file included). */
export function removeMcpServer(file: string, name: string): { removed: boolean } {
  let removed = false;
  edit(file, false, (servers) => {
    removed = Object.hasOwn(servers, name);
    delete servers[name];
  });
  return { removed };
}

/** Sets `enabled` and/or `exposure` of one existing entry. */
export function updateMcpServer(
  file: string,
  name: string,
  change: Pick<McpServerConfig, "enabled" | "exposure">,
): void {
  edit(file, false, (servers) => {
    const entry = servers[name];
    if (!isPlainObject(entry)) throw new Error(`${file} has no server "${name}"`);
    const next = { ...entry, ...change };
    const problem = validateMcpEntry(name, next, "global");
    if (problem) throw new Error(`server "${name}": ${problem}`);
    servers[name] = next;
  });
}

function edit(file: string, create: boolean, change: (servers: Record<string, unknown>) => void): void {
  const read = readJsonObjectFile(file);
  if (read.status === "invalid") throw new Error(read.message);
  if (read.status === "missing" && !create) {
    change({});
    return;
  }
  const data: JsonObject = read.status === "ok" ? read.value : {};
  if (data.mcpServers !== undefined && !isPlainObject(data.mcpServers)) {
    throw new Error(`${file}: "mcpServers" must be an object`);
  }
  const servers = (data.mcpServers as JsonObject | undefined) ?? {};
  const before = JSON.stringify(servers);
  change(servers);
  if (JSON.stringify(servers) === before && read.status === "ok") return;
  data.mcpServers = servers;
  writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`);
}

/**
 * Reading `mcp.json` (exported by the kit, so the MCP built-in, the CLI's `knightcode mcp` and the app-server share one file
 * model): the agent directory's file and, for a trusted project, `.knightcode/mcp.json`, in the shape
 * other MCP clients use (`{"mcpServers": {"<name>": {...}}}`). Every problem is a warning naming the file, the
 * server and what is wrong; the other servers still load. Strings expand `${VAR}` and `${VAR:-default}` from the
 * environment, so a checked-in project file can keep its secrets out.
 */
import { join } from "node:path";
import type { McpServerConfig } from "../../kernel/api/index.js";
import { readJsonObjectFile } from "../kit/files/json-file.js";

export type McpScope = "global" | "project";

export interface McpFileServer {
  name: string;
  config: McpServerConfig;
  /** The file the entry came from. */
  path: string;
  scope: McpScope;
}

export interface McpFileResult {
  servers: McpFileServer[];
  warnings: string[];
}

const SERVER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;
const EXPOSURES = new Set(["direct", "model-only", "codemode", "deferred", "hidden"]);

/** Where the two files live. */
export function mcpFilePaths(agentDir: string, cwd: string): { global: string; project: string } {
  return { global: join(agentDir, "mcp.json"), project: join(cwd, ".knightcode", "mcp.json") };
}

/**
 * Reads both files; the project file only when `projectTrusted`. A project entry replaces a global one of the same
 * name. A missing file is not a problem.
 */
export function readMcpFiles(
  agentDir: string,
  cwd: string,
  projectTrusted: boolean,
  env: NodeJS.ProcessEnv = process.env,
): McpFileResult {
  const paths = mcpFilePaths(agentDir, cwd);
  const warnings: string[] = [];
  const byName = new Map<string, McpFileServer>();
  const files: [string, McpScope][] = [[paths.global, "global"]];
  if (projectTrusted) files.push([paths.project, "project"]);
  for (const [path, scope] of files) {
    for (const server of readMcpFile(path, scope, warnings, env)) byName.set(server.name, server);
  }
  return { servers: [...byName.values()], warnings };
}

/** One file's valid entries; problems go to `warnings`. */
export function readMcpFile(
  path: string,
  scope: McpScope,
  warnings: string[],
  /** The variables `${VAR}` expands from; `false` keeps the entries as written (listings never show secrets). */
  env: NodeJS.ProcessEnv | false = process.env,
): McpFileServer[] {
  const read = readJsonObjectFile(path);
  if (read.status === "missing") return [];
  if (read.status === "invalid") {
    warnings.push(read.message);
    return [];
  }
  const data = read.value;
  if (!isRecord(data.mcpServers)) {
    warnings.push(`${path}: expected an "mcpServers" object at the top level`);
    return [];
  }
  const servers: McpFileServer[] = [];
  for (const [name, entry] of Object.entries(data.mcpServers)) {
    const problem = validateMcpEntry(name, entry, scope);
    if (problem) {
      warnings.push(`${path}: server "${name}": ${problem}`);
      continue;
    }
    if (env === false) {
      servers.push({ name, config: entry as McpServerConfig, path, scope });
      continue;
    }
    const unset: string[] = [];
    const config = expandStrings(entry, env, unset) as McpServerConfig;
    if (unset.length > 0) {
      warnings.push(
        `${path}: server "${name}": ${[...new Set(unset)].map((v) => `\${${v}}`).join(", ")} is not set and has no default; it expands to an empty string`,
      );
    }
    servers.push({ name, config, path, scope });
  }
  return servers;
}

/** The first problem of one entry, or undefined. Also used for `registerMcpServer` configs. */
export function validateMcpEntry(
  name: string,
  entry: unknown,
  scope: McpScope | "extension",
): string | undefined {
  if (!SERVER_NAME.test(name)) {
    return "the name must be 1-64 letters, digits, '_' or '-', starting with a letter or digit";
  }
  if (!isRecord(entry)) return "the entry must be an object";
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand === hasUrl) return 'needs exactly one of "command" (stdio) or "url" (HTTP)';
  if (hasCommand && (typeof entry.command !== "string" || entry.command === "")) {
    return '"command" must be a non-empty string';
  }
  if (hasUrl) {
    if (typeof entry.url !== "string") return '"url" must be a string';
    if (!/^https?:\/\//i.test(entry.url) && !entry.url.includes("${")) {
      return `"url" must start with http:// or https:// (got ${JSON.stringify(entry.url)})`;
    }
  }
  if (
    entry.args !== undefined &&
    !(Array.isArray(entry.args) && entry.args.every((a) => typeof a === "string"))
  ) {
    return '"args" must be an array of strings';
  }
  for (const key of ["env", "headers"] as const) {
    const value = entry[key];
    if (
      value !== undefined &&
      !(isRecord(value) && Object.values(value).every((v) => typeof v === "string"))
    ) {
      return `"${key}" must be an object of strings`;
    }
  }
  if (entry.cwd !== undefined && typeof entry.cwd !== "string") return '"cwd" must be a string';
  if (entry.description !== undefined && typeof entry.description !== "string") {
    return '"description" must be a string';
  }
  if (entry.enabled !== undefined && typeof entry.enabled !== "boolean")
    return '"enabled" must be true or false';
  if (
    entry.timeout !== undefined &&
    !(typeof entry.timeout === "number" && Number.isFinite(entry.timeout) && entry.timeout > 0)
  ) {
    return '"timeout" must be a positive number of milliseconds';
  }
  if (entry.exposure !== undefined && !EXPOSURES.has(entry.exposure as string)) {
    return `"exposure" must be one of ${[...EXPOSURES].join(", ")}`;
  }
  if (entry.toolExposure !== undefined) {
    if (!isRecord(entry.toolExposure)) return '"toolExposure" must be an object';
    for (const [tool, exposure] of Object.entries(entry.toolExposure)) {
      if (!EXPOSURES.has(exposure as string)) {
        return `"toolExposure.${tool}" must be one of ${[...EXPOSURES].join(", ")}`;
      }
    }
  }
  if (entry.oauth !== undefined && !isRecord(entry.oauth) && entry.oauth !== false) {
    return '"oauth" must be an object or false';
  }
  // A checked-in file must not carry credentials for everyone who clones the project (app-server.md, mcp/add).
  if (scope === "project" && entry.auth !== undefined) {
    return '"auth" is not allowed in a project mcp.json; sign in with /mcp login instead';
  }
  return undefined;
}

/** `${VAR}` and `${VAR:-default}` in every string of a value; names of unset variables without a default go to `unset`. */
export function expandStrings(value: unknown, env: NodeJS.ProcessEnv, unset: string[]): unknown {
  if (typeof value === "string") {
    return value.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
      (_m, name: string, fallback?: string) => {
        const found = env[name];
        if (found !== undefined && found !== "") return found;
        if (fallback !== undefined) return fallback;
        unset.push(name);
        return "";
      },
    );
  }
  if (Array.isArray(value)) return value.map((v) => expandStrings(v, env, unset));
  if (isRecord(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandStrings(v, env, unset)]));
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** `$KNIGHTCODE_AGENT_DIR`, or `~/.knightcode/agent`. Tests point the variable at a temp dir. */
export function resolveAgentDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.KNIGHTCODE_AGENT_DIR;
  return fromEnv ? resolve(fromEnv) : join(homedir(), ".knightcode", "agent");
}

/**
 * The folder of the compiled-code caches (the command's V8 cache in `v8/`, compiled TypeScript extensions in
 * `jiti/`): `$KNIGHTCODE_CODE_CACHE_DIR`, or `<agentDir>/cache`. The command's bundle loader (hosts/cli/agent-dir.ts)
 * applies the same rule.
 */
export function codeCacheDir(agentDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.KNIGHTCODE_CODE_CACHE_DIR;
  return fromEnv ? resolve(fromEnv) : join(agentDir, "cache");
}

/** Where the extension loader keeps its transform cache. */
export function extensionCacheDir(agentDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(codeCacheDir(agentDir, env), "jiti");
}

/** The folder inside a project that holds its KnightCode configuration and resources. */
export const PROJECT_CONFIG_DIR = ".knightcode";

/** `<cwd>/.knightcode`. */
export function projectConfigDir(cwd: string): string {
  return join(resolve(cwd), PROJECT_CONFIG_DIR);
}

/** `<agentDir>/settings.json`: the user's settings. */
export function globalSettingsPath(agentDir: string): string {
  return join(resolve(agentDir), "settings.json");
}

/** `<cwd>/.knightcode/settings.json`: the project's settings (read only in a trusted project). */
export function projectSettingsPath(cwd: string): string {
  return join(projectConfigDir(cwd), "settings.json");
}

/** `<agentDir>/trust.json`: remembered project trust decisions. */
export function trustFilePath(agentDir: string): string {
  return join(resolve(agentDir), "trust.json");
}

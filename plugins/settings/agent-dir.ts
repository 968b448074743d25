import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** `$KNIGHTCODE_AGENT_DIR`, or `~/.knightcode/agent`. Tests point the variable at a temp dir. */
export function resolveAgentDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.KNIGHTCODE_AGENT_DIR;
  return fromEnv ? resolve(fromEnv) : join(homedir(), ".knightcode", "agent");
}

/** Where the extension loader keeps its transform cache. */
export function extensionCacheDir(agentDir: string): string {
  return join(agentDir, "cache", "jiti");
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

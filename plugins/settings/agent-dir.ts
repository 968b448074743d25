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

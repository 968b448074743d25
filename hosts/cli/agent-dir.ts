/**
 * The agent folder as the CLI sees it before it loads anything: `$KNIGHTCODE_AGENT_DIR`, or `~/.knightcode/agent`,
 * and the folder of its compiled-code caches. The same rules as the settings service's `resolveAgentDir` and
 * `codeCacheDir` (a test holds them equal), repeated here because `--help` and the bundle loader run before the
 * package (and the services behind it) is loaded.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export function cliAgentDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.KNIGHTCODE_AGENT_DIR
    ? resolve(env.KNIGHTCODE_AGENT_DIR)
    : join(homedir(), ".knightcode", "agent");
}

/** `$KNIGHTCODE_CODE_CACHE_DIR`, or `<agentDir>/cache`. */
export function cliCodeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.KNIGHTCODE_CODE_CACHE_DIR
    ? resolve(env.KNIGHTCODE_CODE_CACHE_DIR)
    : join(cliAgentDir(env), "cache");
}

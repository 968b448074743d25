/**
 * The environment of processes started for tools (`bash`, `!cmd`/RPC `bash`, `knightcode.exec()`): KnightCode's
 * own, minus variables whose names say they hold a secret, so a command the model runs (or a script it reads and
 * runs) does not see provider keys and tokens it has no use for.
 *
 * A name is left out when it matches a default pattern (`DEFAULT_SECRET_PATTERNS`) or an `exclude` pattern, unless
 * it matches an `include` pattern; a name both included and excluded is left out. Patterns match the whole name,
 * ignoring case; `*` stands for any run of characters, `?` for one. `include: ["*"]` turns the defaults off.
 */
import { globToRegExp } from "../resource-patterns.js";

/** The `shellEnv` settings. */
export interface ShellEnvPolicy {
  /** Names or patterns passed on although a default pattern matches them (e.g. `GITHUB_TOKEN` for `gh`). */
  include?: readonly string[];
  /** More names or patterns to leave out (e.g. `AWS_*`). Wins over `include`. */
  exclude?: readonly string[];
}

/** Names ending in `_KEY`, `_TOKEN`, `_SECRET`, or containing `PASSWORD` (any case). */
export const DEFAULT_SECRET_PATTERNS: readonly string[] = ["*_KEY", "*_TOKEN", "*_SECRET", "*PASSWORD*"];

/** A whole-name, case-insensitive matcher for glob patterns (`*`, `?`; names hold no `/`, so the kit's glob fits). */
function matcher(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => false;
  const regex = new RegExp(patterns.map((p) => `(?:${globToRegExp(p).source})`).join("|"), "is");
  return (name) => regex.test(name);
}

/** `env` (default `process.env`) as the policy leaves it for a tool's process: a new object, `env` untouched. */
export function toolEnvironment(
  env: NodeJS.ProcessEnv = process.env,
  policy: ShellEnvPolicy = {},
): NodeJS.ProcessEnv {
  const secret = matcher(DEFAULT_SECRET_PATTERNS);
  const included = matcher(policy.include ?? []);
  const excluded = matcher(policy.exclude ?? []);
  const result: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || excluded(name) || (secret(name) && !included(name))) continue;
    result[name] = value;
  }
  return result;
}

/**
 * `env` as the complete environment for `runShellCommand`, whose `env` is merged over `process.env`: a variable of
 * `process.env` that `env` lacks is passed as `undefined`, which keeps it out.
 */
export function exactEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const removed = Object.keys(process.env).filter((key) => !(key in env));
  return { ...Object.fromEntries(removed.map((key) => [key, undefined])), ...env };
}

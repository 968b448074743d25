/**
 * Worktree environments: `.knightcode/environments.json` in the project names scripts that prepare a new worktree
 * (`setup`, e.g. install dependencies) or tidy one before it goes (`cleanup`). They run only in a trusted
 * project, through the user's shell, in the worktree, with `KNIGHTCODE_WORKTREE_PATH` set to it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Environment,
  type EnvironmentScript,
  type RunScriptOptions,
  runShellCommand,
  type ScriptPhase,
  type ScriptRun,
  writeFileAtomic,
} from "@knightcodeai/cli/kit";
import { invalidParams } from "./errors.js";

export type { Environment, EnvironmentScript, RunScriptOptions, ScriptPhase, ScriptRun };

export const MAX_ENVIRONMENTS = 50;
const PLATFORMS = ["default", "linux", "darwin", "win32"] as const;

export function environmentsPath(projectCwd: string): string {
  return join(projectCwd, ".knightcode", "environments.json");
}

function checkScript(value: unknown, where: string): EnvironmentScript {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidParams(`${where} must be an object of scripts by platform (default, linux, darwin, win32)`);
  }
  const script: EnvironmentScript = {};
  for (const [key, text] of Object.entries(value)) {
    if (!(PLATFORMS as readonly string[]).includes(key))
      throw invalidParams(`${where}.${key} is not a platform (${PLATFORMS.join(", ")})`);
    if (typeof text !== "string") throw invalidParams(`${where}.${key} must be a string`);
    script[key as (typeof PLATFORMS)[number]] = text;
  }
  return script;
}

/** Checks a list of environments: objects with a unique non-empty `name`, at most 50. */
export function validateEnvironments(value: unknown): Environment[] {
  if (!Array.isArray(value)) throw invalidParams("`environments` must be an array");
  if (value.length > MAX_ENVIRONMENTS) throw invalidParams(`at most ${MAX_ENVIRONMENTS} environments`);
  const names = new Set<string>();
  return value.map((item, index) => {
    const where = `environments[${index}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw invalidParams(`${where} must be an object`);
    const { name, setup, cleanup } = item as Record<string, unknown>;
    if (typeof name !== "string" || name.trim() === "")
      throw invalidParams(`${where}.name must be a non-empty string`);
    if (names.has(name)) throw invalidParams(`environment names must be unique; "${name}" repeats`);
    names.add(name);
    const environment: Environment = { name };
    if (setup !== undefined) environment.setup = checkScript(setup, `${where}.setup`);
    if (cleanup !== undefined) environment.cleanup = checkScript(cleanup, `${where}.cleanup`);
    return environment;
  });
}

/**
 * `environment/list`: the project's environments and whether it is trusted. The file is read in an untrusted
 * project too (so a client can show it), but its scripts never run there.
 */
export function listEnvironments(
  projectCwd: string,
  trusted: boolean,
): { environments: Environment[]; trusted: boolean } {
  const file = environmentsPath(projectCwd);
  if (!existsSync(file)) return { environments: [], trusted };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw invalidParams(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  const list = (parsed as { environments?: unknown } | null)?.environments;
  return { environments: validateEnvironments(list ?? []), trusted };
}

/** `environment/save`: writes the project's `.knightcode/environments.json` as `{"environments": [...]}`. */
export function saveEnvironments(projectCwd: string, environments: unknown): Environment[] {
  const checked = validateEnvironments(environments);
  writeFileAtomic(environmentsPath(projectCwd), `${JSON.stringify({ environments: checked }, null, 2)}\n`);
  return checked;
}

/** Runs an environment's setup or cleanup script in the worktree; never in an untrusted project. */
export async function runEnvironmentScript(
  environment: Environment,
  phase: ScriptPhase,
  options: RunScriptOptions,
): Promise<ScriptRun> {
  const scripts = environment[phase];
  const platform = options.platform ?? process.platform;
  const command = scripts?.[platform as keyof EnvironmentScript] ?? scripts?.default;
  if (!command) return { phase, skipped: "noScript" };
  if (!options.trusted) return { phase, skipped: "untrusted" };
  const result = await runShellCommand(command, {
    cwd: options.worktreePath,
    env: { KNIGHTCODE_WORKTREE_PATH: options.worktreePath },
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    onData: (chunk) => options.onOutput?.(phase, chunk),
  });
  return { phase, exitCode: result.exitCode, output: result.output };
}

/** The environment named `name` in the project, or `invalidParams`. */
export function findEnvironment(projectCwd: string, name: string): Environment {
  const found = listEnvironments(projectCwd, false).environments.find((e) => e.name === name);
  if (!found) throw invalidParams(`no environment "${name}" in ${environmentsPath(projectCwd)}`);
  return found;
}

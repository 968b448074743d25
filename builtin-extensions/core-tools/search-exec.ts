/**
 * Which engine a grep or find call uses, decided per call, and how native tools are run.
 *
 * grep uses ripgrep (`rg`) when it is on PATH; find uses fd (`fd`, or `fdfind` as Debian names it) when it can
 * apply .gitignore files the way ripgrep does (fd 8.7+ has `--no-require-git`; an older fd only honours them
 * inside a git repository, so it is used only there), else `rg --files`; otherwise both run in process
 * (search-walk.ts) with the same results. Nothing is downloaded.
 *
 * KNIGHTCODE_NO_NATIVE_SEARCH, read at every call: `1` (or `true`, `all`) turns off rg and fd, so the in-process
 * search runs; a comma-separated list such as `fd` or `rg,fd` turns off only the tools named. Tests use it to run
 * both paths on one machine.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { AbortedError } from "./search-walk.js";

export const NO_NATIVE_SEARCH_ENV = "KNIGHTCODE_NO_NATIVE_SEARCH";

export type NativeTool = "rg" | "fd";

/** Whether KNIGHTCODE_NO_NATIVE_SEARCH turns off this native tool (read now, not at load time). */
export function nativeDisabled(tool: NativeTool, env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[NO_NATIVE_SEARCH_ENV]?.trim().toLowerCase();
  if (!value || value === "0" || value === "false") return false;
  if (value === "1" || value === "true" || value === "all" || value === "yes") return true;
  return value.split(",").some((part) => part.trim() === tool);
}

const found = new Map<string, string | undefined>();

/** The first of `names` that is an executable file in a PATH folder. */
export function findExecutable(
  names: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const path = env.PATH ?? env.Path ?? "";
  const key = `${names.join(",")}\0${path}`;
  if (found.has(key)) return found.get(key);
  const exts = process.platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  let result: string | undefined;
  search: for (const name of names) {
    for (const dir of path.split(delimiter)) {
      if (!dir) continue;
      for (const ext of exts) {
        const candidate = join(dir, name + ext);
        try {
          accessSync(candidate, constants.X_OK);
          result = candidate;
          break search;
        } catch {}
      }
    }
  }
  found.set(key, result);
  return result;
}

export type GrepEngine = { kind: "ripgrep"; bin: string } | { kind: "builtin" };
export type FindEngine =
  | { kind: "fd"; bin: string; noRequireGit: boolean }
  | { kind: "ripgrep"; bin: string }
  | { kind: "builtin" };

export function chooseGrepEngine(): GrepEngine {
  const rg = nativeDisabled("rg") ? undefined : findExecutable(["rg"]);
  return rg ? { kind: "ripgrep", bin: rg } : { kind: "builtin" };
}

const fdFlags = new Map<string, Promise<boolean>>();

/** Whether this fd knows `--no-require-git` (asked once per binary, from its help text). */
export function fdSupportsNoRequireGit(bin: string): Promise<boolean> {
  let answer = fdFlags.get(bin);
  if (!answer) {
    answer = import("execa")
      .then(({ execa }) => execa(bin, ["--help"], { reject: false, stdin: "ignore", timeout: 5000 }))
      .then(
        (r) => typeof r.stdout === "string" && r.stdout.includes("--no-require-git"),
        () => false,
      );
    fdFlags.set(bin, answer);
  }
  return answer;
}

/** Whether `dir` or one of its parents has a `.git` entry. */
export function insideGitRepository(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return true;
    if (dirname(d) === d) return false;
  }
}

export async function chooseFindEngine(root: string): Promise<FindEngine> {
  const fd = nativeDisabled("fd") ? undefined : findExecutable(["fd", "fdfind"]);
  if (fd) {
    const noRequireGit = await fdSupportsNoRequireGit(fd);
    if (noRequireGit || insideGitRepository(root)) return { kind: "fd", bin: fd, noRequireGit };
  }
  const grep = chooseGrepEngine();
  return grep.kind === "ripgrep" ? grep : { kind: "builtin" };
}

export interface StreamResult {
  exitCode?: number;
  stderr: string;
  /** `onLine` asked to stop and the process was killed. */
  stopped: boolean;
  /** The process could not be started (the caller falls back to the in-process search). */
  failedToStart: boolean;
}

/**
 * Runs a native tool and hands each stdout line (bytes, without the newline) to `onLine` until it returns false;
 * then the process is killed. Aborting `signal` kills it too and rejects with AbortedError.
 */
export async function streamLines(
  bin: string,
  args: readonly string[],
  options: { cwd: string; signal?: AbortSignal | undefined; onLine: (line: Buffer) => boolean },
): Promise<StreamResult> {
  if (options.signal?.aborted) throw new AbortedError();
  // Loaded on first use, so starting a session does not pay for it.
  const { execa } = await import("execa");
  if (options.signal?.aborted) throw new AbortedError();
  const subprocess = execa(bin, args, {
    cwd: options.cwd,
    stdin: "ignore",
    buffer: { stdout: false, stderr: true },
    reject: false,
    forceKillAfterDelay: 2000,
    ...(options.signal ? { cancelSignal: options.signal } : {}),
  });
  let stopped = false;
  let carry: Buffer = Buffer.alloc(0);
  const stdout = subprocess.stdout;
  stdout?.on("data", (chunk: Buffer | string) => {
    if (stopped) return;
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    const data = carry.length > 0 ? Buffer.concat([carry, bytes]) : bytes;
    let from = 0;
    for (let nl = data.indexOf(10, from); nl >= 0; nl = data.indexOf(10, from)) {
      const line = data.subarray(from, nl);
      from = nl + 1;
      if (!options.onLine(line)) {
        stopped = true;
        subprocess.kill();
        return;
      }
    }
    carry = Buffer.from(data.subarray(from));
  });
  const result = await subprocess;
  if (options.signal?.aborted) throw new AbortedError();
  if (!stopped && carry.length > 0) options.onLine(carry);
  const failedToStart =
    result.failed && result.exitCode === undefined && !result.isTerminated && !result.isCanceled && !stopped;
  return {
    ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
    stderr: typeof result.stderr === "string" ? result.stderr : "",
    stopped,
    failedToStart,
  };
}

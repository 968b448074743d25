/**
 * The one way the git services run git: `child_process.spawn("git", args)` with no shell, a fixed environment and
 * bounded output. simple-git is not used because its guards refuse `-c core.hooksPath` (see
 * docs/worktrees.md); the wrapper is small enough to own.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { GitServiceError } from "./errors.js";

/** Output past this many bytes kills git and fails the call, so a runaway diff cannot exhaust memory. */
export const GIT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/** The identity plumbing commits (snapshots) are written with, so they work without the user's config. */
export const SNAPSHOT_IDENTITY = { name: "KnightCode", email: "knightcode@localhost" } as const;

export interface GitRunOptions {
  cwd: string;
  /** Merged over the base environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  input?: string | Buffer;
  /** Exit codes that are answers, not failures (`diff --quiet` answers 1). */
  okCodes?: readonly number[];
  maxBytes?: number;
  /**
   * A read: `GIT_OPTIONAL_LOCKS=0`, so a status or diff never takes `index.lock` under a running turn or
   * refreshes the user's index.
   */
  read?: boolean;
  /** Points `core.hooksPath` at /dev/null: the repository's hooks do not run. */
  noHooks?: boolean;
  /** Commits as the KnightCode identity instead of the user's. */
  identity?: boolean;
  signal?: AbortSignal;
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** git exited with a code the caller did not expect. Carries what a reader needs to see why. */
export class GitCommandError extends Error {
  readonly args: readonly string[];
  readonly exitCode: number;
  readonly stderr: string;
  readonly cwd: string;
  constructor(args: readonly string[], cwd: string, exitCode: number, stderr: string) {
    const first = stderr.trim().split("\n")[0] ?? "";
    super(`git ${args.join(" ")} failed (exit ${exitCode})${first ? `: ${first}` : ""}`);
    this.name = "GitCommandError";
    this.args = args;
    this.exitCode = exitCode;
    this.stderr = stderr;
    this.cwd = cwd;
  }
}

/** git wrote more than `maxBytes`; it was killed. */
export class GitOutputTooLargeError extends GitCommandError {
  constructor(args: readonly string[], cwd: string, maxBytes: number) {
    super(args, cwd, -1, `output exceeded ${maxBytes} bytes`);
    this.name = "GitOutputTooLargeError";
  }
}

/**
 * The environment of every call: no prompt for credentials, no pager, no editor, C locale (stable messages to
 * match on), and none of the variables that would point git at another repository or index than `cwd`'s.
 */
function baseEnv(options: GitRunOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
  ]) {
    delete env[name];
  }
  Object.assign(env, {
    GIT_TERMINAL_PROMPT: "0",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_EDITOR: ":",
    LC_ALL: "C",
    LANGUAGE: "C",
  });
  if (options.read) env.GIT_OPTIONAL_LOCKS = "0";
  if (options.identity) {
    env.GIT_AUTHOR_NAME = SNAPSHOT_IDENTITY.name;
    env.GIT_AUTHOR_EMAIL = SNAPSHOT_IDENTITY.email;
    env.GIT_COMMITTER_NAME = SNAPSHOT_IDENTITY.name;
    env.GIT_COMMITTER_EMAIL = SNAPSHOT_IDENTITY.email;
  }
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** Runs `git <args>` in `cwd`. Rejects with `GitCommandError` on an unexpected exit code. */
export function runGit(args: readonly string[], options: GitRunOptions): Promise<GitResult> {
  const fullArgs = [
    "-c",
    "core.quotePath=false",
    ...(options.noHooks ? ["-c", "core.hooksPath=/dev/null"] : []),
    ...args,
  ];
  const maxBytes = options.maxBytes ?? GIT_MAX_OUTPUT_BYTES;
  return new Promise((resolve, reject) => {
    const child = spawn("git", fullArgs, {
      cwd: options.cwd,
      env: baseEnv(options),
      stdio: ["pipe", "pipe", "pipe"],
      signal: options.signal,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let tooLarge = false;
    child.stdout.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxBytes) {
        if (!tooLarge) child.kill("SIGKILL");
        tooLarge = true;
        return;
      }
      out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      // stderr is for messages; keep the first 64 KB of it.
      if (errBytes < 65536) err.push(chunk);
      errBytes += chunk.length;
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") reject(error);
      // spawn says ENOENT for a missing cwd as well as for a missing git.
      else if (!existsSync(options.cwd))
        reject(new GitCommandError(args, options.cwd, -1, `no such folder: ${options.cwd}`));
      else reject(new GitServiceError("toolMissing", "git is not installed or not on PATH"));
    });
    child.on("close", (code) => {
      if (tooLarge) return reject(new GitOutputTooLargeError(args, options.cwd, maxBytes));
      const stderr = Buffer.concat(err).toString("utf8");
      const exitCode = code ?? -1;
      if (exitCode !== 0 && !(options.okCodes ?? []).includes(exitCode)) {
        return reject(new GitCommandError(args, options.cwd, exitCode, stderr));
      }
      resolve({ stdout: Buffer.concat(out), stderr, code: exitCode });
    });
    // A git that exits before reading its input closes the pipe; the exit code tells the story, not EPIPE.
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
  });
}

/** `runGit`, returning stdout as text without its trailing newline. */
export async function gitText(args: readonly string[], options: GitRunOptions): Promise<string> {
  const result = await runGit(args, options);
  return result.stdout.toString("utf8").replace(/\n$/, "");
}

/** Splits NUL-separated output (`-z`), dropping the empty tail. */
export function splitNul(buffer: Buffer | string): string[] {
  const text = typeof buffer === "string" ? buffer : buffer.toString("utf8");
  const parts = text.split("\0");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * Commands run to their end with their output collected (any command, a repository script), and process checks for
 * tests that kill commands (is a pid alive, wait until it is gone, wait for a pid file).
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** What a finished process printed, and its exit code (null when a signal ended it). */
export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` to its end, collecting what it prints. Its stdin is a pipe carrying `stdin` (nothing by default),
 * then closed, or the file `stdinFile` (`< file`). Fails, with what it wrote to stderr, when it has not finished
 * after `timeoutMs` (it is killed); `what` names it in that error.
 */
export function runProcess(
  command: string,
  args: string[],
  options: {
    cwd: string;
    env?: NodeJS.ProcessEnv;
    stdin?: string;
    stdinFile?: string;
    timeoutMs?: number;
    what?: string;
  },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const input = options.stdinFile !== undefined ? openSync(options.stdinFile, "r") : "pipe";
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [input, "pipe", "pipe"],
    });
    if (typeof input === "number") closeSync(input);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d) => {
      stdout += d;
    });
    child.stderr!.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${options.what ?? command} did not finish in time\n${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(options.stdin ?? "");
  });
}

/**
 * Runs `scripts/<name>` through tsx from the repository root, with its stdout and stderr together; fails when it
 * has not finished after `ms`.
 */
export async function runScript(
  name: string,
  args: string[],
  ms = 50_000,
): Promise<{ code: number | null; out: string }> {
  const { code, stdout, stderr } = await runProcess(
    process.execPath,
    ["--import", "tsx", join(root, "scripts", name), ...args],
    { cwd: root, timeoutMs: ms, what: `scripts/${name}` },
  );
  return { code, out: stdout + stderr };
}

/** Whether a pid still names a live process (a zombie waiting to be reaped counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return true;
  }
}

/** Polls until the pid is gone (at most `ms`); true when it went. */
export async function gone(pid: number, ms = 5_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

/** Waits (at most 5 s) until a command has written its background pid to `<dir>/pid`. */
export async function pidWritten(dir: string): Promise<void> {
  const until = Date.now() + 5_000;
  const path = join(dir, "pid");
  while (Date.now() < until) {
    if (existsSync(path) && /^\d+\n$/.test(readFileSync(path, "utf8"))) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the command never wrote its pid");
}

/**
 * Process checks for tests that kill commands (is a pid alive, wait until it is gone, wait for a pid file), and a
 * repository script run to its end.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Runs `scripts/<name>` through tsx from the repository root, with its stdout and stderr together; fails when it
 * has not finished after `ms`.
 */
export function runScript(
  name: string,
  args: string[],
  ms = 50_000,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(root, "scripts", name), ...args], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`scripts/${name} did not finish in time\n${out}`));
    }, ms);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
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

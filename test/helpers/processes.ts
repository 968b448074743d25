/** Process checks for tests that kill commands: is a pid alive, wait until it is gone, wait for a pid file. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

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

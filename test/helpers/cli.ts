/** Runs the built `knightcode` as a child process with bounded time, collecting its output. */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const cliBin = join(
  fileURLToPath(new URL("../..", import.meta.url)),
  "dist",
  "hosts",
  "cli",
  "main.js",
);

export function runCli(
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    /** What a pipe on stdin carries (closed after it). */
    stdin?: string;
    /** A file opened as stdin instead of a pipe (`< file`; `/dev/null` for a run given no input). */
    stdinFile?: string;
    timeoutMs?: number;
  },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const input = options.stdinFile !== undefined ? openSync(options.stdinFile, "r") : "pipe";
    const child = spawn(process.execPath, [cliBin, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
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
      reject(new Error(`knightcode ${args.join(" ")} did not finish in time\n${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(options.stdin ?? "");
  });
}

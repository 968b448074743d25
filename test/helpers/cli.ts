/** Runs the built `knightcode` as a child process with bounded time, collecting its output. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ProcessResult, runProcess } from "./processes.js";

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
): Promise<ProcessResult> {
  return runProcess(process.execPath, [cliBin, ...args], {
    ...options,
    env: { ...process.env, ...options.env },
    what: `knightcode ${args.join(" ")}`,
  });
}

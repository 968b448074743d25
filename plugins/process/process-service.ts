/** `knightcode.exec()`: runs a program (no shell) with execa, bounded by a timeout and the caller's signal. */
import type { ExecOptions, ExecResult, ProcessApiService } from "../../kernel/index.js";

export class ProcessService implements ProcessApiService {
  constructor(private readonly cwd: string) {}

  async exec(command: string, args: string[] = [], options: ExecOptions = {}): Promise<ExecResult> {
    const { execa } = await import("execa");
    const result = await execa(command, args, {
      cwd: options.cwd ?? this.cwd,
      reject: false,
      ...(options.timeout ? { timeout: options.timeout } : {}),
      ...(options.signal ? { cancelSignal: options.signal } : {}),
      forceKillAfterDelay: 2_000,
      stdin: "ignore",
    });
    return {
      stdout: String(result.stdout ?? ""),
      stderr: String(result.stderr ?? ""),
      code: result.exitCode ?? null,
      killed: Boolean(result.isTerminated || result.timedOut || result.isCanceled),
    };
  }
}

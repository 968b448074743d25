/**
 * `knightcode.exec()`: runs a program (no shell) with execa, bounded by a timeout and the caller's signal, in the
 * environment the `shellEnv` policy leaves (env-policy.ts).
 */
import type { ExecOptions, ExecResult, ProcessApiService } from "../../kernel/index.js";
import { type ShellEnvPolicy, toolEnvironment } from "../kit/process/env-policy.js";

export class ProcessService implements ProcessApiService {
  /** `shellEnv` is asked at each call (the settings may be reloaded); without it, the default policy applies. */
  constructor(
    private readonly cwd: string,
    private readonly shellEnv: () => ShellEnvPolicy | undefined = () => undefined,
  ) {}

  async exec(command: string, args: string[] = [], options: ExecOptions = {}): Promise<ExecResult> {
    const { execa } = await import("execa");
    const result = await execa(command, args, {
      cwd: options.cwd ?? this.cwd,
      env: toolEnvironment(process.env, this.shellEnv()),
      extendEnv: false,
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

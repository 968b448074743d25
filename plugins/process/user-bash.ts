/**
 * Commands a person runs (`!cmd` in the terminal, the RPC `bash` command): the `user_bash` gate first, then the
 * command. The first handler that returns `{result}` answers it, one that returns `{operations}` runs it elsewhere
 * (a container, a remote machine); without a decision it runs locally through the shell engine. A failing handler
 * blocks the command: it fails closed and nothing runs.
 */
import type {
  BashOperations,
  BashResult,
  ExtensionContext,
  HandlerOwner,
  HookBus,
  UserBashEvent,
  UserBashResult,
} from "../../kernel/index.js";
import { exactEnv, toolEnvironment } from "../kit/process/env-policy.js";
import { OutputCollector, runShellCommand } from "../kit/process/shell.js";

export interface RunUserBashOptions {
  bus: HookBus;
  ctx: ExtensionContext;
  cwd: string;
  command: string;
  /** `!!cmd`: the output stays out of the model's context. */
  excludeFromContext: boolean;
  /** Every chunk of output as it arrives. */
  onData?(chunk: string): void;
  signal?: AbortSignal;
  /** `gates.timeoutMs`: time each `user_bash` handler has to answer before the command is blocked (0: none). */
  gateTimeoutMs?: number;
  /** The command's complete environment. Default: `process.env` as the default `shellEnv` policy leaves it. */
  env?: NodeJS.ProcessEnv;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What a failing `user_bash` handler stands for: the command is blocked, and says by whom. */
function blocked(error: unknown, owner: HandlerOwner): UserBashResult {
  return {
    result: {
      output: `Command blocked by extension ${owner.id}: ${errorText(error)}`,
      exitCode: null,
      cancelled: true,
      truncated: false,
    },
  };
}

function isDecision(result: unknown): boolean {
  if (typeof result !== "object" || result === null) return false;
  const r = result as Record<string, unknown>;
  return (
    (r.operations !== undefined && r.operations !== null) || (r.result !== undefined && r.result !== null)
  );
}

/** A handler's `result`, with its fields made sound (a handler is a stranger's code). */
function normalizeResult(raw: unknown): BashResult {
  const r = (typeof raw === "object" && raw !== null ? raw : {}) as Partial<BashResult>;
  return {
    output: typeof r.output === "string" ? r.output : String(r.output ?? ""),
    exitCode: typeof r.exitCode === "number" ? r.exitCode : null,
    cancelled: r.cancelled === true,
    truncated: r.truncated === true,
    ...(typeof r.fullOutputPath === "string" ? { fullOutputPath: r.fullOutputPath } : {}),
  };
}

export async function runUserBash(options: RunUserBashOptions): Promise<BashResult> {
  const { bus, ctx, cwd, command, excludeFromContext, onData, signal } = options;
  const event: UserBashEvent = { command, excludeFromContext, cwd };
  const decision = await bus.gate("user_bash", event, ctx, {
    failClosed: blocked,
    isDecision,
    ...(options.gateTimeoutMs ? { timeoutMs: options.gateTimeoutMs } : {}),
  });
  if (decision && "result" in decision && decision.result) return normalizeResult(decision.result);
  if (decision && "operations" in decision && decision.operations) {
    return runWithOperations(decision.operations, options);
  }
  const result = await runShellCommand(command, {
    cwd,
    env: exactEnv(options.env ?? toolEnvironment()),
    ...(signal ? { signal } : {}),
    ...(onData ? { onData } : {}),
  });
  return {
    output: result.output,
    exitCode: result.exitCode,
    cancelled: result.aborted || result.timedOut,
    truncated: result.truncated,
    ...(result.fullOutputPath ? { fullOutputPath: result.fullOutputPath } : {}),
  };
}

/** Runs the command through an extension's `operations`, keeping the same bounded tail and full-output file. */
async function runWithOperations(
  operations: BashOperations,
  options: RunUserBashOptions,
): Promise<BashResult> {
  const { cwd, command, onData, signal } = options;
  if (typeof operations?.exec !== "function") {
    return {
      output: "Command blocked: the user_bash handler returned operations without an exec function",
      exitCode: null,
      cancelled: true,
      truncated: false,
    };
  }
  const collector = new OutputCollector();
  let exitCode: number | null = null;
  let failure: string | undefined;
  try {
    const outcome = await operations.exec(command, cwd, {
      onData: (chunk: string) => {
        const text = typeof chunk === "string" ? chunk : String(chunk);
        collector.push(Buffer.from(text, "utf8"), text);
        try {
          onData?.(text);
        } catch {
          // A failing listener must not break the command.
        }
      },
      ...(signal ? { signal } : {}),
    });
    exitCode = typeof outcome?.exitCode === "number" ? outcome.exitCode : null;
  } catch (error) {
    if (!signal?.aborted) failure = errorText(error);
  }
  const collected = await collector.finish();
  const output = failure
    ? `${collected.output}${collected.output && !collected.output.endsWith("\n") ? "\n" : ""}Command failed: ${failure}`
    : collected.output;
  return {
    output,
    exitCode,
    cancelled: signal?.aborted === true,
    truncated: collected.truncated,
    ...(collected.fullOutputPath ? { fullOutputPath: collected.fullOutputPath } : {}),
  };
}

/**
 * `bash`: runs a shell command in the session's working folder through the shell engine of `@knightcodeai/cli`,
 * streams its output as partial results, and returns the last 2,000 lines or 50 KB (the full output goes to a
 * temp file whose path the result names). A spawn hook may rewrite each command, its folder and environment;
 * operations may run it somewhere else (a sandbox, a remote shell).
 */
import {
  type BashOperations,
  exactEnv,
  DEFAULT_MAX_BYTES as MAX_BYTES,
  DEFAULT_MAX_LINES as MAX_LINES,
  runShellCommand,
  type ShellEnvPolicy,
  toolEnvironment,
  truncateTail,
} from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import type { CoreTool } from "./core-tool.js";
import { toolCwd } from "./paths.js";

const parameters = Type.Object({
  command: Type.String({
    description: "The shell command to run (bash syntax), in the session's working folder.",
  }),
  timeout: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      description:
        "Seconds after which the command and everything it started are killed. No limit when omitted.",
    }),
  ),
});

export interface BashToolDetails {
  /** `null` when the command was killed by a signal (timeout, abort, or its own). */
  exitCode: number | null;
  truncated: boolean;
  /** The complete output, when the result shows only its end. */
  fullOutputPath?: string;
  timedOut: boolean;
  /**
   * Partial results only: where this partial's text starts in the whole output so far (in UTF-16 code units), so a
   * host can send only what is new although each partial shows the latest tail.
   */
  outputStart?: number;
}

/**
 * What a spawn hook sees and returns: the command about to run, its folder and its complete environment (after the
 * `shellEnv` policy).
 */
export interface BashSpawnContext {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export type BashSpawnHook = (context: BashSpawnContext) => BashSpawnContext;

export interface BashToolOptions {
  /** Where commands run. Default: the local shell (`createLocalBashOperations()`). */
  operations?: BashOperations;
  /** Lines run before every command (a separate line, so the command cannot swallow them), e.g. `set -o pipefail`. */
  commandPrefix?: string;
  /** The local shell to run `-c` with, instead of `$SHELL` or bash. */
  shellPath?: string;
  /** Rewrites each command, its folder or its environment just before it runs. */
  spawnHook?: BashSpawnHook;
  /**
   * Which variables of KnightCode's environment commands see (the `shellEnv` settings), or a function asked at
   * each call. Default: the default policy, which leaves out names that look like secrets (`*_KEY`, `*_TOKEN`,
   * `*_SECRET`, `*PASSWORD*`). The spawn hook sees the environment after the policy, and may add to it.
   */
  shellEnv?: ShellEnvPolicy | (() => ShellEnvPolicy | undefined);
}

/** At most one partial update per this many milliseconds (plus a final one). */
const UPDATE_INTERVAL_MS = 100;

const countLines = (text: string) => (text === "" ? 0 : text.replace(/\n$/, "").split("\n").length);

/** The end of the output seen so far, within the limits, for partial results. */
const partialTail = (buffer: string) => truncateTail(buffer.replace(/\n$/, "")).content;

/**
 * The `bash` tool. `cwd` is the folder commands run in; without it, the session's working folder at each call.
 */
export function createBashTool(
  cwd?: string,
  options: BashToolOptions = {},
): CoreTool<typeof parameters, BashToolDetails> {
  const { operations, commandPrefix, shellPath, spawnHook, shellEnv } = options;
  return {
    name: "bash",
    label: "Bash",
    description:
      "Run a shell command (bash) in the current working folder and return its combined stdout and stderr. " +
      `The output is cut to its last ${MAX_LINES} lines or ${MAX_BYTES / 1024} KB, whichever comes first; when it ` +
      "is cut, the complete output is saved to a file whose path the result gives (read or grep it for the rest). " +
      "A non-zero exit code is reported at the end of the result. Use `timeout` (seconds) for commands that might " +
      "not finish; a timed-out command is killed together with everything it started. Stdin is not connected, so " +
      "interactive programs cannot be answered: pass flags that make them non-interactive.",
    promptSnippet: "bash: run a shell command in the working folder (output is cut to its end)",
    promptGuidelines: [
      "Prefer the dedicated file tools (read, edit, write) over bash for reading and editing files: no cat, sed -i or heredocs to change files.",
      "Use bash for builds, tests, git, and searching or listing files when no dedicated tool fits.",
      "Give long-running commands a timeout, and start servers or watchers in the background with their output sent to a file.",
    ],
    annotations: {
      title: "Bash",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
    parameters,
    async execute(_toolCallId, params: Static<typeof parameters>, signal, onUpdate, ctx) {
      const timeoutMs = params.timeout !== undefined ? params.timeout * 1000 : undefined;

      // A rolling tail of the output for partial results; bounded like the engine's own.
      let buffer = "";
      /** Output received so far, in UTF-16 code units (the buffer keeps only its end). */
      let received = 0;
      let lastUpdate = 0;
      let timer: NodeJS.Timeout | undefined;
      const emit = () => {
        timer = undefined;
        lastUpdate = Date.now();
        const text = partialTail(buffer);
        const shown = buffer.replace(/\n$/, "");
        // The tail is the end of what was received, less a final newline.
        const outputStart = shown.endsWith(text)
          ? received - buffer.length + shown.length - text.length
          : undefined;
        onUpdate?.({
          content: [{ type: "text", text }],
          details: {
            exitCode: null,
            truncated: false,
            timedOut: false,
            ...(outputStart !== undefined ? { outputStart } : {}),
          },
        });
      };
      const onData = (chunk: string) => {
        buffer += chunk;
        received += chunk.length;
        if (buffer.length > 4 * MAX_BYTES) buffer = buffer.slice(-2 * MAX_BYTES);
        if (!onUpdate || timer) return;
        const wait = UPDATE_INTERVAL_MS - (Date.now() - lastUpdate);
        if (wait <= 0) emit();
        else timer = setTimeout(emit, wait);
      };

      let result: Awaited<ReturnType<typeof runShellCommand>>;
      try {
        const planned: BashSpawnContext = {
          command: commandPrefix ? `${commandPrefix}\n${params.command}` : params.command,
          cwd: toolCwd(cwd, ctx),
          env: toolEnvironment(process.env, typeof shellEnv === "function" ? shellEnv() : shellEnv),
        };
        const spawn = spawnHook ? spawnHook(planned) : planned;
        result = await runShellCommand(spawn.command, {
          cwd: spawn.cwd,
          env: exactEnv(spawn.env),
          ...(signal ? { signal } : {}),
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          ...(operations ? { operations } : {}),
          ...(shellPath ? { shell: shellPath } : {}),
          onData,
        });
      } finally {
        if (timer) clearTimeout(timer);
        timer = undefined;
      }

      const output = result.output.replace(/\n$/, "");
      const notices: string[] = [];
      if (result.truncated) {
        const where = result.fullOutputPath ? `. Full output: ${result.fullOutputPath}` : "";
        notices.push(
          `[Output truncated: showing the last ${countLines(output)} of ${result.totalLines} lines${where}]`,
        );
      }
      if (result.timedOut) notices.push(`[Command timed out after ${params.timeout}s]`);
      else if (result.aborted) notices.push("[Command aborted]");
      else if (result.exitCode === null && result.signal) notices.push(`[Killed by signal ${result.signal}]`);
      if (result.exitCode !== null && result.exitCode !== 0) notices.push(`[Exit code: ${result.exitCode}]`);

      const text = [output || "(no output)", ...notices].join("\n\n");
      const details: BashToolDetails = {
        exitCode: result.exitCode,
        truncated: result.truncated,
        ...(result.fullOutputPath ? { fullOutputPath: result.fullOutputPath } : {}),
        timedOut: result.timedOut,
      };
      onUpdate?.({ content: [{ type: "text", text: output }], details });
      if (result.timedOut || result.aborted) throw new Error(text);
      return { content: [{ type: "text", text }], details };
    },
  };
}

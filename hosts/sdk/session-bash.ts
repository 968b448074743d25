/**
 * A command a person typed (interactive `!cmd`, RPC `bash`): `user_bash` handlers may take it over, else it runs in
 * the shell; each output chunk is dispatched as `bash_execution_update` before the call resolves, and unless it is
 * excluded the command and its output enter the context with the next prompt.
 */
import type { BashResult } from "../../kernel/index.js";
import { toolEnvironment } from "../../plugins/kit/process/env-policy.js";
import { runUserBash } from "../../plugins/process/user-bash.js";
import { serviceTokens } from "../../plugins/tokens.js";
import type { OpenSession } from "./session-open.js";

export interface UserBashOptions {
  excludeFromContext?: boolean;
  onData?(chunk: string): void;
  signal?: AbortSignal;
  id?: string;
}

export async function executeUserBash(
  { runtime, config }: OpenSession,
  command: string,
  options: UserBashOptions = {},
): Promise<BashResult> {
  const excludeFromContext = options.excludeFromContext ?? false;
  const ctx = runtime.context();
  // Chunks are dispatched one after another, and all of them before the result returns, so a host that writes
  // them (RPC) keeps their order and writes them before its response.
  let dispatched = Promise.resolve();
  const onData = (delta: string) => {
    options.onData?.(delta);
    if (!runtime.bus.has("bash_execution_update")) return;
    const event = { ...(options.id ? { id: options.id } : {}), delta };
    dispatched = dispatched.then(() => runtime.bus.emit("bash_execution_update", event, ctx));
  };
  const result = await runUserBash({
    bus: runtime.bus,
    ctx,
    gateTimeoutMs: config.settings.get("gates").timeoutMs,
    cwd: config.cwd,
    command,
    excludeFromContext,
    onData,
    env: toolEnvironment(process.env, config.settings.get("shellEnv")),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  await dispatched;
  if (!excludeFromContext && !result.cancelled) {
    const status = result.exitCode === 0 ? "" : `\n(exit code ${result.exitCode ?? "none"})`;
    runtime.scope.resolve(serviceTokens.agent).sendMessage(
      undefined,
      {
        customType: "bashExecution",
        content: `Ran \`${command}\`\n\`\`\`\n${result.output}\n\`\`\`${status}`,
        display: true,
        details: { command, exitCode: result.exitCode, truncated: result.truncated },
      },
      { deliverAs: "nextTurn" },
    );
  }
  return result;
}

/**
 * `/name args`: runs a registered command with a command context, bound to its session. Shared by typed input (the
 * agent loop) and hosts (`SessionController.runCommand`).
 */
import type { SessionRuntime } from "../../kernel/index.js";
import type { CommandRegistry } from "./command-registry.js";

/** `undefined` when no such command is registered, else its handler's result. Failures are reported and rethrown. */
export async function runCommand(
  runtime: SessionRuntime,
  commands: CommandRegistry,
  name: string,
  args: string,
): Promise<{ result: unknown } | undefined> {
  const command = commands.get(name);
  if (!command) return undefined;
  runtime.assertCanPrompt(`run /${name}`);
  try {
    return { result: await runtime.bus.enter(() => command.handler(args, runtime.commandContext())) };
  } catch (error) {
    runtime.handleError({ owner: { id: command.owner, order: 0 }, event: `command /${name}`, error });
    throw error;
  }
}

/**
 * `knightcode app-server [--listen ws://127.0.0.1:PORT]` and `knightcode app-server schema --out DIR`.
 *
 * The server is the `app-server` mode (builtin:mode-app-server), run like any mode: a host session (in memory, in
 * the current folder) loads the extensions and names the mode; the mode then opens one session per thread through
 * `openSession`, which is this SDK's `createAgentSession` again. Stdout carries only protocol messages: anything
 * else written there goes to stderr.
 */
import type { AgentSessionHandle, CreateAgentSessionOptions, ModeSessionOptions } from "@knightcodeai/cli";
import { guardStdout } from "./stdout-guard.js";

const USAGE =
  "usage: knightcode app-server [--listen ws://127.0.0.1:PORT]\n       knightcode app-server schema --out DIR\n";

export async function appServerCommand(argv: string[]): Promise<number> {
  if (argv[0] === "schema") return schemaCommand(argv.slice(1));
  let listen: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--listen" && argv[i + 1] !== undefined) listen = argv[++i];
    else if (arg.startsWith("--listen=")) listen = arg.slice("--listen=".length);
    else if (arg === "--listen" || arg === "stdio://") {
      if (arg === "--listen") return usage("--listen needs an address such as ws://127.0.0.1:4500");
    } else if (arg === "--help" || arg === "-h") {
      process.stdout.write(USAGE);
      return 0;
    } else return usage(`unknown argument "${arg}"`);
  }
  if (listen === "stdio://") listen = undefined;

  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const guard = guardStdout();
  const { createAgentSession, errorMessage } = await import("@knightcodeai/cli");
  const warn = (message: string) => process.stderr.write(`knightcode: ${message}\n`);
  const base: CreateAgentSessionOptions = { mode: "app-server", warn };
  let host: AgentSessionHandle | undefined;
  const shutdown = new AbortController();
  try {
    host = await createAgentSession({
      ...base,
      cwd: process.cwd(),
      session: { inMemory: true },
      onShutdownRequest: () => shutdown.abort(),
    });
    const mode = host.getMode("app-server");
    if (!mode) {
      warn("the app-server mode is not available (is builtin:mode-app-server disabled in settings?)");
      return 1;
    }
    const openSession = (options: ModeSessionOptions) =>
      createAgentSession({
        ...base,
        cwd: options.cwd,
        ...(options.model ? { model: options.model } : {}),
        ...(options.ui ? { ui: options.ui, hasUI: true } : {}),
        ...(options.warn ? { warn: options.warn } : {}),
        ...(options.extensions ? { extensions: options.extensions } : {}),
        session: options.inMemory
          ? { inMemory: true }
          : options.sessionFile
            ? { path: options.sessionFile }
            : {},
      });
    return await mode.run({
      session: host,
      options: { ...(listen ? { listen } : {}) },
      prompts: [],
      io: { stdin: process.stdin, stdout: guard.stdout, stderr: process.stderr, isTTY: false },
      signal: controller.signal,
      shutdown: shutdown.signal,
      openSession,
      agentDir: host.agentDir,
      host: host.host,
    });
  } catch (error) {
    warn(errorMessage(error));
    return 1;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await host?.dispose().catch(() => {});
    await guard.flush();
    guard.restore();
    process.stdin.destroy();
  }
}

/** Writes the protocol's JSON Schema and TypeScript types (the same files the repository keeps) into DIR. */
async function schemaCommand(argv: string[]): Promise<number> {
  const at = argv.indexOf("--out");
  const dir = at >= 0 ? argv[at + 1] : undefined;
  if (!dir || argv.length !== 2) return usage("schema needs --out DIR");
  const { writeAppServerSchema } = await import("@knightcodeai/cli");
  const files = await writeAppServerSchema(dir);
  for (const file of files) process.stdout.write(`${file}\n`);
  return 0;
}

function usage(problem: string): number {
  process.stderr.write(`knightcode app-server: ${problem}\n${USAGE}`);
  return 2;
}

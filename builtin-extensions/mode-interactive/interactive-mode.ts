/**
 * The interactive mode's entry: the full terminal UI (app.ts) when stdin and stdout are a terminal, the line mode
 * (line-mode.ts) when either is a pipe, as when a script drives `--mode interactive`.
 */
import type { ExtensionUIContext, ModeContext } from "@knightcodeai/cli/kit";
import { App } from "./app.js";
import { connectLineMode, runLineMode } from "./line-mode.js";

const apps = new WeakMap<ExtensionUIContext, App>();

function inTerminal(io: ModeContext["io"]): boolean {
  return io.isTTY && (io.stdin as NodeJS.ReadStream).isTTY === true;
}

/** The mode's `ui()`: bound before the session starts, so session_start handlers can use it. */
export function connectInteractive(
  ctx: Pick<ModeContext, "session" | "io" | "host">,
  settings: () => Record<string, unknown> = () => ({}),
): ExtensionUIContext {
  if (!inTerminal(ctx.io)) return connectLineMode(ctx);
  const app = new App(ctx.session, undefined, settings(), ctx.host);
  // A session that fails to start never runs the mode: the terminal is still put back.
  process.once("exit", () => app.stop());
  apps.set(app.ui, app);
  return app.ui;
}

export async function runInteractive(
  ctx: ModeContext,
  settings: () => Record<string, unknown> = () => ({}),
): Promise<number> {
  if (!inTerminal(ctx.io)) return runLineMode(ctx);
  let app = ctx.ui ? apps.get(ctx.ui) : undefined;
  if (!app) {
    app = new App(ctx.session, undefined, settings(), ctx.host);
    ctx.session.setUI(app.ui, true);
  }
  return app.run(ctx);
}

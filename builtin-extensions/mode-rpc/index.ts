/**
 * builtin:mode-rpc — `knightcode --mode rpc` (rpc-mode.ts, commands.ts, ui.ts). The factory registers only the name
 * and loaders, so a session that runs another mode never loads the RPC code. `ui` opens the connection before
 * the session starts, so `session_start` handlers reach the client.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

export default function (knightcode: ExtensionAPI): void {
  knightcode.registerMode("rpc", {
    description: "JSON lines on stdin and stdout, for programs that drive KnightCode",
    readsStdin: false,
    ui: async (ctx) => (await import("./rpc-mode.js")).connectRpc(ctx),
    run: async (ctx) => (await import("./rpc-mode.js")).runRpc(ctx),
  });
}

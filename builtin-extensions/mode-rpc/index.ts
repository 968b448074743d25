/**
 * builtin:mode-rpc — `knightcode --mode rpc` (rpc-mode.ts, commands.ts, ui.ts). The factory registers only the name
 * and a loader, so a session that runs another mode never loads the RPC code.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

export default function (knightcode: ExtensionAPI): void {
  knightcode.registerMode("rpc", {
    description: "JSON lines on stdin and stdout, for programs that drive KnightCode",
    readsStdin: false,
    run: async (ctx) => (await import("./rpc-mode.js")).runRpc(ctx),
  });
}

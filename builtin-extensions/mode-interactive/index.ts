/**
 * builtin:mode-interactive — `knightcode` in a terminal (interactive-mode.ts, view.ts, terminal-ui.ts). The factory
 * registers only the name and a loader, so print, JSON and RPC runs never load the terminal code.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

export default function (knightcode: ExtensionAPI): void {
  knightcode.registerMode("interactive", {
    description: "Chat in the terminal",
    readsStdin: false,
    run: async (ctx) => (await import("./interactive-mode.js")).runInteractive(ctx),
  });
}

/**
 * builtin:mode-interactive — `knightcode` in a terminal (interactive-mode.ts: the full terminal UI in app.ts, a line mode for pipes in line-mode.ts). The factory
 * registers only the name and loaders, so print, JSON and RPC runs never load the terminal code. `ui` binds the
 * terminal UI before the session starts, so `session_start` handlers can use it.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

export default function (knightcode: ExtensionAPI): void {
  // Read when the mode starts (display choices /settings saved), while this extension's API is current.
  const settings = () => knightcode.getSettings();
  knightcode.registerMode("interactive", {
    description: "Chat in the terminal",
    readsStdin: false,
    ui: async (ctx) => (await import("./interactive-mode.js")).connectInteractive(ctx, settings),
    run: async (ctx) => (await import("./interactive-mode.js")).runInteractive(ctx, settings),
  });
}

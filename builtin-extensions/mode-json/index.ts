/**
 * builtin:mode-json — `knightcode --mode json "..."` (json-mode.ts). The factory registers only the name and a
 * loader, so a session that runs another mode never loads this one's code.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

export default function (knightcode: ExtensionAPI): void {
  knightcode.registerMode("json", {
    description: "Write the session events as JSON lines",
    readsStdin: true,
    run: async (ctx) => (await import("./json-mode.js")).runJson(ctx),
  });
}

/**
 * builtin:mode-print — `knightcode -p "..."` (print-mode.ts). The factory registers only the name and a loader, so
 * a session that runs another mode never loads this one's code.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

export default function (knightcode: ExtensionAPI): void {
  knightcode.registerMode("print", {
    description: "Run the prompts and print the final answer",
    readsStdin: true,
    run: async (ctx) => (await import("./print-mode.js")).runPrint(ctx),
  });
}

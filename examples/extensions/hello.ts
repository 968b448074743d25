import type { ExtensionAPI } from "@knightcodeai/cli";

/** The first example of the extension guide: a /hello command that greets. */
export default function (knightcode: ExtensionAPI) {
  knightcode.registerCommand("hello", {
    description: "Show a greeting",
    handler: async (name, ctx) => {
      ctx.ui.notify(`Hello, ${name || "world"}!`, "info");
    },
  });
}

/**
 * builtin:html-export — `/export [file]` writes the session as one self-contained HTML file (no scripts, nothing
 * fetched from the network) and returns `{ path }`, which RPC `export_html` answers with. The factory only
 * registers the command; the renderer loads on the first export.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

export default function (knightcode: ExtensionAPI): void {
  knightcode.registerCommand("export", {
    description: "Write the session as a self-contained HTML file (default: <session name or id>.html here)",
    handler: async (args, ctx) => (await import("./export-session.js")).exportSession(knightcode, args, ctx),
  });
}

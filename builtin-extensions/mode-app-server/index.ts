/**
 * builtin:mode-app-server — `knightcode app-server`: JSON-RPC for desktop and editor clients, many threads in one
 * process (docs/app-server.md). The factory registers only the name and a loader, so another mode never loads
 * the server's code.
 *
 * While it serves, the mode provides `appServerService` (the kit's typed reference): other extensions of the
 * server's own session watch it and add methods with `register(name, spec, handler)` (see docs/app-server.md).
 */
import type { ExtensionAPI, ExtensionContext } from "@knightcodeai/cli/kit";

export default function (knightcode: ExtensionAPI): void {
  // The server's own session context: what it asks of the model registry (the classifier models) comes from it.
  let context: ExtensionContext | undefined;
  knightcode.on("session_start", (_event, ctx) => {
    context = ctx;
  });
  knightcode.registerMode("app-server", {
    description: "JSON-RPC over stdio (and WebSocket with --listen) for desktop and editor clients",
    readsStdin: false,
    run: async (ctx) =>
      (await import("./app-server-mode.js")).runAppServer(ctx, knightcode.services, () => context),
  });
}

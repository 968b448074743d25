/** `ui/event`: a client's press or change in a widget's declarative view, handed to the thread's extensions. */
import { installMethods, type MethodRow, method } from "./context.js";
import type { AppServer } from "./server.js";

export const uiMethods: MethodRow[] = [
  method("ui/event", async (ctx, params) => {
    await ctx.threads.requireLoaded(params.threadId).ui.viewEvent(params.widgetKey, params.id, params.value);
    return {};
  }),
];

export function registerUiMethods(server: AppServer): void {
  installMethods(server, uiMethods);
}

/** `ui/event`: a client's press or change in a widget's declarative view, handed to the thread's extensions. */
import { requestSpecs as R } from "./protocol.js";
import type { AppServer } from "./server.js";

export function registerUiMethods(server: AppServer): void {
  server.methods.register("ui/event", R["ui/event"], async (params) => {
    await server.requireLoaded(params.threadId).ui.viewEvent(params.widgetKey, params.id, params.value);
    return {};
  });
}

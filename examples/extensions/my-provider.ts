/**
 * A provider registered under a built-in's name (`openai`), so it replaces the built-in for the whole process.
 *
 * Shows: `registerProvider` with a model list and a `streamSimple` built on the provider kit's
 * `runProviderRequest`, which runs the request hooks in the one order every provider uses, so
 * `before_provider_request` and friends keep working, and turns any failure into an error message. The provider
 * describes only its wire: the payload, how to send it, and how to read each event. It answers every request with
 * the same text and needs no key.
 */
import { type ExtensionAPI, runProviderRequest } from "@knightcodeai/cli";

export const FIXED_ANSWER = "Hello from my-provider.";
export const MODEL_ID = "fixed-1";

export default function (knightcode: ExtensionAPI) {
  knightcode.registerProvider("openai", {
    api: "my-provider-fixed",
    models: [{ id: MODEL_ID, name: "Fixed answer", contextWindow: 8000, maxTokens: 1000 }],
    streamSimple: (request) =>
      runProviderRequest(request, (writer) => ({
        name: "my-provider",
        buildPayload: () => ({ model: request.model.id, messages: request.messages }),
        // A real provider sends the payload and headers the hooks left; this one answers at once with one event.
        send: async () => ({ status: 200, headers: {}, events: [FIXED_ANSWER] }),
        handle(event) {
          const index = writer.textStart();
          writer.textDelta(index, String(event));
          writer.textEnd(index);
          writer.done("stop");
        },
      })),
  });
}

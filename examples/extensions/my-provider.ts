/**
 * A provider registered under a built-in's name (`openai`), so it replaces the built-in for the whole process.
 *
 * Shows: `registerProvider` with a model list and a `streamSimple` that writes its answer with
 * `AssistantMessageWriter`, calling the request hooks (`payload`, `headers`, `response`) as every provider must so
 * `before_provider_request` and friends keep working. It answers every request with the same text and needs no key.
 */
import { AssistantMessageWriter, type ExtensionAPI } from "@knightcodeai/cli";

export const FIXED_ANSWER = "Hello from my-provider.";
export const MODEL_ID = "fixed-1";

export default function (knightcode: ExtensionAPI) {
  knightcode.registerProvider("openai", {
    api: "my-provider-fixed",
    models: [{ id: MODEL_ID, name: "Fixed answer", contextWindow: 8000, maxTokens: 1000 }],
    streamSimple(request) {
      const writer = new AssistantMessageWriter(request.model);
      void (async () => {
        try {
          // A real provider sends what the hooks return; this one only lets extensions see and change it.
          await request.hooks.payload({ model: request.model.id, messages: request.messages });
          await request.hooks.headers({ "content-type": "application/json" });
          await request.hooks.response(200, {});
          const index = writer.textStart();
          writer.textDelta(index, FIXED_ANSWER);
          writer.textEnd(index);
          writer.done("stop");
        } catch (error) {
          // streamSimple never throws: a failure ends the stream with an error message.
          writer.fail("unknown", (error as Error).message);
        }
      })();
      return writer.stream;
    },
  });
}

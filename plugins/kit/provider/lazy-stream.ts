/**
 * A `streamSimple` whose code loads on the first request. A provider's registration (its name, API and model list)
 * is needed by every session that might pick it; its wire code (payload conversion, event normalising, the SDK) only
 * by a session that sends it a request. Built-in providers register through this, so a start-up loads the request
 * code of the one provider it uses and no other.
 */
import {
  type AssistantMessageStream,
  errorMessage,
  type ProviderStreamRequest,
} from "../../../kernel/index.js";
import { AssistantMessageWriter } from "./assistant-writer.js";

export type StreamSimple = (request: ProviderStreamRequest) => AssistantMessageStream;

/** `streamSimple` for a registration: `load` runs once, on the first request; a failed load fails that request. */
export function lazyStreamSimple(load: () => Promise<StreamSimple>): StreamSimple {
  let loading: Promise<StreamSimple> | undefined;
  return (request) => {
    loading ??= load();
    const started = loading.then(
      (stream) => stream(request),
      (error: unknown) => {
        loading = undefined;
        const writer = new AssistantMessageWriter(request.model);
        writer.fail("unknown", `${request.model.provider} provider could not load: ${errorMessage(error)}`);
        return writer.stream;
      },
    );
    return {
      async *[Symbol.asyncIterator]() {
        yield* await started;
      },
      result: async () => (await started).result(),
    };
  };
}

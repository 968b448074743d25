import type {
  AssistantMessage,
  AssistantMessageStream,
  ModelInfo,
  ProviderErrorKind,
} from "../../kernel/index.js";
import { emptyUsage } from "../kit/usage.js";

/** A stream that fails at once: how registry-level problems reach the agent loop as ordinary error results. */
export function failedStream(
  model: ModelInfo,
  kind: ProviderErrorKind,
  message: string,
): AssistantMessageStream {
  const error: AssistantMessage = {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: kind === "aborted" ? "aborted" : "error",
    errorMessage: message,
    errorKind: kind,
    timestamp: Date.now(),
  };
  return {
    async *[Symbol.asyncIterator]() {
      yield { type: "error", reason: kind === "aborted" ? "aborted" : "error", error };
    },
    result: async () => error,
  };
}

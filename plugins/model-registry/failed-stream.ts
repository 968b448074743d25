import type { AssistantMessageStream, ModelInfo, ProviderErrorKind } from "../../kernel/index.js";
import { AssistantMessageWriter } from "../kit/provider/assistant-writer.js";

/** A stream that fails at once: how registry-level problems reach the agent loop as ordinary error results. */
export function failedStream(
  model: ModelInfo,
  kind: ProviderErrorKind,
  message: string,
): AssistantMessageStream {
  const writer = new AssistantMessageWriter(model);
  writer.fail(kind, message);
  return writer.stream;
}

/**
 * builtin:openai — OpenAI models through the Responses API (`openai-responses`), with the official `openai` SDK
 * loaded on the first request.
 *
 *   OPENAI_API_KEY=... knightcode --provider openai --model gpt-6.2-sol
 *
 * The provider also serves any custom provider of `<agentDir>/models.json` whose `api` is `openai-responses`
 * (with that provider's `baseUrl`, key and headers; `compat.timeoutMs` sets the request timeout and
 * `compat.supportsTemperature` whether `temperature` is sent to its reasoning models).
 */
import type { ExtensionAPI, ProviderConfig } from "@knightcodeai/cli/kit";
import { DEFAULT_BASE_URL, OPENAI_RESPONSES_API } from "./convert.js";
import { OPENAI_MODELS } from "./models.js";
import { OPENAI_API_KEY_ENV, OPENAI_PROVIDER, streamOpenAIResponses } from "./stream.js";

export {
  buildPayload,
  convertMessages,
  DEFAULT_BASE_URL,
  OPENAI_RESPONSES_API,
  parseReasoningSignature,
  type ReasoningSignature,
  reasoningEffort,
  strictSchema,
} from "./convert.js";
export { ResponsesNormaliser, streamErrorFailure } from "./events.js";
export { OPENAI_MODELS } from "./models.js";
export { DEFAULT_TIMEOUT_MS, OPENAI_API_KEY_ENV, OPENAI_PROVIDER, streamOpenAIResponses } from "./stream.js";

/** The registration of the `openai` provider. */
export function openaiProviderConfig(): ProviderConfig {
  return {
    api: OPENAI_RESPONSES_API,
    baseUrl: DEFAULT_BASE_URL,
    apiKey: OPENAI_API_KEY_ENV,
    models: OPENAI_MODELS.map((model) => ({ ...model })),
    streamSimple: streamOpenAIResponses,
  };
}

export default function openaiProvider(knightcode: ExtensionAPI): void {
  knightcode.registerProvider(OPENAI_PROVIDER, openaiProviderConfig());
}

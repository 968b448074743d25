/**
 * builtin:openai — OpenAI models through the Responses API (`openai-responses`), with the official `openai` SDK
 * loaded on the first request.
 *
 *   OPENAI_API_KEY=... knightcode --provider openai --model gpt-6.2-sol
 *
 * The provider also serves any custom provider of `<agentDir>/models.json` whose `api` is `openai-responses`
 * (with that provider's `baseUrl`, key and headers; `compat.timeoutMs` sets the request timeout and
 * `compat.supportsTemperature` whether `temperature` is sent to its reasoning models; `compat.thinkingLevelMap`
 * names the effort sent for a thinking level, as pi's per-model maps do).
 */
export {
  buildPayload,
  convertMessages,
  parseReasoningSignature,
  type ReasoningSignature,
  reasoningEffort,
  strictSchema,
} from "./convert.js";
export { ResponsesNormaliser, streamErrorFailure } from "./events.js";
export { default, openaiProviderConfig } from "./extension.js";
export {
  DEFAULT_BASE_URL,
  OPENAI_API_KEY_ENV,
  OPENAI_MODELS,
  OPENAI_PROVIDER,
  OPENAI_RESPONSES_API,
} from "./models.js";
export { DEFAULT_TIMEOUT_MS, streamOpenAIResponses } from "./stream.js";

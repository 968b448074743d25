/**
 * builtin:openai-compatible — the `openai-completions` wire API (OpenAI Chat Completions) for local servers
 * (Ollama, llama.cpp's server, vLLM, LM Studio) and other compatible endpoints, and the named hosted providers of
 * catalogue.generated.ts (groq, openrouter, deepseek, ...; see named-providers.ts), each with its key's environment
 * variable. The API itself has no models: point a custom provider at a server in `<agentDir>/models.json` and name
 * this API:
 *
 *   {"providers": {"local": {"baseUrl": "http://127.0.0.1:8080/v1", "api": "openai-completions",
 *     "compat": {"maxTokensField": "max_tokens"}, "models": [{"id": "qwen3-coder"}]}}}
 *
 * `apiKey` is optional (local servers ignore it); `headers` are sent with every request; `compat` adapts the
 * request to servers that differ from OpenAI (see compat.ts for the keys).
 */

export { CATALOGUE_SOURCE, NAMED_PROVIDERS } from "./catalogue.generated.js";
export {
  type CompatCheck,
  checkCompat,
  DEFAULT_COMPAT,
  DEFAULT_TIMEOUT_MS,
  MAP_LEVELS,
  type MapLevel,
  type MaxTokensField,
  type ResolvedCompat,
  resolveCompat,
  type TemplateArg,
  type ThinkingFormat,
  type ThinkingLevelMap,
} from "./compat.js";
export {
  BRIDGE_TEXT,
  buildPayload,
  type ChatCompletionsPayload,
  type ChatMessage,
  type ChatTool,
  type ChatToolCall,
  type ContentPart,
  convertMessages,
  convertTools,
  MISSING_RESULT,
  NO_TEXT_RESULT,
  type ReasoningEffort,
  reasoningEffort,
} from "./convert.js";
export { bodyMessage, type ErrorDetails, errorDetails, httpFailure, streamFailure } from "./errors.js";
export { default } from "./extension.js";
export { type NamedModel, type NamedProvider, namedCompat, namedProviderConfig } from "./named-providers.js";
export { OPENAI_COMPLETIONS_API, OPENAI_COMPLETIONS_PROVIDER } from "./names.js";
export {
  type CompletionsOptions,
  openaiCompletionsProviderConfig,
  PLACEHOLDER_API_KEY,
  streamOpenAICompletions,
} from "./provider.js";
export { SseDecoder, type SseMessage } from "./sse.js";
export { offeredLevels, type ThinkingChoice, thinkingChoice, thinkingFields } from "./thinking.js";

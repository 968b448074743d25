/**
 * builtin:anthropic — Claude through the Anthropic Messages API (`anthropic-messages`), streamed with the official
 * SDK (loaded on the first request, so startup never pays for it).
 *
 *   ANTHROPIC_API_KEY=... knightcode --provider anthropic --model claude-sonnet-5-5
 *
 * A custom provider in `<agentDir>/models.json` with `"api": "anthropic-messages"` is served by this
 * implementation with its own `baseUrl` and key. `compat` options: `cacheControl: false` (no prompt-cache markers),
 * `timeoutMs` (default 10 minutes without an answer), and `thinking` ("budget" | "adaptive"), `sampling` and
 * `forcedToolChoice` (booleans) to override what this provider assumes a model accepts (see models.ts), and pi's
 * `forceAdaptiveThinking`, `supportsTemperature`, `allowEmptySignature` and `sendSessionAffinityHeaders`
 * (ANTHROPIC_COMPAT_KEYS).
 *
 * The named providers of catalogue.generated.ts (kimi-coding, minimax, minimax-cn, vercel-ai-gateway) are other
 * services' Messages endpoints, registered with their key's environment variable and their models' compat.
 */

export { ANTHROPIC_NAMED_PROVIDERS } from "./catalogue.generated.js";
export {
  type AnthropicPayload,
  buildPayload,
  convertMessages,
  type MessageParam,
  THINKING_BUDGETS,
  THINKING_EFFORT,
} from "./convert.js";
export { anthropicProviderConfig, default } from "./extension.js";
export {
  ANTHROPIC_API,
  ANTHROPIC_BASE_URL,
  ANTHROPIC_COMPAT_KEYS,
  ANTHROPIC_KEY_ENV,
  ANTHROPIC_MODELS,
  ANTHROPIC_PROVIDER,
  type ClaudeTraits,
  claudeTraits,
} from "./models.js";
export {
  DEFAULT_TIMEOUT_MS,
  Normaliser,
  streamAnthropic,
} from "./stream.js";

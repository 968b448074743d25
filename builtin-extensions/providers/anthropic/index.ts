/**
 * builtin:anthropic — Claude through the Anthropic Messages API (`anthropic-messages`), streamed with the official
 * SDK (loaded on the first request, so startup never pays for it).
 *
 *   ANTHROPIC_API_KEY=... knightcode --provider anthropic --model claude-sonnet-5-5
 *
 * A custom provider in `<agentDir>/models.json` with `"api": "anthropic-messages"` is served by this
 * implementation with its own `baseUrl` and key. `compat` options: `cacheControl: false` (no prompt-cache markers),
 * `timeoutMs` (default 10 minutes without an answer), and `thinking` ("budget" | "adaptive"), `sampling` and
 * `forcedToolChoice` (booleans) to override what this provider assumes a model accepts (see models.ts).
 */
import type { ExtensionAPI, ProviderConfig } from "@knightcodeai/cli/kit";
import { ANTHROPIC_API } from "./convert.js";
import { ANTHROPIC_MODELS } from "./models.js";
import { ANTHROPIC_BASE_URL, ANTHROPIC_KEY_ENV, ANTHROPIC_PROVIDER, streamAnthropic } from "./stream.js";

export {
  ANTHROPIC_API,
  type AnthropicPayload,
  buildPayload,
  convertMessages,
  type MessageParam,
  THINKING_BUDGETS,
  THINKING_EFFORT,
} from "./convert.js";
export { ANTHROPIC_MODELS, type ClaudeTraits, claudeTraits } from "./models.js";
export {
  ANTHROPIC_BASE_URL,
  ANTHROPIC_KEY_ENV,
  ANTHROPIC_PROVIDER,
  DEFAULT_TIMEOUT_MS,
  Normaliser,
  streamAnthropic,
} from "./stream.js";

/** The provider registration: the catalogue, the key's environment variable, and the streaming implementation. */
export function anthropicProviderConfig(): ProviderConfig {
  return {
    api: ANTHROPIC_API,
    baseUrl: ANTHROPIC_BASE_URL,
    apiKey: ANTHROPIC_KEY_ENV,
    models: ANTHROPIC_MODELS.map((model) => ({ ...model })),
    streamSimple: streamAnthropic,
  };
}

export default function anthropicProvider(knightcode: ExtensionAPI): void {
  knightcode.registerProvider(ANTHROPIC_PROVIDER, anthropicProviderConfig());
}

/**
 * builtin:google — Gemini through the Gemini API (`google-generative-ai`, Google's own wire format), streamed with
 * `streamGenerateContent?alt=sse` and no SDK.
 *
 *   GEMINI_API_KEY=... knightcode --provider google --model gemini-2.5-flash
 *
 * A custom provider in `<agentDir>/models.json` with `"api": "google-generative-ai"` is served by this
 * implementation with its own `baseUrl` and key. `compat` options: `timeoutMs` (default 10 minutes without an
 * answer) and `thinking` (`"budget"` | `"level"`) to override how this provider sends a model's thinking setting.
 */
export {
  buildPayload,
  cleanSchema,
  convertMessages,
  type GeminiContent,
  type GeminiPayload,
  UNSIGNED_CALL_SIGNATURE,
} from "./convert.js";
export { default, googleProviderConfig } from "./extension.js";
export {
  type GeminiThinking,
  GOOGLE_API,
  GOOGLE_BASE_URL,
  GOOGLE_KEY_ENV,
  GOOGLE_MODELS,
  GOOGLE_PROVIDER,
  geminiThinking,
} from "./models.js";
export { DEFAULT_TIMEOUT_MS, httpFailure, Normaliser, streamGoogle, streamUrl } from "./stream.js";

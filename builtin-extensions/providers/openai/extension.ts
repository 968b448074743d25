/**
 * The `builtin:openai` registration: the catalogue and the key's environment variable. The request code
 * (conversion, the Responses event normaliser, the SDK) loads on the first request to an OpenAI model.
 */
import { type ExtensionAPI, lazyStreamSimple, type ProviderConfig } from "@knightcodeai/cli/kit";
import {
  DEFAULT_BASE_URL,
  OPENAI_API_KEY_ENV,
  OPENAI_MODELS,
  OPENAI_PROVIDER,
  OPENAI_RESPONSES_API,
} from "./models.js";

const streamSimple = lazyStreamSimple(async () => (await import("./stream.js")).streamOpenAIResponses);

/** The registration of the `openai` provider. */
export function openaiProviderConfig(): ProviderConfig {
  return {
    api: OPENAI_RESPONSES_API,
    baseUrl: DEFAULT_BASE_URL,
    apiKey: OPENAI_API_KEY_ENV,
    models: OPENAI_MODELS.map((model) => ({ ...model })),
    streamSimple,
  };
}

export default function openaiProvider(knightcode: ExtensionAPI): void {
  knightcode.registerProvider(OPENAI_PROVIDER, openaiProviderConfig(), { fallback: true });
}

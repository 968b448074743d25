/**
 * The `builtin:google` registration: the Gemini catalogue and the key's environment variable. The request code
 * (conversion, the stream normaliser) loads on the first request to a Gemini model.
 */
import { type ExtensionAPI, lazyStreamSimple, type ProviderConfig } from "@knightcodeai/cli/kit";
import { GOOGLE_API, GOOGLE_BASE_URL, GOOGLE_KEY_ENV, GOOGLE_MODELS, GOOGLE_PROVIDER } from "./models.js";

const streamSimple = lazyStreamSimple(async () => (await import("./stream.js")).streamGoogle);

/** The provider registration: the catalogue, the key's environment variable, and the streaming implementation. */
export function googleProviderConfig(): ProviderConfig {
  return {
    api: GOOGLE_API,
    baseUrl: GOOGLE_BASE_URL,
    apiKey: GOOGLE_KEY_ENV,
    models: GOOGLE_MODELS.map((model) => ({ ...model })),
    streamSimple,
  };
}

export default function googleProvider(knightcode: ExtensionAPI): void {
  knightcode.registerProvider(GOOGLE_PROVIDER, googleProviderConfig(), { fallback: true });
}

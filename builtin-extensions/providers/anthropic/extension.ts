/**
 * The `builtin:anthropic` registration: the catalogue, the key's environment variable and the Claude subscription
 * sign-in (oauth.ts, loaded when used), and the named providers with a Messages endpoint (kimi-coding, minimax,
 * vercel-ai-gateway, ...: catalogue.generated.ts), each with its key's variable. The request code
 * (conversion, the stream normaliser, the SDK) loads on the first request to any of them.
 */
import {
  type ExtensionAPI,
  lazyStreamSimple,
  namedProviderConfig,
  type ProviderConfig,
} from "@knightcodeai/cli/kit";
import { ANTHROPIC_NAMED_PROVIDERS } from "./catalogue.generated.js";
import {
  ANTHROPIC_API,
  ANTHROPIC_BASE_URL,
  ANTHROPIC_KEY_ENV,
  ANTHROPIC_MODELS,
  ANTHROPIC_PROVIDER,
} from "./models.js";
import { PI_MODELS } from "./pi-models.generated.js";

const streamSimple = lazyStreamSimple(async () => (await import("./stream.js")).streamAnthropic);

/** The provider registration: the catalogue, the key's environment variable, and the streaming implementation. */
export function anthropicProviderConfig(): ProviderConfig {
  return {
    api: ANTHROPIC_API,
    baseUrl: ANTHROPIC_BASE_URL,
    apiKey: ANTHROPIC_KEY_ENV,
    // Its own models, then pi-ai's that it does not list (a pi user's chosen model is found).
    models: [
      ...ANTHROPIC_MODELS,
      ...PI_MODELS.filter((m) => !ANTHROPIC_MODELS.some((own) => own.id === m.id)),
    ].map((model) => ({
      ...model,
    })),
    login: [
      {
        id: "browser",
        label: "Claude subscription (Pro/Max)",
        login: async (io) => (await import("./oauth.js")).signInWithClaude(io),
      },
    ],
    refreshCredential: async (credential) => (await import("./oauth.js")).refreshClaude(credential),
    streamSimple,
  };
}

export default function anthropicProvider(knightcode: ExtensionAPI): void {
  knightcode.registerProvider(ANTHROPIC_PROVIDER, anthropicProviderConfig(), { fallback: true });
  // Fallbacks: a registration of the same name by another extension wins.
  for (const provider of ANTHROPIC_NAMED_PROVIDERS) {
    knightcode.registerProvider(
      provider.name,
      // pi sends these services' keys as `x-api-key`; the SDK sends Bearer, so both go.
      namedProviderConfig(provider, { [ANTHROPIC_API]: streamSimple }, { compat: { xApiKeyHeader: true } }),
      {
        fallback: true,
      },
    );
  }
}

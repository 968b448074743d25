/**
 * The `builtin:openai` registration: the catalogue, the key's environment variable and the ChatGPT subscription
 * sign-in (oauth.ts, loaded when used). The request code
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
import { PI_MODELS } from "./pi-models.generated.js";

const streamSimple = lazyStreamSimple(async () => (await import("./stream.js")).streamOpenAIResponses);

/** The registration of the `openai` provider. */
export function openaiProviderConfig(): ProviderConfig {
  return {
    api: OPENAI_RESPONSES_API,
    baseUrl: DEFAULT_BASE_URL,
    apiKey: OPENAI_API_KEY_ENV,
    // pi's name for its ChatGPT sign-in provider, which is this one here (sessions and settings from pi name it).
    aliases: ["openai-codex"],
    // Its own models, then pi-ai's that it does not list (a pi user's chosen model is found).
    models: [...OPENAI_MODELS, ...PI_MODELS.filter((m) => !OPENAI_MODELS.some((own) => own.id === m.id))].map(
      (model) => ({
        ...model,
      }),
    ),
    login: [
      {
        id: "browser",
        label: "ChatGPT subscription (browser)",
        login: async (io) => (await import("./oauth.js")).signInWithChatGPT(io),
      },
      {
        id: "device-code",
        label: "ChatGPT subscription (device code)",
        login: async (io) => (await import("./oauth.js")).signInWithChatGPTDevice(io),
      },
    ],
    refreshCredential: async (credential) => (await import("./oauth.js")).refreshChatGPT(credential),
    streamSimple,
  };
}

export default function openaiProvider(knightcode: ExtensionAPI): void {
  knightcode.registerProvider(OPENAI_PROVIDER, openaiProviderConfig(), { fallback: true });
}

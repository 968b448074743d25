/**
 * The `builtin:github-copilot` registration: the Copilot models over Copilot's Chat Completions endpoint, signed in
 * with `knightcode login github-copilot` (oauth.ts, loaded when used). Requests reuse the `openai-completions`
 * implementation of builtin:openai-compatible, with the Copilot token as the bearer, the endpoint the token names,
 * and the editor headers Copilot wants. Without a sign-in (or `$COPILOT_GITHUB_TOKEN`) the models are not usable.
 */
import {
  type ExtensionAPI,
  type LlmMessage,
  lazyStreamSimple,
  type ProviderConfig,
  type ProviderStreamRequest,
  runProviderRequest,
} from "@knightcodeai/cli/kit";
import { COPILOT_COMPAT, COPILOT_HEADERS, GITHUB_COPILOT_MODELS, GITHUB_COPILOT_PROVIDER } from "./models.js";

const OPENAI_COMPLETIONS_API = "openai-completions";
/** pi's variable for a GitHub token sent as is (without it, only a `knightcode login` sign-in makes the models usable). */
export const COPILOT_TOKEN_ENV = "COPILOT_GITHUB_TOKEN";

/** A request without a token ends at once, saying how to sign in (nothing is sent). */
function notSignedIn(request: ProviderStreamRequest) {
  return runProviderRequest(request, () => ({
    name: GITHUB_COPILOT_PROVIDER,
    refuse: () => ({
      kind: "auth",
      message:
        "Not signed in to GitHub Copilot: run `knightcode login github-copilot` (or /login in the terminal UI), " +
        `or set ${COPILOT_TOKEN_ENV}.`,
    }),
    buildPayload: () => ({}),
    send: () => Promise.reject(new Error("unreachable: the request was refused")),
    handle: () => {},
  }));
}

/**
 * Copilot's per-request headers (as pi sends them): who started the request (`user` when the last message is the
 * person's, `agent` for a follow-up after tool results), the intent, and a flag when images are sent.
 */
export function copilotRequestHeaders(messages: readonly LlmMessage[]): Record<string, string> {
  const last = messages[messages.length - 1];
  const images = messages.some(
    (message) =>
      message.role !== "assistant" &&
      Array.isArray(message.content) &&
      message.content.some((part) => part.type === "image"),
  );
  return {
    "X-Initiator": last && last.role !== "user" ? "agent" : "user",
    "Openai-Intent": "conversation-edits",
    ...(images ? { "Copilot-Vision-Request": "true" } : {}),
  };
}

/** The registration of the `github-copilot` provider. */
export function githubCopilotProviderConfig(warn: (message: string) => void): ProviderConfig {
  return {
    api: OPENAI_COMPLETIONS_API,
    apiKey: COPILOT_TOKEN_ENV,
    headers: { ...COPILOT_HEADERS },
    compat: { ...COPILOT_COMPAT },
    models: GITHUB_COPILOT_MODELS.map((model) => ({ ...model })),
    login: [
      {
        id: "device-code",
        label: "GitHub Copilot subscription (device code)",
        login: async (io) => (await import("./oauth.js")).signInWithGitHubCopilot(io),
      },
    ],
    refreshCredential: async (credential, options) =>
      (await import("./oauth.js")).refreshGitHubCopilot(credential, options),
    streamSimple: lazyStreamSimple(async () => {
      const [{ streamOpenAICompletions }, { copilotApiUrl }] = await Promise.all([
        import("../openai-compatible/provider.js"),
        import("./oauth.js"),
      ]);
      return (request: ProviderStreamRequest) => {
        if (!request.apiKey) return notSignedIn(request);
        const domain = request.credential?.enterpriseDomain;
        const baseUrl = copilotApiUrl(request.apiKey, typeof domain === "string" ? domain : undefined);
        return streamOpenAICompletions(
          {
            ...request,
            baseUrl: request.baseUrl || baseUrl,
            headers: { ...request.headers, ...copilotRequestHeaders(request.messages) },
          },
          { warn },
        );
      };
    }),
  };
}

export default function githubCopilotProvider(knightcode: ExtensionAPI): void {
  knightcode.registerProvider(
    GITHUB_COPILOT_PROVIDER,
    githubCopilotProviderConfig((message) => knightcode.log.warn(message)),
    { fallback: true },
  );
}

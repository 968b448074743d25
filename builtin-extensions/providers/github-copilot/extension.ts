/**
 * The `builtin:github-copilot` registration: pi's Copilot catalogue (catalogue.generated.ts), signed in with
 * `knightcode login github-copilot` (oauth.ts, loaded when used). Copilot serves each model with one wire API, named
 * by the model's `api`, and each request goes to the built-in implementation of that API, loaded on its first use:
 * Chat Completions (builtin:openai-compatible), OpenAI's Responses (builtin:openai) or Anthropic's Messages
 * (builtin:anthropic). Every request carries the Copilot token as a bearer, goes to the endpoint the token names,
 * and sends the editor headers Copilot wants. Without a sign-in (or `$COPILOT_GITHUB_TOKEN`) the models are not
 * usable; with a sign-in, only those the account has (account.ts: read at sign-in and at each renewal).
 */
import {
  type AssistantMessageStream,
  type ExtensionAPI,
  type LlmMessage,
  lazyStreamSimple,
  type ProviderConfig,
  type ProviderErrorKind,
  type ProviderStreamRequest,
  runProviderRequest,
} from "@knightcodeai/cli/kit";
import { storedModelIds } from "./account.js";
import { GITHUB_COPILOT_MODELS } from "./catalogue.generated.js";
import {
  COPILOT_APIS,
  COPILOT_COMPAT,
  COPILOT_HEADERS,
  type CopilotApi,
  GITHUB_COPILOT_PROVIDER,
} from "./models.js";

/** pi's variable for a GitHub token sent as is (without it, only a `knightcode login` sign-in makes the models usable). */
export const COPILOT_TOKEN_ENV = "COPILOT_GITHUB_TOKEN";

/** A request that ends at once with `message` (nothing is sent). */
function refused(request: ProviderStreamRequest, kind: ProviderErrorKind, message: string) {
  return runProviderRequest(request, () => ({
    name: GITHUB_COPILOT_PROVIDER,
    refuse: () => ({ kind, message }),
    buildPayload: () => ({}),
    send: () => Promise.reject(new Error("unreachable: the request was refused")),
    handle: () => {},
  }));
}

const notSignedIn = (request: ProviderStreamRequest) =>
  refused(
    request,
    "auth",
    "Not signed in to GitHub Copilot: run `knightcode login github-copilot` (or /login in the terminal UI), " +
      `or set ${COPILOT_TOKEN_ENV}.`,
  );

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

const isCopilotApi = (api: string): api is CopilotApi => (COPILOT_APIS as readonly string[]).includes(api);

/**
 * What one API's implementation needs besides the request: Chat Completions the compat Copilot's endpoint wants;
 * Responses and Messages nothing (a model's thinking-level map reaches them as `request.thinkingLevelMap`, and the
 * Anthropic SDK sends the key as `Authorization: Bearer`, as Copilot wants). A `compat` of the provider's
 * models.json entry goes over them.
 */
function compatFor(api: CopilotApi, request: ProviderStreamRequest): Record<string, unknown> | undefined {
  return api === "openai-completions" ? { ...COPILOT_COMPAT, ...request.compat } : request.compat;
}

/**
 * The request as the API's implementation gets it: Copilot's endpoint and headers, and no `credential`, since
 * those implementations treat a sign-in as their own maker's subscription (ChatGPT's backend, Claude Code's
 * identity), which a Copilot token is not.
 */
function copilotRequest(
  api: CopilotApi,
  request: ProviderStreamRequest,
  baseUrl: string,
): ProviderStreamRequest {
  const { credential: _copilotSignIn, compat: _configured, ...rest } = request;
  const compat = compatFor(api, request);
  return {
    ...rest,
    baseUrl: request.baseUrl || baseUrl,
    headers: { ...request.headers, ...copilotRequestHeaders(request.messages) },
    ...(compat ? { compat } : {}),
  };
}

/** The registration of the `github-copilot` provider. */
export function githubCopilotProviderConfig(): ProviderConfig {
  return {
    // What a model of the provider's models.json entry uses unless it names its own `api`.
    api: "openai-completions",
    apiKey: COPILOT_TOKEN_ENV,
    headers: { ...COPILOT_HEADERS },
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
    // The models the signed-in account has, as the sign-in (and each renewal) read them from Copilot.
    usableModels: (credential) => (credential.type === "oauth" ? storedModelIds(credential) : undefined),
    streamSimple: lazyStreamSimple(async () => {
      const { copilotApiUrl } = await import("./oauth.js");
      return (request: ProviderStreamRequest): AssistantMessageStream => {
        if (!request.apiKey) return notSignedIn(request);
        const api = request.model.api;
        if (!isCopilotApi(api)) {
          return refused(
            request,
            "bad_request",
            `GitHub Copilot serves no "${api}" API (model ${request.model.id}); its APIs: ${COPILOT_APIS.join(", ")}`,
          );
        }
        const domain = request.credential?.enterpriseDomain;
        const baseUrl = copilotApiUrl(request.apiKey, typeof domain === "string" ? domain : undefined);
        // The API's implementation is whatever extension registered it (builtin:openai-compatible, builtin:openai,
        // builtin:anthropic, or a replacement), reached through the model service like any provider would.
        const stream = request.streamApi?.(api);
        if (!stream) {
          return refused(
            request,
            "bad_request",
            `No extension implements the "${api}" API that GitHub Copilot serves ${request.model.id} with`,
          );
        }
        return stream(copilotRequest(api, request, baseUrl));
      };
    }),
  };
}

export default function githubCopilotProvider(knightcode: ExtensionAPI): void {
  knightcode.registerProvider(GITHUB_COPILOT_PROVIDER, githubCopilotProviderConfig(), { fallback: true });
}

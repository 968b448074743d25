/**
 * What the `github-copilot` registration shares by all its models: the endpoint, the editor headers, the wire APIs
 * Copilot serves models with, and the Chat Completions compat. The models themselves (pi's Copilot catalogue, each
 * with its API) are in catalogue.generated.ts, written by scripts/gen-copilot-catalogue.ts.
 */

export const GITHUB_COPILOT_PROVIDER = "github-copilot";
/** Where requests go when the Copilot token names no endpoint of its own (`proxy-ep`). */
export const COPILOT_DEFAULT_BASE_URL = "https://api.individual.githubcopilot.com";

/**
 * The editor identity Copilot's API wants with every request (the token endpoint and the chat endpoint alike);
 * these are the values pi sends.
 */
export const COPILOT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "User-Agent": "GitHubCopilotChat/0.35.0",
  "Editor-Version": "vscode/1.107.0",
  "Editor-Plugin-Version": "copilot-chat/0.35.0",
  "Copilot-Integration-Id": "vscode-chat",
});

/**
 * The wire APIs of Copilot's endpoints, by model: Chat Completions (`/chat/completions`), OpenAI's Responses
 * (`/responses`, the GPT-5 line) and Anthropic's Messages (`/v1/messages`, Claude).
 */
export const COPILOT_APIS = ["openai-completions", "openai-responses", "anthropic-messages"] as const;
export type CopilotApi = (typeof COPILOT_APIS)[number];

/** Copilot's Chat Completions endpoint takes neither `store`, a `developer` role nor `reasoning_effort`. */
export const COPILOT_COMPAT: Readonly<Record<string, unknown>> = Object.freeze({
  supportsStore: false,
  supportsDeveloperRole: false,
  supportsReasoningEffort: false,
});

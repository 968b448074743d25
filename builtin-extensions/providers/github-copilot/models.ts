/**
 * The models a GitHub Copilot subscription offers over Chat Completions, as pi lists them for Copilot's
 * `openai-completions` endpoint (its Claude and GPT-5 entries use other wire APIs there and are left out here).
 * Copilot bills by subscription, so the cost is zero. More can be added in `<agentDir>/models.json` under
 * `"github-copilot"`.
 */
import type { ProviderModelConfig } from "@knightcodeai/cli/kit";

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

/** Copilot's Chat Completions endpoint takes neither `store`, a `developer` role nor `reasoning_effort`. */
export const COPILOT_COMPAT: Readonly<Record<string, unknown>> = Object.freeze({
  supportsStore: false,
  supportsDeveloperRole: false,
  supportsReasoningEffort: false,
});

const FREE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

export const GITHUB_COPILOT_MODELS: readonly ProviderModelConfig[] = [
  {
    id: "gpt-4.1",
    name: "GPT-4.1",
    contextWindow: 128_000,
    maxTokens: 16_384,
    reasoning: false,
    input: ["text", "image"],
    cost: FREE,
  },
  {
    id: "gpt-4o",
    name: "GPT-4o",
    contextWindow: 128_000,
    maxTokens: 4_096,
    reasoning: false,
    input: ["text", "image"],
    cost: FREE,
  },
  {
    id: "gemini-2.5-pro",
    name: "Gemini 2.5 Pro",
    contextWindow: 128_000,
    maxTokens: 64_000,
    reasoning: false,
    input: ["text", "image"],
    cost: FREE,
  },
  {
    id: "gemini-3-flash-preview",
    name: "Gemini 3 Flash Preview",
    contextWindow: 128_000,
    maxTokens: 64_000,
    reasoning: true,
    input: ["text", "image"],
    cost: FREE,
  },
  {
    id: "grok-code-fast-1",
    name: "Grok Code Fast 1",
    contextWindow: 128_000,
    maxTokens: 64_000,
    reasoning: true,
    input: ["text"],
    cost: FREE,
  },
];

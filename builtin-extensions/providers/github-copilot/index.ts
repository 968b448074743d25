/**
 * builtin:github-copilot — the models of a GitHub Copilot subscription (Chat Completions at Copilot's API), signed
 * in with GitHub's device flow:
 *
 *   knightcode login github-copilot
 *   knightcode --model github-copilot/gpt-4.1
 */
export {
  COPILOT_TOKEN_ENV,
  copilotRequestHeaders,
  default,
  githubCopilotProviderConfig,
} from "./extension.js";
export {
  COPILOT_COMPAT,
  COPILOT_DEFAULT_BASE_URL,
  COPILOT_HEADERS,
  GITHUB_COPILOT_MODELS,
  GITHUB_COPILOT_PROVIDER,
} from "./models.js";
export {
  copilotApiUrl,
  copilotBaseUrl,
  enterpriseDomain,
  exchangeForCopilotToken,
  refreshGitHubCopilot,
  signInWithGitHubCopilot,
} from "./oauth.js";

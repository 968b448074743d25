/**
 * builtin:github-copilot — the models of a GitHub Copilot subscription (pi's Copilot catalogue, each over the wire
 * API Copilot serves it with: Chat Completions, OpenAI's Responses or Anthropic's Messages), signed in with GitHub's
 * device flow:
 *
 *   knightcode login github-copilot
 *   knightcode --model github-copilot/gpt-5.5
 */

export {
  type CopilotAccountModels,
  enableCopilotModels,
  parseCopilotModels,
  readCopilotModels,
  storedModelIds,
} from "./account.js";
export { COPILOT_CATALOGUE_SOURCE, GITHUB_COPILOT_MODELS } from "./catalogue.generated.js";
export {
  COPILOT_TOKEN_ENV,
  copilotRequestHeaders,
  default,
  githubCopilotProviderConfig,
} from "./extension.js";
export {
  COPILOT_APIS,
  COPILOT_COMPAT,
  COPILOT_DEFAULT_BASE_URL,
  COPILOT_HEADERS,
  type CopilotApi,
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

/**
 * @knightcodeai/cli/kit: the public API without the SDK. It holds the extension types and the run-time helpers an
 * extension uses (provider kit, shell, tool helpers, the JSON wire projection). The built-in extensions import
 * this entry, so they sit below the composition root that lists them; `@knightcodeai/cli` re-exports all of it.
 */
export type * from "./kernel/api/index.js";
export {
  defineService,
  ExtensionStartupError,
  errorMessage,
  KernelError,
  MissingServiceError,
  SessionStartupFailedError,
  StaleContextError,
} from "./kernel/index.js";
export { defineTool } from "./plugins/kit/define-tool.js";
export { withFileMutationQueue } from "./plugins/kit/file-mutation-queue.js";
export { type AtomicWriteOptions, writeFileAtomic } from "./plugins/kit/files/atomic-write.js";
export { type JsonFileRead, readJsonObjectFile } from "./plugins/kit/files/json-file.js";
export {
  createPrivateWriteStream,
  PRIVATE_FILE_MODE,
  privateTempPath,
  writePrivateFile,
  writePrivateFileSync,
} from "./plugins/kit/files/private-file.js";
export {
  type FrontmatterProblem,
  type ParsedFrontmatter,
  parseFrontmatter,
} from "./plugins/kit/frontmatter.js";
export { convertToLlm, serializeConversation } from "./plugins/kit/messages.js";
export {
  complete,
  getModel,
  getModels,
  type ModelCallContext,
  type ModelCallOptions,
  type ModelRef,
  streamSimple,
} from "./plugins/kit/model-calls.js";
export {
  DEFAULT_SECRET_PATTERNS,
  exactEnv,
  type ShellEnvPolicy,
  toolEnvironment,
} from "./plugins/kit/process/env-policy.js";
export {
  type BashOperations,
  createLocalBashOperations,
  type ExecShellOptions,
  execShellCommand,
  runShellCommand,
  type ShellExit,
  type ShellOptions,
  type ShellResult,
} from "./plugins/kit/process/shell.js";
export { agentFilePath } from "./plugins/kit/provider/agent-file.js";
export {
  AssistantMessageWriter,
  PushStream,
  type WriterOptions,
} from "./plugins/kit/provider/assistant-writer.js";
export { SafeCallIds } from "./plugins/kit/provider/call-ids.js";
export { calculateCost } from "./plugins/kit/provider/cost.js";
export {
  classifyHttpError,
  classifyStreamError,
  classifyTransportError,
  describeValue,
  InvalidHeadersError,
  InvalidPayloadError,
  MalformedEventError,
  type ProviderFailure,
  ProviderRequestError,
  parseRetryAfter,
} from "./plugins/kit/provider/errors.js";
export { headerRecord, postRequest, readBodyText } from "./plugins/kit/provider/http-post.js";
export { lazyStreamSimple, type StreamSimple } from "./plugins/kit/provider/lazy-stream.js";
export {
  failedRequestStream,
  fillUrlVariables,
  lazyCatalogue,
  type NamedModel,
  type NamedProvider,
  namedCompat,
  namedProviderConfig,
} from "./plugins/kit/provider/named-provider.js";
export {
  type AuthorizationCodeOptions,
  authorizationCodeLogin,
  createPkcePair,
  type DeviceAuthorizationOptions,
  type DevicePollAnswer,
  type DevicePollOptions,
  decodeJwtClaims,
  deviceAuthorizationLogin,
  maskSecret,
  OAUTH_BROWSER_TIMEOUT_MS,
  OAUTH_DEVICE_MAX_WAIT_MS,
  OAUTH_REQUEST_TIMEOUT_MS,
  type OAuthCredential,
  OAuthError,
  type OAuthFailure,
  type OAuthJsonAnswer,
  oauthCallbackPort,
  oauthCredential,
  oauthEndpoint,
  oauthFetchJson,
  parseAuthorizationInput,
  pollDeviceCode,
  type RefreshOptions,
  randomState,
  refreshOAuthCredential,
  requestTokens,
  type TokenRequestOptions,
  type TokenResponse,
} from "./plugins/kit/provider/oauth.js";
export { REDACTED, redactSecrets, requestSecrets } from "./plugins/kit/provider/redact.js";
export {
  type ProviderWire,
  runProviderRequest,
  type WireAnswer,
  type WireSend,
} from "./plugins/kit/provider/request-runner.js";
export {
  guardedSseFetch,
  guardSseBody,
  SSE_MAX_EVENT_BYTES,
  SseLineSplitter,
  StreamLineTooLongError,
} from "./plugins/kit/provider/sse-lines.js";
export {
  type AskQuestions,
  type QuestionsRequest,
  type QuestionsUI,
  questionsDialog,
  type UserAnswer,
  type UserQuestion,
} from "./plugins/kit/questions-ui.js";
export {
  applyResourcePatterns,
  type ResourceKind,
  type ResourceScope,
  resourceFilter,
} from "./plugins/kit/resource-patterns.js";
export { type Static, StringEnum, type TSchema, Type } from "./plugins/kit/schema.js";
export * from "./plugins/kit/services/index.js";
export {
  BUILTIN_THEMES,
  builtinTheme,
  type ColorMode,
  Theme,
  type ThemeColorValue,
  ThemedUI,
  type ThemeOptions,
  ThemeSelection,
  themeFromFile,
} from "./plugins/kit/theme.js";
export {
  BM25,
  FIELD_WEIGHTS,
  namespaceNames,
  normalizeToolName,
  parseToolQuery,
  type RankableTool,
  type RankedTool,
  rankTools,
  type ToolQuery,
  toolWords,
  unknownSelections,
} from "./plugins/kit/tool-ranking.js";
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINE_CHARS,
  DEFAULT_MAX_LINES,
  formatSize,
  type TruncationOptions,
  type TruncationResult,
  truncateHead,
  truncateLine,
  truncateTail,
} from "./plugins/kit/truncate.js";
export { addUsage, emptyUsage } from "./plugins/kit/usage.js";
export { type SafeJson, stringifySafely, toJsonSafe } from "./plugins/kit/util/safe-json.js";
export { VERSION } from "./plugins/kit/version.js";
export { findControl, isWidgetView, VIEW_MAX_DEPTH, viewProblem, viewToLines } from "./plugins/kit/views.js";
export { RPC_MAX_FRAME_BYTES } from "./plugins/kit/wire/frames.js";
export {
  type JsonAgentSessionEvent,
  toJsonEvent,
  type WireSpec,
  wireEvents,
} from "./plugins/kit/wire/json-event.js";
export { type JsonlItem, JsonlReader } from "./plugins/kit/wire/jsonl.js";
// What builtin:mcp still reads the files with (its move to `ctx.mcpConfig` is under way).

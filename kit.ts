/**
 * @knightcodeai/cli/kit: the public API without the SDK. It holds the extension types and the run-time helpers an
 * extension uses (provider kit, shell, tool helpers, the JSON wire projection). The built-in extensions import
 * this entry, so they sit below the composition root that lists them; `@knightcodeai/cli` re-exports all of it.
 */
export type * from "./kernel/api/index.js";
export {
  ExtensionStartupError,
  KernelError,
  MissingServiceError,
  SessionStartupFailedError,
  StaleContextError,
} from "./kernel/index.js";
export type { RegisteredFlag } from "./plugins/flag-registry/flag-registry.js";
export { defineTool } from "./plugins/kit/define-tool.js";
export { withFileMutationQueue } from "./plugins/kit/file-mutation-queue.js";
export { AssistantMessageWriter, PushStream } from "./plugins/kit/provider/assistant-writer.js";
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
export {
  type ProviderWire,
  runProviderRequest,
  type WireAnswer,
  type WireSend,
} from "./plugins/kit/provider/request-runner.js";
export {
  BUILTIN_THEMES,
  builtinTheme,
  type ColorMode,
  Theme,
  type ThemeColorValue,
  type ThemeOptions,
  ThemeSelection,
} from "./plugins/kit/theme.js";
export { addUsage, emptyUsage } from "./plugins/kit/usage.js";
export { VERSION } from "./plugins/kit/version.js";
export {
  type JsonAgentSessionEvent,
  toJsonEvent,
  type WireSpec,
  wireEvents,
} from "./plugins/kit/wire/json-event.js";
export type { RegisteredMode } from "./plugins/mode-registry/mode-registry.js";
export { runShellCommand, type ShellOptions, type ShellResult } from "./plugins/process/shell.js";

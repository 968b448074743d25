/**
 * @knightcodeai/cli: the public API. Extensions import types from here (and runtime helpers such as
 * ExtensionStartupError and defineTool); hosts and applications use the SDK exported here.
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
export { addUsage, emptyUsage } from "./plugins/messages/usage.js";
export type { RegisteredMode } from "./plugins/mode-registry/mode-registry.js";
export { runShellCommand, type ShellOptions, type ShellResult } from "./plugins/process/shell.js";
export { AssistantMessageWriter, PushStream } from "./plugins/provider-kit/assistant-writer.js";
export { calculateCost } from "./plugins/provider-kit/cost.js";
export {
  classifyHttpError,
  classifyTransportError,
  type ProviderFailure,
  parseRetryAfter,
} from "./plugins/provider-kit/errors.js";
export {
  AgentSessionHandle,
  type CreateAgentSessionOptions,
  createAgentSession,
  createStandardKernel,
  type SessionChoice,
  type SessionEvent,
} from "./plugins/sdk/create-agent-session.js";
export { RpcClient, type RpcClientOptions, type UiAnswer, type UiRequest } from "./plugins/sdk/rpc-client.js";
export { VERSION } from "./plugins/sdk/version.js";
export { defineTool } from "./plugins/tool-registry/define-tool.js";
export { withFileMutationQueue } from "./plugins/tool-registry/file-mutation-queue.js";
export { type JsonAgentSessionEvent, toJsonEvent } from "./plugins/wire/json-event.js";

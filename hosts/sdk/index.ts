/** The SDK: what `@knightcodeai/cli` adds to the kit for hosts and applications. */

export * from "../../builtin-extensions/core-tools/tools.js";
export type { RegisteredFlag } from "../../plugins/flag-registry/flag-registry.js";
export type { RegisteredMode } from "../../plugins/mode-registry/mode-registry.js";
export { resolveAgentDir as getAgentDir } from "../../plugins/settings/agent-dir.js";
export {
  AppServerClient,
  type AppServerClientOptions,
  type AppServerItem,
  type AppServerMessageCheck,
  type AppServerMethod,
  type AppServerNotification,
  type AppServerNotificationName,
  type AppServerParams,
  AppServerRequestError,
  type AppServerResult,
  type AppServerTransport,
  type AppServerTurn,
  connectAppServer,
  type SpawnedAppServer,
  spawnAppServer,
  writeAppServerSchema,
} from "./app-server-client.js";
export { BUILTIN_MANIFEST, type BuiltinManifest, type BuiltinName } from "./builtin-manifest.js";
export {
  AgentSessionHandle,
  type CreateAgentSessionOptions,
  createAgentSession,
  createStandardKernel,
  type SessionChoice,
  type SessionEvent,
} from "./create-agent-session.js";
export { RpcClient, type RpcClientOptions, type UiAnswer, type UiRequest } from "./rpc-client.js";
export { createStandaloneHostServices as createHostServices } from "./session-plugins.js";

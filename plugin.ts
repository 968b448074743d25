/**
 * @knightcodeai/cli/plugin: the advanced surface for plugins that provide or replace kernel services.
 * Not needed for ordinary extensions, and less stable than the main entry point.
 */

export { packageModules } from "./hosts/sdk/package-modules.js";
export { fileSessionStore, sdkTokens, standardPlugins } from "./hosts/sdk/session-plugins.js";
export {
  Container,
  type ContextFactory,
  coreTokens,
  createKernel,
  createToken,
  type Disposable,
  DisposableStore,
  definePlugin,
  type ErrorPolicy,
  type EventKind,
  type EventSpec,
  ExtensionHandlerError,
  ExtensionLoader,
  type ExtensionSource,
  eventCatalog,
  eventNames,
  HookBus,
  type Kernel,
  type KernelOptions,
  type PluginDefinition,
  SessionRuntime,
  SessionScope,
  type Token,
  toDisposable,
} from "./kernel/index.js";
export { AgentSession } from "./plugins/agent-loop/agent-session.js";
export { CommandRegistry } from "./plugins/command-registry/command-registry.js";
export { FlagRegistry } from "./plugins/flag-registry/flag-registry.js";
export { closestName } from "./plugins/kit/closest-name.js";
export { ModelService } from "./plugins/model-registry/model-service.js";
export {
  type ConfiguredPackage,
  knownProjectTrust,
  PackageError,
  PackageManager,
  type ResolvedResource,
  type ResolvedResources,
} from "./plugins/packages/package-manager.js";
export { type PackageSource, PackageSourceError, parsePackageSource } from "./plugins/packages/source.js";
export type {
  CatalogEntry,
  CatalogPageOptions,
  CatalogSession,
  SessionCatalog,
} from "./plugins/session-store/catalog.js";
export { entryShapeProblem } from "./plugins/session-store/entry-schema.js";
export { entryProblem, headerProblem } from "./plugins/session-store/file-format.js";
export {
  cwdSessionDir,
  idFromFileName,
  resolveSessionRoot,
  SESSION_VERSION,
  sessionFileName,
} from "./plugins/session-store/paths.js";
export { assertValidSessionId, SessionManager } from "./plugins/session-store/session-manager.js";
export {
  extensionCacheDir,
  globalSettingsPath,
  projectConfigDir,
  projectSettingsPath,
  resolveAgentDir,
} from "./plugins/settings/agent-dir.js";
export { mcpFilePaths, validateMcpEntry } from "./plugins/settings/mcp-config.js";
export { addMcpServer, listMcpServers, removeMcpServer } from "./plugins/settings/mcp-files.js";
export { type LoadSettingsOptions, type Settings, SettingsFileSchema } from "./plugins/settings/settings.js";
export type { ProjectTrustDecision, ResolveProjectTrustOptions } from "./plugins/settings/trust.js";
export {
  type SessionStore,
  type SettingsLoader,
  serviceTokens,
  type TrustResolver,
} from "./plugins/tokens.js";
export { ToolRegistry } from "./plugins/tool-registry/tool-registry.js";

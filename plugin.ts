/**
 * @knightcodeai/cli/plugin: the advanced surface for plugins that provide or replace kernel services.
 * Not needed for ordinary extensions, and less stable than the main entry point.
 */

export { packageModules } from "./hosts/sdk/package-modules.js";
export {
  Container,
  type ContextFactory,
  closestName,
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
export { CommandRegistry } from "./plugins/command-registry/command-registry.js";
export { FlagRegistry } from "./plugins/flag-registry/flag-registry.js";
export { extensionCacheDir, resolveAgentDir } from "./plugins/settings/agent-dir.js";

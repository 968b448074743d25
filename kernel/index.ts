/** The kernel's exports, for the package entry points. */

export { errorCodes } from "./api/error-codes.js";
export type * from "./api/index.js";
export { Container, definePlugin, type PluginDefinition, SessionScope } from "./container/container.js";
export { type ContextFactory, coreTokens } from "./container/core-tokens.js";
export { createToken, type ServiceOf, type Token, type TokenScope } from "./container/tokens.js";
export {
  ExtensionLoadError,
  ExtensionStartupError,
  isExtensionStartupError,
  KernelError,
  MissingServiceError,
  SessionStartupFailedError,
  StaleContextError,
} from "./errors.js";
export {
  type ErrorPolicy,
  type EventKind,
  type EventSpec,
  eventCatalog,
  eventNames,
} from "./events/catalog.js";
export {
  ExtensionHandlerError,
  type GateOptions,
  type HandlerErrorReport,
  type HandlerOwner,
  HookBus,
  type TransformOptions,
} from "./events/hook-bus.js";
export {
  ExtensionLoader,
  type ExtensionLoadFailure,
  type ExtensionSource,
  type LoadedExtension,
} from "./extensions/loader.js";
export { createKernel, type Kernel, type KernelOptions, type SessionOptions } from "./kernel.js";
export {
  type Disposable,
  DisposableStore,
  type DisposableTracker,
  setDisposableTracker,
  toDisposable,
} from "./lifecycle/disposable.js";
export { headlessUI } from "./lifecycle/fallback-context.js";
export { type ExtensionErrorReport, type RuntimeState, SessionRuntime } from "./lifecycle/session-runtime.js";
export { closestName } from "./util/closest-name.js";

/** The kernel's exports, for the package entry points. */

export { errorCodes } from "./api/error-codes.js";
export * from "./api/event-catalog.js";
export type * from "./api/index.js";
export * from "./container/container.js";
export * from "./container/core-tokens.js";
export * from "./container/tokens.js";
export * from "./errors.js";
export * from "./events/hook-bus.js";
export * from "./extensions/loader.js";
export { defineService, ServiceDirectory, SharedServiceInstances } from "./extensions/services.js";
export * from "./kernel.js";
export * from "./lifecycle/disposable.js";
export * from "./lifecycle/session-binding.js";
export * from "./lifecycle/session-runtime.js";

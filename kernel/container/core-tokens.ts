/**
 * The tokens the kernel itself knows: the session's hook bus and runtime, the context factory, and the services
 * that ExtensionAPI methods delegate to. The kernel knows only method names; what a tool, a command or a provider
 * is belongs to the plugins that provide these tokens.
 */
import type { ExtensionCommandContext, ExtensionContext } from "../api/context.js";
import type { ExtensionInfo } from "../api/extension-api.js";
import type { HookBus } from "../events/hook-bus.js";
import type { SessionRuntime } from "../lifecycle/session-runtime.js";
import { createToken } from "./tokens.js";

/**
 * A service that ExtensionAPI methods delegate to: `knightcode.registerTool(def)` calls
 * `service.registerTool(owner, def)`. A returned disposable becomes a registration owned by the extension, so
 * reload and shutdown remove it.
 */
export type ApiService = { [method: string]: ((owner: ExtensionInfo, ...args: any[]) => unknown) | unknown };

/** Builds the `ctx` handlers, commands and tools receive. */
export interface ContextFactory {
  create(): ExtensionContext;
  createCommandContext(): ExtensionCommandContext;
}

export const coreTokens = Object.freeze({
  hooks: createToken<HookBus>("core.hooks", { scope: "session", description: "the session's hook bus" }),
  runtime: createToken<SessionRuntime>("core.runtime", {
    scope: "session",
    description: "the session runtime",
  }),
  context: createToken<ContextFactory>("core.context", {
    scope: "session",
    description: "builds ExtensionContext objects",
  }),
  tools: createToken<ApiService>("core.tools", { scope: "session", description: "tool registry" }),
  commands: createToken<ApiService>("core.commands", {
    scope: "session",
    description: "commands and shortcuts",
  }),
  flags: createToken<ApiService>("core.flags", { scope: "session", description: "CLI flags of extensions" }),
  renderers: createToken<ApiService>("core.renderers", {
    scope: "session",
    description: "message and entry renderers",
  }),
  models: createToken<ApiService>("core.models", {
    scope: "session",
    description: "providers and virtual models",
  }),
  mcpServers: createToken<ApiService>("core.mcpServers", {
    scope: "session",
    description: "MCP server registrations",
  }),
  agent: createToken<ApiService>("core.agent", {
    scope: "session",
    description: "messages, entries, model and thinking level of the session",
  }),
  process: createToken<ApiService>("core.process", { scope: "session", description: "exec()" }),
  settings: createToken<ApiService>("core.settings", { scope: "session", description: "getSettings()" }),
  modes: createToken<ApiService>("core.modes", { scope: "session", description: "host modes" }),
});

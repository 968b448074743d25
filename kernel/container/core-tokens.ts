/**
 * The tokens the kernel itself knows: the session's hook bus and runtime, the context factory, and the services
 * that ExtensionAPI methods delegate to. Each token carries its service interface (kernel/api/services.ts), so a
 * consumer resolves a typed service and a replacement must implement the same interface.
 */
import type { ExtensionCommandContext, ExtensionContext } from "../api/context.js";
import type {
  AgentApiService,
  CommandService,
  FlagService,
  McpServerService,
  ModelApiService,
  ModeService,
  ProcessApiService,
  RendererService,
  SettingsApiService,
  ToolService,
  ToolSettingsService,
} from "../api/services.js";
import type { HookBus } from "../events/hook-bus.js";
import type { SessionRuntime } from "../lifecycle/session-runtime.js";
import { sessionToken as session } from "./tokens.js";

/** Builds the `ctx` handlers, commands and tools receive. */
export interface ContextFactory {
  create(): ExtensionContext;
  createCommandContext(): ExtensionCommandContext;
}

export const coreTokens = Object.freeze({
  hooks: session<HookBus>("core.hooks", "the session's hook bus"),
  runtime: session<SessionRuntime>("core.runtime", "the session runtime"),
  context: session<ContextFactory>("core.context", "builds ExtensionContext objects"),
  tools: session<ToolService>("core.tools", "tool registry"),
  commands: session<CommandService>("core.commands", "commands and shortcuts"),
  flags: session<FlagService>("core.flags", "CLI flags of extensions"),
  renderers: session<RendererService>("core.renderers", "message and entry renderers"),
  models: session<ModelApiService>("core.models", "providers and virtual models"),
  mcpServers: session<McpServerService>("core.mcpServers", "MCP server registrations"),
  agent: session<AgentApiService>("core.agent", "messages, entries, model and thinking level of the session"),
  process: session<ProcessApiService>("core.process", "exec()"),
  settings: session<SettingsApiService>("core.settings", "getSettings()"),
  modes: session<ModeService>("core.modes", "host modes"),
  toolSettings: session<ToolSettingsService>("core.toolSettings", "tools.json entries extensions declare"),
});

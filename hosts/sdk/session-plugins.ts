/**
 * The standard services of a KnightCode session, each a plugin behind a token. A host replaces one by providing
 * the same token again (for example a different session store or agent loop).
 */
import {
  type ApiService,
  coreTokens,
  createToken,
  definePlugin,
  type ExtensionUIContext,
  type HostMode,
  type PluginDefinition,
  type SessionRuntime,
} from "../../kernel/index.js";
import { AgentSession, type AgentSessionDeps } from "../../plugins/agent-loop/agent-session.js";
import { createContextFactory, type SessionReplacer } from "../../plugins/agent-loop/context-factory.js";
import type { SessionLog } from "../../plugins/agent-loop/session-log.js";
import { CommandRegistry } from "../../plugins/command-registry/command-registry.js";
import { FlagRegistry } from "../../plugins/flag-registry/flag-registry.js";
import { McpServerRegistry } from "../../plugins/mcp-servers/mcp-server-registry.js";
import { ModeRegistry } from "../../plugins/mode-registry/mode-registry.js";
import { ModelService } from "../../plugins/model-registry/model-service.js";
import { ProviderStore } from "../../plugins/model-registry/provider-store.js";
import { ProcessService } from "../../plugins/process/process-service.js";
import { RendererRegistry } from "../../plugins/renderers/renderer-registry.js";
import type { ContextFile } from "../../plugins/resources/context-files.js";
import {
  buildSystemPrompt,
  defaultSystemPromptOptions,
  type PromptTool,
} from "../../plugins/resources/system-prompt.js";
import type { Settings } from "../../plugins/settings/settings.js";
import { ToolRegistry } from "../../plugins/tool-registry/tool-registry.js";

/** What the host decided for this session before the services are created. */
export interface SessionConfig {
  cwd: string;
  agentDir: string;
  mode: HostMode;
  ui: ExtensionUIContext;
  hasUI: boolean;
  projectTrusted: boolean;
  settings: Settings;
  flagValues: Record<string, boolean | string>;
  /** AGENTS.md / CLAUDE.md files for the system prompt, discovered before the session started. */
  contextFiles: ContextFile[];
  /** SYSTEM.md and APPEND_SYSTEM.md (the project's only when it is trusted). */
  promptFiles: { customPrompt?: string; appendPrompt?: string };
  /** Diagnostics for the host to show (stderr in print mode). */
  warn(message: string): void;
  shutdown(): void;
  replacer?: SessionReplacer;
}

export const sdkTokens = Object.freeze({
  config: createToken<SessionConfig>("sdk.config", {
    scope: "session",
    description: "the host's session settings",
  }),
  sessionLog: createToken<SessionLog>("sdk.sessionLog", {
    scope: "session",
    description: "the session store",
  }),
  providers: createToken<ProviderStore>("models.providers", {
    scope: "root",
    description: "process-wide provider registrations",
  }),
  agent: createToken<AgentSession>("agent.session", { scope: "session", description: "the agent loop" }),
});

const asApi = <T>(service: T) => service as unknown as ApiService;

export function standardPlugins(): PluginDefinition<any, any>[] {
  return [
    definePlugin({
      id: "plugin:provider-store",
      provides: sdkTokens.providers,
      create: () => new ProviderStore(),
    }),
    definePlugin({
      id: "plugin:tool-registry",
      provides: coreTokens.tools,
      deps: { config: sdkTokens.config },
      create: ({ config }) => asApi(new ToolRegistry((message) => config.warn(message))),
    }),
    definePlugin({
      id: "plugin:model-registry",
      provides: coreTokens.models,
      deps: {
        store: sdkTokens.providers,
        runtime: coreTokens.runtime,
        config: sdkTokens.config,
        log: sdkTokens.sessionLog,
      },
      create: ({ store, runtime, config, log }) =>
        asApi(
          new ModelService({
            store,
            bus: runtime.bus,
            context: () => runtime.context(),
            agentDir: config.agentDir,
            sessionId: () => log.getSessionId(),
            currentModel: () => (runtime.scope.resolve(sdkTokens.agent) as AgentSession).model,
            warn: (message) => config.warn(message),
            pendingReload: () => runtime.pendingReload,
          }),
        ),
    }),
    definePlugin({
      id: "plugin:agent-loop",
      provides: sdkTokens.agent,
      deps: {
        runtime: coreTokens.runtime,
        tools: coreTokens.tools,
        models: coreTokens.models,
        log: sdkTokens.sessionLog,
        config: sdkTokens.config,
        commands: coreTokens.commands,
      },
      create: ({ runtime, tools, models, log, config, commands }) => {
        const registry = tools as unknown as ToolRegistry;
        const deps: AgentSessionDeps = {
          runtime,
          tools: registry,
          models: models as unknown as ModelService,
          session: log,
          retry: () => config.settings.get("retry"),
          cacheWarming: () => config.settings.get("cacheWarming"),
          systemPromptOptions: (active) =>
            defaultSystemPromptOptions({
              cwd: config.cwd,
              tools: active.map((name) => promptTool(registry, name)),
              contextFiles: config.contextFiles,
              ...config.promptFiles,
            }),
          renderSystemPrompt: (options, original) =>
            buildSystemPrompt(options, {
              ...(original ? { original } : {}),
              tools: registry.getAllTools().map((t) => promptTool(registry, t.name)),
            }),
          runCommand: (name, args) => runCommand(runtime, commands as unknown as CommandRegistry, name, args),
        };
        return new AgentSession(deps);
      },
      dispose: (agent) => agent.dispose(),
    }),
    definePlugin({
      id: "plugin:agent-api",
      provides: coreTokens.agent,
      deps: { agent: sdkTokens.agent },
      create: ({ agent }) => asApi(agent),
    }),
    definePlugin({
      id: "plugin:context",
      provides: coreTokens.context,
      deps: {
        runtime: coreTokens.runtime,
        models: coreTokens.models,
        log: sdkTokens.sessionLog,
        config: sdkTokens.config,
      },
      create: ({ runtime, models, log, config }) =>
        createContextFactory({
          runtime,
          agent: () => runtime.scope.resolve(sdkTokens.agent),
          models: models as unknown as ModelService,
          session: log,
          ui: () => config.ui,
          hasUI: () => config.hasUI,
          mode: config.mode,
          projectTrusted: config.projectTrusted,
          shutdown: config.shutdown,
          ...(config.replacer ? { replacer: config.replacer } : {}),
        }),
    }),
    definePlugin({
      id: "plugin:command-registry",
      provides: coreTokens.commands,
      create: () => asApi(new CommandRegistry()),
    }),
    definePlugin({
      id: "plugin:flag-registry",
      provides: coreTokens.flags,
      deps: { config: sdkTokens.config },
      create: ({ config }) => {
        const flags = new FlagRegistry();
        flags.setValues(config.flagValues);
        return asApi(flags);
      },
    }),
    definePlugin({
      id: "plugin:renderers",
      provides: coreTokens.renderers,
      create: () => asApi(new RendererRegistry()),
    }),
    definePlugin({
      id: "plugin:mode-registry",
      provides: coreTokens.modes,
      create: () => asApi(new ModeRegistry()),
    }),
    definePlugin({
      id: "plugin:mcp-servers",
      provides: coreTokens.mcpServers,
      deps: { runtime: coreTokens.runtime },
      create: ({ runtime }) => asApi(new McpServerRegistry(runtime.bus, () => runtime.context())),
    }),
    definePlugin({
      id: "plugin:process",
      provides: coreTokens.process,
      deps: { config: sdkTokens.config },
      create: ({ config }) => asApi(new ProcessService(config.cwd)),
    }),
    definePlugin({
      id: "plugin:settings",
      provides: coreTokens.settings,
      deps: { config: sdkTokens.config },
      create: ({ config }) => asApi({ getSettings: () => config.settings.all() }),
    }),
  ];
}

function promptTool(registry: ToolRegistry, name: string): PromptTool {
  const definition = registry.get(name)?.definition;
  return {
    name,
    ...(definition?.promptSnippet ? { promptSnippet: definition.promptSnippet } : {}),
    ...(definition?.promptGuidelines ? { promptGuidelines: definition.promptGuidelines } : {}),
  };
}

/** `/name args`: runs the command with a command context. Failures are reported and rethrown. */
async function runCommand(
  runtime: SessionRuntime,
  commands: CommandRegistry,
  name: string,
  args: string,
): Promise<boolean> {
  const command = commands.get(name);
  if (!command) return false;
  runtime.assertCanPrompt(`run /${name}`);
  try {
    await command.handler(args, runtime.commandContext());
  } catch (error) {
    runtime.handleError({ owner: { id: command.owner, order: 0 }, event: `command /${name}`, error });
    throw error;
  }
  return true;
}

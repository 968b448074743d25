/**
 * The standard services of a KnightCode session, each a plugin behind a token. A host replaces one by providing
 * the same token again (for example a different session store or agent loop).
 */
import { join } from "node:path";
import {
  type AgentApiService,
  coreTokens,
  createToken,
  type DiscoveredResources,
  definePlugin,
  type ExtensionInfo,
  type ExtensionUIContext,
  type HostMode,
  type PluginDefinition,
  SessionRuntime,
  type Token,
} from "../../kernel/index.js";
import { AgentSession, type AgentSessionDeps } from "../../plugins/agent-loop/agent-session.js";
import { createContextFactory, type SessionReplacer } from "../../plugins/agent-loop/context-factory.js";
import type { SessionLog } from "../../plugins/agent-loop/session-log.js";
import { CommandRegistry } from "../../plugins/command-registry/command-registry.js";
import { runCommand } from "../../plugins/command-registry/run-command.js";
import { FlagRegistry } from "../../plugins/flag-registry/flag-registry.js";
import {
  createHostServices,
  createSessionFaces,
  type HostFaceDeps,
} from "../../plugins/host-face/host-face.js";
import { publishModelRuntime, setSessionModelsResolver } from "../../plugins/kit/model-calls.js";
import { toJsonSafe } from "../../plugins/kit/util/safe-json.js";
import { McpServerRegistry } from "../../plugins/mcp-servers/mcp-server-registry.js";
import { ModeRegistry } from "../../plugins/mode-registry/mode-registry.js";
import { ModelService } from "../../plugins/model-registry/model-service.js";
import { ProviderStore } from "../../plugins/model-registry/provider-store.js";
import { PackageManager } from "../../plugins/packages/package-manager.js";
import { ProcessService } from "../../plugins/process/process-service.js";
import { RendererRegistry } from "../../plugins/renderers/renderer-registry.js";
import type { ContextFile } from "../../plugins/resources/context-files.js";
import {
  ARCHIVE_DIR,
  archiveSession,
  removeArchivedSession,
  unarchiveSession,
} from "../../plugins/session-store/archive.js";
import { FileCatalog } from "../../plugins/session-store/catalog.js";
import { sessionInfoOf } from "../../plugins/session-store/list.js";
import { resolveSessionRoot } from "../../plugins/session-store/paths.js";
import { SessionManager } from "../../plugins/session-store/session-manager.js";
import {
  forkFile,
  readBranch,
  readBranchTail,
  readHeader,
  setSessionCwd,
} from "../../plugins/session-store/stored-files.js";
import { mcpConfigFiles } from "../../plugins/settings/mcp-access.js";
import { loadSettings, type Settings } from "../../plugins/settings/settings.js";
import { writeSettingsKey } from "../../plugins/settings/settings-write.js";
import { ToolsConfigFile } from "../../plugins/settings/tools-config.js";
import {
  findProtectedInputs,
  findSavedDecision,
  readTrustDecisions,
  resolveProjectTrust,
  saveTrustDecision,
} from "../../plugins/settings/trust.js";
import {
  type McpConfigStore,
  type PackageService,
  type SessionStore,
  type SettingsLoader,
  serviceTokens,
  type TrustResolver,
} from "../../plugins/tokens.js";
import { ToolRegistry } from "../../plugins/tool-registry/tool-registry.js";
import { ToolSettingsRegistry } from "../../plugins/tool-settings/tool-settings-registry.js";

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
  /** Keys by provider for this run only (`--api-key`). */
  apiKeys?: Readonly<Record<string, string>>;
  /** AGENTS.md / CLAUDE.md files for the system prompt, discovered before the session started. */
  contextFiles: ContextFile[];
  /** SYSTEM.md and APPEND_SYSTEM.md (the project's only when it is trusted). */
  promptFiles: { customPrompt?: string; appendPrompt?: string };
  /**
   * What `resources_discover` handlers contributed at startup or the last reload: paths of skills, prompt
   * templates and themes. While the event runs it grows handler by handler; extensions read it with
   * `ctx.getDiscoveredResources()` (builtin:skills and builtin:prompt-templates do).
   */
  discoveredResources?: DiscoveredResources;
  /** Turns after which a run that wants another ends with an error (`--max-turns`). */
  maxTurns?: number;
  /** Diagnostics for the host to show (stderr in print mode). */
  warn(message: string): void;
  shutdown(): void;
  replacer?: SessionReplacer;
}

export type { DiscoveredResources };

export const sdkTokens = Object.freeze({
  config: createToken<SessionConfig>("sdk.config", {
    scope: "session",
    description: "the host's session settings",
  }),
  sessionLog: createToken<SessionLog>("sdk.sessionLog", {
    scope: "session",
    description: "the session log the session store opened",
  }),
});

/** The standard session store: JSONL files under the agent directory. */
export const fileSessionStore: SessionStore = {
  create: (options) => SessionManager.create(options),
  open: (path, options) => SessionManager.open(path, options),
  continueRecent: (options) => SessionManager.continueRecent(options),
  inMemory: (cwd, id) => SessionManager.inMemory(cwd, id),
  forkFrom: (source, options) => SessionManager.forkFrom(source, options),
  list: (options) => SessionManager.list(options),
  listAll: (options) => SessionManager.listAll(options),
  findById: (idOrPrefix, options) => SessionManager.findById(idOrPrefix, options),
  info: (path) => sessionInfoOf(path),
  archiveLocation: (options) => ({
    agentDir: options.agentDir,
    sessionDir: join(resolveSessionRoot(options), ARCHIVE_DIR),
  }),
  archive: (path, options) => archiveSession(resolveSessionRoot(options), path),
  unarchive: (path, options) => unarchiveSession(resolveSessionRoot(options), path),
  remove: (path, options) => removeArchivedSession(resolveSessionRoot(options), path),
  catalog: (options) => new FileCatalog(resolveSessionRoot(options)),
  header: readHeader,
  readBranch,
  readBranchTail,
  fork: forkFile,
  setCwd: setSessionCwd,
};

/** The standard settings service: settings.json files, merged, and one-key changes. */
export const fileSettings: SettingsLoader = { load: loadSettings, write: writeSettingsKey };

/** The standard trust service: the decision order of trust.ts, and trust.json. */
export const fileTrust: TrustResolver = {
  resolve: resolveProjectTrust,
  saved: (agentDir, cwd, warn) => findSavedDecision(readTrustDecisions(agentDir, warn), cwd),
  save: (agentDir, cwd, trusted) => saveTrustDecision({ agentDir, path: cwd, trusted }),
  protectedInputs: findProtectedInputs,
};

/** The standard `mcp.json` files. */
export const fileMcpConfig: McpConfigStore = { files: mcpConfigFiles };

/** The standard packages: the package manager over the settings' `packages` and resource folders. */
export const packageService: PackageService = {
  resolve: ({ agentDir, cwd, ...options }) => new PackageManager({ agentDir, cwd }).resolve(options),
  setEnabled: ({ agentDir, cwd }, resource, enabled) =>
    new PackageManager({ agentDir, cwd }).setEnabled(resource, enabled),
};

/** The host face over a container's services (`ModeContext.host`, and the parts `ctx` carries). */
export function hostFaceDeps(
  scope: { resolve<T>(token: Token<T>): T },
  options: {
    agentDir: string;
    sessionDir?: string;
    declaredTools(): ReturnType<HostFaceDeps["declaredTools"]>;
    warn?(message: string): void;
  },
): HostFaceDeps {
  return {
    agentDir: options.agentDir,
    ...(options.sessionDir ? { sessionDir: options.sessionDir } : {}),
    store: scope.resolve(s.sessionStore),
    settings: scope.resolve(s.settings),
    trust: scope.resolve(s.trust),
    toolConfig: scope.resolve(s.toolConfig),
    mcpConfig: scope.resolve(s.mcpConfig),
    packages: scope.resolve(s.packages),
    declaredTools: options.declaredTools,
    ...(options.warn ? { warn: options.warn } : {}),
  };
}

export { createHostServices };

/** The face the agent loop shows to `knightcode.sendMessage()` and the other session methods. */
function agentApi(agent: AgentSession, runtime: SessionRuntime): AgentApiService {
  // What an extension hands over to be stored must be writable as JSON: a part that is not (circular, a BigInt,
  // a throwing getter) is replaced here, where the extension is known, and reported against it.
  const writable = (owner: ExtensionInfo, what: string, value: unknown, root: string): unknown => {
    const safe = toJsonSafe(value, root);
    if (safe.replaced.length > 0) {
      const problem = `${what} was given a value that cannot be written as JSON: ${safe.replaced.join("; ")}`;
      runtime.bus.report(owner, what, new Error(problem));
    }
    return safe.value;
  };
  return {
    sendMessage: (owner, message, options) =>
      agent.sendMessage(
        owner,
        message?.details === undefined
          ? message
          : { ...message, details: writable(owner, "sendMessage", message.details, "details") },
        options,
      ),
    sendUserMessage: (content, options) => agent.sendUserMessage(undefined, content, options),
    appendEntry: (customType, data, owner) =>
      agent.appendEntry(owner, customType, owner ? writable(owner, "appendEntry", data, "data") : data),
    setSessionName: (name) => agent.setSessionName(undefined, name),
    getSessionName: () => agent.getSessionName(),
    setLabel: (entryId, label) => agent.setLabel(undefined, entryId, label),
    setModel: (owner, model) => agent.setModel(owner, model),
    getThinkingLevel: () => agent.getThinkingLevel(),
    setThinkingLevel: (level) => agent.setThinkingLevel(undefined, level),
  };
}

const s = serviceTokens;

/** How each open session's model service withdraws itself from the module-scope model calls when it ends. */
const withdrawals = new WeakMap<ModelService, () => void>();

export function standardPlugins(): PluginDefinition<any, any>[] {
  // A model call bound to a session whose model service is not made yet (a factory calling getModel()) makes it.
  setSessionModelsResolver((session) =>
    session instanceof SessionRuntime && session.state !== "disposed" && session.scope.has(s.models)
      ? session.scope.resolve(s.models).runtime()
      : undefined,
  );
  return [
    definePlugin({ id: "plugin:session-store", provides: s.sessionStore, create: () => fileSessionStore }),
    definePlugin({ id: "plugin:settings", provides: s.settings, create: () => fileSettings }),
    definePlugin({ id: "plugin:trust", provides: s.trust, create: () => fileTrust }),
    definePlugin({ id: "plugin:tool-config", provides: s.toolConfig, create: () => new ToolsConfigFile() }),
    definePlugin({ id: "plugin:mcp-config", provides: s.mcpConfig, create: () => fileMcpConfig }),
    definePlugin({ id: "plugin:packages", provides: s.packages, create: () => packageService }),
    definePlugin({
      id: "plugin:tool-settings",
      provides: s.toolSettings,
      create: () => new ToolSettingsRegistry(),
    }),
    definePlugin({ id: "plugin:provider-store", provides: s.providers, create: () => new ProviderStore() }),
    definePlugin({
      id: "plugin:tool-registry",
      provides: s.toolRegistry,
      deps: { config: sdkTokens.config },
      create: ({ config }) => new ToolRegistry((message) => config.warn(message)),
    }),
    definePlugin({
      id: "plugin:model-registry",
      provides: s.models,
      deps: {
        store: s.providers,
        runtime: coreTokens.runtime,
        config: sdkTokens.config,
        log: sdkTokens.sessionLog,
      },
      create: ({ store, runtime, config, log }) => {
        const service = new ModelService({
          store,
          bus: runtime.bus,
          context: () => runtime.context(),
          agentDir: config.agentDir,
          sessionId: () => log.getSessionId(),
          currentModel: () => runtime.scope.resolve(s.agent).model,
          retry: () => config.settings.get("retry"),
          ...(config.apiKeys ? { apiKeys: config.apiKeys } : {}),
          warn: (message) => config.warn(message),
          transport: () => config.settings.get("transport"),
          blockImages: () => config.settings.get("images").blockImages,
          pendingReload: () => runtime.pendingReload,
          routerState: {
            customEntries: () => log.branchBackwards(["custom"]),
            append: (customType, data) => {
              const entry = log.appendCustomEntry(customType, data);
              void runtime.bus.emit("entry_appended", { entry }, runtime.context());
            },
          },
        });
        // Module-scope model calls (complete(), getModel()) made by this session's extensions come here.
        withdrawals.set(service, publishModelRuntime(runtime, service.runtime()));
        return service;
      },
      dispose: (service) => withdrawals.get(service)?.(),
    }),
    definePlugin({
      id: "plugin:agent-loop",
      provides: s.agent,
      deps: {
        runtime: coreTokens.runtime,
        tools: s.toolRegistry,
        models: s.models,
        log: sdkTokens.sessionLog,
        config: sdkTokens.config,
        commands: s.commandRegistry,
      },
      create: ({ runtime, tools, models, log, config, commands }) => {
        const deps: AgentSessionDeps = {
          runtime,
          tools,
          models,
          session: log,
          retry: () => config.settings.get("retry"),
          compaction: () => config.settings.get("compaction"),
          cacheWarming: () => config.settings.get("cacheWarming"),
          doomLoop: () => config.settings.get("doomLoop"),
          gates: () => config.settings.get("gates"),
          toolResults: () => config.settings.get("toolResults"),
          queueModes: () => ({
            steering: config.settings.get("steeringMode"),
            followUp: config.settings.get("followUpMode"),
          }),
          ...(config.maxTurns !== undefined ? { maxTurns: config.maxTurns } : {}),
          prompt: {
            cwd: config.cwd,
            contextFiles: () => config.contextFiles,
            promptFiles: () => config.promptFiles,
          },
          commands,
        };
        return new AgentSession(deps);
      },
      dispose: (agent) => agent.dispose(),
    }),
    definePlugin({
      id: "plugin:context",
      provides: coreTokens.context,
      deps: {
        runtime: coreTokens.runtime,
        models: s.models,
        log: sdkTokens.sessionLog,
        config: sdkTokens.config,
      },
      create: ({ runtime, models, log, config }) =>
        createContextFactory({
          faces: createSessionFaces({
            ...hostFaceDeps(runtime.scope, {
              agentDir: config.agentDir,
              declaredTools: () => runtime.scope.resolve(s.toolSettings).list(),
              warn: config.warn,
            }),
            cwd: config.cwd,
            projectTrusted: () => config.projectTrusted,
            settingsNow: () => config.settings,
          }),
          runtime,
          agent: () => runtime.scope.resolve(s.agent),
          models,
          session: log,
          ui: () => config.ui,
          hasUI: () => config.hasUI,
          mode: config.mode,
          projectTrusted: config.projectTrusted,
          agentDir: config.agentDir,
          discoveredResources: () =>
            config.discoveredResources ?? { skillPaths: [], promptPaths: [], themePaths: [] },
          shutdown: config.shutdown,
          ...(config.replacer ? { replacer: config.replacer } : {}),
        }),
    }),
    definePlugin({
      id: "plugin:command-registry",
      provides: s.commandRegistry,
      create: () => new CommandRegistry(),
    }),
    definePlugin({
      id: "plugin:flag-registry",
      provides: s.flagRegistry,
      deps: { config: sdkTokens.config },
      create: ({ config }) => {
        const flags = new FlagRegistry();
        flags.setValues(config.flagValues);
        return flags;
      },
    }),
    definePlugin({ id: "plugin:mode-registry", provides: s.modeRegistry, create: () => new ModeRegistry() }),
    // The faces the ExtensionAPI calls: the same instances under the kernel's tokens.
    face("tools", coreTokens.tools, s.toolRegistry),
    face("models", coreTokens.models, s.models),
    face("commands", coreTokens.commands, s.commandRegistry),
    face("flags", coreTokens.flags, s.flagRegistry),
    face("modes", coreTokens.modes, s.modeRegistry),
    face("tool-settings", coreTokens.toolSettings, s.toolSettings),
    definePlugin({
      id: "plugin:agent-api",
      provides: coreTokens.agent,
      deps: { agent: s.agent, runtime: coreTokens.runtime },
      create: ({ agent, runtime }) => agentApi(agent, runtime),
    }),
    definePlugin({
      id: "plugin:renderers",
      provides: coreTokens.renderers,
      create: () => new RendererRegistry(),
    }),
    definePlugin({
      id: "plugin:mcp-servers",
      provides: coreTokens.mcpServers,
      deps: { runtime: coreTokens.runtime },
      create: ({ runtime }) =>
        new McpServerRegistry(
          runtime.bus,
          () => runtime.context(),
          (owner, event, error) => runtime.handleError({ owner: { ...owner, order: 0 }, event, error }),
        ),
    }),
    definePlugin({
      id: "plugin:process",
      provides: coreTokens.process,
      deps: { config: sdkTokens.config },
      create: ({ config }) => new ProcessService(config.cwd, () => config.settings.get("shellEnv")),
    }),
    definePlugin({
      id: "plugin:settings-api",
      provides: coreTokens.settings,
      deps: { config: sdkTokens.config },
      create: ({ config }) => ({ getSettings: () => config.settings.all() }),
    }),
  ];
}

/** Provides a kernel token with the service behind a richer one (a replacement of the service shows through). */
function face<T>(
  name: string,
  token: Token<T>,
  service: Token<T>,
): PluginDefinition<T, { service: Token<T> }> {
  return definePlugin({
    id: `plugin:${name}-api`,
    provides: token,
    deps: { service },
    create: (d) => d.service,
  });
}

export { runCommand };

/**
 * The host face (`ModeContext.host`) without a session: over a kernel's services when one is given (a host that
 * swapped a service sees its own), else over the standard ones. For commands and programs that read or change
 * sessions, settings, trust, packages or `mcp.json` without running an agent (`knightcode mcp`). `tools` lists no
 * declared tools (no extension ran). Call `dispose()` when done (it ends the session listing's watchers).
 */
export function createStandaloneHostServices(options: {
  agentDir: string;
  sessionDir?: string;
  kernel?: { container: { resolve<T>(token: Token<T>): T } };
  warn?(message: string): void;
}): ReturnType<typeof createHostServices> {
  const declaredTools = () => [];
  if (options.kernel)
    return createHostServices(
      hostFaceDeps(options.kernel.container, {
        agentDir: options.agentDir,
        ...(options.sessionDir ? { sessionDir: options.sessionDir } : {}),
        declaredTools,
        ...(options.warn ? { warn: options.warn } : {}),
      }),
    );
  return createHostServices({
    agentDir: options.agentDir,
    ...(options.sessionDir ? { sessionDir: options.sessionDir } : {}),
    store: fileSessionStore,
    settings: fileSettings,
    trust: fileTrust,
    toolConfig: new ToolsConfigFile(),
    mcpConfig: fileMcpConfig,
    packages: packageService,
    declaredTools,
    ...(options.warn ? { warn: options.warn } : {}),
  });
}

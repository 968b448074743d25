/**
 * The SDK: `createAgentSession()` runs a KnightCode session in process. It is the composition root every host uses:
 * settings, project trust, extension discovery (built-in, personal, project, CLI/SDK), the session store, the
 * kernel session with the standard plugins, model and tool selection.
 */
import { resolve } from "node:path";
import {
  type BashResult,
  type CommandInfo,
  type CompactionResult,
  coreTokens,
  createKernel,
  type EntryRenderer,
  type ExtensionEventName,
  type ExtensionFactory,
  type ExtensionInfo,
  type ExtensionLogEntry,
  type ExtensionSource,
  type ExtensionUIContext,
  type HostMode,
  type HostServices,
  type Kernel,
  KernelError,
  type MessageRenderer,
  type ModelInfo,
  type NavigateTreeOptions,
  type NewSessionOptions,
  type ReadonlySessionManager,
  type SessionController,
  type SessionRuntime,
  type SessionStartEvent,
  type SessionState,
  type SessionStats,
  type SessionSummary,
  type ShortcutInfo,
  type ThinkingLevel,
  type ToolRenderers,
  type TreeNavigation,
} from "../../kernel/index.js";
import type { AgentSession } from "../../plugins/agent-loop/agent-session.js";
import { contextUsage, type SessionReplacer } from "../../plugins/agent-loop/context-factory.js";
import { abortTreeNavigation, navigateTree } from "../../plugins/agent-loop/tree-navigation.js";
import type { RegisteredFlag } from "../../plugins/flag-registry/flag-registry.js";
import type { HostFace } from "../../plugins/host-face/host-face.js";
import { closestName } from "../../plugins/kit/closest-name.js";
import { checkReturn } from "../../plugins/kit/event-returns.js";
import { headlessUI } from "../../plugins/kit/headless-ui.js";
import { wireEvents } from "../../plugins/kit/wire/json-event.js";
import type { RegisteredMode } from "../../plugins/mode-registry/mode-registry.js";
import type { ModelService } from "../../plugins/model-registry/model-service.js";
import { PackageManager, type ResolvedResources } from "../../plugins/packages/package-manager.js";
import { toolEnvironment } from "../../plugins/process/env-policy.js";
import { runUserBash } from "../../plugins/process/user-bash.js";
import { discoverContextFiles } from "../../plugins/resources/context-files.js";
import { loadSystemPromptFiles } from "../../plugins/resources/system-prompt.js";
import type { SessionManager } from "../../plugins/session-store/session-manager.js";
import { extensionCacheDir, resolveAgentDir } from "../../plugins/settings/agent-dir.js";
import type { Settings } from "../../plugins/settings/settings.js";
import {
  findSavedDecision,
  projectTrustGateOptions,
  readTrustDecisions,
} from "../../plugins/settings/trust.js";
import { type SessionStore, serviceTokens } from "../../plugins/tokens.js";
import type { ToolRegistry } from "../../plugins/tool-registry/tool-registry.js";
import { builtinSources } from "./builtin-extensions.js";
import { PI_COMPAT_SET, packageModules } from "./package-modules.js";
import { packageSources, resourceSeed, TEMPORARY_PACKAGE } from "./package-resources.js";
import { watchProcessFaults } from "./process-faults.js";
import {
  createHostServices,
  type DiscoveredResources,
  hostFaceDeps,
  runCommand,
  type SessionConfig,
  sdkTokens,
  standardPlugins,
} from "./session-plugins.js";

const EMPTY_RESOURCES: DiscoveredResources = Object.freeze({
  skillPaths: [],
  promptPaths: [],
  themePaths: [],
}) as DiscoveredResources;

import { withPromptEvents } from "./ui-prompt-events.js";

export interface SessionChoice {
  /** Open this session file (or id prefix). */
  path?: string;
  /** Continue the most recent session of the cwd. */
  continue?: boolean;
  /** Keep everything in memory (`--no-session`). */
  inMemory?: boolean;
  sessionDir?: string;
}

export interface CreateAgentSessionOptions {
  cwd?: string;
  /** Defaults to `$KNIGHTCODE_AGENT_DIR` or `~/.knightcode/agent`. */
  agentDir?: string;
  mode?: HostMode;
  provider?: string;
  /** A model id, or `provider/model`. */
  model?: string;
  thinkingLevel?: ThinkingLevel;
  /** The exact set of active tools (`--tools`); `[]` for none. */
  tools?: string[];
  /** Extra extensions: paths (origin `cli`), factories (origin `sdk`) or sources. */
  extensions?: (string | ExtensionFactory | ExtensionSource)[];
  session?: SessionChoice;
  /** Settings that beat every file. */
  settings?: Record<string, unknown>;
  /** `--approve` (true) or `--no-approve` (false). */
  approve?: boolean;
  ui?: ExtensionUIContext;
  hasUI?: boolean;
  /** Values for flags extensions registered. */
  flags?: Record<string, boolean | string>;
  /**
   * A run that has taken this many turns and wants another ends with an error instead (`--max-turns`); a
   * positive integer.
   */
  maxTurns?: number;
  /**
   * Diagnostics: extension errors, settings warnings, trust notices, lines of the session file that were skipped
   * (file and line). Defaults to stderr.
   */
  warn?(message: string): void;
  /**
   * Every `knightcode.log` entry of the session's extensions. Without it, warnings and errors go to `warn` with
   * the extension's id in front, and info entries are dropped.
   */
  log?(entry: ExtensionLogEntry): void;
  /** Called when an extension asks to shut down (`ctx.shutdown()`). */
  onShutdownRequest?(): void;
  /**
   * Runs once, for the first session, when its extensions (project ones included) have registered and before
   * `session_start` is emitted: a host looks up the mode it runs, binds the mode's UI (`setUI`) and sets flag
   * values here, so `session_start` handlers already see them. A throw ends the start-up.
   */
  beforeStart?(session: AgentSessionHandle): void | Promise<void>;
  /** A kernel to share between sessions; one per process by default. */
  kernel?: Kernel;
}

export interface SessionEvent {
  type: string;
  [key: string]: unknown;
}

let defaultKernel: Promise<Kernel> | undefined;

async function processKernel(agentDir: string): Promise<Kernel> {
  defaultKernel ??= Promise.resolve(
    createKernel({
      plugins: standardPlugins(),
      cacheDir: extensionCacheDir(agentDir),
      virtualModules: packageModules,
      bus: { checkReturn, suggestName: closestName },
    }),
  );
  return defaultKernel;
}

/** A kernel with the standard plugins, for hosts and tests that want their own (e.g. to dispose it). */
export async function createStandardKernel(
  options: { agentDir?: string; cacheDir?: string | false } = {},
): Promise<Kernel> {
  const agentDir = options.agentDir ?? resolveAgentDir();
  return createKernel({
    plugins: standardPlugins(),
    cacheDir: options.cacheDir ?? extensionCacheDir(agentDir),
    virtualModules: packageModules,
    bus: { checkReturn, suggestName: closestName },
  });
}

export async function createAgentSession(
  options: CreateAgentSessionOptions = {},
): Promise<AgentSessionHandle> {
  const kernel = options.kernel ?? (await processKernel(options.agentDir ?? resolveAgentDir()));
  const handle = new AgentSessionHandle(options, kernel);
  try {
    await handle.open(handle.openSessionLog(), { reason: "startup" });
  } catch (error) {
    // Removes the process-level fault handlers the handle installed.
    await handle.dispose();
    throw error;
  }
  return handle;
}

/**
 * What tests and benchmarks of this repository reach below the host seam: the runtime, the agent loop and the
 * raw registries of a handle's current session. Not exported from the package: hosts use the handle's methods.
 */
export function sessionInternals(handle: AgentSessionHandle): {
  runtime: SessionRuntime;
  log: SessionManager;
  agent: AgentSession;
  models: ModelService;
  tools: ToolRegistry;
  settings: Settings;
} {
  return handle.internals();
}

/** A running session and what a host needs to drive it. Survives session replacement (new, fork, switch). */
/** The model and thinking level a replaced session hands to the next (`newSession({ preserveModel })`). */
interface CarriedSelection {
  model: ModelInfo | undefined;
  thinkingLevel: ThinkingLevel;
}

export class AgentSessionHandle implements SessionReplacer, SessionController {
  readonly cwd: string;
  readonly agentDir: string;
  readonly mode: HostMode;
  private current: { runtime: SessionRuntime; log: SessionManager; config: SessionConfig } | undefined;
  private readonly listeners = new Set<(event: SessionEvent) => void>();
  /** Removes the wire-event handlers from the current runtime's bus (set while a host listens). */
  private detach: (() => void) | undefined;
  private trustDecision: boolean | undefined;
  /** Sets the current session's project part (settings, packages, extension sources) for a trust decision. */
  private settleProject: ((trusted: boolean) => Promise<void>) | undefined;
  /** What the package manager resolved for the current session, project scope first once trusted. */
  private packageResources: ResolvedResources[] = [];
  private ui: { ui: ExtensionUIContext; hasUI: boolean } | undefined;
  private readonly warn: (message: string) => void;
  private disposed = false;
  private beforeStartRan = false;
  private hostServices: HostFace | undefined;
  /** Removes this handle from the process-level fault handlers (hosts/sdk/process-faults.ts). */
  private readonly stopWatchingFaults = watchProcessFaults({
    extensions: () => this.current?.runtime.extensionInfos ?? [],
    bus: () => this.current?.runtime.bus,
  });

  /** @internal Use `createAgentSession()`. */
  constructor(
    private readonly options: CreateAgentSessionOptions,
    private readonly kernel: Kernel,
  ) {
    this.cwd = resolve(options.cwd ?? process.cwd());
    this.agentDir = options.agentDir ?? resolveAgentDir();
    this.mode = options.mode ?? "sdk";
    this.warn = options.warn ?? ((message) => process.stderr.write(`knightcode: ${message}\n`));
    if (options.maxTurns !== undefined && !(Number.isInteger(options.maxTurns) && options.maxTurns > 0)) {
      throw new TypeError(`createAgentSession: maxTurns must be a positive integer, not ${options.maxTurns}`);
    }
  }

  /**
   * The stores and configuration of any folder, through this handle's services: what a mode that serves many
   * sessions gets as `ModeContext.host`. Its `tools` lists what the current session's extensions declared.
   */
  get host(): HostServices {
    this.hostServices ??= createHostServices(
      hostFaceDeps(this.kernel.container, {
        agentDir: this.agentDir,
        ...this.sessionDir(),
        declaredTools: () => this.current?.runtime.scope.resolve(serviceTokens.toolSettings).list() ?? [],
        warn: this.warn,
      }),
    );
    return this.hostServices;
  }

  /** The current session's log, read-only (modes show its tree and header). */
  get sessionManager(): ReadonlySessionManager {
    return this.live().log;
  }

  /** @internal See `sessionInternals()`. */
  internals(): ReturnType<typeof sessionInternals> {
    const { runtime, log, config } = this.live();
    return {
      runtime,
      log,
      agent: this.agent,
      models: runtime.scope.resolve(serviceTokens.models),
      tools: runtime.scope.resolve(serviceTokens.toolRegistry),
      settings: config.settings,
    };
  }

  private get runtime(): SessionRuntime {
    return this.live().runtime;
  }

  private get agent(): AgentSession {
    return this.runtime.scope.resolve(serviceTokens.agent);
  }

  private get models(): ModelService {
    return this.runtime.scope.resolve(serviceTokens.models);
  }

  private get tools(): ToolRegistry {
    return this.runtime.scope.resolve(serviceTokens.toolRegistry);
  }

  private get store(): SessionStore {
    return this.kernel.container.resolve(serviceTokens.sessionStore);
  }

  /** The extensions of the current session in load order, and the ones that failed to load. */
  extensions(): { loaded: ExtensionInfo[]; failed: string[] } {
    const runtime = this.runtime;
    return { loaded: [...runtime.extensionInfos], failed: runtime.loadFailures.map((e) => e.message) };
  }

  get projectTrusted(): boolean {
    return this.trustDecision === true;
  }

  prompt(text: string, options: Parameters<AgentSession["prompt"]>[1] = {}): Promise<void> {
    return this.agent.prompt(text, { source: hostSource(this.mode), ...options });
  }

  steer(text: string): void {
    this.agent.steer(text);
  }

  followUp(text: string): void {
    this.agent.followUp(text);
  }

  /** Stops the run (handing back the queued messages) and a tree navigation waiting for its summary. */
  abort(): { steering: string[]; followUp: string[] } {
    abortTreeNavigation(this.live().log);
    return this.agent.abort();
  }

  waitForIdle(): Promise<void> {
    return this.agent.waitForIdle();
  }

  isIdle(): boolean {
    return this.agent.isIdle();
  }

  getThinkingLevel(): ThinkingLevel {
    return this.agent.thinkingLevel;
  }

  /** Flags the session's extensions registered (the command line parses them and shows them in --help). */
  registeredFlags(): RegisteredFlag[] {
    return this.runtime.scope.resolve(serviceTokens.flagRegistry).list();
  }

  setFlagValues(values: Record<string, boolean | string>): void {
    this.runtime.scope.resolve(serviceTokens.flagRegistry).setValues(values);
  }

  /** The `/` commands extensions registered. */
  getCommands(): CommandInfo[] {
    return this.runtime.scope.resolve(serviceTokens.commandRegistry).getCommands();
  }

  async runCommand(name: string, args = ""): Promise<unknown> {
    const ran = await runCommand(
      this.runtime,
      this.runtime.scope.resolve(serviceTokens.commandRegistry),
      name,
      args,
    );
    if (!ran) {
      throw new KernelError(
        "KC_ERR_NOT_AVAILABLE",
        `No /${name} command is registered in this session (is the extension that adds it disabled?)`,
      );
    }
    return ran.result;
  }

  /** A host mode registered by an extension (`registerMode`), by name. */
  getMode(name: string): RegisteredMode | undefined {
    return this.runtime.scope.resolve(serviceTokens.modeRegistry).get(name);
  }

  listModes(): RegisteredMode[] {
    return this.runtime.scope.resolve(serviceTokens.modeRegistry).list();
  }

  setThinkingLevel(level: ThinkingLevel): void {
    this.agent.setThinkingLevel(undefined, level);
  }

  startupFailure(): Error | undefined {
    return this.current?.runtime.startupFailure;
  }

  getState(): SessionState {
    const agent = this.agent;
    const log = this.live().log;
    const queue = agent.getQueue();
    return {
      model: agent.model,
      thinkingLevel: agent.thinkingLevel,
      isStreaming: !agent.isIdle(),
      sessionFile: log.getSessionFile(),
      sessionId: log.getSessionId(),
      sessionName: log.getSessionName(),
      messageCount: log.buildContext().messages.length,
      pendingMessageCount: queue.steering.length + queue.followUp.length,
    };
  }

  getAvailableModels(): ModelInfo[] {
    return this.models.getAvailable();
  }

  setModel(provider: string, modelId: string): Promise<boolean> {
    const model = this.models.find(provider, modelId);
    return model ? this.agent.setModel(undefined, model) : Promise.resolve(false);
  }

  async cycleModel(): Promise<ModelInfo | undefined> {
    const models = this.models.getAvailable().filter((m) => m.provider !== "virtual");
    if (models.length === 0) return undefined;
    const current = this.agent.model;
    const index = current
      ? models.findIndex((m) => m.provider === current.provider && m.id === current.id)
      : -1;
    const next = models[(index + 1) % models.length]!;
    await this.agent.setModel(undefined, next, "cycle");
    return next;
  }

  compact(customInstructions?: string): Promise<CompactionResult> {
    return this.agent.compact(customInstructions ? { customInstructions } : {});
  }

  clearQueue(): { steering: string[]; followUp: string[] } {
    return this.agent.clearQueue();
  }

  setSessionName(name: string | undefined): void {
    this.agent.setSessionName(undefined, name);
  }

  getSessionStats(): SessionStats {
    const log = this.live().log;
    const stats: SessionStats = {
      sessionFile: log.getSessionFile(),
      sessionId: log.getSessionId(),
      userMessages: 0,
      assistantMessages: 0,
      toolCalls: 0,
      toolResults: 0,
      totalMessages: 0,
      tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      cost: 0,
      contextUsage: contextUsage(this.agent, log),
    };
    // One entry at a time: a long session's messages are read back from its file, never all held at once.
    log.forEachEntry((entry) => {
      if (entry.type !== "message") return;
      const message = entry.message;
      stats.totalMessages++;
      if (message.role === "user") stats.userMessages++;
      if (message.role === "toolResult") stats.toolResults++;
      if (message.role === "assistant") {
        stats.assistantMessages++;
        stats.toolCalls += message.content.filter((c) => c.type === "toolCall").length;
      }
      // A tool result's usage is what the tool and the gates deciding on it spent on model calls of their own.
      const usage = message.role === "assistant" || message.role === "toolResult" ? message.usage : undefined;
      if (usage) {
        for (const key of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const) {
          stats.tokens[key] += usage[key];
        }
        stats.cost += usage.cost.total;
      }
    });
    return stats;
  }

  /** `!cmd`: `user_bash` handlers first, then the shell; the output enters the context unless excluded. */
  async executeBash(
    command: string,
    options: {
      excludeFromContext?: boolean;
      onData?(chunk: string): void;
      signal?: AbortSignal;
      id?: string;
    } = {},
  ): Promise<BashResult> {
    const runtime = this.runtime;
    const excludeFromContext = options.excludeFromContext ?? false;
    const ctx = runtime.context();
    // Chunks are dispatched one after another, and all of them before the result returns, so a host that writes
    // them (RPC) keeps their order and writes them before its response.
    let dispatched = Promise.resolve();
    const onData = (delta: string) => {
      options.onData?.(delta);
      if (!runtime.bus.has("bash_execution_update")) return;
      const event = { ...(options.id ? { id: options.id } : {}), delta };
      dispatched = dispatched.then(() => runtime.bus.emit("bash_execution_update", event, ctx));
    };
    const result = await runUserBash({
      bus: runtime.bus,
      ctx,
      gateTimeoutMs: this.live().config.settings.get("gates").timeoutMs,
      cwd: this.cwd,
      command,
      excludeFromContext,
      onData,
      env: toolEnvironment(process.env, this.live().config.settings.get("shellEnv")),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    await dispatched;
    if (!excludeFromContext && !result.cancelled) {
      const status = result.exitCode === 0 ? "" : `\n(exit code ${result.exitCode ?? "none"})`;
      this.agent.sendMessage(
        undefined,
        {
          customType: "bashExecution",
          content: `Ran \`${command}\`\n\`\`\`\n${result.output}\n\`\`\`${status}`,
          display: true,
          details: { command, exitCode: result.exitCode, truncated: result.truncated },
        },
        { deliverAs: "nextTurn" },
      );
    }
    return result;
  }

  listSessions(): SessionSummary[] {
    return this.store.list({ cwd: this.cwd, agentDir: this.agentDir, ...this.sessionDir() }).map((info) => ({
      path: info.path,
      id: info.id,
      ...(info.name ? { name: info.name } : {}),
      ...(info.labels ? { labels: info.labels } : {}),
      modified: info.modified,
      messageCount: info.messageCount,
      firstMessage: info.firstMessage,
    }));
  }

  getToolRenderers(toolName: string): ToolRenderers | undefined {
    return this.tools.getToolRenderers(toolName);
  }

  getShortcuts(): ShortcutInfo[] {
    return this.runtime.scope.resolve(serviceTokens.commandRegistry).getShortcuts();
  }

  async runShortcut(key: string): Promise<void> {
    const runtime = this.runtime;
    const shortcut = runtime.scope.resolve(serviceTokens.commandRegistry).getShortcut(key);
    if (!shortcut) {
      throw new KernelError("KC_ERR_NOT_AVAILABLE", `No shortcut ${key} is registered in this session`);
    }
    try {
      await shortcut.handler(runtime.context());
    } catch (error) {
      runtime.handleError({ owner: { id: shortcut.owner, order: 0 }, event: `shortcut ${key}`, error });
      throw error;
    }
  }

  getMessageRenderer(customType: string): MessageRenderer | undefined {
    return this.runtime.scope.resolve(coreTokens.renderers).getMessageRenderer(customType);
  }

  getEntryRenderer(customType: string): EntryRenderer | undefined {
    return this.runtime.scope.resolve(coreTokens.renderers).getEntryRenderer(customType);
  }

  /** Installs the host's UI for this and later sessions of the handle (modes call it when they start). */
  setUI(host: ExtensionUIContext, hasUI: boolean): void {
    const ui = this.withPromptEvents(host);
    this.ui = { ui, hasUI };
    if (this.current) {
      this.current.config.ui = ui;
      this.current.config.hasUI = hasUI;
    }
  }

  /** Every event that goes on the JSON or RPC wire, in order, for this and every later session of the handle. */
  subscribe(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    this.syncListeners();
    return () => {
      this.listeners.delete(listener);
      this.syncListeners();
    };
  }

  async reload(): Promise<void> {
    await this.adoptSavedTrust();
    await this.runtime.reload();
    await this.applySelection();
    await this.discoverResources("reload");
  }

  /**
   * A decision saved in trust.json since the session started (`/trust`) applies from the next reload: trusting
   * loads the project's extensions, settings and resources with the reloaded ones; distrusting leaves them out.
   */
  private async adoptSavedTrust(): Promise<void> {
    const saved = findSavedDecision(readTrustDecisions(this.agentDir, this.warn), this.cwd);
    const current = this.live();
    if (!saved || saved.trusted === current.config.projectTrusted || !this.settleProject) return;
    this.trustDecision = saved.trusted;
    await this.settleProject(saved.trusted);
  }

  /** The paths `resources_discover` handlers contributed (startup or the last reload). */
  discoveredResources(): DiscoveredResources {
    return structuredClone(this.current?.config.discoveredResources ?? EMPTY_RESOURCES);
  }

  /**
   * `resources_discover` once the session's extensions are in (startup and reload): every handler may contribute
   * paths, which are concatenated. A path that is not a string is dropped with a warning naming the extension.
   */
  private async discoverResources(reason: "startup" | "reload"): Promise<void> {
    const current = this.current;
    if (!current || current.runtime.startupFailure) return;
    const kinds = ["skillPaths", "promptPaths", "themePaths"] as const;
    // Kept up to date handler by handler, so a fallback handler (builtin:prompt-templates) reads the whole list.
    const seed = resourceSeed(this.packageResources);
    current.config.discoveredResources = structuredClone(seed);
    current.config.discoveredResources = await current.runtime.bus.transform(
      "resources_discover",
      structuredClone(seed),
      current.runtime.context(),
      {
        toEvent: () => ({ cwd: this.cwd, reason }),
        fold: (found, result) => {
          const next = structuredClone(found);
          for (const kind of kinds) {
            const paths = (result as Record<string, unknown>)[kind];
            if (paths === undefined) continue;
            const list = Array.isArray(paths) ? paths : [paths];
            for (const path of list) {
              if (typeof path === "string" && path.trim() !== "") next[kind].push(resolve(this.cwd, path));
              else
                this.warn(
                  `resources_discover: ${kind} entries must be non-empty strings; ignored ${JSON.stringify(path)}`,
                );
            }
          }
          current.config.discoveredResources = next;
          return next;
        },
      },
    );
  }

  // ---- session replacement -------------------------------------------------------------------------

  /**
   * Replaces the session with a new one: in memory when this handle keeps its sessions in memory, else a new file.
   * `setup` writes its first entries before it starts; `preserveModel` carries the model and thinking level over.
   */
  newSession(options: NewSessionOptions = {}): Promise<{ cancelled: boolean }> {
    return this.replace(
      { reason: "new" },
      () =>
        this.options.session?.inMemory
          ? this.store.inMemory(this.cwd)
          : this.store.create({
              cwd: this.cwd,
              agentDir: this.agentDir,
              ...this.sessionDir(),
              ...(options.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
            }),
      options,
    );
  }

  switchSession(
    path: string,
    options: Parameters<SessionReplacer["switchSession"]>[1] = {},
  ): Promise<{ cancelled: boolean }> {
    return this.replace(
      { reason: "resume", target: path },
      () => this.store.open(path, { agentDir: this.agentDir }),
      options,
    );
  }

  fork(
    entryId: string,
    options: Parameters<SessionReplacer["fork"]>[1] = {},
  ): Promise<{ cancelled: boolean }> {
    return this.replace(
      { reason: "fork", entryId, position: options.position ?? "at" },
      () => {
        const log = this.live().log;
        const entry = log.getEntry(entryId);
        if (!entry) throw new Error(`No entry ${entryId} in this session`);
        const leaf = options.position === "before" ? entry.parentId : entryId;
        if (leaf === null)
          return this.store.create({ cwd: this.cwd, agentDir: this.agentDir, ...this.sessionDir() });
        return log.createBranchedSession(leaf);
      },
      options,
    );
  }

  navigateTree(entryId: string, options: NavigateTreeOptions = {}): Promise<TreeNavigation> {
    const { runtime, log } = this.live();
    const agent = this.agent;
    return navigateTree(
      {
        bus: runtime.bus,
        context: () => runtime.context(),
        session: log,
        waitForIdle: () => agent.waitForIdle(),
      },
      entryId,
      options,
    );
  }

  setLabel(entryId: string, label: string | undefined): void {
    this.agent.setLabel(undefined, entryId, label);
  }

  /** Clones the current branch into a new session file and switches to it. */
  clone(): Promise<{ cancelled: boolean }> {
    const leaf = this.live().log.getLeafId();
    if (!leaf) return this.newSession();
    return this.fork(leaf);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const current = this.current;
    this.current = undefined;
    try {
      if (current) {
        await current.runtime.shutdown({ reason: "quit" });
        current.log.close();
      }
    } finally {
      this.hostServices?.dispose();
      this.stopWatchingFaults();
    }
  }

  // ---- internals -----------------------------------------------------------------------------------

  /** @internal */
  openSessionLog(): SessionManager {
    const choice = this.options.session ?? {};
    if (choice.inMemory) return this.store.inMemory(this.cwd);
    const location = { agentDir: this.agentDir, ...this.sessionDir() };
    if (choice.path) {
      const path = /[/\\]|\.jsonl$/.test(choice.path)
        ? resolve(choice.path)
        : this.store.findById(choice.path, location);
      return this.store.open(path, location);
    }
    if (choice.continue) return this.store.continueRecent({ cwd: this.cwd, ...location });
    return this.store.create({ cwd: this.cwd, ...location });
  }

  private sessionDir(): { sessionDir?: string } {
    const dir = this.options.session?.sessionDir;
    return dir ? { sessionDir: resolve(dir) } : {};
  }

  private live(): NonNullable<AgentSessionHandle["current"]> {
    if (!this.current)
      throw new Error(this.disposed ? "The session was disposed" : "The session is not open yet");
    return this.current;
  }

  private async replace(
    target: {
      reason: "new" | "resume" | "fork";
      target?: string;
      entryId?: string;
      position?: "before" | "at";
    },
    openLog: () => SessionManager,
    options: Pick<NewSessionOptions, "withSession" | "setup" | "preserveModel">,
  ): Promise<{ cancelled: boolean }> {
    const old = this.live();
    await this.agent.waitForIdle();
    const ctx = old.runtime.context();
    const cancel =
      target.reason === "fork"
        ? await old.runtime.bus.gate(
            "session_before_fork",
            { entryId: target.entryId!, position: target.position },
            ctx,
            { failClosed: () => ({ cancel: true }), isDecision: (r) => r?.cancel === true },
          )
        : await old.runtime.bus.gate(
            "session_before_switch",
            { reason: target.reason, ...(target.target ? { targetSessionFile: target.target } : {}) },
            ctx,
            { failClosed: () => ({ cancel: true }), isDecision: (r) => r?.cancel === true },
          );
    if (cancel?.cancel) return { cancelled: true };
    const previousSessionFile = old.log.getSessionFile();
    // Re-opening the file this session holds needs its lock released first.
    const sameFile = target.target !== undefined && previousSessionFile === resolve(target.target);
    if (sameFile) old.log.close();
    const log = openLog();
    if (options.setup) {
      try {
        await options.setup(log);
      } catch (error) {
        if (log !== old.log) log.close();
        throw error;
      }
    }
    const carried = options.preserveModel
      ? { model: this.agent.model, thinkingLevel: this.agent.thinkingLevel }
      : undefined;
    await old.runtime.shutdown({
      reason: target.reason,
      ...(log.getSessionFile() ? { targetSessionFile: log.getSessionFile()! } : {}),
    });
    if (old.log !== log) old.log.close();
    this.current = undefined;
    await this.open(
      log,
      { reason: target.reason, ...(previousSessionFile ? { previousSessionFile } : {}) },
      carried,
    );
    if (options.withSession) await options.withSession(this.runtime.commandContext());
    return { cancelled: false };
  }

  /**
   * @internal Starts a kernel session over a session log; `carried` is the model and thinking level a replaced
   * session hands over (`newSession({ preserveModel })`).
   */
  async open(log: SessionManager, start: SessionStartEvent, carried?: CarriedSelection): Promise<void> {
    // Torn or malformed lines the store skipped (and kept in the file): every mode hears of them.
    for (const warning of log.warnings) this.warn(warning);
    log.onWriteWarning = this.warn;
    const kernel = this.kernel;
    const settingsLoader = kernel.container.resolve(serviceTokens.settings);
    const overrides = this.options.settings ?? {};
    const globalSettings = settingsLoader.load({
      agentDir: this.agentDir,
      cwd: this.cwd,
      projectTrusted: false,
      overrides,
    });
    for (const warning of globalSettings.warnings) this.warn(warning);
    // Project trust is settled with the UI known when the session opens; a UI the host binds in beforeStart
    // arrives later, for session_start.
    const ui = this.ui?.ui ?? (this.options.ui ? this.withPromptEvents(this.options.ui) : headlessUI);
    const hasUI = this.ui?.hasUI ?? this.options.hasUI ?? false;
    const config: SessionConfig = {
      cwd: this.cwd,
      agentDir: this.agentDir,
      mode: this.mode,
      ui,
      hasUI,
      projectTrusted: false,
      settings: globalSettings,
      flagValues: this.options.flags ?? {},
      ...(this.options.maxTurns !== undefined ? { maxTurns: this.options.maxTurns } : {}),
      contextFiles: await discoverContextFiles({ cwd: this.cwd, agentDir: this.agentDir }),
      promptFiles: {},
      warn: this.warn,
      shutdown: () => this.options.onShutdownRequest?.(),
      replacer: this,
    };
    const disabled = new Set(
      (globalSettings.get("extensions") as string[]).filter((e) => e.startsWith("-")).map((e) => e.slice(1)),
    );
    // Packages, the resource settings and the resource folders (plugins/packages): the user's now, the
    // project's once it is trusted.
    const packages = new PackageManager({ agentDir: this.agentDir, cwd: this.cwd });
    const userResources = await packages.resolve({
      scopes: ["user"],
      projectTrusted: false,
      temporary: this.temporaryPackages(),
      installMissing: true,
    });
    for (const warning of userResources.warnings) this.warn(warning);
    this.packageResources = [userResources];
    const baseSources: ExtensionSource[] = [
      ...builtinSources(disabled),
      ...packageSources(userResources),
      ...this.extraSources(),
    ];
    let projectSources: ExtensionSource[] = [];
    const moduleSet = disabled.has("builtin:pi-compat") ? "default" : PI_COMPAT_SET;
    /** The project's settings, system prompt files, packages and extension sources, per the trust decision. */
    const settleProject = async (trusted: boolean): Promise<void> => {
      config.projectTrusted = trusted;
      config.promptFiles = await loadSystemPromptFiles({
        cwd: this.cwd,
        agentDir: this.agentDir,
        projectTrusted: trusted,
      });
      if (!trusted) {
        const untrusted = (await packages.resolve({ scopes: ["project"], projectTrusted: false }))
          .untrustedPackages;
        if (untrusted.length > 0)
          this.warn(
            `project packages not installed or loaded until the project is trusted: ${untrusted.join(", ")}`,
          );
        this.packageResources = [userResources];
        config.settings = globalSettings;
        projectSources = [];
        return;
      }
      const projectResources = await packages.resolve({
        scopes: ["project"],
        projectTrusted: true,
        installMissing: true,
      });
      for (const warning of projectResources.warnings) this.warn(warning);
      this.packageResources = [projectResources, userResources];
      const full = settingsLoader.load({
        agentDir: this.agentDir,
        cwd: this.cwd,
        projectTrusted: true,
        overrides,
      });
      for (const warning of full.warnings) if (!globalSettings.warnings.includes(warning)) this.warn(warning);
      config.settings = full;
      projectSources = packageSources(projectResources);
    };

    let created: Awaited<ReturnType<Kernel["createSession"]>>;
    try {
      created = await kernel.createSession({
        sources: baseSources,
        reloadSources: () => [...baseSources, ...projectSources],
        cwd: this.cwd,
        mode: this.mode,
        moduleSet,
        start,
        values: [
          [sdkTokens.config, config],
          [sdkTokens.sessionLog, log],
        ],
        onExtensionError: (report) => this.warn(`${report.extension} (${report.event}): ${report.message}`),
        onExtensionLog: (entry) => {
          if (this.options.log) this.options.log(entry);
          else if (entry.level !== "info") this.warn(`${entry.extension}: ${entry.message}`);
        },
        beforeReady: this.withBeforeStart(log, config, async (runtime) => {
          const trusted = await this.resolveTrust(runtime, globalSettings, ui, hasUI);
          await settleProject(trusted);
          if (!trusted) return;
          const loaded = await kernel.loader.load(projectSources, { moduleSet });
          await runtime.addExtensions(
            loaded.extensions,
            loaded.failures.map((f) => f.error),
          );
        }),
      });
    } catch (error) {
      this.current = undefined;
      log.close();
      throw error;
    }
    const { runtime } = created;
    this.settleProject = settleProject;
    // A host that subscribed in beforeStart is already listening to this runtime.
    const listening = this.current?.runtime === runtime;
    this.current = { runtime, log, config };
    if (!listening) this.detach = undefined;
    this.syncListeners();
    try {
      await this.applySelection(carried);
      await this.discoverResources("startup");
    } catch (error) {
      // A session that cannot start leaves nothing behind: its extensions and registrations go with it.
      this.current = undefined;
      await runtime.shutdown({ reason: "quit" });
      log.close();
      throw error;
    }
  }

  /**
   * The project phase (`settle`), then the host's `beforeStart` for the first session: the handle works from
   * there on (modes, flags, setUI), before session_start.
   */
  private withBeforeStart(
    log: SessionManager,
    config: SessionConfig,
    settle: (runtime: SessionRuntime) => Promise<void>,
  ): (runtime: SessionRuntime) => Promise<void> {
    return async (runtime) => {
      await settle(runtime);
      if (!this.options.beforeStart || this.beforeStartRan) return;
      this.beforeStartRan = true;
      this.current = { runtime, log, config };
      await this.options.beforeStart(this);
    };
  }

  /** `-e npm:x`, `-e git:...`: packages installed into a cache for this run. */
  private temporaryPackages(): string[] {
    return (this.options.extensions ?? []).filter(
      (e): e is string => typeof e === "string" && TEMPORARY_PACKAGE.test(e),
    );
  }

  private extraSources(): ExtensionSource[] {
    return (this.options.extensions ?? [])
      .filter((e) => typeof e !== "string" || !TEMPORARY_PACKAGE.test(e))
      .map((e, i) =>
        typeof e === "string"
          ? { origin: "cli" as const, path: resolve(this.cwd, e) }
          : typeof e === "function"
            ? { origin: "sdk" as const, name: e.name || `extension-${i + 1}`, factory: e }
            : e,
      );
  }

  /** The host's UI with `ui_prompt_start`/`ui_prompt_end` around its dialogs, on whichever session is current. */
  private withPromptEvents(ui: ExtensionUIContext): ExtensionUIContext {
    return withPromptEvents(ui, () => this.current?.runtime);
  }

  private async resolveTrust(
    runtime: SessionRuntime,
    settings: Settings,
    ui: ExtensionUIContext,
    hasUI: boolean,
  ): Promise<boolean> {
    if (this.trustDecision !== undefined) return this.trustDecision;
    const decision = await this.kernel.container.resolve(serviceTokens.trust).resolve({
      cwd: this.cwd,
      agentDir: this.agentDir,
      ...(this.options.approve !== undefined ? { approve: this.options.approve } : {}),
      settings,
      handlers: (event) =>
        runtime.bus.gate(
          "project_trust",
          event,
          { cwd: this.cwd, mode: this.mode, hasUI, ui },
          projectTrustGateOptions,
        ),
      ...(hasUI ? { ui } : {}),
      hasUI,
      warn: this.warn,
    });
    this.trustDecision = decision.trusted;
    return decision.trusted;
  }

  /**
   * Model, thinking level and active tools: what a replaced session carried over, then explicit options, then the
   * session's own record, then settings.
   */
  private async applySelection(carried?: CarriedSelection): Promise<void> {
    const { log, config } = this.live();
    const agent = this.agent;
    const models = this.models;
    const restored = log.buildContext();
    const settings = config.settings;
    const explicit = this.options.provider || this.options.model;
    // The replaced session's model wins; setModel below records it in the new session.
    let model = carried?.model ? models.find(carried.model.provider, carried.model.id) : undefined;
    if (!model && explicit) {
      model = models.resolveModel({
        ...(this.options.provider ? { provider: this.options.provider } : {}),
        ...(this.options.model ? { model: this.options.model } : {}),
      });
    } else if (!model && restored.model) {
      model = models.find(restored.model.provider, restored.model.modelId);
    }
    if (!model) {
      const provider = settings.get("defaultProvider") as string | undefined;
      const id = settings.get("defaultModel") as string | undefined;
      if (provider || id) {
        try {
          model = models.resolveModel({ ...(provider ? { provider } : {}), ...(id ? { model: id } : {}) });
        } catch (error) {
          this.warn(`settings: ${(error as Error).message}`);
        }
      }
    }
    if (model && (agent.model?.provider !== model.provider || agent.model?.id !== model.id)) {
      const recorded = restored.model?.provider === model.provider && restored.model.modelId === model.id;
      if (recorded) agent.model = model;
      else await agent.setModel(undefined, model, "restore");
    }
    const thinking =
      carried?.thinkingLevel ??
      this.options.thinkingLevel ??
      restored.thinkingLevel ??
      (settings.get("defaultThinkingLevel") as ThinkingLevel | undefined);
    if (thinking) {
      if (restored.thinkingLevel === thinking) agent.thinkingLevel = thinking;
      else agent.setThinkingLevel(undefined, thinking);
    }
    const tools = this.tools;
    if (this.options.tools) tools.setActiveTools(this.options.tools);
    else applyDefaultTools(tools, settings.get("defaultTools") as string[]);
  }

  /**
   * Subscribes to the wire events only while a host listens, so a session nobody watches pays nothing per event
   * (hot events such as `message_update` skip building their payload when no handler is registered).
   */
  private syncListeners(): void {
    const runtime = this.current?.runtime;
    const wanted = runtime !== undefined && this.listeners.size > 0;
    if (wanted && !this.detach) {
      const owner = { id: "host:sdk", order: Number.MAX_SAFE_INTEGER };
      const offs = (Object.keys(wireEvents) as ExtensionEventName[]).map((name) =>
        runtime.bus.on(
          name,
          (payload: object) => {
            for (const listener of this.listeners) listener({ type: name, ...payload });
          },
          owner,
        ),
      );
      this.detach = () => {
        for (const off of offs) off();
      };
    } else if (!wanted && this.detach) {
      this.detach();
      this.detach = undefined;
    }
  }
}

/** `defaultTools`: plain names set the list, `+name` adds, `-name` removes. */
function applyDefaultTools(tools: ToolRegistry, spec: readonly string[]): void {
  if (spec.length === 0) return;
  const plain = spec.filter((s) => !s.startsWith("+") && !s.startsWith("-"));
  const active = new Set(plain.length > 0 ? plain : tools.getActiveTools());
  for (const item of spec) {
    if (item.startsWith("+")) active.add(item.slice(1));
    else if (item.startsWith("-")) active.delete(item.slice(1));
  }
  tools.setActiveTools([...active]);
}

function hostSource(mode: HostMode): "interactive" | "rpc" | "print" | "json" | "sdk" {
  if (mode === "tui") return "interactive";
  return mode === "rpc" ? "rpc" : mode === "print" ? "print" : mode === "json" ? "json" : "sdk";
}

import { join, resolve } from "node:path";

/**
 * `AgentSessionHandle`: what a host holds to drive a session (`SessionController`), surviving session replacement.
 * It keeps the open session (session-open.ts) and delegates: prompting and the queues to the agent loop, state and
 * figures to session-stats.ts, a person's commands to session-bash.ts, replacement to session-replace.ts, the logs it
 * opens to session-logs.ts. A host's listeners are the session's own bus handlers, attached again to each new
 * session; a session nobody listens to builds no wire payloads.
 */
import type {
  BashResult,
  CommandInfo,
  CompactionResult,
  CredentialStore,
  EntryRenderer,
  ExtensionEventName,
  ExtensionInfo,
  ExtensionUIContext,
  HostMode,
  HostServices,
  ImageContent,
  Kernel,
  LoadedSummary,
  MessageRenderer,
  ModelInfo,
  NavigateTreeOptions,
  NewSessionOptions,
  QueueMode,
  ReadonlySessionManager,
  SessionController,
  SessionRuntime,
  SessionStartEvent,
  SessionState,
  SessionStats,
  SessionSummary,
  ShortcutInfo,
  ThinkingLevel,
  ToolRenderers,
  TreeNavigation,
  UsableModel,
} from "../../kernel/index.js";
import { coreTokens, KernelError } from "../../kernel/index.js";
import type { AgentSession } from "../../plugins/agent-loop/agent-session.js";
import type { SessionReplacer } from "../../plugins/agent-loop/context-factory.js";
import { abortTreeNavigation, navigateTree } from "../../plugins/agent-loop/tree-navigation.js";
import { runCommand } from "../../plugins/command-registry/run-command.js";
import type { RegisteredFlag } from "../../plugins/flag-registry/flag-registry.js";
import type { HostFace } from "../../plugins/host-face/host-face.js";
import { wireEvents } from "../../plugins/kit/wire/json-event.js";
import type { RegisteredMode } from "../../plugins/mode-registry/mode-registry.js";
import { scopeModels } from "../../plugins/model-registry/scoped-models.js";
import type { SessionManager } from "../../plugins/session-store/session-manager.js";
import { resolveAgentDir } from "../../plugins/settings/agent-dir.js";
import { serviceTokens } from "../../plugins/tokens.js";
import { watchProcessFaults } from "./process-faults.js";
import { executeUserBash, type UserBashOptions } from "./session-bash.js";
import { registerInternals } from "./session-internals.js";
import { SessionLogs } from "./session-logs.js";
import {
  applySelection,
  type CarriedSelection,
  discoverResources,
  type OpenSession,
  openSession,
  type SessionOpening,
  startSelection,
} from "./session-open.js";
import type { CreateAgentSessionOptions, SessionEvent } from "./session-options.js";
import { createHostServices, type DiscoveredResources, hostFaceDeps } from "./session-plugins.js";
import { replaceSession } from "./session-replace.js";
import { availableThinkingLevels, sessionState, sessionStats, sessionSummary } from "./session-stats.js";
import { withPromptEvents } from "./ui-prompt-events.js";

const EMPTY_RESOURCES: DiscoveredResources = Object.freeze({
  skillPaths: [],
  promptPaths: [],
  themePaths: [],
}) as DiscoveredResources;

type Listener = (event: SessionEvent) => void;

export class AgentSessionHandle implements SessionReplacer, SessionController {
  readonly cwd: string;
  readonly agentDir: string;
  readonly mode: HostMode;
  private current: OpenSession | undefined;
  /** Each host listener, with the session its handlers are on and what removes them. */
  private readonly listeners = new Map<Listener, Attachment | undefined>();
  private readonly opening: SessionOpening;
  private readonly logs: SessionLogs;
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
    options: CreateAgentSessionOptions,
    private readonly kernel: Kernel,
  ) {
    this.cwd = resolve(options.cwd ?? process.cwd());
    this.agentDir = options.agentDir ?? resolveAgentDir();
    this.mode = options.mode ?? "sdk";
    this.warn = options.warn ?? ((message) => process.stderr.write(`knightcode: ${message}\n`));
    if (options.maxTurns !== undefined && !(Number.isInteger(options.maxTurns) && options.maxTurns > 0)) {
      throw new TypeError(`createAgentSession: maxTurns must be a positive integer, not ${options.maxTurns}`);
    }
    this.logs = new SessionLogs(() => kernel.container.resolve(serviceTokens.sessionStore), {
      cwd: this.cwd,
      agentDir: this.agentDir,
      choice: options.session ?? {},
      warn: (message) => this.warn(message),
    });
    this.opening = {
      kernel,
      options,
      cwd: this.cwd,
      agentDir: this.agentDir,
      mode: this.mode,
      warn: (message) => this.warn(message),
      boundUI: () => this.ui,
      withPromptEvents: (ui) => this.withPromptEvents(ui),
      trustDecision: undefined,
      replacer: this,
      // The handle works from here on for the host's beforeStart (modes, flags, setUI), before session_start.
      beforeStart: async (session) => {
        if (!options.beforeStart || this.beforeStartRan) return;
        this.beforeStartRan = true;
        this.current = session;
        await options.beforeStart(this);
      },
    };
    registerInternals(this, () => {
      const { runtime, log, config } = this.live();
      return {
        runtime,
        log,
        agent: this.agent,
        models: runtime.scope.resolve(serviceTokens.models),
        tools: runtime.scope.resolve(serviceTokens.toolRegistry),
        settings: config.settings,
      };
    });
  }

  /** @internal Opens the host's first session (`createAgentSession`). */
  async start(): Promise<void> {
    await this.open(this.logs.initial(), { reason: "startup" });
    const patterns = this.opening.options.scopedModels ?? [];
    // The whole model list (hundreds of catalogue models) is built only when there are patterns to check.
    const available = patterns.length > 0 ? this.getAvailableModels() : [];
    for (const pattern of patterns) {
      if (!available.some((m) => modelMatches(pattern, m))) {
        this.warn(`scoped models: no available model matches "${pattern}"; model cycling leaves it out`);
      }
    }
  }

  /**
   * The stores and configuration of any folder, through this handle's services: what a mode that serves many
   * sessions gets as `ModeContext.host`. Its `tools` lists what the current session's extensions declared.
   */
  get host(): HostServices {
    const sessionDir = this.logs.sessionDir();
    this.hostServices ??= createHostServices(
      hostFaceDeps(this.kernel.container, {
        agentDir: this.agentDir,
        ...(sessionDir ? { sessionDir } : {}),
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

  private get runtime(): SessionRuntime {
    return this.live().runtime;
  }

  private get agent(): AgentSession {
    return this.runtime.scope.resolve(serviceTokens.agent);
  }

  /** The extensions of the current session in load order, and the ones that failed to load. */
  extensions(): { loaded: ExtensionInfo[]; failed: string[] } {
    const runtime = this.runtime;
    return { loaded: [...runtime.extensionInfos], failed: runtime.loadFailures.map((e) => e.message) };
  }

  getLoaded(): LoadedSummary {
    const runtime = this.runtime;
    const commands = this.getCommands();
    const packages = new Set<string>();
    // Skills load lazily (on the first prompt), so they are counted from the resources the session resolved.
    const skills = new Set(
      commands.filter((c) => c.source === "skill").map((c) => c.name.replace(/^skill:/, "")),
    );
    for (const resolved of this.live().resources)
      for (const r of resolved.resources) {
        if (!r.enabled) continue;
        if (r.origin === "package") packages.add(r.source);
        if (r.type === "skills") skills.add(r.name);
      }
    return {
      extensions: runtime.extensionInfos.map((e) => ({ id: e.id, origin: e.origin })),
      failed: runtime.loadFailures.map((e) => e.message),
      skills: [...skills],
      prompts: commands.filter((c) => c.source === "prompt").map((c) => c.name),
      mcpServers: runtime.scope
        .resolve(coreTokens.mcpServers)
        .getMcpServers()
        .map((s) => s.name),
      packages: [...packages],
    };
  }

  extensionLoadFailures(): { extensionPath: string; event: "load"; error: string }[] {
    return this.runtime.loadFailures.map((e) => ({
      extensionPath: e.extension,
      event: "load",
      error: e.message,
    }));
  }

  get projectTrusted(): boolean {
    return this.opening.trustDecision === true;
  }

  // ---- prompting and the run -------------------------------------------------------------------------

  prompt(text: string, options: Parameters<AgentSession["prompt"]>[1] = {}): Promise<void> {
    return this.agent.prompt(text, { source: hostSource(this.mode), ...options });
  }

  steer(text: string, images?: ImageContent[]): void {
    this.agent.steer(text, images);
  }

  followUp(text: string, images?: ImageContent[]): void {
    this.agent.followUp(text, images);
  }

  setQueueMode(queue: "steering" | "followUp", mode: QueueMode): void {
    this.live().config.settings.saveGlobal({
      [queue === "steering" ? "steeringMode" : "followUpMode"]: mode,
    });
  }

  setAutoCompactionEnabled(enabled: boolean): void {
    this.live().config.settings.saveGlobal({ compaction: { enabled } });
  }

  setAutoRetryEnabled(enabled: boolean): void {
    this.live().config.settings.saveGlobal({ retry: { enabled } });
  }

  abortRetry(): void {
    this.agent.abortRetry();
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

  clearQueue(): { steering: string[]; followUp: string[] } {
    return this.agent.clearQueue();
  }

  compact(customInstructions?: string): Promise<CompactionResult> {
    return this.agent.compact(customInstructions ? { customInstructions } : {});
  }

  /** `!cmd`: `user_bash` handlers first, then the shell; the output enters the context unless excluded. */
  executeBash(command: string, options: UserBashOptions = {}): Promise<BashResult> {
    return executeUserBash(this.live(), command, options);
  }

  startupFailure(): Error | undefined {
    return this.current?.runtime.startupFailure;
  }

  // ---- model and thinking level ----------------------------------------------------------------------

  getThinkingLevel(): ThinkingLevel {
    return this.agent.thinkingLevel;
  }

  setThinkingLevel(level: ThinkingLevel): void {
    this.agent.setThinkingLevel(undefined, level);
  }

  getAvailableThinkingLevels(): ThinkingLevel[] {
    const model = this.agent.model;
    // A model's own levels (a routed model's may hold pi's `max`, which the session then holds as its level).
    return model
      ? (this.runtime.scope.resolve(serviceTokens.models).thinkingLevels(model) as ThinkingLevel[])
      : availableThinkingLevels(undefined);
  }

  cycleThinkingLevel(): ThinkingLevel | undefined {
    if (!this.agent.model?.reasoning) return undefined;
    const levels = this.getAvailableThinkingLevels();
    const next = levels[(levels.indexOf(this.agent.thinkingLevel) + 1) % levels.length]!;
    this.agent.setThinkingLevel(undefined, next);
    return next;
  }

  getAvailableModels(): ModelInfo[] {
    return this.runtime.scope.resolve(serviceTokens.models).getAvailable();
  }

  setModel(provider: string, modelId: string): Promise<boolean> {
    const model = this.runtime.scope.resolve(serviceTokens.models).find(provider, modelId);
    return model ? this.agent.setModel(undefined, model) : Promise.resolve(false);
  }

  getUsableModels(): UsableModel[] {
    return this.runtime.scope.resolve(serviceTokens.models).getUsable();
  }

  getScopedModels(): UsableModel[] {
    const usable = this.getUsableModels();
    // Read each time, so a choice `/scoped-models` saved applies at once.
    const patterns = this.host.settings.read(this.cwd).get("enabledModels");
    return scopeModels(usable, Array.isArray(patterns) ? (patterns as string[]) : undefined);
  }

  get credentials(): CredentialStore {
    const models = () => this.runtime.scope.resolve(serviceTokens.models);
    return {
      path: join(this.agentDir, "auth.json"),
      list: () => models().listCredentials(),
      saveApiKey: (provider, key) => models().saveCredential(provider, key),
      save: (provider, credential) => models().saveCredential(provider, credential),
      remove: (provider) => models().removeCredential(provider),
      loginMethods: (provider) => models().loginMethods(provider),
      providers: () => models().loginProviders(),
      keyStatus: (provider) => models().keyStatus(provider),
    };
  }

  /**
   * Moves to the next model: of the `scopedModels` the host named (`--models`) when set, else of the usable ones
   * the `enabledModels` setting scopes.
   */
  async cycleModel(): Promise<ModelInfo | undefined> {
    const models = this.scopedModels() ?? this.getScopedModels().map((u) => u.model);
    const current = this.agent.model;
    // A model chosen by name that is not in the list (the scripted one, say) is where the cycle starts.
    if (
      current &&
      current.provider !== "virtual" &&
      !models.some((m) => m.provider === current.provider && m.id === current.id)
    )
      models.unshift(current);
    if (models.length === 0) return undefined;
    const index = current
      ? models.findIndex((m) => m.provider === current.provider && m.id === current.id)
      : -1;
    const next = models[(index + 1) % models.length]!;
    await this.agent.setModel(undefined, next, "cycle");
    return next;
  }

  isModelScoped(): boolean {
    return (this.opening.options.scopedModels?.length ?? 0) > 0;
  }

  private scopedModels(): ModelInfo[] | undefined {
    const patterns = this.opening.options.scopedModels;
    if (!patterns?.length) return undefined;
    return this.getAvailableModels().filter(
      (m) => m.provider !== "virtual" && patterns.some((p) => modelMatches(p, m)),
    );
  }

  // ---- what the session shows ------------------------------------------------------------------------

  getState(): SessionState {
    return sessionState(this.live());
  }

  getSessionStats(): SessionStats {
    return sessionStats(this.live());
  }

  /** Sessions of this folder, newest first. */
  listSessions(): SessionSummary[] {
    return this.logs.list().map(sessionSummary);
  }

  setSessionName(name: string | undefined): void {
    this.agent.setSessionName(undefined, name);
  }

  setLabel(entryId: string, label: string | undefined): void {
    this.agent.setLabel(undefined, entryId, label);
  }

  /** The paths `resources_discover` handlers contributed (startup or the last reload). */
  discoveredResources(): DiscoveredResources {
    return structuredClone(this.current?.config.discoveredResources ?? EMPTY_RESOURCES);
  }

  // ---- what the extensions registered ----------------------------------------------------------------

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
    const runtime = this.runtime;
    const ran = await runCommand(runtime, runtime.scope.resolve(serviceTokens.commandRegistry), name, args);
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

  getToolRenderers(toolName: string): ToolRenderers | undefined {
    return this.runtime.scope.resolve(serviceTokens.toolRegistry).getToolRenderers(toolName);
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
      await runtime.bus.enter(() => shortcut.handler(runtime.context()));
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

  // ---- the host's UI and listeners -------------------------------------------------------------------

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
  subscribe(listener: Listener): () => void {
    if (!this.listeners.has(listener)) {
      this.listeners.set(listener, this.current ? attach(this.current.runtime, listener) : undefined);
    }
    return () => {
      this.listeners.get(listener)?.detach();
      this.listeners.delete(listener);
    };
  }

  /** The host's UI with `ui_prompt_start`/`ui_prompt_end` around its dialogs, on whichever session is current. */
  private withPromptEvents(ui: ExtensionUIContext): ExtensionUIContext {
    return withPromptEvents(ui, () => this.current?.runtime);
  }

  // ---- reload and replacement ------------------------------------------------------------------------

  async reload(): Promise<void> {
    await this.adoptSavedTrust();
    const session = this.live();
    await session.runtime.reload();
    await applySelection(this.opening, session);
    await discoverResources(this.opening, session, "reload");
  }

  /**
   * A decision saved in trust.json since the session started (`/trust`) applies from the next reload: trusting
   * loads the project's extensions, settings and resources with the reloaded ones; distrusting leaves them out.
   */
  private async adoptSavedTrust(): Promise<void> {
    const trust = this.kernel.container.resolve(serviceTokens.trust);
    const saved = trust.saved(this.agentDir, this.cwd, this.warn);
    const current = this.live();
    if (!saved || saved.trusted === current.config.projectTrusted) return;
    this.opening.trustDecision = saved.trusted;
    await current.settleProject(saved.trusted);
  }

  /**
   * Replaces the session with a new one: in memory when this handle keeps its sessions in memory, else a new file.
   * `setup` writes its first entries before it starts; `preserveModel` carries the model and thinking level over.
   */
  newSession(options: NewSessionOptions = {}): Promise<{ cancelled: boolean }> {
    return this.replace({ reason: "new" }, () => this.logs.fresh(options.parentSession), options);
  }

  switchSession(
    path: string,
    options: Parameters<SessionReplacer["switchSession"]>[1] = {},
  ): Promise<{ cancelled: boolean }> {
    return this.replace({ reason: "resume", target: path }, () => this.logs.open(path), options);
  }

  fork(
    entryId: string,
    options: Parameters<SessionReplacer["fork"]>[1] = {},
  ): Promise<{ cancelled: boolean }> {
    const position = options.position ?? "at";
    return this.replace(
      { reason: "fork", entryId, position },
      () => this.logs.branch(this.live().log, entryId, position),
      options,
    );
  }

  /** Clones the current branch into a new session file and switches to it. */
  clone(): Promise<{ cancelled: boolean }> {
    const leaf = this.live().log.getLeafId();
    if (!leaf) return this.newSession();
    return this.fork(leaf);
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

  private replace(
    target: Parameters<typeof replaceSession>[1],
    openLog: () => SessionManager,
    options: Pick<NewSessionOptions, "withSession" | "setup" | "preserveModel">,
  ): Promise<{ cancelled: boolean }> {
    return replaceSession(this.live(), target, openLog, options, async (log, start, carried) => {
      this.current = undefined;
      await this.open(log, start, carried);
      return this.live();
    });
  }

  /** Starts a kernel session over a log, then attaches the host's listeners to it and applies the selection. */
  private async open(
    log: SessionManager,
    start: SessionStartEvent,
    carried?: CarriedSelection,
  ): Promise<void> {
    let session: OpenSession;
    try {
      session = await openSession(this.opening, log, start);
    } catch (error) {
      this.current = undefined;
      throw error;
    }
    this.current = session;
    // A host that subscribed in beforeStart is already listening to this runtime.
    for (const [listener, attached] of this.listeners) {
      if (attached?.runtime === session.runtime) continue;
      attached?.detach();
      this.listeners.set(listener, attach(session.runtime, listener));
    }
    try {
      await startSelection(this.opening, session, carried);
    } catch (error) {
      // A session that cannot start leaves nothing behind: its extensions and registrations go with it.
      this.current = undefined;
      throw error;
    }
  }

  private live(): OpenSession {
    if (!this.current)
      throw new Error(this.disposed ? "The session was disposed" : "The session is not open yet");
    return this.current;
  }
}

interface Attachment {
  runtime: SessionRuntime;
  detach(): void;
}

/**
 * A host listener as the session's own handlers of the wire events (last in order), so it hears every event as the
 * JSON and RPC modes write them.
 */
function attach(runtime: SessionRuntime, listener: Listener): Attachment {
  const owner = { id: "host:sdk", order: Number.MAX_SAFE_INTEGER };
  const offs = (Object.keys(wireEvents) as ExtensionEventName[]).map((name) =>
    runtime.bus.on(
      name,
      (payload: object) => {
        // A listener only hears: what it returns must not count as a handler's result (a transform's, a gate's).
        listener({ type: name, ...payload });
      },
      owner,
    ),
  );
  return {
    runtime,
    detach: () => {
      for (const off of offs) off();
    },
  };
}

function hostSource(mode: HostMode): "interactive" | "rpc" | "print" | "json" | "sdk" {
  if (mode === "tui") return "interactive";
  return mode === "rpc" ? "rpc" : mode === "print" ? "print" : mode === "json" ? "json" : "sdk";
}

/**
 * A `--models` pattern against a model: with `*`, a wildcard match of `provider/id` or `id`; otherwise the exact
 * `provider/id` or id, or a case-insensitive part of the id or name.
 */
export function modelMatches(pattern: string, model: ModelInfo): boolean {
  const full = `${model.provider}/${model.id}`;
  if (pattern.includes("*")) {
    const source = pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    const glob = new RegExp(`^${source}$`, "i");
    return glob.test(full) || glob.test(model.id);
  }
  if (pattern === full || pattern === model.id) return true;
  const needle = pattern.toLowerCase();
  return model.id.toLowerCase().includes(needle) || (model.name ?? "").toLowerCase().includes(needle);
}

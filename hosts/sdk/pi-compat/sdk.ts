/**
 * pi's in-process session SDK over KnightCode's: an extension written for pi that starts a subagent with pi's
 * `createAgentSession({ sessionManager: SessionManager.inMemory(), resourceLoader, model, tools, customTools })` gets
 * a real KnightCode session in this process (the SDK's `createAgentSession`), with its own tools, model, extensions
 * and events, driven through an object in the shape of pi's `AgentSession` (`subscribe`, `prompt`, `abort`,
 * `messages`, `dispose`, ...).
 *
 * pi's `SessionManager`, `SettingsManager` and `DefaultResourceLoader` are here what they decide about that session:
 * where it is kept, the settings that beat the files, its extensions and system prompt. Discovery itself (settings
 * files, packages, skills, context files) is KnightCode's, done when the session opens.
 */
import type {
  AgentMessage,
  ExtensionAPI,
  ExtensionFactory,
  ModelInfo,
  ReadonlySessionManager,
  SessionEntry,
  ThinkingLevel,
  ToolDefinition,
} from "../../../kernel/index.js";
import type { CreateAgentSessionOptions, SessionChoice, SessionEvent } from "../session-options.js";

type Module = Record<string, unknown>;

/** The part of KnightCode's session handle pi's `AgentSession` is made of. */
interface Handle {
  prompt(text: string, options?: Record<string, unknown>): Promise<void>;
  steer(text: string): void;
  followUp(text: string): void;
  abort(): unknown;
  waitForIdle(): Promise<void>;
  isIdle(): boolean;
  subscribe(listener: (event: SessionEvent) => void): () => void;
  dispose(): Promise<void>;
  getState(): {
    model: ModelInfo | undefined;
    thinkingLevel: ThinkingLevel;
    sessionFile?: string;
    sessionId: string;
  };
  setModel(provider: string, modelId: string): Promise<boolean>;
  setThinkingLevel(level: ThinkingLevel): void;
  getThinkingLevel(): ThinkingLevel;
  extensions(): { loaded: unknown[]; failed: string[] };
  readonly sessionManager: ReadonlySessionManager;
}
type CreateSession = (options: CreateAgentSessionOptions) => Promise<Handle>;

const DELEGATED = [
  "getHeader",
  "getSessionId",
  "getSessionFile",
  "getLeafId",
  "getEntry",
  "getEntries",
  "getBranch",
  "getTree",
  "getChildren",
  "getLabel",
  "getSessionName",
] as const;

/**
 * pi's `SessionManager`: which session file the new session uses. Until a session opens with it, it knows only
 * that choice (`getCwd()`, `isPersisted()`); afterwards its readers (`getEntries()`, `getBranch()`,
 * `getSessionFile()`, `buildSessionContext()`, ...) read that session's log.
 */
export class SessionManager {
  /** @internal The session that opened with this manager. */
  attached: ReadonlySessionManager | undefined;

  private constructor(
    private readonly cwd: string,
    /** @internal */ readonly choice: SessionChoice,
  ) {
    for (const name of DELEGATED) {
      (this as Record<string, unknown>)[name] = (...args: unknown[]) =>
        (this.log(name)[name] as (...a: unknown[]) => unknown)(...args);
    }
  }

  static inMemory(cwd: string = process.cwd()): SessionManager {
    return new SessionManager(cwd, { inMemory: true });
  }

  static create(cwd: string, sessionDir?: string): SessionManager {
    return new SessionManager(cwd, sessionDir ? { sessionDir } : {});
  }

  static open(path: string, sessionDir?: string): SessionManager {
    return new SessionManager(process.cwd(), { path, ...(sessionDir ? { sessionDir } : {}) });
  }

  static continueRecent(cwd: string, sessionDir?: string): SessionManager {
    return new SessionManager(cwd, { continue: true, ...(sessionDir ? { sessionDir } : {}) });
  }

  static async list(): Promise<never> {
    throw new Error(
      "SessionManager.list from pi-coding-agent is not supported by KnightCode: list sessions with `knightcode --resume` or the SDK's `listSessions()`",
    );
  }

  getCwd(): string {
    return this.attached?.getCwd() ?? this.cwd;
  }

  isPersisted(): boolean {
    return !this.choice.inMemory;
  }

  buildSessionContext(): { messages: AgentMessage[]; thinkingLevel: string; model: unknown } {
    const log = this.log("buildSessionContext") as ReadonlySessionManager & {
      buildSessionContext?(): { messages: AgentMessage[]; thinkingLevel?: string; model?: unknown };
    };
    const context = log.buildSessionContext?.() ?? {
      messages: log
        .getBranch()
        .flatMap((entry: SessionEntry) => (entry.type === "message" ? [entry.message as AgentMessage] : [])),
    };
    return {
      messages: context.messages,
      thinkingLevel: context.thinkingLevel ?? "off",
      model: context.model ?? null,
    };
  }

  private log(method: string): ReadonlySessionManager & Record<string, unknown> {
    if (!this.attached) {
      throw new Error(
        `SessionManager.${method}(): this session manager has no session yet; pass it to createAgentSession() first`,
      );
    }
    return this.attached as ReadonlySessionManager & Record<string, unknown>;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function merge(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    out[key] =
      isObject(value) && isObject(out[key]) ? merge(out[key] as Record<string, unknown>, value) : value;
  }
  return out;
}

/**
 * pi's `SettingsManager`: settings for the sessions created with it, laid over every settings file (KnightCode's
 * `settings` option). Setters change those values; nothing is written to a settings file.
 */
export class SettingsManager {
  private constructor(private values: Record<string, unknown>) {}

  static create(_cwd?: string, _agentDir?: string): SettingsManager {
    return new SettingsManager({});
  }

  static inMemory(settings: Record<string, unknown> = {}): SettingsManager {
    return new SettingsManager(structuredClone(settings));
  }

  applyOverrides(overrides: Record<string, unknown>): void {
    this.values = merge(this.values, overrides);
  }

  /** @internal What the session gets as `settings`. */
  overrides(): Record<string, unknown> {
    return structuredClone(this.values);
  }

  getGlobalSettings(): Record<string, unknown> {
    return this.overrides();
  }

  getProjectSettings(): Record<string, unknown> {
    return {};
  }

  getDefaultThinkingLevel(): string | undefined {
    return this.values.defaultThinkingLevel as string | undefined;
  }

  setDefaultThinkingLevel(level: string): void {
    this.values.defaultThinkingLevel = level;
  }

  getDefaultProvider(): string | undefined {
    return this.values.defaultProvider as string | undefined;
  }

  getDefaultModel(): string | undefined {
    return this.values.defaultModel as string | undefined;
  }

  setDefaultModelAndProvider(provider: string, modelId: string): void {
    this.values.defaultProvider = provider;
    this.values.defaultModel = modelId;
  }

  getCompactionSettings(): unknown {
    return this.values.compaction;
  }

  getRetrySettings(): unknown {
    return this.values.retry;
  }

  async flush(): Promise<void> {}

  drainErrors(): { scope: string; error: Error }[] {
    return [];
  }
}

export interface ResourceLoaderOptions {
  cwd?: string;
  agentDir?: string;
  settingsManager?: SettingsManager;
  additionalExtensionPaths?: string[];
  additionalSkillPaths?: string[];
  extensionFactories?: (ExtensionFactory | { name?: string; factory: ExtensionFactory })[];
  noExtensions?: boolean;
  noSkills?: boolean;
  noPromptTemplates?: boolean;
  noThemes?: boolean;
  noContextFiles?: boolean;
  systemPrompt?: string;
  appendSystemPrompt?: string[] | string;
}

/**
 * pi's `DefaultResourceLoader`: the session's extra extensions (`additionalExtensionPaths`, `extensionFactories`),
 * its system prompt (`systemPrompt` replaces the one KnightCode builds, `appendSystemPrompt` adds to it) and its
 * settings. Discovery runs when the session opens; `reload()` has nothing to do before that.
 */
export class DefaultResourceLoader {
  constructor(
    /** @internal */ readonly options: ResourceLoaderOptions = {},
    private readonly skills?: (options: Module) => { skills: unknown[]; diagnostics: unknown[] },
  ) {
    const ignored = (["noPromptTemplates", "noThemes", "noContextFiles", "noSkills"] as const).filter(
      (option) => options[option],
    );
    // The session still loads these, as KnightCode's settings say: a warning says so rather than pretend.
    if (ignored.length > 0) {
      process.emitWarning(
        `DefaultResourceLoader: ${ignored.join(", ")} ${ignored.length > 1 ? "are" : "is"} not supported by KnightCode; ` +
          "the session loads the skills, prompt templates, themes and context files its settings give it",
        { code: "KC_PI_COMPAT" },
      );
    }
  }

  async reload(): Promise<void> {}

  getSystemPrompt(): string | undefined {
    return this.options.systemPrompt;
  }

  getAppendSystemPrompt(): string[] {
    const append = this.options.appendSystemPrompt;
    return append === undefined ? [] : Array.isArray(append) ? append : [append];
  }

  getSkills(): { skills: unknown[]; diagnostics: unknown[] } {
    if (this.options.noSkills || !this.skills) return { skills: [], diagnostics: [] };
    return this.skills({
      ...(this.options.cwd ? { cwd: this.options.cwd } : {}),
      ...(this.options.agentDir ? { agentDir: this.options.agentDir } : {}),
      skillPaths: this.options.additionalSkillPaths ?? [],
    });
  }
}

/** pi's `AuthStorage`: KnightCode reads keys itself; a runtime key given here goes to the process environment. */
export class AuthStorage {
  static create(_authPath?: string): AuthStorage {
    return new AuthStorage();
  }

  static inMemory(): AuthStorage {
    return new AuthStorage();
  }

  setRuntimeApiKey(provider: string, apiKey: string): void {
    const variable = `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
    process.env[variable] = apiKey;
  }

  hasAuth(provider: string): boolean {
    return !!process.env[`${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`];
  }
}

/** pi's `ModelRegistry`, over the calling session's models. */
export class ModelRegistry {
  constructor(
    _auth: AuthStorage | undefined,
    private readonly kit: Module,
  ) {}

  getAll(): ModelInfo[] {
    return (this.kit.getModels as () => ModelInfo[])();
  }

  getAvailable(): ModelInfo[] {
    return this.getAll();
  }

  find(provider: string, modelId: string): ModelInfo | undefined {
    return (this.kit.getModel as (p: string, m: string) => ModelInfo | undefined)(provider, modelId);
  }

  refresh(): void {}

  getError(): string | undefined {
    return undefined;
  }
}

/** pi's `createAgentSession` options that this mapping reads. */
export interface PiCreateOptions {
  cwd?: string;
  agentDir?: string;
  model?: { provider: string; id: string };
  thinkingLevel?: ThinkingLevel;
  tools?: string[];
  noTools?: "all" | "builtin";
  customTools?: ToolDefinition[];
  resourceLoader?: DefaultResourceLoader | Module;
  sessionManager?: SessionManager;
  settingsManager?: SettingsManager;
  authStorage?: unknown;
  modelRegistry?: unknown;
  modelRuntime?: unknown;
  scopedModels?: unknown;
  excludeTools?: string[];
}

const CORE_TOOLS = ["read", "bash", "edit", "write"];

/** The KnightCode session options a pi `createAgentSession` call stands for. */
export function sessionOptions(options: PiCreateOptions): CreateAgentSessionOptions {
  const loader = options.resourceLoader;
  if (loader && !(loader instanceof DefaultResourceLoader)) {
    throw new Error(
      "createAgentSession: a custom resourceLoader object is not supported by KnightCode; use DefaultResourceLoader (its systemPrompt, appendSystemPrompt, extensionFactories and additionalExtensionPaths options)",
    );
  }
  const resources = loader?.options ?? {};
  const extensions: NonNullable<CreateAgentSessionOptions["extensions"]> = [
    ...(resources.additionalExtensionPaths ?? []),
    ...(resources.extensionFactories ?? []).map((entry) =>
      typeof entry === "function" ? entry : entry.factory,
    ),
  ];
  const custom = options.customTools ?? [];
  if (custom.length > 0) {
    extensions.push((knightcode: ExtensionAPI) => {
      for (const tool of custom) knightcode.registerTool(tool);
    });
  }
  const systemPrompt = loader?.getSystemPrompt();
  const append = loader?.getAppendSystemPrompt() ?? [];
  if (systemPrompt !== undefined || append.length > 0) {
    extensions.push((knightcode: ExtensionAPI) => {
      knightcode.on("before_agent_start", (event) => ({
        systemPrompt: [systemPrompt ?? event.systemPrompt, ...append].join("\n\n"),
      }));
    });
  }
  let tools: string[] | undefined;
  if (options.tools) {
    const patterns = options.tools.filter((name) => /[*+-]/.test(name[0] ?? "") || name.includes("*"));
    if (patterns.length > 0) {
      throw new Error(
        `createAgentSession: tool patterns and +/- entries (${patterns.join(", ")}) are not supported by KnightCode; list tool names`,
      );
    }
    tools = [...options.tools, ...custom.map((tool) => tool.name).filter((n) => !options.tools!.includes(n))];
  } else if (options.noTools === "all") tools = [];
  else if (options.noTools === "builtin") tools = custom.map((tool) => tool.name);
  if (tools && options.excludeTools) tools = tools.filter((name) => !options.excludeTools!.includes(name));
  else if (!tools && options.excludeTools?.length) {
    tools = [...CORE_TOOLS, ...custom.map((t) => t.name)].filter((n) => !options.excludeTools!.includes(n));
  }
  const settings = options.settingsManager?.overrides() ?? resources.settingsManager?.overrides();
  const cwd = options.cwd ?? resources.cwd;
  const agentDir = options.agentDir ?? resources.agentDir;
  return {
    ...(cwd ? { cwd } : {}),
    ...(agentDir ? { agentDir } : {}),
    ...(resources.noExtensions ? { noExtensions: true } : {}),
    ...(options.model ? { provider: options.model.provider, model: options.model.id } : {}),
    ...(options.thinkingLevel ? { thinkingLevel: options.thinkingLevel } : {}),
    ...(tools ? { tools } : {}),
    ...(extensions.length > 0 ? { extensions } : {}),
    ...(settings && Object.keys(settings).length > 0 ? { settings } : {}),
    session: options.sessionManager?.choice ?? {},
  };
}

/** What pi's `AgentSession` offers a subagent's code, over a KnightCode session handle. */
function piSession(handle: Handle, manager: SessionManager | undefined) {
  const messages = (): AgentMessage[] =>
    handle.sessionManager
      .getBranch()
      .flatMap((entry: SessionEntry) => (entry.type === "message" ? [entry.message as AgentMessage] : []));
  const lastAssistantText = (): string | undefined => {
    const last = messages()
      .filter((m) => m.role === "assistant")
      .at(-1) as { content?: { type: string; text?: string }[] } | undefined;
    return last?.content
      ?.filter((c) => c.type === "text")
      .map((c) => c.text)
      .join("");
  };
  return {
    subscribe: (listener: (event: SessionEvent) => void) => handle.subscribe(listener),
    prompt: (text: string, options: Record<string, unknown> = {}) => {
      const { streamingBehavior, ...rest } = options;
      if (!handle.isIdle() && streamingBehavior === "steer") return Promise.resolve(handle.steer(text));
      if (!handle.isIdle() && streamingBehavior === "followUp") return Promise.resolve(handle.followUp(text));
      return handle.prompt(text, rest);
    },
    steer: async (text: string) => handle.steer(text),
    followUp: async (text: string) => handle.followUp(text),
    abort: async () => {
      handle.abort();
      await handle.waitForIdle();
    },
    waitForIdle: () => handle.waitForIdle(),
    // pi's dispose() returns nothing; a failure to close is still said, not dropped.
    dispose: () => {
      handle.dispose().catch((error: unknown) => {
        process.stderr.write(`subagent session: dispose failed: ${String(error)}\n`);
      });
    },
    get messages() {
      return messages();
    },
    get state() {
      const state = handle.getState();
      return {
        messages: messages(),
        model: state.model,
        thinkingLevel: state.thinkingLevel,
        isStreaming: !handle.isIdle(),
      };
    },
    get model() {
      return handle.getState().model;
    },
    get thinkingLevel() {
      return handle.getThinkingLevel();
    },
    get isStreaming() {
      return !handle.isIdle();
    },
    get sessionFile() {
      return handle.getState().sessionFile;
    },
    get sessionId() {
      return handle.getState().sessionId;
    },
    get sessionManager() {
      return manager ?? handle.sessionManager;
    },
    getLastAssistantText: lastAssistantText,
    setModel: async (model: { provider: string; id: string }) => {
      if (!(await handle.setModel(model.provider, model.id))) {
        throw new Error(`setModel: no model ${model.provider}/${model.id} in this session`);
      }
    },
    setThinkingLevel: (level: ThinkingLevel) => handle.setThinkingLevel(level),
  };
}

/** pi's `createAgentSession`, given KnightCode's. */
export function piCreateAgentSession(create: CreateSession) {
  return async (options: PiCreateOptions = {}) => {
    const handle = await create(sessionOptions(options));
    if (options.sessionManager) options.sessionManager.attached = handle.sessionManager;
    const failed = handle.extensions().failed;
    return {
      session: piSession(handle, options.sessionManager),
      extensionsResult: {
        extensions: handle.extensions().loaded,
        errors: failed.map((error) => ({ error })),
      },
      modelFallbackMessage: undefined,
    };
  };
}

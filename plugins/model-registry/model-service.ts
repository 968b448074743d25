/**
 * The model side of one session: what `registerProvider`, `registerVirtualModel` and `ctx.modelRegistry` reach.
 * It lists the models of every registered provider (plus `models.json`), resolves credentials, and streams
 * requests with the provider hooks wired to this session's events.
 */
import { closeSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { Type } from "@sinclair/typebox";
import {
  type AgentMessage,
  type AssistantMessage,
  type AssistantMessageStream,
  type ClassifierAnswer,
  type ClassifierInfo,
  type ClassifierQuestion,
  type Disposable,
  type ExtensionContext,
  type ExtensionInfo,
  errorMessage,
  type HookBus,
  KernelError,
  type LlmMessage,
  type ModelApiService,
  type ModelInfo,
  type ModelRuntime,
  type ProviderConfig,
  type ProviderHooks,
  type ProviderKeyStatus,
  type ProviderLoginMethod,
  type ProviderStreamRequest,
  type ProviderTransport,
  type RegistrationOptions,
  type ResolvedRequestAuth,
  type RoutedModelDefinition,
  type SessionEntry,
  type StreamSimpleOptions,
  type SummarizeRequest,
  type ThinkingLevel,
  type ToolDeclaration,
  toDisposable,
  type UsableModel,
  type VirtualModelConfig,
} from "../../kernel/index.js";
import { planRetry, waitUnlessAborted } from "../agent-loop/retry-policy.js";
import { writeFileAtomic } from "../kit/files/atomic-write.js";
import { readJsonObjectFile } from "../kit/files/json-file.js";
import { InvalidHeadersError, InvalidPayloadError } from "../kit/provider/errors.js";
import { maskSecret } from "../kit/provider/oauth.js";
import type { RetrySettings } from "../settings/settings.js";
import { AuthFile } from "./auth-file.js";
import { failedStream } from "./failed-stream.js";
import { isCommandValue, runKeyCommand } from "./key-commands.js";
import { loadModelsJson } from "./models-json.js";
import type { ProviderStore } from "./provider-store.js";

export interface ModelRequest {
  model: ModelInfo;
  systemPrompt: string;
  messages: LlmMessage[];
  tools: ToolDeclaration[];
  thinkingLevel?: ProviderStreamRequest["thinkingLevel"];
  maxTokens?: number;
  temperature?: number;
  toolChoice?: { name: string };
  signal?: AbortSignal;
  /** Overrides the resolved key (an extension's `complete()` call with its own). */
  apiKey?: string;
  /** Added to the provider's configured headers. */
  headers?: Record<string, string>;
  /** Set by the agent loop: a routed model's request is then `user`, `continuation` or `retry`, not `direct`. */
  fromLoop?: boolean;
  /**
   * Set here when the session asked for pi's `max`: the provider gets `xhigh`, and a level map that names `max`
   * gives its value as `xhigh`'s, so a provider that reads the map sends the model's `max`.
   */
  atMax?: boolean;
}

/** The custom entry type that keeps a routed model's state on the session branch (pi's name for it). */
export const VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state";

/** Where routed models keep their state: the session's branch. */
export interface RouterStateLog {
  /** The active branch's custom entries, newest first. */
  customEntries(): Iterable<Extract<SessionEntry, { type: "custom" }>>;
  append(customType: string, data: unknown): void;
}

export interface ModelServiceDeps {
  store: ProviderStore;
  bus: HookBus;
  context: () => ExtensionContext;
  agentDir: string;
  env?: NodeJS.ProcessEnv;
  /** Keys by provider that beat auth.json and the configured ones, kept in memory only (`--api-key`). */
  apiKeys?: Readonly<Record<string, string>>;
  sessionId?: () => string | undefined;
  /** Models to offer for classify(), besides the session's own. */
  classifiers?: () => ClassifierInfo[];
  currentModel?: () => ModelInfo | undefined;
  /** The back-off of summary requests; without it they are not retried. */
  retry?: () => RetrySettings;
  warn?(message: string): void;
  /** The `transport` setting, read at each request; unset: `auto`. */
  transport?: () => ProviderTransport;
  /** The `images.blockImages` setting, read at each request: true turns every image into a text note. */
  blockImages?: () => boolean;
  /** The session's reload in progress, if any (registrations it drops are kept until it ends). */
  pendingReload?(): Promise<void> | undefined;
  /** Where routed models (pi's object form of registerVirtualModel) keep their state. */
  routerState?: RouterStateLog;
}

/** How to get a model, naming the real files of the agent folder. */
export function noModelHelp(agentDir: string): string {
  return (
    `No model is configured. Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, store a key with /login (in ${join(agentDir, "auth.json")}), ` +
    `or add a provider such as a local server to ${join(agentDir, "models.json")}; then choose it with --model ` +
    "provider/id or /model."
  );
}

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** pi's thinking levels, in order, `max` above `xhigh`. */
const MAP_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;

/** A sign-in whose access token runs out sooner than this is renewed before a request. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
/** How long a process waits for another's renewal (`auth.json.lock`) before it gives up. */
const LOCK_WAIT_MS = 20_000;
/** A lock older than this was left by a process that died: it is taken over. */
const STALE_LOCK_MS = 60_000;

/** Takes `<auth.json>.lock` (created exclusively, mode 0600); resolves its release. */
async function lockAuthFile(authPath: string): Promise<() => void> {
  const lock = `${authPath}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(dirname(authPath), { recursive: true });
      closeSync(openSync(lock, "wx", 0o600));
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) {
        rmSync(lock, { force: true });
        continue;
      }
    } catch {
      continue;
    }
    if (Date.now() > deadline) {
      throw new KernelError(
        "KC_ERR_AUTH_FILE",
        `${lock} is held by another process renewing a sign-in; remove it if no KnightCode is running`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export class ModelService implements ModelApiService {
  private readonly holder = {};
  private readonly virtual = new Map<string, { config: VirtualModelConfig; owner: string }>();
  /** pi's routed models by `provider/id`. */
  private readonly routed = new Map<
    string,
    { definition: RoutedModelDefinition; owner: string; model: ModelInfo }
  >();
  /** The agent loop's last failed request, which its next one retries. */
  private loopFailure: { model: ModelInfo; message: AssistantMessage } | undefined;
  private readonly modelsJson: ReturnType<typeof loadModelsJson>;
  private readonly auth: AuthFile;
  /** Renewals of stored sign-ins in progress, by provider. */
  private readonly refreshes = new Map<string, Promise<void>>();
  /** Providers already told they cannot use the asked transport (each is named once). */
  private readonly transportWarned = new Set<string>();

  constructor(private readonly deps: ModelServiceDeps) {
    this.modelsJson = loadModelsJson(deps.agentDir);
    this.auth = new AuthFile(join(deps.agentDir, "auth.json"), deps.warn);
    for (const warning of this.modelsJson.warnings) deps.warn?.(warning);
  }

  // ---- ExtensionAPI methods (owner first) ---------------------------------------------------------

  registerProvider(
    owner: ExtensionInfo,
    name: string,
    config: ProviderConfig,
    options: RegistrationOptions = {},
  ): Disposable {
    if (typeof name !== "string" || !/^[a-z0-9][a-z0-9._-]*$/i.test(name)) {
      throw new KernelError(
        "KC_ERR_INVALID_PROVIDER",
        `${owner.id}: provider name ${JSON.stringify(name)} is invalid`,
      );
    }
    if (!config || typeof config !== "object") {
      throw new KernelError(
        "KC_ERR_INVALID_PROVIDER",
        `${owner.id}: provider "${name}" needs a config object`,
      );
    }
    if (!config.streamSimple && !config.api) {
      throw new KernelError(
        "KC_ERR_INVALID_PROVIDER",
        `${owner.id}: provider "${name}" needs streamSimple() or the name of a wire api`,
      );
    }
    return this.deps.store.register(name, config, owner, this.holder, {
      fallback: options.fallback === true,
      pendingReload: () => this.deps.pendingReload?.(),
    });
  }

  unregisterProvider(name: string): void {
    this.deps.store.unregister(name);
  }

  registerVirtualModel(
    owner: ExtensionInfo,
    name: string | RoutedModelDefinition,
    config?: VirtualModelConfig,
  ): Disposable {
    if (typeof name === "object" && name !== null) return this.registerRoutedModel(owner, name);
    if (typeof config?.route !== "function") {
      throw new KernelError(
        "KC_ERR_INVALID_PROVIDER",
        `${owner.id}: virtual model "${name}" needs a route function`,
      );
    }
    const entry = { config, owner: owner.id };
    this.virtual.set(name, entry);
    return toDisposable(() => {
      if (this.virtual.get(name) === entry) this.virtual.delete(name);
    }, `${owner.id} virtual model ${name}`);
  }

  unregisterVirtualModel(name: string, id?: string): void {
    if (id === undefined) this.virtual.delete(name);
    else this.routed.delete(`${name}/${id}`);
  }

  private registerRoutedModel(owner: ExtensionInfo, definition: RoutedModelDefinition): Disposable {
    const { provider, id } = definition;
    const invalid = (why: string) =>
      new KernelError("KC_ERR_INVALID_PROVIDER", `${owner.id}: virtual model ${why}`);
    if (typeof provider !== "string" || !provider.trim() || typeof id !== "string" || !id.trim()) {
      throw invalid("provider and id must be non-empty strings");
    }
    if (typeof definition.route !== "function") throw invalid(`${provider}/${id} needs a route function`);
    const key = `${provider}/${id}`;
    if (!this.routed.has(key) && this.find(provider, id)) {
      throw invalid(`${key} conflicts with a physical model`);
    }
    const levels = definition.thinkingLevels ?? ["off"];
    const model: ModelInfo = {
      provider,
      id,
      ...(definition.name ? { name: definition.name } : {}),
      api: "virtual",
      contextWindow: definition.contextWindow ?? 0,
      maxTokens: definition.maxTokens ?? 0,
      reasoning: levels.some((level) => level !== "off"),
    };
    // Registering the same provider/id again replaces the router.
    const entry = { definition, owner: owner.id, model };
    this.routed.set(key, entry);
    return toDisposable(() => {
      if (this.routed.get(key) === entry) this.routed.delete(key);
    }, `${owner.id} virtual model ${key}`);
  }

  /**
   * A model's own thinking levels: a routed model's, or those the `thinkingLevelMap` of a provider's reasoning model
   * offers; undefined for any other model (which offers them all).
   */
  routedThinkingLevels(model: ModelInfo): readonly (ThinkingLevel | "max")[] | undefined {
    const entry = this.routed.get(`${model.provider}/${model.id}`);
    if (entry) return entry.definition.thinkingLevels ?? ["off"];
    if (!model.reasoning) return undefined;
    const map = this.providerConfig(model.provider)?.models?.find((m) => m.id === model.id)?.thinkingLevelMap;
    if (!map) return undefined;
    const levels = MAP_LEVELS.filter((level) => {
      const mapped = map[level];
      if (mapped === null) return false;
      return level === "xhigh" || level === "max" ? typeof mapped === "string" : true;
    });
    return levels.length > 0 ? levels : undefined;
  }

  /**
   * The levels a model takes (`ModelRuntime.thinkingLevels`): its own list (`routedThinkingLevels`), else `off` to
   * `xhigh` for a model that reasons and `off` alone for one that does not.
   */
  thinkingLevels(model: ModelInfo): (ThinkingLevel | "max")[] {
    const own = this.routedThinkingLevels(model);
    if (own) return [...own];
    return model.reasoning ? MAP_LEVELS.filter((level) => level !== "max") : ["off"];
  }

  /**
   * Routes one request of a routed model: asks its router for the real model (which must be one with credentials),
   * stores the new router state on the branch (agent-loop requests only), and streams the request there.
   */
  private streamRouted(
    request: ModelRequest,
    entry: { definition: RoutedModelDefinition; model: ModelInfo },
  ): AssistantMessageStream {
    const { model } = entry;
    const name = `Virtual model ${model.provider}/${model.id}`;
    const failure = request.fromLoop ? this.loopFailure : undefined;
    if (request.fromLoop) this.loopFailure = undefined;
    const stream = lazyStream(model, async () => {
      const messages = request.messages;
      const lastResponse = messages.findLastIndex((m) => m.role === "assistant");
      const userTurn = messages.slice(lastResponse + 1).some((m) => m.role === "user");
      // A prompt that arrives after a failure that was not retried starts a new turn.
      const lastUser = messages.findLast((m) => m.role === "user");
      const retry = failure && !(lastUser && lastUser.timestamp > failure.message.timestamp);
      const reason = !request.fromLoop ? "direct" : retry ? "retry" : userTurn ? "user" : "continuation";
      const state = reason === "direct" ? undefined : this.routerState(model);
      const latest = messages.findLast(
        (m): m is AssistantMessage =>
          m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted",
      );
      const previous = latest && this.physical(latest.provider, latest.model);
      const thinkingLevel: ThinkingLevel | "max" = request.thinkingLevel ?? "off";
      const route = await entry.definition.route(
        {
          model,
          thinkingLevel,
          reason,
          ...(previous ? { previous: { model: previous } } : {}),
          ...(retry && failure ? { failed: { model: failure.model, message: failure.message } } : {}),
          ...(state !== undefined ? { state } : {}),
          messages,
          ...(request.signal ? { signal: request.signal } : {}),
        },
        this.deps.context(),
      );
      const routed = route?.model;
      const target = routed && this.physical(routed.provider, routed.id);
      if (!target) {
        throw new Error(
          `${name} routed to ${routed ? `${routed.provider}/${routed.id}, which is not a physical model` : "no model"}.`,
        );
      }
      if (!this.accessOf(target.provider))
        throw new Error(`${name} routed to ${target.provider}/${target.id}, which has no credentials.`);
      if (reason !== "direct" && route.state !== undefined && route.state !== state) {
        this.deps.routerState?.append(VIRTUAL_MODEL_STATE_ENTRY, {
          provider: model.provider,
          modelId: model.id,
          state: route.state,
        });
      }
      const level = target.reasoning ? (route.thinkingLevel ?? "off") : "off";
      // pi's `max` is the real model's highest level; KnightCode's providers take xhigh as theirs.
      const { thinkingLevel: _selected, fromLoop: _loop, ...rest } = request;
      // A summary sized for the routed model's shown limit gets at most what the real model can write.
      const maxTokens =
        rest.maxTokens && target.maxTokens > 0 ? Math.min(rest.maxTokens, target.maxTokens) : rest.maxTokens;
      return this.stream({
        ...rest,
        model: target,
        ...(maxTokens ? { maxTokens } : {}),
        ...(level !== "off" ? { thinkingLevel: level === "max" ? "xhigh" : level } : {}),
      });
    });
    if (!request.fromLoop) return stream;
    return {
      [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator](),
      result: async () => {
        const message = await stream.result();
        if (message.stopReason === "error") {
          const failed = this.physical(message.provider, message.model);
          if (failed) this.loopFailure = { model: failed, message };
        }
        return message;
      },
    };
  }

  /** The latest state a routed model's router stored on the active branch. */
  private routerState(model: ModelInfo): unknown {
    for (const entry of this.deps.routerState?.customEntries() ?? []) {
      if (entry.customType !== VIRTUAL_MODEL_STATE_ENTRY) continue;
      const data = entry.data as { provider?: unknown; modelId?: unknown; state?: unknown } | undefined;
      if (data?.provider === model.provider && data.modelId === model.id) return data.state;
    }
    return undefined;
  }

  /** A listed model that is not virtual. */
  private physical(provider: string, id: string): ModelInfo | undefined {
    const model = this.find(provider, id);
    return model && model.api !== "virtual" ? model : undefined;
  }

  // ---- model lists ---------------------------------------------------------------------------------

  /** Every model of every provider: registered ones, then models.json, then this session's virtual models. */
  getAvailable(): ModelInfo[] {
    const models: ModelInfo[] = [];
    const seen = new Set<string>();
    const add = (provider: string, api: string, list: ProviderConfig["models"]) => {
      for (const m of list ?? []) {
        const key = `${provider}/${m.id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        models.push(modelInfo(provider, api, m));
      }
    };
    for (const [name, config] of Object.entries(this.modelsJson.providers)) {
      // An entry for a registered provider without models of its own (one that only sets compat.timeoutMs, a
      // baseUrl or headers) keeps the registration's catalogue.
      const registered = this.deps.store.get(name)?.config;
      add(name, config.api ?? registered?.api ?? "", config.models ?? registered?.models);
    }
    for (const entry of this.deps.store.list()) {
      if (!this.modelsJson.providers[entry.name])
        add(entry.name, entry.config.api ?? entry.name, entry.config.models);
    }
    for (const { model } of this.routed.values()) {
      if (!seen.has(`${model.provider}/${model.id}`)) models.push(model);
    }
    for (const name of this.virtual.keys()) models.push(virtualModelInfo(name));
    return models;
  }

  /**
   * One model, as `getAvailable()` lists it (the same precedence), found without building the list: a run asks
   * for its model on every request, and the catalogues hold hundreds.
   */
  find(name: string, modelId: string): ModelInfo | undefined {
    const provider = this.providerNamed(name);
    const json = this.modelsJson.providers[provider];
    const registered = this.deps.store.get(provider)?.config;
    const list = json ? (json.models ?? registered?.models) : registered?.models;
    const declared = list?.find((m) => m.id === modelId);
    if (declared) {
      const api = json ? (json.api ?? registered?.api ?? "") : (registered!.api ?? provider);
      return modelInfo(provider, api, declared);
    }
    for (const { model } of this.routed.values()) {
      if (model.provider === provider && model.id === modelId) return model;
    }
    return provider === "virtual" && this.virtual.has(modelId) ? virtualModelInfo(modelId) : undefined;
  }

  /**
   * The provider a name means: a registered provider or `models.json` entry of that name, else the registered
   * provider that lists it among its `aliases` (pi's `openai-codex` is builtin:openai's), else the name as given.
   */
  private providerNamed(name: string): string {
    if (this.modelsJson.providers[name] || this.deps.store.get(name)) return name;
    return this.deps.store.list().find((entry) => entry.config.aliases?.includes(name))?.name ?? name;
  }

  /** The key given to the session (`--api-key`, the SDK's `apiKeys`) for `provider`, by its name or an alias. */
  private givenKey(provider: string): string | undefined {
    const keys = this.deps.apiKeys;
    if (!keys) return undefined;
    if (keys[provider]) return keys[provider];
    const alias = this.deps.store.get(provider)?.config.aliases?.find((name) => keys[name]);
    return alias === undefined ? undefined : keys[alias];
  }

  /** How to get a model, naming this session's agent folder. */
  noModelHelp(): string {
    return noModelHelp(this.deps.agentDir);
  }

  /** The models that can be used now, with why (see `SessionController.getUsableModels`). */
  getUsable(): UsableModel[] {
    const access = new Map<string, string | undefined>();
    const accounts = new Map<string, ReturnType<ModelService["accountModels"]>>();
    const usable: UsableModel[] = [];
    for (const model of this.getAvailable()) {
      if (model.provider === "virtual") continue;
      if (this.routed.has(`${model.provider}/${model.id}`)) {
        const input = this.routed.get(`${model.provider}/${model.id}`)!.definition.input;
        usable.push({ model, access: "virtual model", images: input?.includes("image") ?? true });
        continue;
      }
      if (!access.has(model.provider)) access.set(model.provider, this.accessOf(model.provider));
      const why = access.get(model.provider);
      if (!why) continue;
      if (!accounts.has(model.provider)) accounts.set(model.provider, this.accountModels(model.provider));
      const account = accounts.get(model.provider);
      if (account && !account.models.includes(model.id) && account.catalogue.has(model.id)) continue;
      const declared = this.providerConfig(model.provider)?.models?.find((m) => m.id === model.id);
      usable.push({ model, access: why, images: declared?.input?.includes("image") ?? false });
    }
    return usable;
  }

  /**
   * The models the provider's stored sign-in can use (`ProviderConfig.usableModels`), with the ids of the
   * registration's own catalogue (the only models it limits); undefined when it limits nothing.
   */
  private accountModels(
    provider: string,
  ): { models: readonly string[]; catalogue: ReadonlySet<string> } | undefined {
    const registered = this.deps.store.get(provider)?.config;
    if (typeof registered?.usableModels !== "function") return undefined;
    const credential = this.storedCredentialInfo(provider);
    if (!credential) return undefined;
    let models: readonly string[] | undefined;
    try {
      models = registered.usableModels(credential);
    } catch (error) {
      this.deps.warn?.(
        `Provider "${provider}" could not say which models its sign-in has: ${errorMessage(error)}`,
      );
      return undefined;
    }
    if (!Array.isArray(models)) return undefined;
    return { models, catalogue: new Set((registered.models ?? []).map((m) => m.id)) };
  }

  /**
   * Why the stored sign-in cannot use the model (one of the registration's catalogue it does not have), naming the
   * models it has; undefined when it can.
   */
  private notInAccount(model: ModelInfo): string | undefined {
    const account = this.accountModels(model.provider);
    if (!account || account.models.includes(model.id) || !account.catalogue.has(model.id)) return undefined;
    const has = account.models.filter((id) => account.catalogue.has(id));
    return (
      `The ${model.provider} account signed in does not offer ${model.provider}/${model.id}; its models: ` +
      `${has.join(", ") || "none"}. (The list is read at sign-in and when the sign-in is renewed: ` +
      `\`knightcode login ${model.provider}\` reads it again.)`
    );
  }

  /** Why a provider's models can be used, or undefined when they cannot (no key) or are for tests only. */
  private accessOf(provider: string): string | undefined {
    const config = this.providerConfig(provider);
    if (!config || config.testOnly) return undefined;
    const stored = this.auth.read()[provider];
    if (typeof stored?.key === "string" && stored.key) {
      return stored.type && stored.type !== "api_key" ? `${stored.type} (auth.json)` : "key in auth.json";
    }
    const configured = config.apiKey;
    if (configured) {
      if (isCommandValue(configured)) return "key command in models.json";
      if (!ENV_NAME.test(configured)) return "key in models.json";
      return (this.deps.env ?? process.env)[configured] ? `$${configured}` : undefined;
    }
    return config.baseUrl ? `server ${config.baseUrl}, no key` : "needs no key";
  }

  /** The providers one can sign in to: every registered one but the test-only ones. */
  loginProviders(): string[] {
    const names = new Set([
      ...this.deps.store.list().map((e) => e.name),
      ...Object.keys(this.modelsJson.providers),
    ]);
    return [...names].filter((name) => !this.providerConfig(name)?.testOnly).sort();
  }

  loginMethods(provider: string): (ProviderLoginMethod & { id: string })[] {
    const taken = new Set<string>();
    return (this.deps.store.get(provider)?.config.login ?? []).map((method) => {
      const base =
        method.id ||
        method.label
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, "-")
          .replace(/^-+|-+$/g, "") ||
        "method";
      let id = base;
      for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
      taken.add(id);
      return { ...method, id };
    });
  }

  /** What the provider's requests need, and where the key comes from now (`CredentialStore.keyStatus`). */
  keyStatus(provider: string): ProviderKeyStatus | undefined {
    const config = this.providerConfig(provider);
    if (!config) return undefined;
    const configured = config.apiKey || undefined;
    const keyVariable = configured && ENV_NAME.test(configured) ? configured : undefined;
    // The order resolveApiKey takes them in.
    const stored = this.auth.read()[provider]?.key;
    let source: ProviderKeyStatus["source"];
    if (this.givenKey(provider)) source = "sdk";
    else if (typeof stored === "string" && stored) source = "auth.json";
    else if (keyVariable) source = (this.deps.env ?? process.env)[keyVariable] ? "environment" : undefined;
    else if (configured) source = "models.json";
    return {
      needsKey: configured !== undefined,
      ...(keyVariable ? { keyVariable } : {}),
      ...(source ? { source } : {}),
    };
  }

  /** The providers with a stored credential in auth.json. */
  listCredentials(): { provider: string; type: string; masked?: string; expires?: number }[] {
    return Object.entries(this.auth.read())
      .filter(([, entry]) => entry && typeof entry === "object")
      .map(([provider, entry]) => ({
        provider,
        type: typeof entry.type === "string" ? entry.type : "api_key",
        ...(typeof entry.key === "string" && entry.key ? { masked: maskSecret(entry.key) } : {}),
        ...(typeof entry.expires === "number" ? { expires: entry.expires } : {}),
      }));
  }

  /** Removes a provider's credential from auth.json; false when it held none. */
  removeCredential(provider: string): boolean {
    const auth = this.readAuthForWrite("removing a key");
    if (!(provider in auth)) return false;
    delete auth[provider];
    writeFileAtomic(this.auth.path, `${JSON.stringify(auth, null, 2)}\n`, { mode: 0o600 });
    this.auth.invalidate();
    return true;
  }

  /**
   * Resolves `--provider`/`--model` (the model may be `provider/model`) with settings defaults. Throws a
   * message that says how to configure a model when nothing matches.
   */
  resolveModel(spec: { provider?: string; model?: string }): ModelInfo {
    let { provider, model } = spec;
    if (model?.includes("/") && !provider) {
      const slash = model.indexOf("/");
      provider = model.slice(0, slash);
      model = model.slice(slash + 1);
    }
    if (!provider && !model) {
      throw new KernelError("KC_ERR_NO_MODEL", noModelHelp(this.deps.agentDir));
    }
    if (provider) provider = this.providerNamed(provider);
    // Named in full: looked up without building the list of every provider's models.
    const named = provider && model ? this.find(provider, model) : undefined;
    if (named) return named;
    const available = this.getAvailable();
    const candidates = available.filter(
      (m) => (!provider || m.provider === provider) && (!model || m.id === model),
    );
    if (candidates.length === 1) return candidates[0]!;
    if (candidates.length > 1) {
      // A bare model id that several providers serve (claude-sonnet-4.6 at Copilot, OpenCode, a gateway...): the
      // first that can be used now (a key, a sign-in), else the first listed.
      const usable = new Set(this.getUsable().map((u) => `${u.model.provider}/${u.model.id}`));
      return candidates.find((m) => usable.has(`${m.provider}/${m.id}`)) ?? candidates[0]!;
    }
    if (provider && !available.some((m) => m.provider === provider)) {
      const known = [...new Set(available.map((m) => m.provider))];
      throw new KernelError(
        "KC_ERR_NO_MODEL",
        `Unknown provider "${provider}"${known.length ? ` (known: ${known.join(", ")})` : ""}. ${noModelHelp(this.deps.agentDir)}`,
      );
    }
    const ids = available
      .filter((m) => !provider || m.provider === provider)
      .map((m) => `${m.provider}/${m.id}`);
    throw new KernelError(
      "KC_ERR_NO_MODEL",
      `Unknown model "${model}". Available: ${ids.join(", ") || "none"}`,
    );
  }

  // ---- streaming -----------------------------------------------------------------------------------

  /** Streams one request. Never throws: problems come back as an error message on the stream. */
  stream(request: ModelRequest): AssistantMessageStream {
    let model = request.model;
    const routed = model.api === "virtual" ? this.routed.get(`${model.provider}/${model.id}`) : undefined;
    if (routed) return this.streamRouted(request, routed);
    // pi's `max` (a session holds it while a routed model that offers it is selected) is a provider's highest.
    if ((request.thinkingLevel as string) === "max")
      request = { ...request, thinkingLevel: "xhigh", atMax: true };
    if (model.provider === "virtual") {
      const route = this.virtual.get(model.id);
      if (!route) return failedStream(model, "bad_request", `Virtual model "${model.id}" is not registered`);
      return lazyStream(model, async () => {
        const target = await route.config.route({
          messages: request.messages,
          ...(request.signal ? { signal: request.signal } : {}),
        });
        return this.stream({ ...request, model: target });
      });
    }
    const config = this.providerConfig(model.provider);
    if (!config) return failedStream(model, "bad_request", `Provider "${model.provider}" is not registered`);
    const api = model.api || config.api || "";
    const implementation = config.streamSimple ?? this.deps.store.implementationOf(api);
    if (!implementation) {
      return failedStream(
        model,
        "bad_request",
        `No provider implements the "${api}" API needed by ${model.provider}`,
      );
    }
    model = { ...model, api };
    const resolved = model;
    // A subscription sign-in whose access token is about to run out is renewed before the request goes.
    if (request.apiKey === undefined && this.needsRefresh(model.provider)) {
      return lazyStream(model, async () => {
        try {
          await this.refreshStored(model.provider, request.signal);
        } catch (error) {
          return failedStream(resolved, request.signal?.aborted ? "aborted" : "auth", errorMessage(error));
        }
        return this.open(request, resolved, config, implementation);
      });
    }
    const commands = this.valueCommands(model.provider, config, request.apiKey);
    if (commands) {
      // A key or header given as `!command`: the command runs before the request goes.
      return lazyStream(model, async () => {
        let values: { apiKey?: string; headers?: Record<string, string> };
        try {
          values = await commands(request.signal);
        } catch (error) {
          return failedStream(resolved, request.signal?.aborted ? "aborted" : "auth", errorMessage(error));
        }
        const withKey = values.apiKey !== undefined ? { ...request, apiKey: values.apiKey } : request;
        return this.open(
          withKey,
          resolved,
          { ...config, ...(values.headers ? { headers: values.headers } : {}) },
          implementation,
        );
      });
    }
    return this.open(request, model, config, implementation);
  }

  /**
   * When the provider's key (from auth.json or its configuration, not one given to the request) or one of its
   * configured header values is a `!command`: what runs them, answering the values; undefined when none is.
   */
  private valueCommands(
    provider: string,
    config: ProviderConfig,
    given: string | undefined,
  ): ((signal?: AbortSignal) => Promise<{ apiKey?: string; headers?: Record<string, string> }>) | undefined {
    const key = given === undefined ? this.keyOrigin(provider, config.apiKey) : undefined;
    const keyCommand = key && key.from !== "given" && isCommandValue(key.value) ? key : undefined;
    const headerCommands = Object.entries(config.headers ?? {}).filter(([, value]) => isCommandValue(value));
    if (!keyCommand && headerCommands.length === 0) return undefined;
    return async (signal) => {
      const out: { apiKey?: string; headers?: Record<string, string> } = {};
      if (keyCommand) {
        out.apiKey =
          keyCommand.from === "auth"
            ? await authKeyCommand(keyCommand.value, `the key of "${provider}" in auth.json`, signal)
            : await runKeyCommand(keyCommand.value, `the apiKey of provider "${provider}"`, signal);
      }
      if (headerCommands.length > 0) {
        const headers = { ...config.headers };
        for (const [name, value] of headerCommands) {
          headers[name] = await runKeyCommand(value, `the ${name} header of provider "${provider}"`, signal);
        }
        out.headers = headers;
      }
      return out;
    };
  }

  /** Calls the provider's implementation with the resolved key, endpoint and headers. */
  private open(
    request: ModelRequest,
    model: ModelInfo,
    config: ProviderConfig,
    implementation: NonNullable<ProviderConfig["streamSimple"]>,
    retried = false,
  ): AssistantMessageStream {
    const apiKey = request.apiKey ?? this.resolveApiKey(model.provider, config.apiKey);
    const credential = request.apiKey === undefined ? this.storedCredentialInfo(model.provider) : undefined;
    const lacking = credential && !retried ? this.notInAccount(model) : undefined;
    if (lacking) return failedStream(model, "bad_request", lacking);
    if (credential?.type === "oauth" && config.refreshCredential && apiKey && !retried) {
      // A sign-in's token can be refused before its time (revoked, a clock off): renewed once, then asked again.
      const first = this.open(request, model, config, implementation, true);
      return retryOnAuthFailure(model, first, async () => {
        await this.refreshStored(model.provider, request.signal, apiKey);
        return this.open(request, model, config, implementation, true);
      });
    }
    const headers = config.headers || request.headers ? { ...config.headers, ...request.headers } : undefined;
    const sessionId = this.deps.sessionId?.();
    const transport = this.transportFor(model.provider, config);
    const messages = this.deps.blockImages?.() ? withoutImages(request.messages) : request.messages;
    let levelMap = model.reasoning
      ? config.models?.find((m) => m.id === model.id)?.thinkingLevelMap
      : undefined;
    if (levelMap && request.atMax && typeof levelMap.max === "string")
      levelMap = { ...levelMap, xhigh: levelMap.max };
    try {
      return implementation({
        model,
        systemPrompt: request.systemPrompt,
        messages,
        tools: request.tools,
        ...(request.thinkingLevel ? { thinkingLevel: request.thinkingLevel } : {}),
        ...(levelMap ? { thinkingLevelMap: levelMap } : {}),
        ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}),
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.toolChoice ? { toolChoice: request.toolChoice } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
        ...(apiKey ? { apiKey } : {}),
        ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
        ...(headers ? { headers } : {}),
        ...(config.compat ? { compat: config.compat } : {}),
        ...(sessionId ? { sessionId } : {}),
        ...(credential ? { credential } : {}),
        agentDir: this.deps.agentDir,
        transport,
        hooks: this.hooks(model),
        streamApi: (api) => this.deps.store.implementationOf(api, model.provider),
      });
    } catch (error) {
      return failedStream(model, "unknown", `Provider "${model.provider}" failed: ${errorMessage(error)}`);
    }
  }

  /** The `transport` setting; a provider that cannot use the asked one is named in a warning, once. */
  private transportFor(provider: string, config: ProviderConfig): ProviderTransport {
    const asked = this.deps.transport?.() ?? "auto";
    const spoken = config.transports ?? ["sse"];
    const wanted = asked === "websocket-cached" ? "websocket" : asked;
    if (wanted !== "auto" && !spoken.includes(wanted) && !this.transportWarned.has(provider)) {
      this.transportWarned.add(provider);
      this.deps.warn?.(
        `Provider "${provider}" cannot use the "${asked}" transport (the transport setting); its requests use ` +
          `${spoken.map((t) => t.toUpperCase()).join(" or ")}.`,
      );
    }
    return asked;
  }

  /** A provider's configuration: its models.json entry over its registration (whose implementation it keeps). */
  private providerConfig(provider: string): ProviderConfig | undefined {
    const custom = this.modelsJson.providers[provider];
    const registered = this.deps.store.get(provider);
    if (!custom) return registered?.config;
    const config = { ...registered?.config, ...(custom as ProviderConfig) };
    // Over the registration, so an entry may change its api and its models; the implementation stays.
    if (registered?.config.streamSimple) config.streamSimple = registered.config.streamSimple;
    return config;
  }

  async getApiKeyAndHeaders(model: ModelInfo): Promise<ResolvedRequestAuth> {
    const config = this.providerConfig(model.provider);
    if (!config) return { ok: false, error: `Provider "${model.provider}" is not registered` };
    if (this.needsRefresh(model.provider)) {
      try {
        await this.refreshStored(model.provider);
      } catch (error) {
        return { ok: false, error: errorMessage(error) };
      }
    }
    const lacking = this.notInAccount(model);
    if (lacking) return { ok: false, error: lacking };
    let apiKey = this.resolveApiKey(model.provider, config.apiKey);
    let headers = config.headers ? { ...config.headers } : undefined;
    const commands = this.valueCommands(model.provider, config, undefined);
    if (commands) {
      try {
        const values = await commands();
        if (values.apiKey !== undefined) apiKey = values.apiKey;
        if (values.headers) headers = values.headers;
      } catch (error) {
        return { ok: false, error: errorMessage(error) };
      }
    }
    const missingKey = !apiKey && config.apiKey && ENV_NAME.test(config.apiKey) ? config.apiKey : undefined;
    return {
      ok: true,
      ...(apiKey ? { apiKey } : {}),
      ...(headers ? { headers } : {}),
      ...(missingKey ? { missingKey } : {}),
    };
  }

  /** `ctx.modelRegistry` */
  runtime(): ModelRuntime {
    return {
      getAvailable: () => this.getAvailable(),
      find: (provider, id) => this.find(provider, id),
      findOfType: (type, provider, id) => (type === "chat" ? this.find(provider, id) : undefined),
      thinkingLevels: (model) => this.thinkingLevels(model),
      streamSimple: (model: ModelInfo, messages: AgentMessage[], options: StreamSimpleOptions = {}) =>
        this.streamSimple(model, messages, options),
      getApiKeyAndHeaders: (model) => this.getApiKeyAndHeaders(model),
      getAvailableClassifiers: () => this.getAvailableClassifiers(),
      classify: (question, options) => this.classify(question, options),
      summarize: (request) => this.summarize(request),
    };
  }

  private streamSimple(model: ModelInfo, messages: AgentMessage[], options: StreamSimpleOptions) {
    return this.stream({
      model,
      systemPrompt: options.systemPrompt ?? "",
      messages: messages.filter((m): m is LlmMessage => m.role !== "custom"),
      tools: options.tools ?? [],
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.thinkingLevel ? { thinkingLevel: options.thinkingLevel } : {}),
      ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /**
   * Lives here rather than in the summarising extension because only the session's services may dispatch catalogue
   * events; the back-off is the run's (`retry` settings, retry-policy.ts), so both wait alike.
   */
  async summarize(request: SummarizeRequest): Promise<AssistantMessage> {
    const { model, messages, source, reason, ...options } = request;
    const { bus, context } = this.deps;
    const signal = options.signal;
    let retries = 0;
    try {
      for (;;) {
        const answer = await this.streamSimple(model, messages, options).result();
        if (answer.stopReason !== "error" && answer.stopReason !== "aborted") return answer;
        if (answer.stopReason === "aborted" || signal?.aborted)
          throw new Error(answer.errorMessage ?? "The summary request was aborted");
        const settings = this.deps.retry?.();
        const plan = settings ? planRetry(settings, answer, retries) : undefined;
        if (!plan) throw new Error(answer.errorMessage ?? "The summary request failed");
        retries = plan.attempt;
        await bus.emit("summarization_retry_scheduled", { ...plan }, context());
        if (!(await waitUnlessAborted(plan.delayMs, signal ?? new AbortController().signal)))
          throw new Error("The summary request was aborted");
        await bus.emit(
          "summarization_retry_attempt_start",
          { source, ...(source === "compaction" && reason ? { reason } : {}) },
          context(),
        );
      }
    } finally {
      if (retries > 0) await bus.emit("summarization_retry_finished", {}, context());
    }
  }

  getAvailableClassifiers(): ClassifierInfo[] {
    const list = [...(this.deps.classifiers?.() ?? [])];
    const current = this.deps.currentModel?.();
    if (current && !list.some((c) => c.provider === current.provider && c.model === current.id)) {
      list.push({ provider: current.provider, model: current.id });
    }
    return list.filter((c) => this.find(c.provider, c.model));
  }

  /**
   * Asks a model to pick one of fixed labels through a forced tool call whose only property is an enum of the
   * labels, at temperature 0. An answer that is not one of the labels is an error, never a default.
   */
  async classify(
    question: ClassifierQuestion,
    options: { classifier?: ClassifierInfo; signal?: AbortSignal } = {},
  ): Promise<ClassifierAnswer> {
    if (!Array.isArray(question.labels) || question.labels.length < 2) {
      throw new KernelError("KC_ERR_CLASSIFY", "classify() needs at least two labels");
    }
    const choice = options.classifier ?? this.getAvailableClassifiers()[0];
    const model = choice && this.find(choice.provider, choice.model);
    if (!model)
      throw new KernelError(
        "KC_ERR_CLASSIFY",
        `No classifier model is available. ${noModelHelp(this.deps.agentDir)}`,
      );
    const tool: ToolDeclaration = {
      name: "classify",
      description: "Answer with exactly one of the allowed labels.",
      parameters: Type.Object(
        { label: Type.Unsafe<string>({ type: "string", enum: question.labels }) },
        { additionalProperties: false },
      ),
    };
    const stream = this.stream({
      model,
      systemPrompt:
        question.systemPrompt ??
        "You classify the request you are given. Answer only by calling the classify tool.",
      messages: [{ role: "user", content: question.prompt, timestamp: Date.now() }],
      tools: [tool],
      toolChoice: { name: "classify" },
      temperature: 0,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const message: AssistantMessage = await stream.result();
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      throw new KernelError(
        "KC_ERR_CLASSIFY",
        `The classifier failed: ${message.errorMessage ?? message.stopReason}`,
      );
    }
    const call = message.content.find((c) => c.type === "toolCall" && c.name === "classify");
    const label = call && call.type === "toolCall" ? call.arguments.label : undefined;
    if (typeof label !== "string" || !question.labels.includes(label)) {
      throw new KernelError(
        "KC_ERR_CLASSIFY",
        `The classifier answered ${JSON.stringify(label ?? null)}, which is not one of: ${question.labels.join(", ")}`,
      );
    }
    return { label, usage: message.usage };
  }

  /** Stores a key in `<agentDir>/auth.json` (written atomically, readable only by the owner). */
  saveCredential(
    provider: string,
    key: string | { type: string; key: string; [field: string]: unknown },
  ): void {
    const credential = typeof key === "string" ? { type: "api_key", key } : key;
    if (typeof credential.key !== "string" || credential.key.trim() === "") {
      throw new KernelError("KC_ERR_AUTH_FILE", `An empty key for "${provider}" was not saved`);
    }
    const auth = this.readAuthForWrite("saving a key");
    // A sign-in stored in pi's form (`access`, read as `key`) keeps that field current, so pi, reading the
    // same file, gets the renewed token too. A credential that brings a new `access` of its own (a pi
    // extension's sign-in, whose key getApiKey derives from it) keeps it as given.
    const before = auth[provider];
    const storedAccess =
      before && typeof before === "object" ? (before as Record<string, unknown>).access : undefined;
    if (
      typeof key !== "string" &&
      typeof storedAccess === "string" &&
      (typeof credential.access !== "string" || credential.access === storedAccess)
    ) {
      auth[provider] = { ...credential, access: credential.key };
    } else auth[provider] = credential;
    writeFileAtomic(this.auth.path, `${JSON.stringify(auth, null, 2)}\n`, { mode: 0o600 });
    this.auth.invalidate();
  }

  /** auth.json as an object to change; a file that cannot be read is never overwritten. */
  private readAuthForWrite(action: string): Record<string, unknown> {
    const read = readJsonObjectFile(this.auth.path);
    if (read.status === "invalid") {
      // Not valid JSON, nested too deep, a directory, no permission: the message names the file and the cause.
      throw new KernelError("KC_ERR_AUTH_FILE", `${read.message}; fix or remove it before ${action}`);
    }
    return read.status === "ok" ? read.value : {};
  }

  /** Whether the provider's key is a stored sign-in whose access token runs out within REFRESH_MARGIN_MS. */
  private needsRefresh(provider: string): boolean {
    if (this.givenKey(provider)) return false;
    const stored = this.auth.read()[provider];
    if (stored?.type !== "oauth" || typeof stored.expires !== "number") return false;
    return stored.expires - Date.now() < REFRESH_MARGIN_MS;
  }

  /**
   * Renews the provider's stored sign-in: one renewal at a time per provider in this process (concurrent requests
   * wait for the same one), and across processes under `auth.json.lock` (a process that finds the credential
   * renewed by another while it waited uses that). A caller's signal stops its wait, not the renewal.
   */
  private refreshStored(provider: string, signal?: AbortSignal, refusedKey?: string): Promise<void> {
    let running = this.refreshes.get(provider);
    if (!running) {
      running = this.renew(provider, refusedKey).finally(() => this.refreshes.delete(provider));
      this.refreshes.set(provider, running);
    }
    if (!signal) return running;
    return new Promise<void>((resolve, reject) => {
      const stop = () => reject(new Error("The request was aborted while the sign-in was being renewed"));
      if (signal.aborted) return stop();
      signal.addEventListener("abort", stop, { once: true });
      running.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
    });
  }

  /** Renews the stored sign-in when it is about to expire, or when the server refused `refusedKey` (still stored). */
  private async renew(provider: string, refusedKey?: string): Promise<void> {
    const again = `Sign in again with \`knightcode login ${provider}\` (or /login in the terminal UI).`;
    const release = await lockAuthFile(this.auth.path);
    try {
      this.auth.invalidate();
      const stored = this.auth.read()[provider];
      if (stored?.type !== "oauth") return;
      const refused = refusedKey !== undefined && stored.key === refusedKey;
      if (!refused && !this.needsRefresh(provider)) return;
      const refresh = this.providerConfig(provider)?.refreshCredential;
      if (!refresh) {
        throw new KernelError(
          "KC_ERR_AUTH_FILE",
          `The ${provider} sign-in in ${this.auth.path} has expired and the provider cannot renew it. ${again}`,
        );
      }
      let renewed: { type: string; key: string; [field: string]: unknown };
      try {
        renewed = await refresh({ ...stored, type: "oauth", key: String(stored.key ?? "") }, {});
      } catch (error) {
        throw new KernelError(
          "KC_ERR_AUTH_FILE",
          `Could not renew the ${provider} sign-in: ${errorMessage(error)}. ${again}`,
        );
      }
      if (!renewed || typeof renewed.key !== "string" || !renewed.key) {
        throw new KernelError(
          "KC_ERR_AUTH_FILE",
          `Renewing the ${provider} sign-in gave no access token. ${again}`,
        );
      }
      this.saveCredential(provider, renewed);
    } finally {
      release();
    }
  }

  /** The non-secret fields of the provider's stored credential when it is not a plain API key (for the provider). */
  private storedCredentialInfo(provider: string): { type: string; [field: string]: unknown } | undefined {
    if (this.givenKey(provider)) return undefined;
    const stored = this.auth.read()[provider];
    if (!stored || typeof stored.type !== "string" || stored.type === "api_key") return undefined;
    if (typeof stored.key !== "string" || !stored.key) return undefined;
    const info: { type: string; [field: string]: unknown } = { type: stored.type };
    for (const [field, value] of Object.entries(stored)) {
      // `access` is pi's name for the token (read as `key`).
      if (field === "key" || field === "refresh" || field === "access" || /(token|secret|key)$/i.test(field))
        continue;
      info[field] = value;
    }
    return info;
  }

  /** A key given for this run, then auth.json, then the provider's apiKey (an environment variable name or a literal). */
  resolveApiKey(provider: string, configured: string | undefined): string | undefined {
    return this.keyOrigin(provider, configured)?.value;
  }

  /** The provider's key and where it came from: given to the session (`--api-key`), auth.json, or configured. */
  private keyOrigin(
    provider: string,
    configured: string | undefined,
  ): { value: string; from: "given" | "auth" | "config" } | undefined {
    const given = this.givenKey(provider);
    if (given) return { value: given, from: "given" };
    const key = this.auth.read()[provider]?.key;
    if (typeof key === "string" && key) return { value: key, from: "auth" };
    if (!configured) return undefined;
    const env = this.deps.env ?? process.env;
    if (ENV_NAME.test(configured)) {
      const value = env[configured];
      return value ? { value, from: "config" } : undefined;
    }
    return { value: configured, from: "config" };
  }

  private hooks(model: ModelInfo): ProviderHooks {
    const { bus, context } = this.deps;
    const base = { provider: model.provider, api: model.api, model: model.id };
    return {
      waiting: (notice) => this.deps.warn?.(notice.message),
      payload: async (payload) => {
        if (!bus.has("before_provider_request")) return payload;
        // Handlers get a copy: a provider's payload may share objects with the session's messages (the loop
        // copies the branch only for context handlers), and an edit in place must not change the transcript.
        const only = refusing(isPayload, (value) => new InvalidPayloadError(value));
        const result = await bus.transform("before_provider_request", structuredClone(payload), context(), {
          toEvent: (p) => ({ ...base, payload: p }),
          fold: only.fold,
        });
        only.check();
        return result;
      },
      headers: async (headers) => {
        if (!bus.has("before_provider_headers")) return headers;
        const mutable: Record<string, string | null> = { ...headers };
        const only = refusing(isHeaders, (value) => new InvalidHeadersError(value));
        const result = await bus.transform("before_provider_headers", mutable, context(), {
          toEvent: (h) => ({ ...base, headers: h }),
          fold: only.fold,
        });
        only.check();
        const clean: Record<string, string> = {};
        for (const [key, value] of Object.entries(result ?? mutable))
          if (value != null) clean[key] = String(value);
        return clean;
      },
      response: (status, headers) =>
        bus.has("after_provider_response")
          ? bus.emit("after_provider_response", { ...base, status, headers }, context())
          : Promise.resolve(),
      streamEvent: (data) =>
        bus.has("provider_stream_event")
          ? bus.emit("provider_stream_event", { ...base, data }, context())
          : Promise.resolve(),
    };
  }
}

/**
 * A transform fold that takes only valid results. Anything else is that handler's failure: the bus reports it as
 * `extension_error`, naming the extension, and `check()` then refuses the request rather than send it without the
 * change the handler wanted.
 */
function refusing<T>(
  valid: (value: unknown) => value is T,
  refuse: (value: unknown) => Error,
): { fold(previous: T, returned: unknown): T; check(): void } {
  let refused: Error | undefined;
  return {
    fold: (_previous, returned) => {
      if (valid(returned)) return returned;
      const error = refuse(returned);
      refused ??= error;
      throw error;
    },
    check: () => {
      if (refused) throw refused;
    },
  };
}

function isHeaders(value: unknown): value is Record<string, string | null> {
  return isPayload(value) && Object.values(value).every((v) => v === null || typeof v === "string");
}

function isPayload(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The first stream, unless it fails with an auth error before anything arrives: then the stream `retry` opens.
 * Events pass through as they come; `result()` is the chosen stream's.
 */
function retryOnAuthFailure(
  model: ModelInfo,
  first: AssistantMessageStream,
  retry: () => Promise<AssistantMessageStream>,
): AssistantMessageStream {
  const events = first[Symbol.asyncIterator]();
  const decided = events.next().then(async (head) => {
    const event = head.done ? undefined : head.value;
    if (event?.type === "error" && event.error.errorKind === "auth") {
      try {
        return { stream: await retry() };
      } catch (error) {
        return { stream: failedStream(model, "auth", errorMessage(error)) };
      }
    }
    return { stream: first, head };
  });
  return {
    async *[Symbol.asyncIterator]() {
      const { stream, head } = await decided;
      if (!head) {
        yield* stream;
        return;
      }
      if (head.done) return;
      yield head.value;
      for (;;) {
        const next = await events.next();
        if (next.done) return;
        yield next.value;
      }
    },
    result: async () => (await decided).stream.result(),
  };
}

/** auth.json keys that are commands, run once per process (as pi does); a failure is not kept. */
const authKeyCommands = new Map<string, Promise<string>>();

function authKeyCommand(value: string, what: string, signal?: AbortSignal): Promise<string> {
  let running = authKeyCommands.get(value);
  if (!running) {
    running = runKeyCommand(value, what, signal);
    authKeyCommands.set(value, running);
    running.catch(() => authKeyCommands.delete(value));
  }
  return running;
}

/** A stream whose real source is decided asynchronously (virtual model routing). */
function lazyStream(model: ModelInfo, open: () => Promise<AssistantMessageStream>): AssistantMessageStream {
  const source = open().catch((error: unknown) => failedStream(model, "unknown", errorMessage(error)));
  return {
    async *[Symbol.asyncIterator]() {
      yield* await source;
    },
    result: async () => (await source).result(),
  };
}

/** pi's words for an image that was not sent (`images.blockImages`). */
export const BLOCKED_IMAGE_NOTE = "Image reading is disabled.";

/**
 * The messages with every image of user messages and tool results replaced by a text note (one note for images
 * in a row); messages without images are the same objects.
 */
export function withoutImages(messages: LlmMessage[]): LlmMessage[] {
  return messages.map((message) => {
    if (message.role === "assistant" || typeof message.content === "string") return message;
    if (!message.content.some((c) => c.type === "image")) return message;
    const content: typeof message.content = [];
    for (const part of message.content) {
      if (part.type !== "image") content.push(part);
      else if (
        !(content.at(-1)?.type === "text" && (content.at(-1) as { text: string }).text === BLOCKED_IMAGE_NOTE)
      )
        content.push({ type: "text", text: BLOCKED_IMAGE_NOTE });
    }
    return { ...message, content } as LlmMessage;
  });
}

/** A provider's declared model as the session lists it, with the defaults filled in. */
function modelInfo(
  provider: string,
  api: string,
  m: NonNullable<ProviderConfig["models"]>[number],
): ModelInfo {
  return {
    provider,
    id: m.id,
    ...(m.name ? { name: m.name } : {}),
    api: m.api ?? api,
    contextWindow: m.contextWindow ?? 128_000,
    maxTokens: m.maxTokens ?? 8_192,
    reasoning: m.reasoning ?? false,
    ...(m.cost
      ? {
          cost: {
            input: m.cost.input,
            output: m.cost.output,
            cacheRead: m.cost.cacheRead ?? 0,
            cacheWrite: m.cost.cacheWrite ?? 0,
          },
        }
      : {}),
  };
}

/** A session's virtual model (registerVirtualModel), listed under the provider `virtual`. */
function virtualModelInfo(name: string): ModelInfo {
  return { provider: "virtual", id: name, api: "virtual", contextWindow: 0, maxTokens: 0, reasoning: false };
}

/** The object an extension's default factory receives. One facade per extension per session. */
import type { TSchema } from "@sinclair/typebox";
import type { ExtensionCommandContext, ExtensionContext, ModelInfo, ViewNode } from "./context.js";
import type { ExtensionEventName, ExtensionHandler } from "./events.js";
import type { ToolSettingsDefinition } from "./host.js";
import type {
  AssistantMessage,
  AssistantMessageEvent,
  ImageContent,
  LlmMessage,
  TextContent,
  ThinkingLevel,
} from "./messages.js";
import type { ModeDefinition } from "./modes.js";
import type { CustomEntry } from "./session.js";
import type { RenderTarget, ToolDefinition, ToolInfo, ToolRendererResolver, ToolRenderers } from "./tools.js";

/** Where an extension came from. Owner ids are `<origin>:<name or path>`, e.g. `builtin:core-tools`. */
export type ExtensionOrigin = "builtin" | "user" | "project" | "package" | "cli" | "sdk";

export interface ExtensionInfo {
  /** Owner id: `builtin:<name>`, `user:<path>`, `project:<path>`, `cli:<path>`, ... */
  readonly id: string;
  readonly origin: ExtensionOrigin;
  /** Source file, when the extension was loaded from one. */
  readonly path?: string;
  /** Position in load order; handlers run in this order. */
  readonly order: number;
}

export type Unsubscribe = () => void;

export interface CommandDefinition {
  description?: string;
  getArgumentCompletions?(prefix: string): { value: string; label?: string }[] | undefined;
  /**
   * What it returns is the command's result: typed input ignores it, a program that runs the command through
   * `SessionController.runCommand()` (RPC `export_html` runs `/export`) receives it.
   */
  handler(args: string, ctx: ExtensionCommandContext): unknown;
  /** What `getCommands()` reports it as; `"prompt"` for a prompt template's command. Defaults to `"extension"`. */
  source?: "extension" | "prompt" | "skill";
  /** Laid over the registering extension's source info, e.g. the `path` and `scope` of a template's file. */
  sourceInfo?: Partial<SourceInfo>;
}

export interface CommandInfo {
  name: string;
  description?: string;
  source: "extension" | "prompt" | "skill" | "builtin";
  /** The owner id of the extension that registered it (`builtin:<name>`, `user:<path>`, ...). */
  owner?: string;
  /** Where it was registered from, in the peer's shape. */
  sourceInfo?: SourceInfo;
}

/** Where a registration comes from (the peer's `SourceInfo`). */
export interface SourceInfo {
  /** The extension's file, or its owner id when it has none (`builtin:<name>`, `sdk:<name>`). */
  path: string;
  /** `builtin`, `sdk`, or `local` for an extension loaded from a file. */
  source: string;
  /** `user` and `project` for the personal and project folders, `temporary` for the rest. */
  scope: "user" | "project" | "temporary";
  origin: "package" | "top-level";
  /** The folder of the extension's file. */
  baseDir?: string;
}

export interface ShortcutDefinition {
  description?: string;
  handler(ctx: ExtensionContext): void | Promise<void>;
}

export interface FlagDefinition {
  description?: string;
  type: "boolean" | "string";
  default?: boolean | string;
}

/** `target` as for tool renderers: for `"html"` a renderer may return an `HtmlRendering` (`{ html }`). */
export interface MessageRenderOptions {
  expanded: boolean;
  target?: RenderTarget;
}

export type MessageRenderer = (
  message: { customType: string; content: unknown; details?: unknown },
  options: MessageRenderOptions,
) => unknown;

export type EntryRenderer = (entry: CustomEntry, options: MessageRenderOptions) => unknown;

export interface ProviderModelConfig {
  id: string;
  name?: string;
  api?: string;
  contextWindow?: number;
  maxTokens?: number;
  reasoning?: boolean;
  input?: ("text" | "image")[];
  cost?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /**
   * pi's per-level values of a reasoning model (`off` … `max`): `null` marks a level the model does not offer, and
   * `xhigh` and `max` are offered only when mapped. The session's level list and cycling (and `max` at start-up)
   * then offer only the model's levels; what a string value means is the provider's business.
   */
  thinkingLevelMap?: Partial<Record<ThinkingLevel | "max", string | null>>;
}

/** A tool as declared to a model. */
export interface ToolDeclaration {
  name: string;
  description: string;
  parameters: TSchema;
}

/**
 * Hooks a provider implementation calls so extensions see its traffic. The model registry wires each one to the
 * session's events (`before_provider_request`, `before_provider_headers`, `after_provider_response`,
 * `provider_stream_event`). Every provider, built-in or not, calls them.
 */
export interface ProviderHooks {
  /** Returns the payload to send (handlers may replace it). */
  payload(payload: unknown): Promise<unknown>;
  /** Returns the headers to send (handlers may add, change or delete them). */
  headers(headers: Record<string, string>): Promise<Record<string, string>>;
  response(status: number, headers: Record<string, string>): Promise<void>;
  /** Each parsed raw stream event, in stream order. Cheap when nobody listens. */
  streamEvent(data: unknown): Promise<void>;
  /**
   * The server has been silent for a while (no answer yet, or nothing since the last event) and the request is
   * still waiting: called every so often until something arrives or the request times out. A session shows it as
   * a notice on stderr.
   */
  waiting?(notice: ProviderWaitingNotice): void;
}

/** A request still waiting for its server. */
export interface ProviderWaitingNotice {
  provider: string;
  /** How long the server has been silent. */
  waitedMs: number;
  /** The silence after which the request times out. */
  timeoutMs: number;
  /** Says both, and how to change the limit. */
  message: string;
}

export interface ProviderStreamRequest {
  model: ModelInfo;
  systemPrompt: string;
  messages: LlmMessage[];
  tools: ToolDeclaration[];
  thinkingLevel?: ThinkingLevel;
  /**
   * The model's `thinkingLevelMap` (ProviderModelConfig), when its registration has one: what to send for each
   * level. The session asks only for levels the map offers; a provider that serves several providers' models (the
   * Responses API for xAI) reads the values here.
   */
  thinkingLevelMap?: ProviderModelConfig["thinkingLevelMap"];
  maxTokens?: number;
  temperature?: number;
  /** Forces a call of the named tool (classify() uses it). */
  toolChoice?: { name: string };
  signal?: AbortSignal;
  /** Resolved credentials and endpoint of the provider. */
  apiKey?: string;
  baseUrl?: string;
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
  sessionId?: string;
  /** The agent folder, so a message about a missing key can name the real `auth.json` and `models.json`. */
  agentDir?: string;
  /**
   * What kind of stored credential `apiKey` came from, with its non-secret fields: `{ type: "oauth", ... }` for a
   * subscription sign-in (a provider may need another header or endpoint for it). Absent for API keys.
   */
  credential?: { type: string; [field: string]: unknown };
  /**
   * The transport the person asked for (the `transport` setting). A provider that speaks several picks by it; one
   * that does not declare the asked transport in `ProviderConfig.transports` has been named in a warning already.
   */
  transport?: ProviderTransport;
  hooks: ProviderHooks;
  /**
   * The implementation of a wire API that another provider registered (the `streamSimple` of a provider whose
   * `api` it is; one registered under the API's own name first), never the asking provider's own; undefined when
   * none is. For a provider whose models use several APIs (opencode: Messages, Chat Completions, Responses,
   * Gemini) and which implements only some of them: it passes such a model's request on, with its own endpoint.
   */
  streamApi?(api: string): ((request: ProviderStreamRequest) => AssistantMessageStream) | undefined;
}

/** `auto` lets the provider choose; `websocket-cached` is pi's WebSocket with a cached connection. */
export type ProviderTransport = "auto" | "sse" | "websocket" | "websocket-cached";

/** The events of one assistant message, and the final message (resolved even on failure: see `stopReason`). */
export type AssistantMessageStream = AsyncIterable<AssistantMessageEvent> & {
  result(): Promise<AssistantMessage>;
};

export interface ProviderConfig {
  /** Wire API name, e.g. `anthropic-messages`, `openai-responses`, `openai-completions`. */
  api?: string;
  baseUrl?: string;
  /** A literal key or the name of an environment variable that holds it. */
  apiKey?: string;
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
  models?: ProviderModelConfig[];
  /**
   * Other names the provider answers to where a model is named by provider (`--model name/id`, `--provider`, the
   * `defaultProvider` setting, a session's recorded model), e.g. another agent's name for the same service
   * (builtin:openai answers to pi's `openai-codex`). A registered provider or a `models.json` entry of that name
   * wins over an alias; model lists show the provider's own name.
   */
  aliases?: readonly string[];
  /**
   * A provider for tests and offline runs (the scripted one): it answers when named (`--provider`), but model lists
   * (`/model`, `--list-models`, the cycling keys) never offer it.
   */
  testOnly?: boolean;
  /**
   * Ways to sign in besides an API key, which `/login` offers before its API-key prompt (a subscription sign-in,
   * say). Each returns the credential to store in `auth.json` under the provider's name.
   */
  login?: ProviderLoginMethod[];
  /**
   * Renews a stored credential of type `oauth` (see the kit's `refreshOAuthCredential`). KnightCode calls it before
   * a request when the credential's `expires` (epoch ms) is less than five minutes away, and once more when the
   * server refuses the token (an `auth` failure before anything arrived); one renewal at a time, what it returns is
   * saved, and a failure makes the request fail with a message to sign in again.
   */
  refreshCredential?(
    credential: { type: string; key: string; [field: string]: unknown },
    options: { signal?: AbortSignal },
  ): Promise<{ type: string; key: string; [field: string]: unknown }>;
  /**
   * Which models of this registration's `models` the stored sign-in can use, by id, read from the credential's
   * non-secret fields (what `ProviderStreamRequest.credential` holds: what `login` or `refreshCredential` stored,
   * without the tokens); `undefined` when it limits nothing. KnightCode calls it when the provider's key is a stored
   * credential other than a plain API key: model lists (`getUsable`, `/model`, `--list-models`, the app-server's
   * `model/list`) leave the other catalogue models out, and a request for one fails before anything is sent, naming
   * the models the sign-in has. Models that a `models.json` entry adds are not limited. Synchronous and quick: keep
   * what the account may use in the credential when signing in (GitHub Copilot keeps `availableModelIds`).
   */
  usableModels?(credential: { type: string; [field: string]: unknown }): readonly string[] | undefined;
  /**
   * The transports `streamSimple` can use (unset: `["sse"]`). When the `transport` setting asks for one it does not
   * list, the session warns once for the provider and the request goes out as the provider can send it.
   */
  transports?: ("sse" | "websocket")[];
  /**
   * Streams one assistant response. It never throws: a failure ends the stream with an `error` event whose
   * message has `stopReason` `"error"` or `"aborted"`, an `errorMessage` and an `errorKind`.
   */
  streamSimple?(request: ProviderStreamRequest): AssistantMessageStream;
}

/** One way to sign in to a provider from `/login`. */
export interface ProviderLoginMethod {
  /** Shown in `/login`'s list, e.g. `"Claude subscription"`. */
  label: string;
  /**
   * A short, stable name for the method, unique among the provider's, e.g. `"device-code"`: what an app-server
   * client passes to `account/login/start` (docs/app-server.md). Unset, one is made from the label (lower case,
   * runs of other characters as `-`).
   */
  id?: string;
  /**
   * Signs in, asking through `io`; resolves with the credential `auth.json` keeps for the provider (its `key` is
   * what requests send), or `undefined` when the person gave up.
   */
  login(io: ProviderLoginIO): Promise<{ type: string; key: string; [field: string]: unknown } | undefined>;
}

/** What a login method may ask and say while it runs. */
export interface ProviderLoginIO {
  /** A line of text; `secret` masks what is typed; `signal` takes the question away (it resolves undefined). */
  input(
    title: string,
    options?: { secret?: boolean; placeholder?: string; signal?: AbortSignal },
  ): Promise<string | undefined>;
  /** A message for the person (a URL to open, a code to enter). */
  notify(message: string): void;
  signal?: AbortSignal;
}

export interface VirtualModelConfig {
  name?: string;
  /** Picks the real model for each request. */
  route(request: { messages: unknown[]; signal?: AbortSignal }): ModelInfo | Promise<ModelInfo>;
}

/**
 * Why a routed model's request is routed: `user` the first request after a message the person wrote, `continuation`
 * any other request of the agent loop, `retry` a request repeated after a failed one, `direct` one outside the loop
 * (a compaction summary, an extension's own call).
 */
export type ModelRouteReason = "user" | "continuation" | "retry" | "direct";

/** One request as a routed model's `route()` sees it (pi's `ModelRouteRequest`). */
export interface ModelRouteRequest<TState = unknown> {
  /** The selected routed model. */
  model: ModelInfo;
  /** The selected thinking level (pi's `max` when the routed model offers it); what it means is up to the router. */
  thinkingLevel: ThinkingLevel | "max";
  reason: ModelRouteReason;
  /** The real model of the latest successful response in `messages`. */
  previous?: { model: ModelInfo; thinkingLevel?: ThinkingLevel };
  /** For `retry`: the failed response, which `messages` no longer holds. */
  failed?: { model: ModelInfo; thinkingLevel?: ThinkingLevel; message: AssistantMessage };
  /** The state this router last returned on the session branch; undefined before the first and for `direct`. */
  state?: TState;
  messages: readonly LlmMessage[];
  signal?: AbortSignal;
}

/** The real model and thinking level of one request, and the router's new state. */
export interface ModelRoute<TState = unknown> {
  model: ModelInfo;
  /** `max` is the real model's highest level. */
  thinkingLevel: ThinkingLevel | "max";
  /**
   * Stored on the session branch (a `pi.virtual-model-state` custom entry) unless it is `request.state` itself or
   * undefined; must be JSON. Ignored for `direct` requests.
   */
  state?: TState;
}

/**
 * A model listed as `provider/id` that routes each request to a real model (pi 1.6's object form of
 * `registerVirtualModel`). Its router state follows the session tree.
 */
export interface RoutedModelDefinition<TState = unknown> {
  /** The provider it is listed under; may be one with real models, whose ids it must not take. */
  provider: string;
  id: string;
  name: string;
  /** Thinking levels offered while it is selected; `["off"]` when unset. */
  thinkingLevels?: readonly (ThinkingLevel | "max")[];
  /** Limits shown before the first response (0 when unset, unknown). */
  contextWindow?: number;
  maxTokens?: number;
  input?: ("text" | "image")[];
  /** Picks the real model (one with credentials) and thinking level of one request. */
  route(
    request: ModelRouteRequest<TState>,
    ctx: ExtensionContext,
  ): ModelRoute<TState> | Promise<ModelRoute<TState>>;
}

export interface McpServerConfig {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  oauth?: Record<string, unknown>;
  exposure?: string;
  toolExposure?: Record<string, string>;
  description?: string;
  enabled?: boolean;
  timeout?: number;
}

export interface SendMessageInput {
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display?: boolean;
  details?: unknown;
  /**
   * A declarative view of a displayed message, for clients that draw views (the app-server's `extensionMessage`
   * item). Display only; one that is invalid or over 64 KiB as JSON is dropped and the text shows.
   */
  view?: ViewNode;
}

export interface SendMessageOptions {
  triggerTurn?: boolean;
  deliverAs?: "steer" | "followUp" | "nextTurn";
}

export interface ExecOptions {
  signal?: AbortSignal;
  timeout?: number;
  cwd?: string;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number | null;
  killed: boolean;
}

/**
 * An extension's own diagnostics channel (`knightcode.log`), tagged with its owner id and routed to the host:
 * print, JSON and RPC modes write warnings and errors to stderr (never to the protocol stream); a host given a
 * `log` callback receives every entry, `info` included.
 */
export interface ExtensionLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export type LogLevel = keyof ExtensionLogger;

/** One `knightcode.log` entry as a host receives it. */
export interface ExtensionLogEntry {
  /** Owner id of the extension. */
  extension: string;
  level: LogLevel;
  message: string;
}

/**
 * A typed name for a service one extension offers the others (`defineService()` makes one; the kit declares
 * KnightCode's own, such as the app-server's method table or the git engine). The extension that provides it and
 * the ones that use it import the same reference, so both sides are type-checked, and a replacement extension
 * provides the same reference.
 */
export interface ServiceRef<T> {
  /** Dotted lower camel case, e.g. `knightcode.git`. */
  readonly id: string;
  /** What the service does, for error messages and docs. */
  readonly description: string;
  /**
   * `session` (the default): each session has its own instance, made by that session's provider. `process`: the
   * sessions of a process whose provider is the same extension share one instance (state such as a lock on a
   * checkout that every session must respect); a different provider has an instance of its own.
   */
  readonly scope: "session" | "process";
  /** Which extension provides it unless replaced, named in the error when nothing does (`builtin:worktrees`). */
  readonly providedBy?: string;
  /** Never set: carries the service's type. */
  readonly __service?: (service: T) => T;
}

export interface ProvideOptions {
  /**
   * A default: any other extension that provides the same reference replaces it for as long as that provider is
   * registered (built-ins pass it, so a third party can take their place without switching them off). Two
   * providers of one reference that are both defaults, or both not, are a conflict (`KC_ERR_SERVICE_CONFLICT`).
   */
  fallback?: boolean;
}

/** `knightcode.services`: services the extensions of a session offer one another. */
export interface ExtensionServices {
  /**
   * Offers a service under `ref`. `create` runs on first use (once per session, or once per process for a
   * `process` reference, see `ServiceRef.scope`), so a service nobody asks for costs nothing.
   */
  provide<T>(ref: ServiceRef<T>, create: () => T, options?: ProvideOptions): Unsubscribe;
  /** The service as its current provider made it, or `undefined` when no extension provides it. */
  get<T>(ref: ServiceRef<T>): T | undefined;
  /** As `get`, but a missing provider is an error (`KC_ERR_MISSING_SERVICE`) naming the reference and its default provider. */
  require<T>(ref: ServiceRef<T>): T;
  /**
   * Calls `listener` now with the service (or `undefined`) and again whenever its provider changes (a provider
   * registers, a replacement arrives or goes, a reload). Returns the unsubscribe function.
   */
  watch<T>(ref: ServiceRef<T>, listener: (service: T | undefined) => void): Unsubscribe;
}

/** Free-form channel between extensions of one session. */
export interface ExtensionEventBus {
  emit(channel: string, data?: unknown): void;
  on(channel: string, handler: (data: unknown) => void | Promise<void>): Unsubscribe;
}

/**
 * Every `register*` method returns a function that undoes exactly that registration (as `on()` does); reload and
 * shutdown undo all of an extension's registrations anyway.
 */
export interface ExtensionAPI {
  readonly extension: ExtensionInfo;
  readonly events: ExtensionEventBus;
  /** Typed services the session's extensions offer one another (see `ServiceRef`). */
  readonly services: ExtensionServices;
  /** Diagnostics for the person running KnightCode, tagged with this extension's id. */
  readonly log: ExtensionLogger;

  /** Subscribes to an event (one overload per event, so handler results are checked against that event). */
  on: OnEvent;

  registerTool<TParams extends TSchema, TDetails>(
    tool: ToolDefinition<TParams, TDetails>,
    options?: RegistrationOptions,
  ): Unsubscribe;
  registerToolRenderer(resolver: ToolRendererResolver): Unsubscribe;
  registerCommand(name: string, command: CommandDefinition): Unsubscribe;
  registerShortcut(key: string, shortcut: ShortcutDefinition): Unsubscribe;
  registerFlag(name: string, flag: FlagDefinition): Unsubscribe;
  getFlag(name: string): boolean | string | undefined;
  registerMessageRenderer(customType: string, renderer: MessageRenderer): Unsubscribe;
  registerEntryRenderer(customType: string, renderer: EntryRenderer): Unsubscribe;
  /** What a host draws a tool's calls with: the resolvers in load order, then the tool's own renderers. */
  getToolRenderers(toolName: string): ToolRenderers | undefined;
  getMessageRenderer(customType: string): MessageRenderer | undefined;
  getEntryRenderer(customType: string): EntryRenderer | undefined;

  /**
   * Declares settings this extension keeps in `tools.json` under `name` (its on/off state and keys), so `/tools`
   * and the app-server's `tool/settings/*` list and change them; read them with `ctx.toolSettings.read(name)`.
   */
  registerToolSettings(name: string, definition: ToolSettingsDefinition): Unsubscribe;

  /** Process-wide: every session of this process sees it. */
  registerProvider(name: string, config: ProviderConfig, options?: RegistrationOptions): Unsubscribe;
  unregisterProvider(name: string): void;
  /**
   * Per session: each session keeps its own route. `(name, { route })` lists `virtual/<name>`; pi's object form
   * (`{ provider, id, name, route(request, ctx) }`) lists `provider/id` and keeps router state on the branch.
   */
  registerVirtualModel(name: string, config: VirtualModelConfig): Unsubscribe;
  registerVirtualModel<TState = unknown>(definition: RoutedModelDefinition<TState>): Unsubscribe;
  unregisterVirtualModel(name: string): void;
  unregisterVirtualModel(provider: string, id: string): void;
  registerMcpServer(name: string, config: McpServerConfig): Unsubscribe;
  unregisterMcpServer(name: string): void;
  getMcpServers(): { name: string; config: McpServerConfig; owner: string }[];

  sendMessage(message: SendMessageInput, options?: SendMessageOptions): void;
  sendUserMessage(
    content: string | (TextContent | ImageContent)[],
    options?: { deliverAs?: "steer" | "followUp" },
  ): void;
  appendEntry(customType: string, data?: unknown): void;
  setSessionName(name: string | undefined): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  exec(command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;

  getActiveTools(): string[];
  getAllTools(): ToolInfo[];
  setActiveTools(names: string[]): void;
  getCommands(): CommandInfo[];
  setModel(model: ModelInfo): Promise<boolean>;
  getThinkingLevel(): ThinkingLevel;
  setThinkingLevel(level: ThinkingLevel): void;
  getSettings(): Record<string, unknown>;
  /** Adds a host mode (`knightcode --mode <name>`), or replaces a built-in one of the same name. */
  registerMode(name: string, mode: ModeDefinition): Unsubscribe;
}

type UnionToIntersection<U> = (U extends unknown ? (arg: U) => void : never) extends (arg: infer I) => void
  ? I
  : never;

/** Options of `registerTool` and `registerProvider`. */
export interface RegistrationOptions {
  /**
   * A default: a registration of the same name by another extension replaces it while that one is registered, and
   * it comes back when that one goes away (KnightCode's built-ins register their tools and providers this way).
   * Two tools of one name that are both defaults, or both not, are a conflict (`KC_ERR_TOOL_CONFLICT`); of two
   * providers of one name that are not defaults, the newest is used.
   */
  fallback?: boolean;
}

/** Options of `knightcode.on()`. */
export interface OnOptions {
  /**
   * Run after every handler registered without it, whatever the load order: for a default that should act only
   * when no other handler decided (a gate stops at the first decision), as `builtin:compaction` does.
   */
  fallback?: boolean;
}

/** `knightcode.on`: an overload per event, generated from the event map. */
export type OnEvent = UnionToIntersection<
  {
    [K in ExtensionEventName]: (event: K, handler: ExtensionHandler<K>, options?: OnOptions) => Unsubscribe;
  }[ExtensionEventName]
>;

/**
 * The default export of an extension module. What it returns is awaited and otherwise ignored, so a one-line
 * factory such as `(kc) => kc.registerTool(tool)` is fine.
 */
export type ExtensionFactory = (knightcode: ExtensionAPI) => unknown;

/**
 * What an extension needs, declared next to its factory as the named export `meta` (and, for every extension of a
 * package, as `apiVersion` and `requires` in the `knightcode` field of the package's package.json). KnightCode checks
 * it before the factory runs and refuses the extension with a load error that says what is missing, instead of a
 * failure later.
 *
 *   export const meta: ExtensionMeta = { apiVersion: "^0.1", requires: ["builtin:mcp"] };
 */
export interface ExtensionMeta {
  /**
   * The versions of the KnightCode API (its package version, `VERSION`) the extension works with, as a semver
   * range: `^0.1`, `~0.1.2`, `>=0.1.0 <0.3`, `0.1.0`, `*`, alternatives joined by `||`.
   */
  apiVersion?: string;
  /**
   * Extensions that must be loaded in the same session and must not have failed: owner ids (`builtin:mcp`), or the
   * `name` of a package (its package.json) one of whose extensions must be loaded.
   */
  requires?: readonly string[];
}

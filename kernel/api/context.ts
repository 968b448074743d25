/** What event handlers, commands and tools receive as `ctx`. */

import type { ToolDeclaration } from "./extension-api.js";
import type {
  AgentMessage,
  AssistantMessage,
  AssistantMessageEvent,
  ImageContent,
  TextContent,
  ThinkingLevel,
  Usage,
} from "./messages.js";
import type { ReadonlySessionManager, SessionEntry } from "./session.js";

/** The host a session runs in. `tui` is the interactive terminal. */
export type HostMode = "tui" | "print" | "json" | "rpc" | "app-server" | "sdk" | (string & {});

export type NotifyLevel = "info" | "warning" | "error";

export interface DialogOptions {
  signal?: AbortSignal;
  /** Milliseconds; the dialog resolves as cancelled (`undefined` / `false`) when it runs out. */
  timeout?: number;
}

export interface WidgetOptions {
  placement?: "aboveEditor" | "belowEditor";
}

/** `ctx.ui`: dialogs and status surfaces. Modes without a UI answer dialogs with `undefined`/`false`. */
export interface ExtensionUIContext {
  select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined>;
  confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean>;
  input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined>;
  editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined>;
  notify(message: string, level?: NotifyLevel): void;
  setStatus(key: string, text: string | undefined): void;
  setWidget(key: string, lines: string[] | undefined, options?: WidgetOptions): void;
  setTitle(title: string): void;
  setWorkingMessage(message?: string): void;
  setEditorText(text: string): void;
  getEditorText(): string;
  /** A custom component; hosts that cannot render one resolve `undefined` at once and say so. */
  custom<T>(factory: unknown, options?: Record<string, unknown>): Promise<T | undefined>;
}

export interface ModelInfo {
  provider: string;
  id: string;
  name?: string;
  api: string;
  contextWindow: number;
  maxTokens: number;
  reasoning: boolean;
  /** Dollars per million tokens, for cost figures. */
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

export interface ContextUsage {
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

export interface StreamSimpleOptions {
  systemPrompt?: string;
  signal?: AbortSignal;
  thinkingLevel?: ThinkingLevel;
  maxTokens?: number;
  temperature?: number;
  /** Tools the model may call in this request (their calls come back in the message; nothing runs them). */
  tools?: ToolDeclaration[];
  /** Overrides the key KnightCode would resolve for the provider (auth.json, models.json, environment). */
  apiKey?: string;
  /** Extra request headers, added to the provider's configured ones. */
  headers?: Record<string, string>;
}

/** `getApiKeyAndHeaders()`: what a request to the model's provider would authenticate with. */
export type ResolvedRequestAuth =
  | { ok: true; apiKey?: string; headers?: Record<string, string> }
  | { ok: false; error: string };

export interface ClassifierQuestion {
  /** The question, with whatever context the classifier needs. */
  prompt: string;
  /** Fixed answer labels. */
  labels: string[];
  systemPrompt?: string;
}

export interface ClassifierAnswer {
  label: string;
  usage: Usage;
}

export interface ClassifierInfo {
  provider: string;
  model: string;
}

/** `ctx.modelRegistry`: provider-neutral model calls. */
export interface ModelRuntime {
  getAvailable(): ModelInfo[];
  find(provider: string, modelId: string): ModelInfo | undefined;
  streamSimple(
    model: ModelInfo,
    messages: AgentMessage[],
    options?: StreamSimpleOptions,
  ): AsyncIterable<AssistantMessageEvent> & { result(): Promise<AssistantMessage> };
  /**
   * The key and headers a request to the model's provider would carry, for extensions that call a model
   * themselves (`complete()`); `ok: false` names why there are none (an unregistered provider).
   */
  getApiKeyAndHeaders(model: ModelInfo): Promise<ResolvedRequestAuth>;
  getAvailableClassifiers(): ClassifierInfo[];
  classify(
    question: ClassifierQuestion,
    options?: { classifier?: ClassifierInfo; signal?: AbortSignal },
  ): Promise<ClassifierAnswer>;
}

export interface CompactOptions {
  customInstructions?: string;
  onComplete?(): void;
  onError?(error: Error): void;
}

export interface ExtensionContext {
  readonly cwd: string;
  readonly mode: HostMode;
  /** True when dialogs reach a person (interactive terminal, RPC client). */
  readonly hasUI: boolean;
  readonly ui: ExtensionUIContext;
  readonly sessionManager: ReadonlySessionManager;
  readonly modelRegistry: ModelRuntime;
  readonly model: ModelInfo | undefined;
  readonly thinkingLevel: ThinkingLevel | undefined;
  /** Abort signal of the active run; `undefined` when idle. */
  readonly signal: AbortSignal | undefined;
  isIdle(): boolean;
  isProjectTrusted(): boolean;
  hasPendingMessages(): boolean;
  abort(): void;
  shutdown(): void;
  getContextUsage(): ContextUsage | undefined;
  compact(options?: CompactOptions): void;
  getSystemPrompt(): string;
}

export interface SendUserMessageOptions {
  deliverAs?: "steer" | "followUp";
}

export interface NewSessionOptions {
  /** Recorded as the new session's `parentSession` (for example the file it continues). */
  parentSession?: string;
  /** Keep the outgoing session's model and thinking level instead of the host's defaults. */
  preserveModel?: boolean;
  /**
   * Writes the new session's first entries before its extensions start, so their `session_start` sees them. A
   * setup that throws cancels the replacement (the rejection reaches the caller) and the current session stays.
   */
  setup?(session: NewSessionLog): void | Promise<void>;
  withSession?(ctx: ReplacedSessionContext): void | Promise<void>;
}

/** The new session's log as `newSession({ setup })` gets it. */
export interface NewSessionLog extends ReadonlySessionManager {
  appendMessage(message: AgentMessage): SessionEntry;
  appendCustomEntry(customType: string, data?: unknown): SessionEntry;
  appendCustomMessageEntry(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display: boolean,
    details?: unknown,
  ): SessionEntry;
  appendModelChange(provider: string, modelId: string): SessionEntry;
  appendThinkingLevelChange(level: ThinkingLevel): SessionEntry;
  appendSessionInfo(name?: string): SessionEntry;
  appendLabel(targetId: string, label?: string): SessionEntry;
}

/** The fresh context handed to `withSession` after a session replacement. */
export interface ReplacedSessionContext extends ExtensionCommandContext {}

export interface NavigateTreeOptions {
  summarize?: boolean;
  customInstructions?: string;
  label?: string;
}

/** Command handlers get these extra operations; they would deadlock from event handlers. */
export interface ExtensionCommandContext extends ExtensionContext {
  waitForIdle(): Promise<void>;
  newSession(options?: NewSessionOptions): Promise<{ cancelled: boolean }>;
  fork(
    entryId: string,
    options?: { position?: "before" | "at"; withSession?(ctx: ReplacedSessionContext): void | Promise<void> },
  ): Promise<{ cancelled: boolean }>;
  navigateTree(targetId: string, options?: NavigateTreeOptions): Promise<{ cancelled: boolean }>;
  switchSession(
    sessionPath: string,
    options?: { withSession?(ctx: ReplacedSessionContext): void | Promise<void> },
  ): Promise<{ cancelled: boolean }>;
  reload(): Promise<void>;
  sendUserMessage(content: string, options?: SendUserMessageOptions): Promise<void>;
}

/** `project_trust` handlers run before a session exists, so they get a reduced context. */
export interface ProjectTrustContext {
  readonly cwd: string;
  readonly mode: HostMode;
  readonly hasUI: boolean;
  readonly ui: Pick<ExtensionUIContext, "select" | "confirm" | "input" | "notify">;
}

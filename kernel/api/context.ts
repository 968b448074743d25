/** What event handlers, commands and tools receive as `ctx`. */

import type { CompactionReason, CompactionResult, DiscoveredResources } from "./events.js";
import type { ToolDeclaration } from "./extension-api.js";
import type { McpConfigAccess, SettingsAccess, ToolSettingsAccess, TrustAccess } from "./host.js";
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
  /**
   * For `select`: the question asks permission, and these of its options mean allow once, allow always and reject.
   * A host with its own permission prompt (an ACP client's `session/request_permission`) asks with that and answers
   * the matching option; any other host shows the select as it is.
   */
  permission?: PermissionChoices;
}

/** Which options of a permission `select` mean what (`DialogOptions.permission`). */
export interface PermissionChoices {
  allowOnce: string;
  /** Absent when the question offers no remembered approval. */
  allowAlways?: string;
  reject: string;
}

export interface WidgetOptions {
  placement?: "aboveEditor" | "belowEditor";
}

/** The colour tokens of a theme (the peer's names, so its extensions' calls keep working). */
export type ThemeColor =
  | "accent"
  | "border"
  | "borderAccent"
  | "borderMuted"
  | "success"
  | "error"
  | "warning"
  | "muted"
  | "dim"
  | "text"
  | "thinkingText"
  | "userMessageText"
  | "customMessageText"
  | "customMessageLabel"
  | "toolTitle"
  | "toolOutput"
  | "mdHeading"
  | "mdLink"
  | "mdLinkUrl"
  | "mdCode"
  | "mdCodeBlock"
  | "mdCodeBlockBorder"
  | "mdQuote"
  | "mdQuoteBorder"
  | "mdHr"
  | "mdListBullet"
  | "toolDiffAdded"
  | "toolDiffRemoved"
  | "toolDiffContext"
  | "syntaxComment"
  | "syntaxKeyword"
  | "syntaxFunction"
  | "syntaxVariable"
  | "syntaxString"
  | "syntaxNumber"
  | "syntaxType"
  | "syntaxOperator"
  | "syntaxPunctuation"
  | "thinkingOff"
  | "thinkingMinimal"
  | "thinkingLow"
  | "thinkingMedium"
  | "thinkingHigh"
  | "thinkingXhigh"
  | "bashMode";

/** The background tokens of a theme. */
export type ThemeBg =
  | "selectedBg"
  | "userMessageBg"
  | "customMessageBg"
  | "toolPendingBg"
  | "toolSuccessBg"
  | "toolErrorBg";

/**
 * How extensions style text. Every method returns a string: wrapped in ANSI SGR codes by a colour theme, unchanged
 * when colour is off (`NO_COLOR`). `Theme` in `@knightcodeai/cli/tui` implements it.
 */
export interface UITheme {
  readonly name?: string;
  fg(color: ThemeColor, text: string): string;
  bg(color: ThemeBg, text: string): string;
  bold(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  inverse(text: string): string;
  strikethrough(text: string): string;
}

/** A piece of terminal UI: the lines it shows at a width, and the keys it handles (`@knightcodeai/cli/tui`). */
export interface UIComponent {
  render(width: number): string[];
  handleInput?(data: string): void;
  invalidate(): void;
  dispose?(): void;
}

/**
 * The first argument of a component factory: the terminal UI that shows the component. Where nothing is drawn
 * live (RPC, the line-based terminal, tests) it is a stand-in whose `requestRender` does nothing.
 */
export interface UIHost {
  requestRender(force?: boolean): void;
}

export type UIComponentFactory = (tui: UIHost, theme: UITheme) => UIComponent;

/** What a custom footer may read besides `ctx`: the git branch and the texts set with `setStatus`. */
export interface FooterData {
  getGitBranch(): string | null;
  getExtensionStatuses(): ReadonlyMap<string, string>;
  getAvailableProviderCount(): number;
  onBranchChange(callback: () => void): () => void;
}

export type FooterFactory = (tui: UIHost, theme: UITheme, footerData: FooterData) => UIComponent;

/** An editor component: a component with text (`CustomEditor` in `@knightcodeai/cli/tui` is one). */
export interface UIEditorComponent extends UIComponent {
  getText(): string;
  setText(text: string): void;
  handleInput(data: string): void;
  onSubmit?: (text: string) => void;
  onChange?: (text: string) => void;
}

/** The styles of the input editor: its border, and the list its autocomplete shows. */
export interface UIEditorTheme {
  borderColor: (text: string) => string;
  selectList: Record<
    "selectedPrefix" | "selectedText" | "description" | "scrollInfo" | "noMatch",
    (text: string) => string
  >;
}

/** Builds the input editor; `keybindings` are the app's key bindings where the mode has any. */
export type EditorFactory = (tui: UIHost, theme: UIEditorTheme, keybindings: unknown) => UIEditorComponent;

/**
 * A declarative view: data a client draws itself (the app-server sends it in `ui/widget`), never markup. Stacks and
 * lists nest at most 8 levels; control ids are unique in a view.
 */
export type ViewNode =
  | { type: "text"; text: string; tone?: "normal" | "muted" | "success" | "warning" | "error" }
  | { type: "stack"; direction?: "vertical" | "horizontal"; children: ViewNode[] }
  | { type: "list"; items: ViewNode[] }
  | { type: "button"; id: string; label: string }
  | { type: "toggle"; id: string; label: string; value: boolean }
  | { type: "select"; id: string; label?: string; options: string[]; value?: string }
  | { type: "textField"; id: string; label?: string; value?: string; placeholder?: string };

/** `setWidget(key, {view})`: a widget drawn from a declarative view (as text lines where views are not drawn). */
export interface WidgetView {
  view: ViewNode;
}

/** A press of a button, or a change of a field, in a widget's view: `value` is absent for a button. */
export interface ViewEvent {
  widgetKey: string;
  id: string;
  value?: string | boolean;
}

/** A raw terminal input listener: `consume` swallows the data, `data` replaces it for the next listener. */
export type TerminalInputHandler = (data: string) => { consume?: boolean; data?: string } | undefined;

export interface WorkingIndicatorOptions {
  /** Frames shown in turn; `[]` hides the indicator, one frame is static. Rendered as given. */
  frames?: string[];
  intervalMs?: number;
}

/**
 * `ctx.ui`: dialogs and status surfaces. Modes without a UI answer dialogs with `undefined`/`false`; what a mode
 * cannot draw is a no-op there (docs/extensions.md lists what each mode does), and `theme` always returns strings.
 */
export interface ExtensionUIContext {
  select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined>;
  confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean>;
  input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined>;
  editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined>;
  notify(message: string, level?: NotifyLevel): void;
  setStatus(key: string, text: string | undefined): void;
  /** Lines, or a factory for a component the mode renders; `undefined` removes the widget. */
  setWidget(
    key: string,
    content: string[] | UIComponentFactory | WidgetView | undefined,
    options?: WidgetOptions,
  ): void;
  /**
   * Handlers for the presses and changes in this session's widget views (the app-server's `ui/event`); answer by
   * setting the widget again. Returns the unsubscribe function. Hosts that draw no views never call them.
   */
  onViewEvent(handler: (event: ViewEvent) => void | Promise<void>): () => void;
  /** Set by a host whose `setWidget` draws views itself; for any other, the SDK turns a view into text lines. */
  readonly drawsViews?: boolean;
  setTitle(title: string): void;
  setWorkingMessage(message?: string): void;
  /** Shows or hides the working row while the agent runs. */
  setWorkingVisible(visible: boolean): void;
  /** The working row's spinner; no argument restores the default. */
  setWorkingIndicator(options?: WorkingIndicatorOptions): void;
  /** The label shown for a hidden thinking block; no argument restores the default. */
  setHiddenThinkingLabel(label?: string): void;
  /** A custom footer, or `undefined` for the mode's own. */
  setFooter(factory: FooterFactory | undefined): void;
  /** A custom header, or `undefined` for the mode's own. */
  setHeader(factory: UIComponentFactory | undefined): void;
  setEditorText(text: string): void;
  getEditorText(): string;
  /** Inserts text into the input editor as a paste (where there is no editor, as `setEditorText`). */
  pasteToEditor(text: string): void;
  /** Replaces the input editor, or restores the mode's own with `undefined`. */
  setEditorComponent(factory: EditorFactory | undefined): void;
  getEditorComponent(): EditorFactory | undefined;
  /** Listens to raw terminal input before the editor sees it; returns the unsubscribe function. */
  onTerminalInput(handler: TerminalInputHandler): () => void;
  /** The current theme. */
  readonly theme: UITheme;
  getAllThemes(): { name: string; path: string | undefined }[];
  /** A theme by name, without switching to it. */
  getTheme(name: string): UITheme | undefined;
  /** Switches the theme by name or object; `success: false` with an `error` when the mode cannot. */
  setTheme(theme: string | UITheme): { success: boolean; error?: string };
  /** Whether tool output is shown expanded. */
  getToolsExpanded(): boolean;
  setToolsExpanded(expanded: boolean): void;
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
  | {
      ok: true;
      apiKey?: string;
      headers?: Record<string, string>;
      /**
       * The environment variable the provider takes its key from, when it names one that is not set and no key is
       * saved in auth.json: requests would go without a key (a host lists the model as not usable).
       */
      missingKey?: string;
    }
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
  /**
   * pi's `findOfType(type, provider, id)`: a `"chat"` model as `find()`; other model types (pi's classifier models)
   * are not listed this way here, so it answers undefined for them.
   */
  findOfType(type: string, provider: string, modelId: string): ModelInfo | undefined;
  /**
   * The thinking levels the model takes: a model's own list where it has one (a routed virtual model's
   * `thinkingLevels`, which may hold pi's `max`; the levels a provider model's `thinkingLevelMap` offers), else
   * `off` to `xhigh` for a model that reasons and `["off"]` for one that does not.
   */
  thinkingLevels(model: ModelInfo): (ThinkingLevel | "max")[];
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
  /**
   * A summary request (compaction, branch summary): one request, retried with back-off under the `retry` settings
   * after errors a later attempt can get past, reported as `summarization_retry_*` events. Resolves the final
   * answer; rejects with its error message once retries run out, or when `signal` aborts.
   */
  summarize(request: SummarizeRequest): Promise<AssistantMessage>;
}

/** `ctx.modelRegistry.summarize()`: the request, and what its retry events report. */
export interface SummarizeRequest extends StreamSimpleOptions {
  model: ModelInfo;
  messages: AgentMessage[];
  source: "compaction" | "branchSummary";
  /** For `source: "compaction"`: why it compacts. */
  reason?: CompactionReason;
}

export interface CompactOptions {
  /** Passed to the summariser (`session_before_compact`'s `customInstructions`). */
  customInstructions?: string;
  onComplete?(result: CompactionResult): void;
  /** A failure, a cancel by a handler (`KC_ERR_COMPACTION_ABORTED`) or nothing to compact. */
  onError?(error: Error): void;
}

export interface ExtensionContext {
  readonly cwd: string;
  /** The agent folder (`$KNIGHTCODE_AGENT_DIR` or `~/.knightcode/agent`, or the SDK's `agentDir` option). */
  readonly agentDir: string;
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
  /** The session's merged settings, and changes to the settings files (they apply from the next session or reload). */
  readonly settings: SettingsAccess;
  /** The saved project-trust decision of this folder, and saving one (it applies from the next reload). */
  readonly trust: TrustAccess;
  /** `tools.json`: the state and settings of what the session's extensions declared with `registerToolSettings`. */
  readonly toolSettings: ToolSettingsAccess;
  /** The `mcp.json` files of this folder (the project's only in a trusted project). */
  readonly mcpConfig: McpConfigAccess;
  hasPendingMessages(): boolean;
  abort(): void;
  shutdown(): void;
  getContextUsage(): ContextUsage | undefined;
  compact(options?: CompactOptions): void;
  getSystemPrompt(): string;
  /**
   * The skill, prompt and theme paths `resources_discover` handlers contributed at startup or the last reload,
   * resolved against the cwd. Empty until the first discovery, which runs after `session_start`. While the event
   * runs it holds what the handlers that already ran contributed, so a `{ fallback: true }` handler sees them all.
   */
  getDiscoveredResources(): DiscoveredResources;
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
  /** Ask `session_before_tree` handlers for a summary of the branch being left (`preparation.userWantsSummary`). */
  summarize?: boolean;
  /** Instructions for the summariser. */
  customInstructions?: string;
  /** `customInstructions` replace the summariser's prompt instead of adding to it. */
  replaceInstructions?: boolean;
  /** Label for the branch summary entry, or for the target when no summary is written. */
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

/**
 * Payloads and results of every event an extension can subscribe to with `knightcode.on()`.
 * The kind and error policy of each event live in the catalogue (kernel/api/event-catalog.ts, docs/events.md).
 */
import type { ExtensionContext, ModelInfo, ProjectTrustContext } from "./context.js";
import type {
  AgentMessage,
  AssistantMessage,
  AssistantMessageEvent,
  ImageContent,
  TextContent,
  ThinkingLevel,
  ToolResultMessage,
  TranscriptMessage,
  Usage,
} from "./messages.js";
import type { BranchSummaryEntry, CompactionEntry, EntryDraft, SessionEntry } from "./session.js";
import type { ToolResult } from "./tools.js";

// ---- resources and trust ------------------------------------------------------------------------

export interface ProjectTrustEvent {
  cwd: string;
}
export interface ProjectTrustResult {
  trusted: "yes" | "no" | "undecided";
  remember?: boolean;
}

export interface ResourcesDiscoverEvent {
  cwd: string;
  reason: "startup" | "reload";
}
export interface ResourcesDiscoverResult {
  skillPaths?: string[];
  promptPaths?: string[];
  themePaths?: string[];
}
/** What every `resources_discover` handler contributed, concatenated (`ctx.getDiscoveredResources()`). */
export interface DiscoveredResources {
  skillPaths: string[];
  promptPaths: string[];
  themePaths: string[];
}

export interface McpServersChangeEvent {
  servers: string[];
}

// ---- sessions -----------------------------------------------------------------------------------

export interface SessionStartEvent {
  reason: "startup" | "reload" | "new" | "resume" | "fork";
  previousSessionFile?: string;
}
export interface SessionShutdownEvent {
  reason: "quit" | "reload" | "new" | "resume" | "fork";
  targetSessionFile?: string;
}
export interface SessionInfoChangedEvent {
  name?: string;
}
export interface SessionBeforeSwitchEvent {
  reason: "new" | "resume";
  targetSessionFile?: string;
}
export interface CancelResult {
  cancel?: boolean;
}
export interface SessionBeforeForkEvent {
  entryId: string;
  position?: "before" | "at";
}
export interface SessionBeforeForkResult extends CancelResult {
  skipConversationRestore?: boolean;
}
export type CompactionReason = "manual" | "threshold" | "overflow";
export interface CompactionPreparation {
  /** Where the kept part starts: never a tool result, so a call and its result stay together. */
  firstKeptEntryId: string;
  /** The older part of the context, an earlier compaction's summary first when there is one. */
  messagesToSummarize: AgentMessage[];
  /** The newer part the compaction keeps as it is. */
  keptMessages: AgentMessage[];
  tokensBefore: number;
  /** Files the summarised part read but did not change, with those of earlier compactions (nested calls too). */
  readFiles: string[];
  /** Files the summarised part wrote or edited, with those of earlier compactions. */
  modifiedFiles: string[];
}
export interface SessionBeforeCompactEvent {
  reason: CompactionReason;
  preparation: CompactionPreparation;
  branchEntries: SessionEntry[];
  customInstructions?: string;
  signal: AbortSignal;
}
export interface CompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  estimatedTokensAfter?: number;
  usage?: Usage;
  details?: unknown;
}
export interface SessionBeforeCompactResult extends CancelResult {
  compaction?: CompactionResult;
}
export interface SessionCompactEvent {
  reason: CompactionReason;
  compactionEntry: CompactionEntry;
  fromExtension: boolean;
  willRetry: boolean;
}
export interface SessionCompactFailedEvent {
  reason: CompactionReason;
  error: string;
}
/**
 * What `session_before_tree` handlers see. The instructions and label start as the caller's options; a handler
 * that returns other ones changes them here for the handlers after it and for the entry that is written.
 */
export interface TreePreparation {
  targetId: string;
  oldLeafId: string | null;
  /** The deepest entry on both the old branch and the target's path (`null`: they share nothing). */
  commonAncestorId: string | null;
  /** The branch being left: the entries after the common ancestor up to the old leaf, oldest first. */
  entriesToSummarize: SessionEntry[];
  /** The caller asked for a branch summary (`summarize: true`). */
  userWantsSummary: boolean;
  customInstructions?: string;
  /** `customInstructions` replace the summariser's own prompt instead of adding to it. */
  replaceInstructions?: boolean;
  /** Set on the branch summary entry, or on the target when there is no summary. */
  label?: string;
}
export interface SessionBeforeTreeEvent {
  preparation: TreePreparation;
  signal: AbortSignal;
}
export interface SessionBeforeTreeResult extends CancelResult {
  summary?: { summary: string; details?: unknown };
  customInstructions?: string;
  replaceInstructions?: boolean;
  label?: string;
}
export interface SessionTreeEvent {
  /** The active leaf now: the target, or the summary or label entry written after it. */
  newLeafId: string | null;
  oldLeafId: string | null;
  summaryEntry?: BranchSummaryEntry;
  /** Set with `summaryEntry`: false when a built-in extension (the default summariser) wrote the summary. */
  fromExtension?: boolean;
}

// ---- input and runs -----------------------------------------------------------------------------

export interface InputEvent {
  text: string;
  images?: ImageContent[];
  source: "interactive" | "rpc" | "extension" | "print" | "json" | "sdk";
  /** How the message is queued while a run is going (`steer`, `followUp`); undefined while idle. */
  streamingBehavior?: "steer" | "followUp";
}
export type InputResult =
  | { action: "continue" }
  | { action: "transform"; text: string; images?: ImageContent[] }
  | { action: "handled" };

export interface SystemPromptOptions {
  /** Named sections in order; extensions may add, edit or remove them. */
  sections: { id: string; text: string }[];
  /** Names of the tools the prompt describes. */
  tools: string[];
  guidelines: string[];
  // The peer's fields (pi's `BuildSystemPromptOptions`). Each edit of one is carried into the sections, unless the
  // KnightCode field or section it mirrors was edited too, which then wins.
  /** The working folder the prompt describes. */
  cwd: string;
  /** SYSTEM.md's text, when there is one (it is the `base` section). */
  customPrompt?: string;
  /** The peer's name for `tools`: the same array. */
  selectedTools: string[];
  /** The one-line prompt snippet of each listed tool that has one, by tool name (the `tools` section). */
  toolSnippets: Record<string, string>;
  /** The guidelines the listed tools bring; `guidelines` holds them and the general ones. */
  promptGuidelines: string[];
  /** APPEND_SYSTEM.md's text, when there is one (the `append` section). */
  appendSystemPrompt?: string;
  /** The context files (AGENTS.md, CLAUDE.md) the `context` section shows. */
  contextFiles: { path: string; content: string }[];
  /**
   * Skills the prompt lists (the `skills` section): builtin:skills fills it from its `before_agent_start`
   * handler; a handler that edits the list changes that section unless the section's text was edited too.
   */
  skills: PromptSkill[];
}

/** A skill as the system prompt lists it; the model reads `filePath` (its SKILL.md) when the skill applies. */
export interface PromptSkill {
  name: string;
  description: string;
  filePath: string;
}
export interface BeforeAgentStartEvent {
  messageType: "user" | "custom";
  prompt?: string;
  images?: ImageContent[];
  message?: AgentMessage;
  systemPrompt: string;
  systemPromptOptions: SystemPromptOptions;
}
export interface BeforeAgentStartResult {
  message?: {
    customType: string;
    content: string | (TextContent | ImageContent)[];
    display?: boolean;
    details?: unknown;
  };
  systemPrompt?: string;
  forceSystemPrompt?: boolean;
}

export type AgentStartEvent = Record<string, never>;
export interface AgentEndEvent {
  messages: AgentMessage[];
  willRetry: boolean;
}
export interface AgentSettledEvent {
  aborted: boolean;
}
export interface TurnStartEvent {
  turnIndex: number;
  timestamp: number;
}

/** Actionable boundaries accumulate proposals: entries chain, `continue` chains, `end` is sticky. */
export interface BoundaryState {
  entries: EntryDraft[];
  continue: boolean;
  end: boolean;
}
export interface BoundaryResult {
  entries?: EntryDraft[];
  continue?: boolean;
  end?: boolean;
}
export interface TurnEndEvent extends BoundaryState {
  turnIndex: number;
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
}
export interface AgentBeforeSettleEvent extends BoundaryState {
  messages: AgentMessage[];
}

export interface ContextEvent {
  messages: AgentMessage[];
}
export interface ContextResult {
  messages: AgentMessage[];
}
export interface ContextWithSystemEvent {
  messages: TranscriptMessage[];
}
export interface ContextWithSystemResult {
  messages: TranscriptMessage[];
}

export interface UiPromptEvent {
  kind: "select" | "confirm" | "input" | "editor" | "custom";
  title: string;
}
export interface QueueUpdateEvent {
  steering: string[];
  followUp: string[];
}
export interface EntryAppendedEvent {
  entry: SessionEntry;
}
export interface ThinkingLevelChangedEvent {
  level: ThinkingLevel;
}
export interface ThinkingLevelSelectEvent {
  level: ThinkingLevel;
  previousLevel: ThinkingLevel | undefined;
}
export interface ModelSelectEvent {
  model: ModelInfo;
  previousModel: ModelInfo | undefined;
  source: "set" | "cycle" | "restore";
}
export interface CacheWarmingDecisionEvent {
  idleMs: number;
  model: ModelInfo | undefined;
}
export interface CacheWarmingDecisionResult {
  action: "warm" | "stop";
}

// ---- providers ----------------------------------------------------------------------------------

interface ProviderEventBase {
  provider: string;
  api: string;
  model: string;
}
export interface BeforeProviderRequestEvent extends ProviderEventBase {
  payload: unknown;
}
/** Mutate `headers` in place (a `null` value deletes a header) or return a replacement. */
export interface BeforeProviderHeadersEvent extends ProviderEventBase {
  headers: Record<string, string | null>;
}
export interface AfterProviderResponseEvent extends ProviderEventBase {
  status: number;
  headers: Record<string, string>;
}
export interface ProviderStreamEvent extends ProviderEventBase {
  data: unknown;
}

// ---- messages -----------------------------------------------------------------------------------

export interface MessageStartEvent {
  message: AgentMessage;
}
export interface MessageUpdateEvent {
  message: AssistantMessage;
  assistantMessageEvent: AssistantMessageEvent;
  usage: Usage;
}
export interface MessageEndEvent {
  message: AgentMessage;
}
export interface MessageEndResult {
  message: AgentMessage;
}

// ---- tools --------------------------------------------------------------------------------------

export interface ToolCallEvent {
  toolCallId: string;
  toolName: string;
  /** Mutable: changes reach the tool without another validation. */
  input: Record<string, unknown>;
  parentToolCallId?: string;
  /**
   * Set when the called tool declares `reachesTools`: what this call may reach (`"all"`, or words that name tools
   * or namespaces). An extension that registers tools late finishes registering those before the call runs.
   */
  reaches?: "all" | string[];
  /**
   * Model usage spent deciding on this call, such as a classifier's. A handler that makes model calls adds its own
   * here (`addUsage`); KnightCode adds it to the call's result `usage`, blocked or not, so session totals count it.
   */
  usage?: Usage;
}
export interface ToolCallResult {
  block?: boolean;
  reason?: string;
  /** With `block`: the blocked call's result `details` (in `tool_execution_end`), such as a gate's decision. */
  details?: unknown;
}
export interface ToolResultEvent {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  content: ToolResult["content"];
  details: unknown;
  structuredContent?: unknown;
  isError: boolean;
  parentToolCallId?: string;
}
export interface ToolResultPatch {
  content?: ToolResult["content"];
  details?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
}
export interface ToolExecutionStartEvent {
  toolCallId: string;
  toolName: string;
  args: unknown;
  parentToolCallId?: string;
}
export interface ToolExecutionUpdateEvent extends ToolExecutionStartEvent {
  partialResult: ToolResult;
}
export interface ToolExecutionEndEvent {
  toolCallId: string;
  toolName: string;
  result: ToolResult;
  isError: boolean;
  durationMs?: number;
  parentToolCallId?: string;
}

export interface BashResult {
  output: string;
  exitCode: number | null;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
}
export interface BashOperations {
  exec(
    command: string,
    cwd: string,
    options: { onData(chunk: string): void; signal?: AbortSignal; timeout?: number },
  ): Promise<{ exitCode: number | null }>;
}
export interface UserBashEvent {
  command: string;
  excludeFromContext: boolean;
  cwd: string;
}
export type UserBashResult = { operations: BashOperations } | { result: BashResult };

// ---- compaction, retries and wire-only events ---------------------------------------------------

export interface CompactionStartEvent {
  reason: CompactionReason;
}
export interface CompactionEndEvent {
  reason: CompactionReason;
  result?: CompactionResult;
  aborted: boolean;
  willRetry: boolean;
  errorMessage?: string;
}
export interface AutoRetryStartEvent {
  /** The retry about to be made: 1 for the first. */
  attempt: number;
  /** The most retries the settings allow (`retry.maxRetries`). */
  maxAttempts: number;
  delayMs: number;
  errorMessage: string;
}
export interface AutoRetryEndEvent {
  success: boolean;
  /** The attempts that ran, the first request included: 2 after one retry. */
  attempt: number;
  finalError?: string;
}
export interface SummarizationRetryScheduledEvent {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  errorMessage: string;
}
export interface SummarizationRetryAttemptStartEvent {
  source: "compaction" | "branchSummary";
  reason?: CompactionReason;
}
export type SummarizationRetryFinishedEvent = Record<string, never>;
export interface BashExecutionUpdateEvent {
  id?: string;
  delta: string;
}
export interface ExtensionErrorEvent {
  extensionPath: string;
  event: string;
  error: string;
}

/** Every event, with the payload handlers receive and the result they may return. */
/**
 * Every event: its payload and what a handler may return. The doc comment on each member is the event's
 * description in docs/events.md (generated).
 */
export interface ExtensionEvents {
  /** Decide whether the project's settings and resources may load; the first `yes`/`no` wins, `undecided` passes. */
  project_trust: { event: ProjectTrustEvent; result: ProjectTrustResult };
  /** Contribute skill, prompt and theme paths at startup and reload; contributions accumulate. */
  resources_discover: { event: ResourcesDiscoverEvent; result: ResourcesDiscoverResult };
  /** The set of registered MCP servers changed. */
  mcp_servers_change: { event: McpServersChangeEvent; result: undefined };
  /** A session runtime started (startup, reload, new, resume, fork). `ExtensionStartupError` refuses it. */
  session_start: { event: SessionStartEvent; result: undefined };
  /** The session runtime is going away (quit, reload, new, resume, fork). Release resources idempotently. */
  session_shutdown: { event: SessionShutdownEvent; result: undefined };
  /** The session display name changed. */
  session_info_changed: { event: SessionInfoChangedEvent; result: undefined };
  /** Before a new or resumed session replaces this one; `{cancel: true}` stops it. */
  session_before_switch: { event: SessionBeforeSwitchEvent; result: CancelResult };
  /** Before a fork; `{cancel: true}` stops it. */
  session_before_fork: { event: SessionBeforeForkEvent; result: SessionBeforeForkResult };
  /** Before compaction; the first `{cancel}` or `{compaction}` decides. */
  session_before_compact: { event: SessionBeforeCompactEvent; result: SessionBeforeCompactResult };
  /** A compaction entry was written. */
  session_compact: { event: SessionCompactEvent; result: undefined };
  /** A compaction failed. */
  session_compact_failed: { event: SessionCompactFailedEvent; result: undefined };
  /** Before navigating the session tree; `{cancel}` or `{summary}` decides. */
  session_before_tree: { event: SessionBeforeTreeEvent; result: SessionBeforeTreeResult };
  /** The active leaf moved within the session tree. */
  session_tree: { event: SessionTreeEvent; result: undefined };
  /**
   * Raw user input before it becomes a message: transforms chain; `{action: 'handled'}` stops the chain and the
   * input.
   */
  input: { event: InputEvent; result: InputResult };
  /** Before a run: adjust the system prompt options, add a message, or force a system prompt. */
  before_agent_start: { event: BeforeAgentStartEvent; result: BeforeAgentStartResult };
  /** A low-level agent run started. */
  agent_start: { event: AgentStartEvent; result: undefined };
  /** A low-level agent run ended (`willRetry` when a retry follows). */
  agent_end: { event: AgentEndEvent; result: undefined };
  /** Final actionable boundary: append entries, ask for one continuation, or end. */
  agent_before_settle: { event: AgentBeforeSettleEvent; result: BoundaryResult };
  /** No automatic work remains for this run. */
  agent_settled: { event: AgentSettledEvent; result: undefined };
  /** One assistant turn started. */
  turn_start: { event: TurnStartEvent; result: undefined };
  /** One assistant response and its tool calls finished; handlers may append entries, continue or end. */
  turn_end: { event: TurnEndEvent; result: BoundaryResult };
  /** Transform the conversation messages of one request. */
  context: { event: ContextEvent; result: ContextResult };
  /** Transform the complete transcript of one request, system messages included. */
  context_with_system: { event: ContextWithSystemEvent; result: ContextWithSystemResult };
  /**
   * A dialog (`select`, `confirm`, `input`, `editor`) opened in a mode with a UI. It stays in-process: JSON and
   * RPC output do not carry it (an RPC client sees the dialog itself as an `extension_ui_request`).
   */
  ui_prompt_start: { event: UiPromptEvent; result: undefined };
  /** The dialog of the matching `ui_prompt_start` closed: answered, dismissed, timed out or aborted. */
  ui_prompt_end: { event: UiPromptEvent; result: undefined };
  /** The steering or follow-up queue changed. */
  queue_update: { event: QueueUpdateEvent; result: undefined };
  /** An extension appended a custom session entry. */
  entry_appended: { event: EntryAppendedEvent; result: undefined };
  /** The active thinking level changed. */
  thinking_level_changed: { event: ThinkingLevelChangedEvent; result: undefined };
  /** A thinking level was selected (with the previous one). */
  thinking_level_select: { event: ThinkingLevelSelectEvent; result: undefined };
  /** A model was selected (set, cycle or restore). */
  model_select: { event: ModelSelectEvent; result: undefined };
  /** Override an idle prompt-cache refresh with `warm` or `stop`; the last handler returning an action wins. */
  cache_warming_decision: { event: CacheWarmingDecisionEvent; result: CacheWarmingDecisionResult };
  /** The provider payload before it is sent; a returned value replaces it. */
  before_provider_request: { event: BeforeProviderRequestEvent; result: unknown };
  /** Request headers: mutate in place (`null` deletes) or return a replacement. */
  before_provider_headers: { event: BeforeProviderHeadersEvent; result: Record<string, string | null> };
  /** The provider answered (status and headers). */
  after_provider_response: { event: AfterProviderResponseEvent; result: undefined };
  /** Each parsed provider stream event before normalisation; read-only, awaited in stream order. */
  provider_stream_event: { event: ProviderStreamEvent; result: undefined };
  /** A message started. */
  message_start: { event: MessageStartEvent; result: undefined };
  /** An assistant message emitted a content-block update. */
  message_update: { event: MessageUpdateEvent; result: undefined };
  /** A message is final; a handler may replace it with a message of the same role. */
  message_end: { event: MessageEndEvent; result: MessageEndResult };
  /** Before a tool runs: mutate `input` in place or block; a throwing handler blocks the call. */
  tool_call: { event: ToolCallEvent; result: ToolCallResult };
  /** After a tool ran (errored ones too): patches of content, details, isError and structuredContent compose. */
  tool_result: { event: ToolResultEvent; result: ToolResultPatch };
  /** Tool execution started. */
  tool_execution_start: { event: ToolExecutionStartEvent; result: undefined };
  /** A tool reported a partial result. */
  tool_execution_update: { event: ToolExecutionUpdateEvent; result: undefined };
  /** Tool execution finished. */
  tool_execution_end: { event: ToolExecutionEndEvent; result: undefined };
  /**
   * A user shell command: the first handler returning `operations` or `result` takes it; a failing handler blocks
   * it.
   */
  user_bash: { event: UserBashEvent; result: UserBashResult };
  /** Compaction began (manual, threshold, overflow). */
  compaction_start: { event: CompactionStartEvent; result: undefined };
  /** Compaction ended with a result, an abort or an error. */
  compaction_end: { event: CompactionEndEvent; result: undefined };
  /** A retryable provider error; a retry is scheduled. */
  auto_retry_start: { event: AutoRetryStartEvent; result: undefined };
  /** Retrying ended in success or a final error. */
  auto_retry_end: { event: AutoRetryEndEvent; result: undefined };
  /** A compaction or branch summary will be retried. */
  summarization_retry_scheduled: { event: SummarizationRetryScheduledEvent; result: undefined };
  /** A summarisation retry attempt started. */
  summarization_retry_attempt_start: { event: SummarizationRetryAttemptStartEvent; result: undefined };
  /** Summarisation retries finished. */
  summarization_retry_finished: { event: SummarizationRetryFinishedEvent; result: undefined };
  /** Output chunk of a direct RPC `bash` command. */
  bash_execution_update: { event: BashExecutionUpdateEvent; result: undefined };
  /** An extension handler threw. Errors in handlers of this event go to stderr, never back to this event. */
  extension_error: { event: ExtensionErrorEvent; result: undefined };
}

export type ExtensionEventName = keyof ExtensionEvents;

/** `project_trust` runs before a session exists and gets a reduced context. */
export type ContextFor<K extends ExtensionEventName> = K extends "project_trust"
  ? ProjectTrustContext
  : ExtensionContext;

export type ExtensionHandler<K extends ExtensionEventName> = (
  event: ExtensionEvents[K]["event"],
  ctx: ContextFor<K>,
) =>
  | ExtensionEvents[K]["result"]
  | undefined
  | void
  | Promise<ExtensionEvents[K]["result"] | undefined | void>;

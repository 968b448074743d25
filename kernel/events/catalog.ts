/**
 * The event catalogue: the one place every event is declared, with its kind and error policy.
 * docs/events.md is generated from this table (npm run docs:events) and the conformance suite iterates it.
 */
import type { ExtensionEventName } from "../api/events.js";
import type { ExtensionOrigin } from "../api/extension-api.js";

/**
 * - `notify`: return value ignored.
 * - `transform`: each handler sees the previous handler's result; `undefined` keeps the value.
 * - `gate`: the first handler that returns a decision wins; the rest do not run.
 * - `lastWins`: the last handler that returns a value wins.
 * - `boundary`: handlers accumulate `{entries, continue, end}`; `end` is sticky.
 */
export type EventKind = "notify" | "transform" | "gate" | "lastWins" | "boundary";

/**
 * - `report`: a throwing handler is reported as `extension_error` (extension and event named); the others run.
 * - `fail-closed`: a throwing handler is reported and counts as the event's refusal (block, cancel, untrusted).
 * - `propagate`: `ExtensionStartupError` stops the dispatch and reaches the host; other errors are reported.
 */
export type ErrorPolicy = "report" | "fail-closed" | "propagate";

export type EventFamily =
  | "resources"
  | "session"
  | "input"
  | "agent"
  | "message"
  | "provider"
  | "tool"
  | "compaction"
  | "retry"
  | "ui"
  | "host";

export interface EventSpec {
  readonly kind: EventKind;
  readonly errorPolicy: ErrorPolicy;
  readonly family: EventFamily;
  readonly description: string;
  /** Dispatched often (per stream delta): emitters skip building the payload when nobody listens. */
  readonly hot?: boolean;
  /** The event is written to the JSON event stream (`json`, and so also RPC) or only to RPC (`rpc`). */
  readonly wire?: "json" | "rpc";
  /** For wire events: the fields a record carries (json.md), in order; anything else stays in-process. */
  readonly fields?: readonly string[];
  /** When set, only extensions of these origins may subscribe. */
  readonly participants?: readonly ExtensionOrigin[];
}

const spec = (
  family: EventFamily,
  kind: EventKind,
  errorPolicy: ErrorPolicy,
  description: string,
  extra: Partial<Pick<EventSpec, "hot" | "wire" | "fields" | "participants">> = {},
): EventSpec => Object.freeze({ family, kind, errorPolicy, description, ...extra });

export const eventCatalog: Readonly<Record<ExtensionEventName, EventSpec>> = Object.freeze({
  // resources and trust
  project_trust: spec(
    "resources",
    "gate",
    "fail-closed",
    "Decide whether the project's settings and resources may load; the first `yes`/`no` wins, `undecided` passes.",
    { participants: ["builtin", "user", "cli", "sdk"] },
  ),
  resources_discover: spec(
    "resources",
    "transform",
    "report",
    "Contribute skill, prompt and theme paths at startup and reload; contributions accumulate.",
  ),
  mcp_servers_change: spec("resources", "notify", "report", "The set of registered MCP servers changed."),

  // sessions
  session_start: spec(
    "session",
    "notify",
    "propagate",
    "A session runtime started (startup, reload, new, resume, fork). `ExtensionStartupError` refuses it.",
  ),
  session_shutdown: spec(
    "session",
    "notify",
    "report",
    "The session runtime is going away (quit, reload, new, resume, fork). Release resources idempotently.",
  ),
  session_info_changed: spec("session", "notify", "report", "The session display name changed.", {
    wire: "json",
    fields: ["name"],
  }),
  session_before_switch: spec(
    "session",
    "gate",
    "fail-closed",
    "Before a new or resumed session replaces this one; `{cancel: true}` stops it.",
  ),
  session_before_fork: spec("session", "gate", "fail-closed", "Before a fork; `{cancel: true}` stops it."),
  session_before_compact: spec(
    "session",
    "gate",
    "fail-closed",
    "Before compaction; the first `{cancel}` or `{compaction}` decides.",
  ),
  session_compact: spec("session", "notify", "report", "A compaction entry was written."),
  session_compact_failed: spec("session", "notify", "report", "A compaction failed."),
  session_before_tree: spec(
    "session",
    "gate",
    "fail-closed",
    "Before navigating the session tree; `{cancel}` or `{summary}` decides.",
  ),
  session_tree: spec("session", "notify", "report", "The active leaf moved within the session tree."),

  // input
  input: spec(
    "input",
    "transform",
    "report",
    "Raw user input before it becomes a message: transforms chain; `{action: 'handled'}` stops the chain and the input.",
  ),
  user_bash: spec(
    "input",
    "gate",
    "fail-closed",
    "A user shell command: the first handler returning `operations` or `result` takes it; a failing handler blocks it.",
  ),

  // agent runs
  before_agent_start: spec(
    "agent",
    "transform",
    "report",
    "Before a run: adjust the system prompt options, add a message, or force a system prompt.",
  ),
  agent_start: spec("agent", "notify", "report", "A low-level agent run started.", {
    wire: "json",
    fields: [],
  }),
  agent_end: spec(
    "agent",
    "notify",
    "report",
    "A low-level agent run ended (`willRetry` when a retry follows).",
    {
      wire: "json",
      fields: ["messages", "willRetry"],
    },
  ),
  agent_before_settle: spec(
    "agent",
    "boundary",
    "report",
    "Final actionable boundary: append entries, ask for one continuation, or end.",
  ),
  agent_settled: spec("agent", "notify", "report", "No automatic work remains for this run.", {
    wire: "json",
    fields: ["aborted"],
  }),
  turn_start: spec("agent", "notify", "report", "One assistant turn started.", { wire: "json", fields: [] }),
  turn_end: spec(
    "agent",
    "boundary",
    "report",
    "One assistant response and its tool calls finished; handlers may append entries, continue or end.",
    { wire: "json", fields: ["message", "toolResults"] },
  ),
  context: spec("agent", "transform", "report", "Transform the conversation messages of one request."),
  context_with_system: spec(
    "agent",
    "transform",
    "report",
    "Transform the complete transcript of one request, system messages included.",
  ),
  queue_update: spec("agent", "notify", "report", "The steering or follow-up queue changed.", {
    wire: "json",
    fields: ["steering", "followUp"],
  }),
  entry_appended: spec("session", "notify", "report", "An extension appended a custom session entry.", {
    wire: "json",
    fields: ["entry"],
  }),
  thinking_level_changed: spec("agent", "notify", "report", "The active thinking level changed.", {
    wire: "json",
    fields: ["level"],
  }),
  thinking_level_select: spec(
    "agent",
    "notify",
    "report",
    "A thinking level was selected (with the previous one).",
  ),
  model_select: spec("agent", "notify", "report", "A model was selected (set, cycle or restore)."),
  cache_warming_decision: spec(
    "agent",
    "lastWins",
    "report",
    "Override an idle prompt-cache refresh with `warm` or `stop`; the last handler returning an action wins.",
  ),

  // providers
  before_provider_request: spec(
    "provider",
    "transform",
    "report",
    "The provider payload before it is sent; a returned value replaces it.",
  ),
  before_provider_headers: spec(
    "provider",
    "transform",
    "report",
    "Request headers: mutate in place (`null` deletes) or return a replacement.",
  ),
  after_provider_response: spec(
    "provider",
    "notify",
    "report",
    "The provider answered (status and headers).",
  ),
  provider_stream_event: spec(
    "provider",
    "notify",
    "report",
    "Each parsed provider stream event before normalisation; read-only, awaited in stream order.",
    { hot: true },
  ),

  // messages
  message_start: spec("message", "notify", "report", "A message started.", {
    wire: "json",
    fields: ["message"],
  }),
  message_update: spec(
    "message",
    "notify",
    "report",
    "An assistant message emitted a content-block update.",
    {
      hot: true,
      wire: "json",
      fields: ["usage", "assistantMessageEvent"],
    },
  ),
  message_end: spec(
    "message",
    "transform",
    "report",
    "A message is final; a handler may replace it with a message of the same role.",
    { wire: "json", fields: ["message"] },
  ),

  // tools
  tool_call: spec(
    "tool",
    "gate",
    "fail-closed",
    "Before a tool runs: mutate `input` in place or block; a throwing handler blocks the call.",
  ),
  tool_result: spec(
    "tool",
    "transform",
    "report",
    "After a tool ran (errored ones too): patches of content, details, isError and structuredContent compose.",
  ),
  tool_execution_start: spec("tool", "notify", "report", "Tool execution started.", {
    wire: "json",
    fields: ["toolCallId", "toolName", "args", "parentToolCallId"],
  }),
  tool_execution_update: spec("tool", "notify", "report", "A tool reported a partial result.", {
    hot: true,
    wire: "json",
    fields: ["toolCallId", "toolName", "args", "partialResult", "parentToolCallId"],
  }),
  tool_execution_end: spec("tool", "notify", "report", "Tool execution finished.", {
    wire: "json",
    fields: ["toolCallId", "toolName", "result", "isError", "durationMs", "parentToolCallId"],
  }),

  // compaction and retries
  compaction_start: spec(
    "compaction",
    "notify",
    "report",
    "Compaction began (manual, threshold, overflow).",
    {
      wire: "json",
      fields: ["reason"],
    },
  ),
  compaction_end: spec(
    "compaction",
    "notify",
    "report",
    "Compaction ended with a result, an abort or an error.",
    {
      wire: "json",
      fields: ["reason", "result", "aborted", "willRetry", "errorMessage"],
    },
  ),
  auto_retry_start: spec("retry", "notify", "report", "A retryable provider error; a retry is scheduled.", {
    wire: "json",
    fields: ["attempt", "maxAttempts", "delayMs", "errorMessage"],
  }),
  auto_retry_end: spec("retry", "notify", "report", "Retrying ended in success or a final error.", {
    wire: "json",
    fields: ["success", "attempt", "finalError"],
  }),
  summarization_retry_scheduled: spec(
    "retry",
    "notify",
    "report",
    "A compaction or branch summary will be retried.",
    {
      wire: "json",
      fields: ["attempt", "maxAttempts", "delayMs", "errorMessage"],
    },
  ),
  summarization_retry_attempt_start: spec(
    "retry",
    "notify",
    "report",
    "A summarisation retry attempt started.",
    {
      wire: "json",
      fields: ["source", "reason"],
    },
  ),
  summarization_retry_finished: spec("retry", "notify", "report", "Summarisation retries finished.", {
    wire: "json",
    fields: [],
  }),

  // UI and host
  ui_prompt_start: spec("ui", "notify", "report", "A dialog opened."),
  ui_prompt_end: spec("ui", "notify", "report", "A dialog closed."),
  bash_execution_update: spec("host", "notify", "report", "Output chunk of a direct RPC `bash` command.", {
    wire: "rpc",
    fields: ["id", "delta"],
    hot: true,
  }),
  extension_error: spec(
    "host",
    "notify",
    "report",
    "An extension handler threw. Errors in handlers of this event go to stderr, never back to this event.",
    { wire: "rpc", fields: ["extensionPath", "event", "error"] },
  ),
});

export const eventNames = Object.freeze(Object.keys(eventCatalog) as ExtensionEventName[]);

export function isEventName(name: string): name is ExtensionEventName {
  return Object.hasOwn(eventCatalog, name);
}

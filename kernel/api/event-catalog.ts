/**
 * The event catalogue: the one place every event is declared, with its kind and error policy. It is `as const`, so
 * the hook bus types each dispatch from it (a notify event cannot be gated, a payload must match the event).
 * docs/events.md is generated from it together with the descriptions on `ExtensionEvents` (kernel/api/events.ts)
 * and the wire table of the JSON stream (plugins/kit/wire); the conformance suite iterates it. The shapes that
 * transform and lastWins handlers may return are declared in plugins/kit/event-returns.ts and checked by the bus.
 */
import type { ExtensionEventName } from "./events.js";
import type { ExtensionOrigin } from "./extension-api.js";

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

export interface EventSpec<K extends EventKind = EventKind> {
  readonly kind: K;
  readonly errorPolicy: ErrorPolicy;
  readonly family: EventFamily;
  /** Dispatched often (per stream delta): emitters skip building the payload when nobody listens. */
  readonly hot?: boolean;
  /** When set, only extensions of these origins may subscribe. */
  readonly participants?: readonly ExtensionOrigin[];
  /** Declared for a feature that does not emit it yet (named here); handlers may subscribe already. */
  readonly reserved?: string;
}

const ev = <K extends EventKind>(
  family: EventFamily,
  kind: K,
  errorPolicy: ErrorPolicy,
  extra: Pick<EventSpec, "hot" | "participants" | "reserved"> = {},
): EventSpec<K> => Object.freeze({ family, kind, errorPolicy, ...extra });

export const eventCatalog = Object.freeze({
  // resources
  project_trust: ev("resources", "gate", "fail-closed", { participants: ["user", "cli"] }),
  resources_discover: ev("resources", "transform", "report"),
  mcp_servers_change: ev("resources", "notify", "report"),
  // session
  session_start: ev("session", "notify", "propagate"),
  session_shutdown: ev("session", "notify", "report"),
  session_info_changed: ev("session", "notify", "report"),
  session_before_switch: ev("session", "gate", "fail-closed"),
  session_before_fork: ev("session", "gate", "fail-closed"),
  session_before_compact: ev("session", "gate", "fail-closed"),
  session_compact: ev("session", "notify", "report"),
  session_compact_failed: ev("session", "notify", "report"),
  session_before_tree: ev("session", "gate", "fail-closed"),
  session_tree: ev("session", "notify", "report"),
  // input
  input: ev("input", "transform", "report"),
  user_bash: ev("input", "gate", "fail-closed"),
  // agent
  before_agent_start: ev("agent", "transform", "report"),
  agent_start: ev("agent", "notify", "report"),
  agent_end: ev("agent", "notify", "report"),
  agent_before_settle: ev("agent", "boundary", "report"),
  agent_settled: ev("agent", "notify", "report"),
  turn_start: ev("agent", "notify", "report"),
  turn_end: ev("agent", "boundary", "report"),
  context: ev("agent", "transform", "report"),
  context_with_system: ev("agent", "transform", "report"),
  queue_update: ev("agent", "notify", "report"),
  // session
  entry_appended: ev("session", "notify", "report"),
  // agent
  thinking_level_changed: ev("agent", "notify", "report"),
  thinking_level_select: ev("agent", "notify", "report"),
  model_select: ev("agent", "notify", "report"),
  cache_warming_decision: ev("agent", "lastWins", "report"),
  // provider
  before_provider_request: ev("provider", "transform", "report"),
  before_provider_headers: ev("provider", "transform", "report"),
  after_provider_response: ev("provider", "notify", "report"),
  provider_stream_event: ev("provider", "notify", "report", { hot: true }),
  // message
  message_start: ev("message", "notify", "report"),
  message_update: ev("message", "notify", "report", { hot: true }),
  message_end: ev("message", "transform", "report"),
  // tool
  tool_call: ev("tool", "gate", "fail-closed"),
  tool_result: ev("tool", "transform", "report"),
  tool_execution_start: ev("tool", "notify", "report"),
  tool_execution_update: ev("tool", "notify", "report", { hot: true }),
  tool_execution_end: ev("tool", "notify", "report"),
  // compaction
  compaction_start: ev("compaction", "notify", "report"),
  compaction_end: ev("compaction", "notify", "report"),
  // retry
  auto_retry_start: ev("retry", "notify", "report"),
  auto_retry_end: ev("retry", "notify", "report"),
  summarization_retry_scheduled: ev("retry", "notify", "report"),
  summarization_retry_attempt_start: ev("retry", "notify", "report"),
  summarization_retry_finished: ev("retry", "notify", "report"),
  // ui
  ui_prompt_start: ev("ui", "notify", "report"),
  ui_prompt_end: ev("ui", "notify", "report"),
  // host
  bash_execution_update: ev("host", "notify", "report", { hot: true }),
  extension_error: ev("host", "notify", "report"),
}) satisfies Readonly<Record<ExtensionEventName, EventSpec>>;

export type EventCatalog = typeof eventCatalog;

/** The events dispatched with a given kind, e.g. `EventsOfKind<"gate">`. */
export type EventsOfKind<K extends EventKind> = {
  [E in ExtensionEventName]: EventCatalog[E]["kind"] extends K ? E : never;
}[ExtensionEventName];

export const eventNames = Object.freeze(Object.keys(eventCatalog) as ExtensionEventName[]);

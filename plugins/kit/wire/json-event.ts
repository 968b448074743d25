/**
 * The wire form of session events (json.md), shared by JSON and RPC mode: each event carries exactly the fields
 * the wire table lists for it, and `message_update` is delta-only (no cumulative `message`, no `partial` snapshot;
 * `toolcall_start` gains the call's `id` and `toolName`), so the stream grows linearly with the response.
 * The kernel's catalogue knows nothing of the wire: this table is the projection, and docs/events.md shows it.
 */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  ExtensionEventName,
  ExtensionEvents,
  SessionStreamEvent,
  Usage,
} from "../../../kernel/index.js";

/** The events that go on the wire (the keys of `wireEvents`, checked below). */
export type WireEventName =
  | "session_info_changed"
  | "agent_start"
  | "agent_end"
  | "agent_settled"
  | "turn_start"
  | "turn_end"
  | "queue_update"
  | "entry_appended"
  | "thinking_level_changed"
  | "message_start"
  | "message_update"
  | "message_end"
  | "tool_execution_start"
  | "tool_execution_update"
  | "tool_execution_end"
  | "compaction_start"
  | "compaction_end"
  | "auto_retry_start"
  | "auto_retry_end"
  | "summarization_retry_scheduled"
  | "summarization_retry_attempt_start"
  | "summarization_retry_finished"
  | "bash_execution_update"
  | "extension_error";

/** A session event as the SDK delivers it: its `type` and its payload (cumulative snapshots included). */
export type AgentSessionEvent = {
  [K in WireEventName]: { type: K } & ExtensionEvents[K]["event"];
}[WireEventName];

type WithoutPartial<T> = T extends { partial: unknown } ? Omit<T, "partial"> : T;

/** An assistant stream event as `message_update` carries it: no `partial`; `toolcall_start` names the call. */
export type JsonAssistantMessageEvent<T> = T extends { type: "toolcall_start"; partial: unknown }
  ? WithoutPartial<T> & { id: string; toolName: string }
  : WithoutPartial<T>;

/** One JSON-stream (and RPC) event record, as json.md defines the union. */
export type JsonAgentSessionEvent =
  | Exclude<AgentSessionEvent, { type: "message_update" }>
  | {
      type: "message_update";
      usage: Usage;
      assistantMessageEvent: JsonAssistantMessageEvent<AssistantMessageEvent>;
    };

export interface WireSpec {
  /** `json`: written to the JSON event stream (and so also to RPC); `rpc`: only to RPC. */
  readonly stream: "json" | "rpc";
  /** The fields a record carries (json.md), in order; anything else stays in-process. */
  readonly fields: readonly string[];
  /** When a field is left out, for json.md's table. */
  readonly note?: string;
}

const NESTED = "`parentToolCallId` only for nested `ctx.executeTool()` calls.";

/** The events that go on the wire, with their fields. Events not listed stay in-process. */
export const wireEvents: Readonly<Partial<Record<ExtensionEventName, WireSpec>>> = Object.freeze({
  session_info_changed: {
    stream: "json",
    fields: ["name"],
    note: "`name` is absent when the name was cleared.",
  },
  agent_start: { stream: "json", fields: [] },
  agent_end: { stream: "json", fields: ["messages", "willRetry"] },
  agent_settled: { stream: "json", fields: ["aborted"] },
  turn_start: { stream: "json", fields: [] },
  turn_end: { stream: "json", fields: ["message", "toolResults"] },
  queue_update: { stream: "json", fields: ["steering", "followUp"] },
  entry_appended: { stream: "json", fields: ["entry"] },
  thinking_level_changed: { stream: "json", fields: ["level"] },
  message_start: { stream: "json", fields: ["message"] },
  message_update: { stream: "json", fields: ["usage", "assistantMessageEvent"] },
  message_end: { stream: "json", fields: ["message"] },
  tool_execution_start: {
    stream: "json",
    fields: ["toolCallId", "toolName", "args", "parentToolCallId"],
    note: NESTED,
  },
  tool_execution_update: {
    stream: "json",
    fields: ["toolCallId", "toolName", "args", "partialResult", "parentToolCallId"],
    note: NESTED,
  },
  tool_execution_end: {
    stream: "json",
    fields: ["toolCallId", "toolName", "result", "isError", "durationMs", "parentToolCallId"],
    note: `\`durationMs\` is absent when the tool did not run. ${NESTED}`,
  },
  compaction_start: { stream: "json", fields: ["reason"] },
  compaction_end: {
    stream: "json",
    fields: ["reason", "result", "aborted", "willRetry", "errorMessage"],
    note: "`result` only on success, `errorMessage` only on failure; `willRetry` when an overflowed request follows.",
  },
  auto_retry_start: {
    stream: "json",
    fields: ["attempt", "maxAttempts", "delayMs", "errorMessage"],
    note: "`attempt` numbers the retry (1 for the first) of at most `maxAttempts`.",
  },
  auto_retry_end: {
    stream: "json",
    fields: ["success", "attempt", "finalError"],
    note: "`attempt` counts the attempts that ran, the first request included; `finalError` only on failure.",
  },
  summarization_retry_scheduled: {
    stream: "json",
    fields: ["attempt", "maxAttempts", "delayMs", "errorMessage"],
  },
  summarization_retry_attempt_start: {
    stream: "json",
    fields: ["source", "reason"],
    note: '`reason` only for `source: "compaction"`.',
  },
  summarization_retry_finished: { stream: "json", fields: [] },
  bash_execution_update: { stream: "rpc", fields: ["id", "delta"] },
  extension_error: { stream: "rpc", fields: ["extensionPath", "event", "error"] },
} satisfies Record<WireEventName, WireSpec>);

/** The JSON-stream record for an event, or undefined for events that stay in-process. */
export function toJsonEvent(
  event: SessionStreamEvent,
  options: { rpc?: boolean } = {},
): JsonAgentSessionEvent | undefined {
  const spec = Object.hasOwn(wireEvents, event.type)
    ? wireEvents[event.type as ExtensionEventName]
    : undefined;
  if (!spec || (spec.stream === "rpc" && !options.rpc)) return undefined;
  if (event.type === "message_update") return messageUpdate(event);
  const record: Record<string, unknown> = { type: event.type };
  for (const field of spec.fields) if (event[field] !== undefined) record[field] = event[field];
  return record as JsonAgentSessionEvent;
}

function messageUpdate(event: SessionStreamEvent): JsonAgentSessionEvent {
  const { partial, ...rest } = event.assistantMessageEvent as {
    type: string;
    contentIndex?: number;
    partial?: AssistantMessage;
  };
  const wire: Record<string, unknown> = { ...rest };
  if (rest.type === "toolcall_start" && partial && rest.contentIndex !== undefined) {
    const block = partial.content[rest.contentIndex];
    if (block?.type === "toolCall") {
      wire.id = block.id;
      wire.toolName = block.name;
    }
  }
  return {
    type: "message_update",
    usage: event.usage as Usage,
    assistantMessageEvent: wire as JsonAssistantMessageEvent<AssistantMessageEvent>,
  };
}

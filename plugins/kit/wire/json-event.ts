/**
 * The wire form of session events (json.md), shared by JSON and RPC mode: each event carries exactly the fields
 * the wire table lists for it, and `message_update` is delta-only (no cumulative `message`, no `partial` snapshot;
 * `toolcall_start` gains the call's `id` and `toolName`), so the stream grows linearly with the response.
 * The kernel's catalogue knows nothing of the wire: this table is the projection, and docs/events.md shows it.
 */
import type { AssistantMessage, ExtensionEventName, SessionStreamEvent } from "../../../kernel/index.js";

export type JsonAgentSessionEvent = SessionStreamEvent;

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
});

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
  const record: JsonAgentSessionEvent = { type: event.type };
  for (const field of spec.fields) if (event[field] !== undefined) record[field] = event[field];
  return record;
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
  return { type: "message_update", usage: event.usage, assistantMessageEvent: wire };
}

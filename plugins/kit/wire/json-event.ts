/**
 * The wire form of session events (json.md), shared by JSON and RPC mode: each event carries exactly the fields
 * the catalogue lists for it, and `message_update` is delta-only (no cumulative `message`, no `partial` snapshot;
 * `toolcall_start` gains the call's `id` and `toolName`), so the stream grows linearly with the response.
 */
import type { AssistantMessage, SessionStreamEvent } from "../../../kernel/index.js";
import { eventCatalog } from "../../../kernel/index.js";

export type JsonAgentSessionEvent = SessionStreamEvent;

/** The JSON-stream record for an event, or undefined for events that stay in-process. */
export function toJsonEvent(
  event: SessionStreamEvent,
  options: { rpc?: boolean } = {},
): JsonAgentSessionEvent | undefined {
  const spec = Object.hasOwn(eventCatalog, event.type)
    ? eventCatalog[event.type as keyof typeof eventCatalog]
    : undefined;
  if (!spec?.wire || (spec.wire === "rpc" && !options.rpc)) return undefined;
  if (event.type === "message_update") return messageUpdate(event);
  const record: JsonAgentSessionEvent = { type: event.type };
  for (const field of spec.fields ?? []) if (event[field] !== undefined) record[field] = event[field];
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

/**
 * Type-level checks of `JsonAgentSessionEvent` (json.md's union), compiled by `npm run typecheck` (not run by
 * mocha): a record narrows by `type` to its fields; `message_update` has no `partial`, and `toolcall_start` names
 * the call.
 */
import type { JsonAgentSessionEvent, ToolResult, Usage } from "@knightcodeai/cli";

export function recordsNarrowByType(record: JsonAgentSessionEvent): string {
  switch (record.type) {
    case "message_update": {
      const usage: Usage = record.usage;
      const event = record.assistantMessageEvent;
      // @ts-expect-error the wire form leaves the cumulative snapshot out
      void event.partial;
      if (event.type === "toolcall_start") return `${event.id} ${event.toolName} ${usage.totalTokens}`;
      if (event.type === "text_delta") return event.delta;
      return event.type;
    }
    case "tool_execution_end": {
      const result: ToolResult = record.result;
      return `${record.toolName}: ${record.isError} ${result.content.length}`;
    }
    case "agent_settled":
      return String(record.aborted);
    case "compaction_end":
      return record.errorMessage ?? record.reason;
    default:
      // @ts-expect-error a type json.md does not define is not a record
      return record.type === "no_such_event" ? "" : record.type;
  }
}

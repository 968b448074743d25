/** Turns session messages into what providers receive. */
import type { AgentMessage, LlmMessage } from "../../kernel/index.js";

/**
 * Custom messages become user messages (their content goes to the model); assistant messages that failed or were
 * aborted before producing anything are left out, since providers reject empty assistant turns and a retry
 * repeats the request anyway.
 */
export function toLlmMessages(messages: readonly AgentMessage[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "custom":
        out.push({ role: "user", content: message.content, timestamp: message.timestamp });
        break;
      case "assistant":
        if (
          (message.stopReason === "error" || message.stopReason === "aborted") &&
          message.content.length === 0
        )
          break;
        out.push(message);
        break;
      default:
        out.push(message);
    }
  }
  return out;
}

/** The text of a user or custom message, for queues and previews. */
export function messageText(message: AgentMessage): string {
  const content = "content" in message ? message.content : [];
  if (typeof content === "string") return content;
  return content
    .map((c) => (c.type === "text" ? c.text : ""))
    .filter(Boolean)
    .join("\n");
}

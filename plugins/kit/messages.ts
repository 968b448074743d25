/** Session messages as providers receive them, and as plain text for a summarising prompt. */
import type { AgentMessage, LlmMessage } from "../../kernel/index.js";

/**
 * Custom messages become user messages (their content goes to the model); assistant messages that failed or were
 * aborted before producing anything are left out, since providers reject empty assistant turns and a retry
 * repeats the request anyway. The agent loop sends exactly this.
 */
export function convertToLlm(messages: readonly AgentMessage[]): LlmMessage[] {
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

function textOf(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content
    .filter((c) => c.type === "text" && typeof c.text === "string")
    .map((c) => c.text)
    .join("");
}

/**
 * A conversation as labelled plain text (`[User]: …`, `[Assistant]: …`, `[Assistant thinking]: …`,
 * `[Assistant tool calls]: name(arg=value)`, `[Tool result]: …`), one paragraph per part, for a prompt that asks a
 * model to summarise or hand off a conversation without replaying it as turns. `maxToolResultChars` shortens each tool
 * result (the part a summary needs least of and a conversation has most of), marking what it left out.
 */
export function serializeConversation(
  messages: readonly AgentMessage[],
  options: { maxToolResultChars?: number } = {},
): string {
  const limit = options.maxToolResultChars ?? Number.POSITIVE_INFINITY;
  const parts: string[] = [];
  for (const message of convertToLlm(messages)) {
    if (message.role === "user") {
      const text = textOf(message.content);
      if (text) parts.push(`[User]: ${text}`);
    } else if (message.role === "assistant") {
      const thinking: string[] = [];
      const text: string[] = [];
      const calls: string[] = [];
      for (const block of message.content) {
        if (block.type === "thinking") thinking.push(block.thinking);
        else if (block.type === "text") text.push(block.text);
        else if (block.type === "toolCall") {
          const args = Object.entries(block.arguments ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
          calls.push(`${block.name}(${args.join(", ")})`);
        }
      }
      if (thinking.length) parts.push(`[Assistant thinking]: ${thinking.join("\n")}`);
      if (text.length) parts.push(`[Assistant]: ${text.join("\n")}`);
      if (calls.length) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    } else {
      const text = textOf(message.content);
      if (text.length > limit) {
        parts.push(
          `[Tool result]: ${text.slice(0, limit)}\n[… ${text.length - limit} more characters left out]`,
        );
      } else if (text) parts.push(`[Tool result]: ${text}`);
    }
  }
  return parts.join("\n\n");
}

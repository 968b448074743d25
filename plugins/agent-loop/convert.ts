/** Builds the messages the loop records, and turns session messages into what providers receive. */
import type {
  AgentMessage,
  CustomMessage,
  ImageContent,
  LlmMessage,
  SendMessageInput,
  TextContent,
  UserMessage,
} from "../../kernel/index.js";

export type MessageContent = string | (TextContent | ImageContent)[];

export function userMessage(content: MessageContent): UserMessage {
  return { role: "user", content, timestamp: Date.now() };
}

/** A prompt's text with its images, if any, as one user message. */
export function promptMessage(text: string, images?: ImageContent[]): UserMessage {
  return userMessage(images && images.length > 0 ? [{ type: "text", text }, ...images] : text);
}

/** The message an extension sends (`sendMessage`, a `before_agent_start` result, a boundary draft). */
export function customMessage(input: SendMessageInput): CustomMessage {
  return {
    role: "custom",
    customType: input.customType,
    content: input.content,
    display: input.display ?? true,
    ...(input.details !== undefined ? { details: input.details } : {}),
    timestamp: Date.now(),
  };
}

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

/** Builds the messages the loop records, and turns session messages into what providers receive. */
import type {
  AgentMessage,
  CustomMessage,
  ImageContent,
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
    ...(input.view !== undefined ? { view: input.view } : {}),
    timestamp: Date.now(),
  };
}

/** What providers receive (the kit's `convertToLlm`, which extensions use too). */
export { convertToLlm as toLlmMessages } from "../kit/messages.js";

/** The text of a user or custom message, for queues and previews. */
export function messageText(message: AgentMessage): string {
  const content = "content" in message ? message.content : [];
  if (typeof content === "string") return content;
  return content
    .map((c) => (c.type === "text" ? c.text : ""))
    .filter(Boolean)
    .join("\n");
}

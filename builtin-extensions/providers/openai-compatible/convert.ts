/**
 * Builds the Chat Completions request body from a provider request: the system prompt, the conversation in the
 * API's message format, the tools, the token limit and the reasoning effort.
 *
 * Thinking blocks are not sent back unless compat `requiresReasoningContentOnAssistantMessages` asks for them (as
 * `reasoning_content`): Chat Completions has no standard field for them, and servers differ (some reject
 * `reasoning_content` on input). Tool calls that never got a result (an aborted turn) get a short
 * synthetic result, because the API rejects an assistant `tool_calls` message that no `tool` message answers.
 */
import type {
  AssistantMessage,
  ImageContent,
  LlmMessage,
  ProviderStreamRequest,
  TextContent,
  ThinkingContent,
  ThinkingLevel,
  ToolDeclaration,
  ToolResultMessage,
} from "@knightcodeai/cli/kit";
import type { ResolvedCompat } from "./compat.js";
import { thinkingFields } from "./thinking.js";

export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system" | "developer"; content: string }
  | { role: "user"; content: string | ContentPart[] }
  | { role: "assistant"; content: string; tool_calls?: ChatToolCall[]; reasoning_content?: string }
  | { role: "tool"; tool_call_id: string; content: string; name?: string };

export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: unknown };
}

export type ReasoningEffort = "minimal" | "low" | "medium" | "high";

export interface ChatCompletionsPayload {
  model: string;
  messages: ChatMessage[];
  stream: true;
  stream_options?: { include_usage: true };
  store?: false;
  max_completion_tokens?: number;
  max_tokens?: number;
  temperature?: number;
  tools?: ChatTool[];
  tool_choice?: { type: "function"; function: { name: string } };
  reasoning_effort?: string;
  [key: string]: unknown;
}

/** Text a tool result without text is sent as (the API's tool messages carry text only). */
export const NO_TEXT_RESULT = "(the tool returned no text)";
/** The result sent for a tool call that has none in the history. */
export const MISSING_RESULT = "No result was recorded for this tool call (the turn was interrupted).";
/** What requiresAssistantAfterToolResult puts between a tool result and a user message. */
export const BRIDGE_TEXT = "I have processed the tool results.";

/**
 * The classic mapping (a model without compat.thinkingLevelMap gets the same from thinking.ts): `xhigh` has no
 * Chat Completions value, `high` is the closest; `off` sends nothing.
 */
export function reasoningEffort(level: ThinkingLevel | undefined): ReasoningEffort | undefined {
  switch (level) {
    case "minimal":
    case "low":
    case "medium":
    case "high":
      return level;
    case "xhigh":
      return "high";
    default:
      return undefined;
  }
}

function imagePart(image: ImageContent): ContentPart {
  return { type: "image_url", image_url: { url: `data:${image.mimeType};base64,${image.data}` } };
}

function userContent(content: string | (TextContent | ImageContent)[]): string | ContentPart[] {
  if (typeof content === "string") return content;
  if (content.every((part) => part.type === "text")) return content.map((part) => part.text).join("\n");
  return content.map((part) => (part.type === "text" ? { type: "text", text: part.text } : imagePart(part)));
}

function assistantMessage(
  message: AssistantMessage,
  reasoningContent: boolean,
): Extract<ChatMessage, { role: "assistant" }> | undefined {
  const text = message.content
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("");
  const toolCalls: ChatToolCall[] = [];
  for (const block of message.content) {
    if (block.type !== "toolCall") continue;
    toolCalls.push({
      id: block.id,
      type: "function",
      function: { name: block.name, arguments: JSON.stringify(block.arguments ?? {}) },
    });
  }
  // Servers reject an assistant message with neither content nor tool calls (a thinking-only or empty answer).
  if (!text && toolCalls.length === 0) return undefined;
  const converted: Extract<ChatMessage, { role: "assistant" }> =
    toolCalls.length > 0
      ? { role: "assistant", content: text, tool_calls: toolCalls }
      : { role: "assistant", content: text };
  if (reasoningContent) {
    converted.reasoning_content = message.content
      .filter((block): block is ThinkingContent => block.type === "thinking" && !block.redacted)
      .map((block) => block.thinking)
      .join("\n");
  }
  return converted;
}

/** Converts the conversation, in order; images of tool results follow the batch's tool messages as a user message. */
export function convertMessages(
  request: Pick<ProviderStreamRequest, "systemPrompt" | "messages" | "model">,
  compat: ResolvedCompat,
): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (request.systemPrompt) {
    const developer = compat.supportsDeveloperRole && request.model.reasoning;
    out.push({ role: developer ? "developer" : "system", content: request.systemPrompt });
  }
  // Tool calls of the last assistant message still waiting for their result, and the results' images.
  let pending: ChatToolCall[] = [];
  let images: ImageContent[] = [];
  let lastRole: LlmMessage["role"] | undefined;
  const closeBatch = () => {
    for (const call of pending) {
      out.push({
        role: "tool",
        tool_call_id: call.id,
        content: MISSING_RESULT,
        ...(compat.requiresToolResultName ? { name: call.function.name } : {}),
      });
    }
    pending = [];
    if (images.length > 0) {
      out.push({
        role: "user",
        content: [
          { type: "text", text: "Images returned by the tool results above:" },
          ...images.map(imagePart),
        ],
      });
      images = [];
    }
  };
  const toolMessage = (message: ToolResultMessage) => {
    const text = message.content
      .filter((part): part is TextContent => part.type === "text")
      .map((part) => part.text)
      .join("\n");
    images.push(...message.content.filter((part): part is ImageContent => part.type === "image"));
    pending = pending.filter((call) => call.id !== message.toolCallId);
    out.push({
      role: "tool",
      tool_call_id: message.toolCallId,
      content: text || NO_TEXT_RESULT,
      ...(compat.requiresToolResultName ? { name: message.toolName } : {}),
    });
  };
  for (const message of request.messages) {
    if (message.role === "toolResult") {
      toolMessage(message);
      lastRole = message.role;
      continue;
    }
    closeBatch();
    if (message.role === "user") {
      if (compat.requiresAssistantAfterToolResult && lastRole === "toolResult") {
        out.push({ role: "assistant", content: BRIDGE_TEXT });
      }
      out.push({ role: "user", content: userContent(message.content) });
    } else {
      const converted = assistantMessage(
        message,
        compat.requiresReasoningContentOnAssistantMessages && request.model.reasoning,
      );
      if (!converted) continue;
      out.push(converted);
      pending = [...(converted.tool_calls ?? [])];
    }
    lastRole = message.role;
  }
  closeBatch();
  return out;
}

export function convertTools(tools: readonly ToolDeclaration[]): ChatTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/** The request body, before `before_provider_request` handlers see it. */
export function buildPayload(request: ProviderStreamRequest, compat: ResolvedCompat): ChatCompletionsPayload {
  const payload: ChatCompletionsPayload = {
    model: request.model.id,
    messages: convertMessages(request, compat),
    stream: true,
  };
  if (compat.supportsUsageInStreaming) payload.stream_options = { include_usage: true };
  if (compat.supportsStore) payload.store = false;
  const maxTokens = request.maxTokens ?? request.model.maxTokens;
  if (maxTokens) payload[compat.maxTokensField] = maxTokens;
  if (request.temperature !== undefined) payload.temperature = request.temperature;
  if (request.tools.length > 0) {
    payload.tools = convertTools(request.tools);
    if (compat.zaiToolStream) payload.tool_stream = true;
  }
  if (request.toolChoice) {
    payload.tool_choice = { type: "function", function: { name: request.toolChoice.name } };
  }
  // A level map given on the model (a models.json model's `thinkingLevelMap`) counts where the compat has none.
  const levels =
    compat.thinkingLevelMap || !request.thinkingLevelMap
      ? compat
      : { ...compat, thinkingLevelMap: request.thinkingLevelMap };
  Object.assign(payload, thinkingFields(request.thinkingLevel, request.model.reasoning, levels));
  return payload;
}

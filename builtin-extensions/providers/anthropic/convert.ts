/**
 * Builds the Messages API request body from a provider request: system prompt, messages, tools, tool choice,
 * thinking and prompt-cache markers. Pure functions, no SDK needed.
 */
import type {
  AssistantMessage,
  ImageContent,
  LlmMessage,
  ProviderStreamRequest,
  TextContent,
  ThinkingLevel,
  ToolResultMessage,
} from "@knightcodeai/cli/kit";
import { SafeCallIds } from "@knightcodeai/cli/kit";
import { type ClaudeTraits, claudeTraits } from "./models.js";

type Level = Exclude<ThinkingLevel, "off">;

/** `budget_tokens` per thinking level, for models with budget ("extended") thinking. */
export const THINKING_BUDGETS: Readonly<Record<Level, number>> = {
  minimal: 1024,
  low: 4096,
  medium: 10240,
  high: 20480,
  xhigh: 32000,
};

/** `output_config.effort` per thinking level, for models with adaptive thinking. */
export const THINKING_EFFORT: Readonly<Record<Level, "low" | "medium" | "high" | "xhigh">> = {
  minimal: "low",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
};

/** The least the API accepts as a thinking budget, and what a budget leaves for the answer when raised. */
const MIN_BUDGET = 1024;
const ANSWER_TOKENS = 4096;

const CACHE = { type: "ephemeral" } as const;

export type CacheControl = { cache_control?: typeof CACHE };
export type TextBlockParam = { type: "text"; text: string } & CacheControl;
export type ImageBlockParam = {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
} & CacheControl;
export type ToolResultBlockParam = {
  type: "tool_result";
  tool_use_id: string;
  content?: (TextBlockParam | ImageBlockParam)[];
  is_error?: boolean;
} & CacheControl;
export type UserBlockParam = TextBlockParam | ImageBlockParam | ToolResultBlockParam;
export type AssistantBlockParam =
  | TextBlockParam
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };
export type MessageParam =
  | { role: "user"; content: UserBlockParam[] }
  | { role: "assistant"; content: AssistantBlockParam[] };

export interface AnthropicPayload {
  model: string;
  max_tokens: number;
  system?: TextBlockParam[];
  messages: MessageParam[];
  tools?: { name: string; description: string; input_schema: unknown }[];
  tool_choice?: { type: "tool"; name: string } | { type: "auto" };
  temperature?: number;
  thinking?:
    | { type: "enabled"; budget_tokens: number }
    | { type: "adaptive"; display: "summarized" }
    | { type: "disabled" }
    | { type: "between_tools" };
  output_config?: { effort: string };
  stream: true;
}

/** The request body for a provider request (before `before_provider_request` handlers see it). */
export function buildPayload(request: ProviderStreamRequest): AnthropicPayload {
  const { model } = request;
  const compat = request.compat ?? {};
  const traits = claudeTraits(model, compat);
  const cache = compat.cacheControl !== false;
  const payload: AnthropicPayload = {
    model: model.id,
    max_tokens: request.maxTokens ?? model.maxTokens,
    messages: convertMessages(request.messages, {
      provider: model.provider,
      api: model.api,
      allowEmptySignature: compat.allowEmptySignature === true,
    }),
    stream: true,
  };
  if (request.systemPrompt.trim()) {
    payload.system = [
      { type: "text", text: request.systemPrompt, ...(cache ? { cache_control: CACHE } : {}) },
    ];
  }
  if (cache) markLastUserMessage(payload.messages);
  if (request.tools.length > 0) {
    payload.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: toJson(tool.parameters),
    }));
  }
  if (request.toolChoice) {
    // A forced tool and thinking do not go together; models that refuse a forced tool get "auto" with the tool.
    if (traits.forcedToolChoice) {
      payload.tool_choice = { type: "tool", name: request.toolChoice.name };
      if (traits.thinking === "adaptive" && traits.thinkingOff === "disabled") {
        payload.thinking = { type: "disabled" };
      }
    } else payload.tool_choice = { type: "auto" };
  }
  if (payload.tool_choice?.type !== "tool") applyThinking(payload, request, traits);
  // The API takes no temperature but the default while the model thinks.
  const thinks = payload.thinking?.type === "enabled" || payload.thinking?.type === "adaptive";
  if (request.temperature !== undefined && traits.sampling && !thinks)
    payload.temperature = request.temperature;
  return payload;
}

function applyThinking(
  payload: AnthropicPayload,
  request: ProviderStreamRequest,
  traits: ClaudeTraits,
): void {
  const { model } = request;
  const level = request.thinkingLevel && request.thinkingLevel !== "off" ? request.thinkingLevel : undefined;
  if (!model.reasoning) return;
  if (traits.thinking === "adaptive") {
    if (level) {
      // The newest models omit the thinking text by default; "summarized" returns it.
      payload.thinking = { type: "adaptive", display: "summarized" };
      // A model's level map (Copilot's Claude models have one) names the effort: `max` where the session asked for it.
      const mapped = request.thinkingLevelMap?.[level];
      payload.output_config = {
        effort: typeof mapped === "string" && mapped ? mapped : THINKING_EFFORT[level],
      };
    } else if (traits.thinkingOff) payload.thinking = { type: traits.thinkingOff };
    else payload.thinking = { type: "adaptive", display: "summarized" }; // always on: at least show it
    return;
  }
  // Off is said, not left to the model's default (MiniMax's models think unless told not to), as pi does.
  if (!level) {
    payload.thinking = { type: "disabled" };
    return;
  }
  let budget = THINKING_BUDGETS[level];
  // budget_tokens must be below max_tokens: raise max_tokens (within the model's limit), then cut the budget.
  if (payload.max_tokens <= budget) {
    payload.max_tokens = Math.max(payload.max_tokens, Math.min(model.maxTokens, budget + ANSWER_TOKENS));
  }
  if (budget >= payload.max_tokens)
    budget = payload.max_tokens - Math.min(ANSWER_TOKENS, payload.max_tokens / 2);
  budget = Math.floor(budget);
  if (budget < MIN_BUDGET) return; // too few tokens to think at all
  payload.thinking = { type: "enabled", budget_tokens: budget };
}

/** The prompt-cache breakpoint on the last block of the last user message, so the growing prefix is cached. */
function markLastUserMessage(messages: MessageParam[]): void {
  const last = messages.findLast((m) => m.role === "user");
  const block = last?.content.at(-1);
  if (block) block.cache_control = CACHE;
}

/**
 * Converts the conversation. Thinking blocks go back only to the provider that signed them (with their
 * signature, or as `redacted_thinking`); unsigned or foreign ones are dropped, their message's text kept (unsigned
 * ones go back with an empty signature when `allowEmptySignature`). Tool
 * calls without a result (an aborted turn) and results without a call are dropped, since the API refuses both.
 * Consecutive tool results become one user message, with any user text after them.
 */
export function convertMessages(
  messages: readonly LlmMessage[],
  source: { provider: string; api: string; allowEmptySignature?: boolean },
): MessageParam[] {
  const callIds = new Set<string>();
  const resultIds = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant")
      for (const block of message.content) if (block.type === "toolCall") callIds.add(block.id);
    if (message.role === "toolResult") resultIds.add(message.toolCallId);
  }
  const ids = new SafeCallIds("tool");
  const out: MessageParam[] = [];
  const push = (message: MessageParam) => {
    if (message.content.length === 0) return;
    const previous = out.at(-1);
    if (previous?.role === message.role) (previous.content as unknown[]).push(...message.content);
    else out.push(message);
  };
  for (const message of messages) {
    if (message.role === "user") push({ role: "user", content: userContent(message.content) });
    else if (message.role === "toolResult") {
      if (callIds.has(message.toolCallId)) push({ role: "user", content: [toolResult(message, ids)] });
    } else push({ role: "assistant", content: assistantContent(message, source, resultIds, ids) });
  }
  // Tool results must open the user message that follows the calls.
  for (const message of out) {
    if (message.role !== "user") continue;
    const results = message.content.filter((b) => b.type === "tool_result");
    if (results.length > 0)
      message.content = [...results, ...message.content.filter((b) => b.type !== "tool_result")];
  }
  return out;
}

function userContent(content: string | (TextContent | ImageContent)[]): UserBlockParam[] {
  if (typeof content === "string") return content.trim() ? [{ type: "text", text: content }] : [];
  return parts(content);
}

function parts(content: readonly (TextContent | ImageContent)[]): (TextBlockParam | ImageBlockParam)[] {
  const blocks: (TextBlockParam | ImageBlockParam)[] = [];
  for (const part of content) {
    if (part.type === "text") {
      if (part.text.trim()) blocks.push({ type: "text", text: part.text });
    } else if (part.type === "image") {
      blocks.push({ type: "image", source: { type: "base64", media_type: part.mimeType, data: part.data } });
    }
  }
  return blocks;
}

function toolResult(message: ToolResultMessage, ids: SafeCallIds): ToolResultBlockParam {
  const content = parts(message.content);
  return {
    type: "tool_result",
    tool_use_id: ids.get(message.toolCallId),
    ...(content.length > 0 ? { content } : {}),
    ...(message.isError ? { is_error: true } : {}),
  };
}

function assistantContent(
  message: AssistantMessage,
  source: { provider: string; api: string; allowEmptySignature?: boolean },
  resultIds: ReadonlySet<string>,
  ids: SafeCallIds,
): AssistantBlockParam[] {
  const signedHere = message.provider === source.provider && message.api === source.api;
  const blocks: AssistantBlockParam[] = [];
  for (const block of message.content) {
    if (block.type === "text") {
      if (block.text.trim()) blocks.push({ type: "text", text: block.text });
    } else if (block.type === "thinking") {
      if (!signedHere) continue;
      if (!block.thinkingSignature) {
        // Services that stream thinking without a signature take it back with an empty one.
        if (source.allowEmptySignature && block.thinking.trim())
          blocks.push({ type: "thinking", thinking: block.thinking, signature: "" });
        continue;
      }
      if (block.redacted) blocks.push({ type: "redacted_thinking", data: block.thinkingSignature });
      else blocks.push({ type: "thinking", thinking: block.thinking, signature: block.thinkingSignature });
    } else if (block.type === "toolCall" && resultIds.has(block.id)) {
      blocks.push({
        type: "tool_use",
        id: ids.get(block.id),
        name: block.name,
        input: block.arguments ?? {},
      });
    }
  }
  return blocks;
}

function toJson(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * Message and content types shared by sessions, providers, tools and the JSON/RPC wire.
 * Field names follow the spec (json.md) and the closest peer's shared message types.
 */
import type { ViewNode } from "./context.js";

export interface TextContent {
  type: "text";
  text: string;
  /** Provider-specific signature carried forward unchanged. */
  textSignature?: string;
}

export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  /** Signature or encrypted payload a provider needs to see again on the next request. */
  thinkingSignature?: string;
  redacted?: boolean;
}

export interface ImageContent {
  type: "image";
  /** Base64 data. */
  data: string;
  mimeType: string;
}

export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Gemini's signature of the thinking behind this call, sent back with the call on the next request. */
  thoughtSignature?: string;
}

export interface UsageCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: UsageCost;
}

export type StopReason = "pending" | "stop" | "length" | "toolUse" | "error" | "aborted";

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: string;
  provider: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  /** Why a provider request failed, so retry and compaction can act on it. */
  errorKind?: ProviderErrorKind;
  /** The server's retry-after, when it sent one. */
  retryAfterMs?: number;
  timestamp: number;
}

export type ProviderErrorKind =
  | "auth"
  | "rate_limit"
  | "overloaded"
  | "context_overflow"
  | "bad_request"
  | "network"
  | "timeout"
  | "aborted"
  | "unknown";

/** A bounded record of a nested `ctx.executeTool()` call (see extensions.md, Tools). */
export interface NestedCallRecord {
  toolCallId: string;
  toolName: string;
  /** Omitted when over the per-call or per-result argument budget. */
  arguments?: Record<string, unknown>;
  status: "ok" | "error" | "blocked";
  durationMs?: number;
  error?: string;
}

export interface NestedCalls {
  calls: NestedCallRecord[];
  /** `false` when anything was dropped to stay within the caps. */
  complete: boolean;
}

export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: unknown;
  structuredContent?: unknown;
  isError: boolean;
  usage?: Usage;
  nestedCalls?: NestedCalls;
  /** The tool's declarative view of the result (display only; never sent to the model). */
  view?: ViewNode;
  timestamp: number;
}

/** Extension-defined content sent to the model as a user-role message. */
export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
  /** The extension's declarative view of the message (display only; never sent to the model). */
  view?: ViewNode;
  timestamp: number;
}

/** Leading or mid-transcript system message (prompt and tool-set records). */
export interface SystemMessage {
  role: "system";
  content: string;
  timestamp: number;
}

export type AgentMessage = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage;
/** What providers receive: custom messages and summaries are already converted to user messages. */
export type LlmMessage = UserMessage | AssistantMessage | ToolResultMessage;
export type TranscriptMessage = AgentMessage | SystemMessage;

/** Streaming events of one assistant message, as a provider normalises them. */
export type AssistantMessageEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "thinking_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "toolcall_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; reason: "stop" | "length" | "toolUse"; message: AssistantMessage }
  | { type: "error"; reason: "error" | "aborted"; error: AssistantMessage };

export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

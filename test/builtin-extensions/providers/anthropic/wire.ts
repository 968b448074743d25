/**
 * Anthropic Messages API streams in the real wire format (SSE `event:` names and JSON shapes as the API sends them,
 * see https://platform.claude.com/docs/en/build-with-claude/streaming): message_start, content_block_start /
 * _delta / _stop per block, ping, message_delta with the stop reason and cumulative usage, message_stop.
 */
import type { ServerResponse } from "node:http";
import type { SseEvent } from "../../../helpers/sse-server.js";
import { writeJsonError } from "../../../helpers/sse-server.js";

export interface WireUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

const ev = (data: { type: string; [key: string]: unknown }): SseEvent => ({ event: data.type, data });

let messageCount = 0;

export function messageStart(model: string, usage: WireUsage = {}): SseEvent {
  messageCount++;
  return ev({
    type: "message_start",
    message: {
      id: `msg_01TestMessage${String(messageCount).padStart(8, "0")}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input ?? 25,
        cache_creation_input_tokens: usage.cacheWrite ?? 0,
        cache_read_input_tokens: usage.cacheRead ?? 0,
        output_tokens: 1,
        service_tier: "standard",
      },
    },
  });
}

export const ping = (): SseEvent => ev({ type: "ping" });

export function textBlock(index: number, chunks: string[]): SseEvent[] {
  return [
    ev({ type: "content_block_start", index, content_block: { type: "text", text: "" } }),
    ...chunks.map((text) => ev({ type: "content_block_delta", index, delta: { type: "text_delta", text } })),
    ev({ type: "content_block_stop", index }),
  ];
}

export function thinkingBlock(index: number, chunks: string[], signature: string): SseEvent[] {
  return [
    ev({
      type: "content_block_start",
      index,
      content_block: { type: "thinking", thinking: "", signature: "" },
    }),
    ...chunks.map((thinking) =>
      ev({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } }),
    ),
    ev({ type: "content_block_delta", index, delta: { type: "signature_delta", signature } }),
    ev({ type: "content_block_stop", index }),
  ];
}

export function redactedThinkingBlock(index: number, data: string): SseEvent[] {
  return [
    ev({ type: "content_block_start", index, content_block: { type: "redacted_thinking", data } }),
    ev({ type: "content_block_stop", index }),
  ];
}

/** A tool_use block whose input JSON arrives in the given pieces (the API opens with an empty partial_json). */
export function toolUseBlock(index: number, id: string, name: string, jsonChunks: string[]): SseEvent[] {
  return [
    ev({ type: "content_block_start", index, content_block: { type: "tool_use", id, name, input: {} } }),
    ev({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } }),
    ...jsonChunks.map((partial_json) =>
      ev({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } }),
    ),
    ev({ type: "content_block_stop", index }),
  ];
}

/** Splits a JSON text into pieces of `size` characters. */
export function pieces(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out;
}

export function messageDelta(stopReason: string, usage: WireUsage = {}): SseEvent {
  return ev({
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: {
      output_tokens: usage.output ?? 12,
      ...(usage.input !== undefined ? { input_tokens: usage.input } : {}),
      ...(usage.cacheRead !== undefined ? { cache_read_input_tokens: usage.cacheRead } : {}),
      ...(usage.cacheWrite !== undefined ? { cache_creation_input_tokens: usage.cacheWrite } : {}),
    },
  });
}

export const messageStop = (): SseEvent => ev({ type: "message_stop" });

/** An `error` event inside a 200 stream, as the API sends on overload mid-response. */
export function errorEvent(type: string, message: string): SseEvent {
  return ev({ type: "error", error: { type, message } });
}

/** A whole text answer. */
export function textAnswer(model: string, text: string, usage: WireUsage = {}): SseEvent[] {
  return [
    messageStart(model, usage),
    textBlock(0, pieces(text, 5))[0]!,
    ping(),
    ...textBlock(0, pieces(text, 5)).slice(1),
    messageDelta("end_turn", usage),
    messageStop(),
  ];
}

/** An HTTP error answer in the API's shape: `{"type":"error","error":{"type","message"},"request_id"}`. */
export function writeApiError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  writeJsonError(
    res,
    status,
    { type: "error", error: { type, message }, request_id: "req_011TestRequest" },
    { "request-id": "req_011TestRequest", ...headers },
  );
}

/** The events a client sees: the SDK drops `ping`, and the `error` event is raised rather than yielded. */
export function parsedData(events: SseEvent[]): unknown[] {
  return events.filter((e) => e.event !== "ping" && e.event !== "error").map((e) => e.data);
}

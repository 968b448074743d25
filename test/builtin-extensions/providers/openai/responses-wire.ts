/**
 * Responses API streams in the real wire format, for the local test server: named SSE events (`event:` equals
 * the data's `type`), a `sequence_number` on every event, and the item/part ordering the API uses (checked against
 * recorded OpenAI streams): `response.created`, `response.in_progress`, then per output item `output_item.added`,
 * its parts and deltas, `output_item.done`, and a terminal `response.completed` / `incomplete` / `failed`.
 */
import type { SseEvent } from "../../../helpers/sse-server.js";

export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  cached_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
}

/** Splits text into pieces of the given sizes, cycling (small, uneven deltas like the API's). */
export function pieces(text: string, sizes: number[] = [1, 3, 2, 5, 4]): string[] {
  const out: string[] = [];
  for (let at = 0, turn = 0; at < text.length; turn++) {
    const size = sizes[turn % sizes.length]!;
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

export class ResponsesWire {
  readonly events: SseEvent[] = [];
  private sequence = 0;
  private readonly output: Record<string, unknown>[] = [];
  private index = 0;

  constructor(
    readonly id = "resp_68d9303e0ef4819e9abaed38fac5de4f",
    readonly model = "gpt-6.2-sol",
  ) {}

  private emit(data: Record<string, unknown>): this {
    const event = { type: data.type, sequence_number: this.sequence++, ...data };
    this.events.push({ event: String(data.type), data: event });
    return this;
  }

  response(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      id: this.id,
      object: "response",
      created_at: 1764374400,
      status,
      background: false,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: this.model,
      output: status === "in_progress" ? [] : [...this.output],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: "medium", summary: null },
      service_tier: "auto",
      store: false,
      temperature: 1.0,
      text: { format: { type: "text" }, verbosity: "medium" },
      tool_choice: "auto",
      tools: [],
      top_p: 1.0,
      truncation: "disabled",
      usage: null,
      user: null,
      metadata: {},
      ...extra,
    };
  }

  created(): this {
    this.emit({ type: "response.created", response: this.response("in_progress") });
    return this.emit({ type: "response.in_progress", response: this.response("in_progress") });
  }

  /** A message item with one output_text part streamed in the given deltas. */
  text(deltas: string[], id = `msg_${this.index}abc`): this {
    const output_index = this.index++;
    const text = deltas.join("");
    this.emit({
      type: "response.output_item.added",
      output_index,
      item: { id, type: "message", status: "in_progress", content: [], role: "assistant" },
    });
    const part = { type: "output_text", annotations: [], logprobs: [], text: "" };
    this.emit({ type: "response.content_part.added", item_id: id, output_index, content_index: 0, part });
    for (const delta of deltas) {
      this.emit({
        type: "response.output_text.delta",
        item_id: id,
        output_index,
        content_index: 0,
        delta,
        logprobs: [],
        obfuscation: "x9",
      });
    }
    this.emit({
      type: "response.output_text.done",
      item_id: id,
      output_index,
      content_index: 0,
      text,
      logprobs: [],
    });
    this.emit({
      type: "response.content_part.done",
      item_id: id,
      output_index,
      content_index: 0,
      part: { ...part, text },
    });
    const item = {
      id,
      type: "message",
      status: "completed",
      content: [{ type: "output_text", annotations: [], logprobs: [], text }],
      role: "assistant",
    };
    this.output.push(item);
    return this.emit({ type: "response.output_item.done", output_index, item });
  }

  /** A reasoning item: summary parts streamed in deltas, the encrypted content in `output_item.done`. */
  reasoning(parts: string[][], encrypted: string, id = `rs_${this.index}def`): this {
    const output_index = this.index++;
    // The API already sends an (earlier) encrypted_content when the item is added; the final one comes at done.
    this.emit({
      type: "response.output_item.added",
      output_index,
      item: { id, type: "reasoning", encrypted_content: `${encrypted}-partial`, summary: [] },
    });
    const summary: { type: "summary_text"; text: string }[] = [];
    parts.forEach((deltas, summary_index) => {
      const text = deltas.join("");
      this.emit({
        type: "response.reasoning_summary_part.added",
        item_id: id,
        output_index,
        summary_index,
        part: { type: "summary_text", text: "" },
      });
      for (const delta of deltas) {
        this.emit({
          type: "response.reasoning_summary_text.delta",
          item_id: id,
          output_index,
          summary_index,
          delta,
          obfuscation: "q1",
        });
      }
      this.emit({
        type: "response.reasoning_summary_text.done",
        item_id: id,
        output_index,
        summary_index,
        text,
      });
      this.emit({
        type: "response.reasoning_summary_part.done",
        item_id: id,
        output_index,
        summary_index,
        part: { type: "summary_text", text },
      });
      summary.push({ type: "summary_text", text });
    });
    const item = { id, type: "reasoning", encrypted_content: encrypted, summary };
    this.output.push(item);
    return this.emit({ type: "response.output_item.done", output_index, item });
  }

  /** A function_call item whose argument JSON arrives in the given deltas. */
  functionCall(callId: string, name: string, deltas: string[], id = `fc_${this.index}ghi`): this {
    const output_index = this.index++;
    const args = deltas.join("");
    this.emit({
      type: "response.output_item.added",
      output_index,
      item: { id, type: "function_call", status: "in_progress", arguments: "", call_id: callId, name },
    });
    for (const delta of deltas) {
      this.emit({
        type: "response.function_call_arguments.delta",
        item_id: id,
        output_index,
        delta,
        obfuscation: "z7",
      });
    }
    this.emit({
      type: "response.function_call_arguments.done",
      item_id: id,
      output_index,
      name,
      arguments: args,
    });
    const item = { id, type: "function_call", status: "completed", arguments: args, call_id: callId, name };
    this.output.push(item);
    return this.emit({ type: "response.output_item.done", output_index, item });
  }

  static usage(u: WireUsage): Record<string, unknown> {
    return {
      input_tokens: u.input_tokens,
      input_tokens_details: {
        cached_tokens: u.cached_tokens ?? 0,
        ...(u.cache_write_tokens !== undefined ? { cache_write_tokens: u.cache_write_tokens } : {}),
      },
      output_tokens: u.output_tokens,
      output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
      total_tokens: u.input_tokens + u.output_tokens,
    };
  }

  completed(usage: WireUsage = { input_tokens: 40, output_tokens: 12 }): this {
    return this.emit({
      type: "response.completed",
      response: this.response("completed", { usage: ResponsesWire.usage(usage) }),
    });
  }

  incomplete(reason: string, usage: WireUsage = { input_tokens: 40, output_tokens: 64 }): this {
    return this.emit({
      type: "response.incomplete",
      response: this.response("incomplete", {
        incomplete_details: { reason },
        usage: ResponsesWire.usage(usage),
      }),
    });
  }

  failed(code: string, message: string): this {
    return this.emit({
      type: "response.failed",
      response: this.response("failed", { error: { code, message } }),
    });
  }

  /** The stream's `error` event (type, code, message, param, sequence_number). */
  error(code: string, message: string): this {
    return this.emit({ type: "error", code, message, param: null });
  }

  /** Event types in order. */
  get types(): string[] {
    return this.events.map((e) => String(e.event));
  }
}

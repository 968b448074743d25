/**
 * Turns Responses API stream events into AssistantMessageWriter calls.
 *
 * The events handled (names and fields as the API sends them): `response.output_item.added` / `.done` for
 * `message`, `function_call` and `reasoning` items; `response.output_text.delta` (and `response.refusal.delta`);
 * `response.function_call_arguments.delta` / `.done`; `response.reasoning_summary_part.added`,
 * `response.reasoning_summary_text.delta` (and `response.reasoning_text.delta` of open-weight models); the
 * terminal `response.completed`, `response.incomplete` and `response.failed`; and `error`. Anything else
 * (`response.created`, `response.in_progress`, content parts, annotations, hosted tool progress) is ignored.
 */
import {
  type AssistantMessageWriter,
  classifyStreamError,
  MalformedEventError,
  type ProviderFailure,
} from "@knightcodeai/cli/kit";
import type { ReasoningSignature } from "./convert.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

interface Block {
  kind: "text" | "thinking" | "toolCall";
  index: number;
  ended: boolean;
  /** Whether text or argument deltas arrived (when none did, the `done` events carry the whole value). */
  streamed: boolean;
}

/** A failure from an error object the stream carried (`error` events, `response.failed`'s `response.error`). */
export function streamErrorFailure(
  provider: string,
  error: unknown,
  fallback = "unknown error",
): ProviderFailure {
  const e = isRecord(error) ? error : {};
  const text = (value: unknown) => (typeof value === "string" && value ? value : undefined);
  const type = text(e.type);
  const code = text(e.code);
  return classifyStreamError({
    provider,
    message: text(e.message) ?? fallback,
    // `type` is only the event's own name when the error object is the event itself.
    ...(type && type !== "error" ? { type } : {}),
    ...(code ? { code } : {}),
  });
}

export class ResponsesNormaliser {
  private readonly blocks = new Map<string, Block>();
  private toolCalls = 0;

  constructor(
    private readonly writer: AssistantMessageWriter,
    private readonly provider: string,
  ) {}

  /** Handles one event; throws MalformedEventError for one of an unexpected shape. */
  handle(event: unknown): void {
    if (!isRecord(event) || typeof event.type !== "string") {
      throw new MalformedEventError(`expected an object with a "type", got ${preview(event)}`);
    }
    switch (event.type) {
      case "response.output_item.added":
        this.itemAdded(event);
        break;
      case "response.output_text.delta":
      case "response.refusal.delta":
        this.textDelta(event);
        break;
      case "response.reasoning_summary_part.added":
        this.summaryPart(event);
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        this.thinkingDelta(event);
        break;
      case "response.function_call_arguments.delta":
        this.argumentsDelta(event);
        break;
      case "response.function_call_arguments.done":
        this.argumentsDone(event);
        break;
      case "response.output_item.done":
        this.itemDone(event);
        break;
      case "response.completed":
      case "response.incomplete":
        this.finish(event);
        break;
      case "response.failed":
        this.failed(event);
        break;
      case "error": {
        // Flat (`{type, code, message}`), or nesting its error object (given back so by stream.ts).
        const failure = streamErrorFailure(this.provider, isRecord(event.error) ? event.error : event);
        this.writer.fail(failure.kind, failure.message, failure.retryAfterMs);
        break;
      }
      default:
        break;
    }
  }

  private key(event: Record<string, unknown>, item?: Record<string, unknown>): string {
    if (typeof event.output_index === "number") return `#${event.output_index}`;
    const id = item?.id ?? event.item_id;
    if (typeof id === "string" && id) return id;
    throw new MalformedEventError(`${event.type} has neither output_index nor item_id`);
  }

  private item(event: Record<string, unknown>): Record<string, unknown> {
    if (!isRecord(event.item) || typeof event.item.type !== "string") {
      throw new MalformedEventError(`${event.type} has no item with a type`);
    }
    return event.item;
  }

  private delta(event: Record<string, unknown>): string {
    if (typeof event.delta !== "string") throw new MalformedEventError(`${event.type} has no string delta`);
    return event.delta;
  }

  private open(key: string, kind: Block["kind"], index: number): Block {
    const block: Block = { kind, index, ended: false, streamed: false };
    this.blocks.set(key, block);
    return block;
  }

  /** The block of an event, opened on the fly when the server skipped `output_item.added`. */
  private blockFor(event: Record<string, unknown>, kind: Block["kind"]): Block | undefined {
    const key = this.key(event);
    const block = this.blocks.get(key);
    if (block) return block.kind === kind ? block : undefined;
    if (kind === "text") return this.open(key, kind, this.writer.textStart());
    if (kind === "thinking") return this.open(key, kind, this.writer.thinkingStart());
    return undefined; // a tool call cannot start without its call id and name
  }

  private itemAdded(event: Record<string, unknown>): void {
    const item = this.item(event);
    const key = this.key(event, item);
    if (this.blocks.has(key)) return;
    if (item.type === "message") this.open(key, "text", this.writer.textStart());
    else if (item.type === "reasoning") this.open(key, "thinking", this.writer.thinkingStart());
    else if (item.type === "function_call") {
      if (typeof item.call_id !== "string" || typeof item.name !== "string") {
        throw new MalformedEventError("a function_call item without call_id or name");
      }
      this.toolCalls++;
      const block = this.open(key, "toolCall", this.writer.toolCallStart(item.call_id, item.name));
      if (typeof item.arguments === "string" && item.arguments) {
        this.writer.toolCallDelta(block.index, item.arguments);
        block.streamed = true;
      }
    }
  }

  private textDelta(event: Record<string, unknown>): void {
    const delta = this.delta(event);
    const block = this.blockFor(event, "text");
    if (!block || block.ended) return;
    block.streamed = true;
    this.writer.textDelta(block.index, delta);
  }

  private summaryPart(event: Record<string, unknown>): void {
    const block = this.blockFor(event, "thinking");
    // Summary parts are paragraphs of one reasoning item: keep them apart.
    if (block && !block.ended && block.streamed && count(event.summary_index) > 0) {
      this.writer.thinkingDelta(block.index, "\n\n");
    }
  }

  private thinkingDelta(event: Record<string, unknown>): void {
    const delta = this.delta(event);
    const block = this.blockFor(event, "thinking");
    if (!block || block.ended) return;
    block.streamed ||= delta !== "";
    this.writer.thinkingDelta(block.index, delta);
  }

  private argumentsDelta(event: Record<string, unknown>): void {
    const delta = this.delta(event);
    const block = this.blockFor(event, "toolCall");
    if (!block || block.ended) return;
    block.streamed = true;
    this.writer.toolCallDelta(block.index, delta);
  }

  private argumentsDone(event: Record<string, unknown>): void {
    const block = this.blockFor(event, "toolCall");
    if (!block || block.ended) return;
    if (!block.streamed && typeof event.arguments === "string" && event.arguments) {
      this.writer.toolCallDelta(block.index, event.arguments);
      block.streamed = true;
    }
    block.ended = true;
    this.writer.toolCallEnd(block.index);
  }

  private itemDone(event: Record<string, unknown>): void {
    const item = this.item(event);
    const block = this.blocks.get(this.key(event, item));
    if (!block || block.ended) return;
    if (block.kind === "text") {
      if (!block.streamed) {
        const text = messageText(item);
        if (text) this.writer.textDelta(block.index, text);
      }
      block.ended = true;
      this.writer.textEnd(block.index);
    } else if (block.kind === "thinking") {
      const summary = Array.isArray(item.summary)
        ? item.summary
            .filter((part): part is { text: string } => isRecord(part) && typeof part.text === "string")
            .map((part) => ({ type: "summary_text" as const, text: part.text }))
        : [];
      if (!block.streamed && summary.length > 0) {
        this.writer.thinkingDelta(block.index, summary.map((part) => part.text).join("\n\n"));
      }
      if (
        typeof item.id === "string" &&
        typeof item.encrypted_content === "string" &&
        item.encrypted_content
      ) {
        const signature: ReasoningSignature = {
          id: item.id,
          encrypted_content: item.encrypted_content,
          summary,
        };
        this.writer.thinkingSignature(block.index, JSON.stringify(signature));
      }
      block.ended = true;
      this.writer.thinkingEnd(block.index);
    } else {
      if (!block.streamed && typeof item.arguments === "string" && item.arguments) {
        this.writer.toolCallDelta(block.index, item.arguments);
      }
      block.ended = true;
      this.writer.toolCallEnd(block.index);
    }
  }

  /** Ends blocks the server left open (their `done` events never came). */
  private closeOpenBlocks(): void {
    for (const block of this.blocks.values()) {
      if (block.ended) continue;
      block.ended = true;
      if (block.kind === "text") this.writer.textEnd(block.index);
      else if (block.kind === "thinking") this.writer.thinkingEnd(block.index);
      else this.writer.toolCallEnd(block.index);
    }
  }

  private response(event: Record<string, unknown>): Record<string, unknown> {
    if (!isRecord(event.response)) throw new MalformedEventError(`${event.type} has no response object`);
    return event.response;
  }

  private usage(response: Record<string, unknown>): void {
    const usage = response.usage;
    if (!isRecord(usage)) return;
    const details = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
    const cacheRead = count(details.cached_tokens);
    const cacheWrite = count(details.cache_write_tokens);
    // input_tokens counts cached (and cache-written) tokens too; each kind is billed at its own price.
    this.writer.usage({
      input: Math.max(0, count(usage.input_tokens) - cacheRead - cacheWrite),
      output: count(usage.output_tokens),
      cacheRead,
      cacheWrite,
    });
  }

  private finish(event: Record<string, unknown>): void {
    const response = this.response(event);
    this.usage(response);
    this.closeOpenBlocks();
    const incomplete = event.type === "response.incomplete" || response.status === "incomplete";
    if (incomplete) {
      const details = isRecord(response.incomplete_details) ? response.incomplete_details : {};
      const reason = typeof details.reason === "string" ? details.reason : "unknown reason";
      if (reason !== "max_output_tokens") {
        this.writer.fail("unknown", `${this.provider} ended the response early (${reason})`);
        return;
      }
      this.writer.done("length");
      return;
    }
    this.writer.done(this.toolCalls > 0 ? "toolUse" : "stop");
  }

  private failed(event: Record<string, unknown>): void {
    const response = this.response(event);
    this.usage(response);
    this.closeOpenBlocks();
    const failure = streamErrorFailure(this.provider, response.error, "the response failed");
    this.writer.fail(failure.kind, failure.message, failure.retryAfterMs);
  }
}

function messageText(item: Record<string, unknown>): string {
  if (!Array.isArray(item.content)) return "";
  return item.content
    .map((part) =>
      isRecord(part) && typeof part.text === "string"
        ? part.text
        : isRecord(part) && typeof part.refusal === "string"
          ? part.refusal
          : "",
    )
    .join("");
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/**
 * Builds one assistant message from a provider's stream and emits the normalised events (`start`, `text_*`,
 * `thinking_*`, `toolcall_*`, `done`, `error`) with a cumulative `partial` snapshot. Every provider uses it, so
 * every provider's events have the same shape, and the stream it returns ends exactly once.
 */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageStream,
  ModelInfo,
  ProviderErrorKind,
  StopReason,
  TextContent,
  ThinkingContent,
  ToolCall,
  Usage,
} from "../../../kernel/index.js";
import { emptyUsage } from "../usage.js";
import { calculateCost } from "./cost.js";
import { redactSecrets } from "./redact.js";

/**
 * A push-based async stream: the producer pushes, any number of consumers iterate. Items are held until the first
 * consumer starts, so one that starts late (after `result()`, say) still reads them all; from then on an item is
 * released once every consumer still iterating has read it. A long answer (a tool call streamed in a million
 * deltas) so costs memory for the items not yet read, not for every item it ever had. A consumer that starts after
 * others began reading starts at the oldest item still held.
 */
export class PushStream<T, R> implements AsyncIterable<T> {
  private items: T[] = [];
  /** The position in the whole stream of `items[0]`. */
  private base = 0;
  /** The position of the next item each consumer reads. */
  private readonly readers = new Set<{ next: number }>();
  private waiters: Array<() => void> = [];
  private ended = false;
  private final: R | undefined;
  private readonly finished: Promise<R>;
  private resolveFinished: (value: R) => void = () => {};

  constructor() {
    this.finished = new Promise<R>((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake();
  }

  end(result: R): void {
    if (this.ended) return;
    this.ended = true;
    this.final = result;
    this.resolveFinished(result);
    this.wake();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  result(): Promise<R> {
    return this.finished;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const reader = { next: this.base };
    this.readers.add(reader);
    try {
      for (;;) {
        const at = reader.next - this.base;
        if (at < this.items.length) {
          const item = this.items[at]!;
          reader.next++;
          this.release();
          yield item;
          continue;
        }
        if (this.ended) return;
        await new Promise<void>((resolve) => {
          this.waiters.push(resolve);
        });
      }
    } finally {
      this.readers.delete(reader);
    }
  }

  /** The final value, once ended. */
  get value(): R | undefined {
    return this.final;
  }

  /** Drops the items every reader has passed, in batches, so dropping costs O(1) per item. */
  private release(): void {
    let read = Number.POSITIVE_INFINITY;
    for (const reader of this.readers) read = Math.min(read, reader.next);
    const count = read - this.base;
    if (count < 1024 || count * 2 < this.items.length) return;
    this.items = this.items.slice(count);
    this.base = read;
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

type Block = TextContent | ThinkingContent | ToolCall;

export interface WriterOptions {
  /** Values to take out of error messages (the request's key, header values, the baseUrl's password). */
  secrets?: Iterable<string | undefined>;
}

export class AssistantMessageWriter {
  readonly message: AssistantMessage;
  private readonly events = new PushStream<AssistantMessageEvent, AssistantMessage>();
  private readonly toolJson = new Map<number, string>();
  private readonly secrets = new Set<string | undefined>();
  private started = false;

  constructor(
    private readonly model: ModelInfo,
    options: WriterOptions = {},
  ) {
    this.addSecrets(options.secrets ?? []);
    this.message = {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: emptyUsage(),
      stopReason: "pending",
      timestamp: Date.now(),
    };
  }

  /** The stream to return from `streamSimple()`. */
  get stream(): AssistantMessageStream {
    const events = this.events;
    return { [Symbol.asyncIterator]: () => events[Symbol.asyncIterator](), result: () => events.result() };
  }

  get isFinished(): boolean {
    return this.events.isEnded;
  }

  start(): void {
    if (this.started || this.isFinished) return;
    this.started = true;
    this.events.push({ type: "start", partial: this.snapshot() });
  }

  textStart(): number {
    return this.open({ type: "text", text: "" }, "text_start");
  }

  textDelta(index: number, delta: string): void {
    const block = this.block(index, "text");
    if (!block || !delta) return;
    block.text += delta;
    this.events.push({ type: "text_delta", contentIndex: index, delta, partial: this.snapshot() });
  }

  textEnd(index: number, signature?: string): void {
    const block = this.block(index, "text");
    if (!block) return;
    if (signature) block.textSignature = signature;
    this.events.push({
      type: "text_end",
      contentIndex: index,
      content: block.text,
      partial: this.snapshot(),
    });
  }

  thinkingStart(): number {
    return this.open({ type: "thinking", thinking: "" }, "thinking_start");
  }

  thinkingDelta(index: number, delta: string): void {
    const block = this.block(index, "thinking");
    if (!block || !delta) return;
    block.thinking += delta;
    this.events.push({ type: "thinking_delta", contentIndex: index, delta, partial: this.snapshot() });
  }

  /** Signatures (or encrypted reasoning) must go back to the provider with the next request. */
  thinkingSignature(index: number, signature: string, options: { redacted?: boolean } = {}): void {
    const block = this.block(index, "thinking");
    if (!block) return;
    block.thinkingSignature = (block.thinkingSignature ?? "") + signature;
    if (options.redacted) block.redacted = true;
  }

  thinkingEnd(index: number): void {
    const block = this.block(index, "thinking");
    if (!block) return;
    this.events.push({
      type: "thinking_end",
      contentIndex: index,
      content: block.thinking,
      partial: this.snapshot(),
    });
  }

  toolCallStart(id: string, name: string): number {
    const index = this.open({ type: "toolCall", id, name, arguments: {} }, "toolcall_start");
    this.toolJson.set(index, "");
    return index;
  }

  toolCallDelta(index: number, delta: string): void {
    if (!this.block(index, "toolCall") || !delta) return;
    this.toolJson.set(index, (this.toolJson.get(index) ?? "") + delta);
    this.events.push({ type: "toolcall_delta", contentIndex: index, delta, partial: this.snapshot() });
  }

  /** A signature the provider needs to see again with this call (Gemini's `thoughtSignature`). */
  toolCallSignature(index: number, signature: string): void {
    const block = this.block(index, "toolCall");
    if (block && signature) block.thoughtSignature = signature;
  }

  /** Parses the streamed argument JSON. Returns false when it is not valid JSON (the call keeps `{}`). */
  toolCallEnd(index: number, finalArguments?: Record<string, unknown>): boolean {
    const block = this.block(index, "toolCall");
    if (!block) return false;
    let ok = true;
    if (finalArguments) block.arguments = finalArguments;
    else {
      const json = this.toolJson.get(index) ?? "";
      try {
        const parsed = json.trim() === "" ? {} : JSON.parse(json);
        block.arguments =
          parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : { value: parsed };
      } catch {
        ok = false;
      }
    }
    this.events.push({
      type: "toolcall_end",
      contentIndex: index,
      toolCall: { ...block },
      partial: this.snapshot(),
    });
    return ok;
  }

  /** Sets the usage reported so far (missing fields keep their value); cost follows the model's prices. */
  usage(update: Partial<Omit<Usage, "cost" | "totalTokens">>): void {
    const u = this.message.usage;
    Object.assign(u, Object.fromEntries(Object.entries(update).filter(([, v]) => typeof v === "number")));
    u.totalTokens = u.input + u.output + u.cacheRead + u.cacheWrite;
    u.cost = calculateCost(this.model, u);
  }

  done(reason: "stop" | "length" | "toolUse"): AssistantMessage {
    if (this.isFinished) return this.events.value!;
    this.start();
    this.message.stopReason = reason;
    const final = this.snapshot();
    this.events.push({ type: "done", reason, message: final });
    this.events.end(final);
    return final;
  }

  /** More values to take out of error messages (headers an extension added, say). */
  addSecrets(secrets: Iterable<string | undefined>): void {
    for (const secret of secrets) this.secrets.add(secret);
  }

  /**
   * Ends the message with an error (or an abort). Content received so far is kept. The message is redacted here,
   * where every provider error is made, so no consumer (stderr, the JSON stream, the session file) sees a
   * credential a server or library repeated.
   */
  fail(kind: ProviderErrorKind, message: string, retryAfterMs?: number): AssistantMessage {
    if (this.isFinished) return this.events.value!;
    const stopReason: StopReason = kind === "aborted" ? "aborted" : "error";
    this.message.stopReason = stopReason;
    this.message.errorMessage = redactSecrets(message, this.secrets);
    this.message.errorKind = kind;
    if (retryAfterMs !== undefined) this.message.retryAfterMs = retryAfterMs;
    const final = this.snapshot();
    this.events.push({ type: "error", reason: kind === "aborted" ? "aborted" : "error", error: final });
    this.events.end(final);
    return final;
  }

  private open(block: Block, type: "text_start" | "thinking_start" | "toolcall_start"): number {
    this.start();
    this.message.content.push(block);
    const index = this.message.content.length - 1;
    this.events.push({ type, contentIndex: index, partial: this.snapshot() } as AssistantMessageEvent);
    return index;
  }

  private block<K extends Block["type"]>(index: number, type: K): Extract<Block, { type: K }> | undefined {
    const block = this.message.content[index];
    return block?.type === type ? (block as Extract<Block, { type: K }>) : undefined;
  }

  /** A copy per event, so a consumer holding an earlier snapshot never sees it change. */
  private snapshot(): AssistantMessage {
    return {
      ...this.message,
      content: this.message.content.map((c) =>
        c.type === "toolCall" ? { ...c, arguments: { ...c.arguments } } : { ...c },
      ),
      usage: { ...this.message.usage, cost: { ...this.message.usage.cost } },
    };
  }
}

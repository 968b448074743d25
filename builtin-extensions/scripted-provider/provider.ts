/**
 * The scripted provider: answers each request with the next step of a script, streamed like a network provider
 * (hooks, raw events, normalised events with cumulative partials, usage, errors and aborts).
 */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageStream,
  ExtensionAPI,
  ProviderConfig,
  ProviderErrorKind,
  ProviderHooks,
  ProviderStreamRequest,
  TextContent,
  ThinkingContent,
  ToolCall,
  Usage,
} from "@knightcodeai/cli/kit";
import { EventStream } from "./event-stream.js";
import type { ScriptStep } from "./schema.js";
import { validateStep } from "./schema.js";

export const SCRIPTED_PROVIDER = "scripted";
export const SCRIPTED_API = "scripted";
export const SCRIPTED_MODEL = {
  id: "scripted",
  name: "Scripted",
  contextWindow: 200000,
  maxTokens: 32000,
  reasoning: true,
} as const;

/** A step computed when its request comes (request number counts from 1). */
export type ScriptStepFunction = (
  request: ProviderStreamRequest,
  requestNumber: number,
) => ScriptStep | Promise<ScriptStep>;
export type ScriptEntry = ScriptStep | ScriptStepFunction;

/** Loads the steps (once or per request, as the source likes) or says why there are none. */
export type StepLoader = () => Promise<
  { ok: true; steps: readonly ScriptEntry[] } | { ok: false; message: string }
>;

/** Chunk sizes, in characters, cycled through for every block: small, varied and deterministic. */
const CHUNK_PATTERN = [3, 5, 2, 4, 6];
/** What an error step with `afterChunks` and no content of its own streams before it fails. */
const FILLER_TEXT = "This scripted answer is cut off by a scripted error before it ends.";
/** Characters an image part counts for in the input estimate (about 1200 tokens). */
const IMAGE_CHARS = 4800;
const ABORTED_MESSAGE = "Request was aborted";

/**
 * Splits text into chunks of 2–6 characters following CHUNK_PATTERN (a text of one character is one chunk), counting
 * code points so a surrogate pair is never split.
 */
export function chunkText(text: string): string[] {
  const chars = Array.from(text);
  const chunks: string[] = [];
  for (let at = 0, turn = 0; at < chars.length; turn++) {
    let size = CHUNK_PATTERN[turn % CHUNK_PATTERN.length]!;
    if (chars.length - (at + size) === 1) size += size < 6 ? 1 : -1; // never leave a lone last character
    chunks.push(chars.slice(at, at + size).join(""));
    at += size;
  }
  return chunks;
}

function tokens(chars: number): number {
  return Math.ceil(chars / 4);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

function toJson(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

function contentChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return jsonLength(content);
  let chars = 0;
  for (const part of content) {
    if (!isRecord(part)) chars += jsonLength(part);
    else if (part.type === "text" && typeof part.text === "string") chars += part.text.length;
    else if (part.type === "thinking" && typeof part.thinking === "string") chars += part.thinking.length;
    else if (part.type === "toolCall") chars += String(part.name ?? "").length + jsonLength(part.arguments);
    else if (part.type === "image") chars += IMAGE_CHARS;
    else chars += jsonLength(part);
  }
  return chars;
}

function messageChars(message: unknown): number {
  return isRecord(message) && "content" in message ? contentChars(message.content) : jsonLength(message);
}

function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is { type: "text"; text: string } => isRecord(part) && part.type === "text")
    .map((part) => String(part.text))
    .join("\n");
}

/** What the payload that was "sent" says, after handlers of `before_provider_request` had their say. */
interface SentRequest {
  system: string;
  messages: unknown[];
  tools: unknown[];
}

function checkExpect(step: ScriptStep, sent: SentRequest, label: string): string | undefined {
  const expect = step.expect;
  if (!expect) return undefined;
  const show = (value: string | undefined) => (value === undefined ? "(none)" : JSON.stringify(value));
  const lastOf = (role: string) =>
    sent.messages.findLast((message) => isRecord(message) && message.role === role) as
      | Record<string, unknown>
      | undefined;
  const lastUser = lastOf("user");
  const userText = lastUser ? partsText(lastUser.content) : undefined;
  if (expect.lastUserText !== undefined && userText !== expect.lastUserText) {
    return `${label} expected the last user message to be ${show(expect.lastUserText)}, but it is ${show(userText)}`;
  }
  if (expect.lastUserTextContains !== undefined && !userText?.includes(expect.lastUserTextContains)) {
    return `${label} expected the last user message to contain ${show(expect.lastUserTextContains)}, but it is ${show(userText)}`;
  }
  if (expect.systemPromptContains !== undefined && !sent.system.includes(expect.systemPromptContains)) {
    return `${label} expected the system prompt to contain ${show(expect.systemPromptContains)}`;
  }
  if (expect.tools) {
    const names = sent.tools.map((tool) => (isRecord(tool) ? String(tool.name) : ""));
    const missing = expect.tools.filter((name) => !names.includes(name));
    if (missing.length > 0) {
      return `${label} expected the tools ${missing.join(", ")} to be declared, but the request declares ${names.join(", ") || "none"}`;
    }
  }
  if (expect.lastToolResult) {
    const want = expect.lastToolResult;
    const result = lastOf("toolResult");
    if (!result) return `${label} expected a tool result, but the request has none`;
    if (want.toolName !== undefined && result.toolName !== want.toolName) {
      return `${label} expected the last tool result to come from ${show(want.toolName)}, but it comes from ${show(String(result.toolName))}`;
    }
    if (want.isError !== undefined && Boolean(result.isError) !== want.isError) {
      return `${label} expected the last tool result to have isError ${want.isError}`;
    }
    const text = partsText(result.content);
    if (want.textContains !== undefined && !text.includes(want.textContains)) {
      return `${label} expected the last tool result to contain ${show(want.textContains)}, but it is ${show(text)}`;
    }
  }
  return undefined;
}

/** The raw events this provider "receives"; each goes to `hooks.streamEvent` before it is normalised. */
export interface RawUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}
export type RawBlockKind = "text" | "thinking" | "tool_call";
export type ScriptedRawEvent =
  | { type: "message_start"; id: string; model: string; usage: RawUsage }
  | { type: "block_start"; index: number; kind: RawBlockKind; id?: string; name?: string }
  | { type: "chunk"; index: number; kind: RawBlockKind; text: string; output_tokens: number }
  | { type: "block_end"; index: number }
  | { type: "message_end"; stop_reason: "stop" | "length" | "tool_use"; usage: RawUsage }
  | {
      type: "error";
      error: { kind: ProviderErrorKind; message: string; status?: number; retry_after_ms?: number };
    };

const ABORT = Symbol("aborted");

/** Resolves with the value, or with ABORT as soon as the signal aborts (the value's promise is left to settle). */
function untilAborted<T>(value: T | Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORT> {
  if (signal?.aborted) return Promise.resolve(ABORT);
  const promise = Promise.resolve(value);
  if (!signal) return promise;
  promise.catch(() => {}); // a late rejection after an abort must not become an unhandled rejection
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORT);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (result) => {
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms`, or less when the signal aborts (the timer is cleared). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

class Aborted extends Error {}

const NO_HOOKS: ProviderHooks = {
  payload: async (payload) => payload,
  headers: async (headers) => headers,
  response: async () => {},
  streamEvent: async () => {},
};

/** Builds the cumulative message from raw events and pushes the normalised events. */
class Normaliser {
  #content: (TextContent | ThinkingContent | ToolCall)[] = [];
  readonly #kinds: RawBlockKind[] = [];
  readonly #args: string[] = [];
  #usage: Usage = {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };

  constructor(
    private readonly stream: EventStream<AssistantMessageEvent, AssistantMessage>,
    private readonly model: string,
    private readonly provider: string,
    private readonly timestamp: number,
  ) {}

  /** The message so far; a new object each time, sharing only blocks that did not change since. */
  message(stopReason: AssistantMessage["stopReason"] = "pending"): AssistantMessage {
    return {
      role: "assistant",
      content: [...this.#content],
      api: SCRIPTED_API,
      provider: this.provider,
      model: this.model,
      usage: { ...this.#usage, cost: { ...this.#usage.cost } },
      stopReason,
      timestamp: this.timestamp,
    };
  }

  #setUsage(raw: Partial<RawUsage>): void {
    const usage = { ...this.#usage };
    if (raw.input_tokens !== undefined) usage.input = raw.input_tokens;
    if (raw.output_tokens !== undefined) usage.output = raw.output_tokens;
    if (raw.cache_read_tokens !== undefined) usage.cacheRead = raw.cache_read_tokens;
    if (raw.cache_write_tokens !== undefined) usage.cacheWrite = raw.cache_write_tokens;
    usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
    this.#usage = usage; // the model has no price: cost stays zero
  }

  #replace(index: number, block: TextContent | ThinkingContent | ToolCall): void {
    const content = [...this.#content];
    content[index] = block;
    this.#content = content;
  }

  handle(raw: ScriptedRawEvent): void {
    switch (raw.type) {
      case "message_start":
        this.#setUsage(raw.usage);
        this.stream.push({ type: "start", partial: this.message() });
        return;
      case "block_start": {
        const index = raw.index;
        this.#kinds[index] = raw.kind;
        if (raw.kind === "text") {
          this.#replace(index, { type: "text", text: "" });
          this.stream.push({ type: "text_start", contentIndex: index, partial: this.message() });
        } else if (raw.kind === "thinking") {
          this.#replace(index, { type: "thinking", thinking: "" });
          this.stream.push({ type: "thinking_start", contentIndex: index, partial: this.message() });
        } else {
          this.#args[index] = "";
          this.#replace(index, { type: "toolCall", id: raw.id ?? "", name: raw.name ?? "", arguments: {} });
          this.stream.push({ type: "toolcall_start", contentIndex: index, partial: this.message() });
        }
        return;
      }
      case "chunk": {
        const index = raw.index;
        const block = this.#content[index]!;
        this.#setUsage({ output_tokens: raw.output_tokens });
        if (block.type === "text") {
          this.#replace(index, { ...block, text: block.text + raw.text });
          this.stream.push({
            type: "text_delta",
            contentIndex: index,
            delta: raw.text,
            partial: this.message(),
          });
        } else if (block.type === "thinking") {
          this.#replace(index, { ...block, thinking: block.thinking + raw.text });
          this.stream.push({
            type: "thinking_delta",
            contentIndex: index,
            delta: raw.text,
            partial: this.message(),
          });
        } else {
          this.#args[index] += raw.text;
          this.stream.push({
            type: "toolcall_delta",
            contentIndex: index,
            delta: raw.text,
            partial: this.message(),
          });
        }
        return;
      }
      case "block_end": {
        const index = raw.index;
        const block = this.#content[index]!;
        if (block.type === "text") {
          this.stream.push({
            type: "text_end",
            contentIndex: index,
            content: block.text,
            partial: this.message(),
          });
        } else if (block.type === "thinking") {
          this.stream.push({
            type: "thinking_end",
            contentIndex: index,
            content: block.thinking,
            partial: this.message(),
          });
        } else {
          const toolCall: ToolCall = { ...block, arguments: JSON.parse(this.#args[index] || "{}") };
          this.#replace(index, toolCall);
          this.stream.push({ type: "toolcall_end", contentIndex: index, toolCall, partial: this.message() });
        }
        return;
      }
      case "message_end": {
        this.#setUsage(raw.usage);
        const reason = raw.stop_reason === "tool_use" ? "toolUse" : raw.stop_reason;
        const message = this.message(reason);
        this.stream.push({ type: "done", reason, message });
        this.stream.end(message);
        return;
      }
      case "error":
        this.fail(raw.error.kind, raw.error.message, raw.error.retry_after_ms);
        return;
    }
  }

  fail(kind: ProviderErrorKind, errorMessage: string, retryAfterMs?: number): void {
    if (this.stream.ended) return;
    const aborted = kind === "aborted";
    const error: AssistantMessage = {
      ...this.message(aborted ? "aborted" : "error"),
      errorMessage,
      errorKind: kind,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
    this.stream.push({ type: "error", reason: aborted ? "aborted" : "error", error });
    this.stream.end(error);
  }
}

interface Counters {
  requests: number;
  toolCalls: number;
}

interface Block {
  kind: RawBlockKind;
  text: string;
  id?: string;
  name?: string;
}

function blocksOf(step: ScriptStep, counters: Counters): Block[] {
  const blocks: Block[] = [];
  if (step.thinking) blocks.push({ kind: "thinking", text: step.thinking });
  if (step.text) blocks.push({ kind: "text", text: step.text });
  for (const call of step.toolCalls ?? []) {
    const id = call.id ?? `call_${++counters.toolCalls}`;
    blocks.push({ kind: "tool_call", id, name: call.name, text: JSON.stringify(call.arguments ?? {}) });
  }
  if (blocks.length === 0 && step.error?.afterChunks !== undefined)
    blocks.push({ kind: "text", text: FILLER_TEXT });
  return blocks;
}

function buildPayload(request: ProviderStreamRequest): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    model: request.model.id,
    system: request.systemPrompt,
    messages: toJson(request.messages) ?? [],
    tools: request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: toJson(tool.parameters),
    })),
    max_tokens: request.maxTokens ?? request.model.maxTokens,
    stream: true,
  };
  if (request.temperature !== undefined) payload.temperature = request.temperature;
  if (request.thinkingLevel !== undefined) payload.thinking = request.thinkingLevel;
  if (request.toolChoice) payload.tool_choice = { name: request.toolChoice.name };
  return payload;
}

/** Answers one request; never throws, always ends the stream. */
async function respond(
  request: ProviderStreamRequest,
  stream: EventStream<AssistantMessageEvent, AssistantMessage>,
  requestNumber: number,
  counters: Counters,
  load: StepLoader,
): Promise<void> {
  const signal = request.signal;
  const hooks = request.hooks ?? NO_HOOKS;
  const model = request.model?.id ?? SCRIPTED_MODEL.id;
  const out = new Normaliser(stream, model, request.model?.provider ?? SCRIPTED_PROVIDER, Date.now());
  const wait = async <T>(value: T | Promise<T>): Promise<T> => {
    const result = await untilAborted(value, signal);
    if (result === ABORT) throw new Aborted();
    return result;
  };
  const pause = async (ms: number | undefined) => {
    await sleep(ms ?? 0, signal);
    if (signal?.aborted) throw new Aborted();
  };
  const emit = async (raw: ScriptedRawEvent) => {
    await wait(hooks.streamEvent(raw));
    out.handle(raw);
  };
  const responseHeaders = (retryAfterMs?: number): Record<string, string> => ({
    "content-type": "text/event-stream",
    "x-scripted-request": String(requestNumber),
    ...(retryAfterMs === undefined
      ? {}
      : { "retry-after": String(Math.ceil(retryAfterMs / 1000)), "retry-after-ms": String(retryAfterMs) }),
  });

  try {
    if (signal?.aborted) throw new Aborted();
    await wait(hooks.headers({ "content-type": "application/json", ...request.headers }));
    const payload = buildPayload(request);
    const replaced = await wait(hooks.payload(payload));
    const sentPayload = isRecord(replaced) ? replaced : payload;
    const sent: SentRequest = {
      system: typeof sentPayload.system === "string" ? sentPayload.system : "",
      messages: Array.isArray(sentPayload.messages) ? sentPayload.messages : [],
      tools: Array.isArray(sentPayload.tools) ? sentPayload.tools : [],
    };

    // Which step answers: the payload's `scriptedStep` when a handler put one there, else step N of the script.
    let step: ScriptStep | undefined;
    let problem: string | undefined;
    const label = `Scripted step ${requestNumber}`;
    if (sentPayload.scriptedStep !== undefined) {
      const checked = validateStep(sentPayload.scriptedStep, "$.scriptedStep");
      if (checked.ok) step = checked.value;
      else problem = `The payload's scriptedStep is invalid at ${checked.path}: ${checked.message}`;
    } else {
      const loaded = await wait(load());
      if (!loaded.ok) problem = loaded.message;
      else if (requestNumber > loaded.steps.length) {
        const count = loaded.steps.length;
        problem = `No scripted response left for request ${requestNumber} (the script has ${count} step${count === 1 ? "" : "s"})`;
      } else {
        const entry = loaded.steps[requestNumber - 1]!;
        let value: unknown = entry;
        if (typeof entry === "function") {
          try {
            value = await wait(entry(request, requestNumber));
          } catch (error) {
            if (error instanceof Aborted) throw error;
            problem = `${label} failed: ${error instanceof Error ? error.message : String(error)}`;
          }
        }
        if (!problem) {
          const checked = validateStep(value);
          if (checked.ok) step = checked.value;
          else problem = `${label} is invalid at ${checked.path}: ${checked.message}`;
        }
      }
    }
    if (step && !problem) problem = checkExpect(step, sent, label);

    if (!step || problem) {
      const message = problem ?? `${label} is missing`;
      await wait(hooks.response(400, responseHeaders()));
      await emit({ type: "error", error: { kind: "bad_request", message, status: 400 } });
      return;
    }
    const answer: ScriptStep = step;

    await pause(answer.delayMs);
    const failure = answer.error;
    await wait(hooks.response(failure?.status ?? 200, responseHeaders(failure?.retryAfterMs)));
    const errorEvent: ScriptedRawEvent | undefined = failure && {
      type: "error",
      error: {
        kind: failure.kind,
        message: failure.message ?? `Scripted ${failure.kind} error`,
        ...(failure.status === undefined ? {} : { status: failure.status }),
        ...(failure.retryAfterMs === undefined ? {} : { retry_after_ms: failure.retryAfterMs }),
      },
    };
    if (errorEvent && failure?.afterChunks === undefined) {
      await emit(errorEvent);
      return;
    }

    const systemAndMessages =
      sent.system.length + sent.messages.reduce<number>((n, m) => n + messageChars(m), 0);
    const usage = (outputChars: number, final: boolean): RawUsage => {
      const estimate = tokens(outputChars);
      return {
        input_tokens: answer.usage?.input ?? tokens(systemAndMessages),
        output_tokens: answer.usage
          ? final
            ? answer.usage.output
            : Math.min(estimate, answer.usage.output)
          : estimate,
        cache_read_tokens: answer.usage?.cacheRead ?? 0,
        cache_write_tokens: answer.usage?.cacheWrite ?? 0,
      };
    };
    const cutAfter = failure?.afterChunks ?? Number.POSITIVE_INFINITY;
    const cut = async (chunks: number) => {
      if (!errorEvent || chunks < cutAfter) return false;
      await emit(errorEvent);
      return true;
    };

    await emit({ type: "message_start", id: `msg_scripted_${requestNumber}`, model, usage: usage(0, false) });
    let chunks = 0;
    let outputChars = 0;
    const blocks = blocksOf(answer, counters);
    for (const [index, block] of blocks.entries()) {
      if (await cut(chunks)) return;
      await emit({
        type: "block_start",
        index,
        kind: block.kind,
        ...(block.id === undefined ? {} : { id: block.id }),
        ...(block.name === undefined ? {} : { name: block.name }),
      });
      for (const text of chunkText(block.text)) {
        if (chunks > 0) await pause(answer.chunkDelayMs);
        if (await cut(chunks)) return;
        chunks++;
        outputChars += text.length;
        await emit({
          type: "chunk",
          index,
          kind: block.kind,
          text,
          output_tokens: usage(outputChars, false).output_tokens,
        });
      }
      await emit({ type: "block_end", index });
    }
    if (errorEvent) {
      await emit(errorEvent);
      return;
    }
    const hasToolCalls = blocks.some((block) => block.kind === "tool_call");
    const stopReason = answer.stopReason ?? (hasToolCalls ? "tool_use" : "stop");
    await emit({ type: "message_end", stop_reason: stopReason, usage: usage(outputChars, true) });
  } catch (error) {
    if (error instanceof Aborted || signal?.aborted) out.fail("aborted", ABORTED_MESSAGE);
    else
      out.fail(
        "unknown",
        `Scripted provider failed: ${error instanceof Error ? error.message : String(error)}`,
      );
  } finally {
    // Whatever happened, the stream ends (a no-op when it already has).
    out.fail("unknown", "Scripted provider ended without a result");
  }
}

/** The provider configuration answering from the steps `load` gives. Each configuration counts its own requests. */
export function scriptedProviderConfig(load: StepLoader): ProviderConfig {
  const counters: Counters = { requests: 0, toolCalls: 0 };
  return {
    api: SCRIPTED_API,
    models: [{ ...SCRIPTED_MODEL }],
    streamSimple(request: ProviderStreamRequest): AssistantMessageStream {
      const stream = new EventStream<AssistantMessageEvent, AssistantMessage>();
      const requestNumber = ++counters.requests;
      respond(request, stream, requestNumber, counters, load).catch(() => {
        stream.end({
          role: "assistant",
          content: [],
          api: SCRIPTED_API,
          provider: SCRIPTED_PROVIDER,
          model: SCRIPTED_MODEL.id,
          usage: {
            input: 0,
            output: 0,
            cacheRead: 0,
            cacheWrite: 0,
            totalTokens: 0,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
          },
          stopReason: "error",
          errorMessage: "Scripted provider failed",
          errorKind: "unknown",
          timestamp: Date.now(),
        });
      });
      return stream;
    },
  };
}

/** Steps given in code: a list (read live, so it may grow) or a function returning the list, called per request. */
export function codeSteps(steps?: readonly ScriptEntry[] | (() => readonly ScriptEntry[])): StepLoader {
  return async () => {
    try {
      return { ok: true, steps: (typeof steps === "function" ? steps() : steps) ?? [] };
    } catch (error) {
      return {
        ok: false,
        message: `The scripted steps could not be read: ${(error as Error)?.message ?? error}`,
      };
    }
  };
}

/** An extension factory registering the `scripted` provider with steps given in code. */
export function createScriptedProvider(
  steps?: readonly ScriptEntry[] | (() => readonly ScriptEntry[]),
): (knightcode: ExtensionAPI) => void {
  return (knightcode) => {
    knightcode.registerProvider(SCRIPTED_PROVIDER, scriptedProviderConfig(codeSteps(steps)));
  };
}

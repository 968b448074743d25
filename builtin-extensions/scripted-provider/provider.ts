/**
 * The scripted provider: answers each request with the next step of a script, streamed like a network provider.
 * It goes through the kit's request runner and AssistantMessageWriter as the network providers do, so the hooks,
 * the events with their cumulative partials, usage, errors and aborts a test sees are what real providers produce.
 */
import {
  type AssistantMessageStream,
  type AssistantMessageWriter,
  type ExtensionAPI,
  errorMessage,
  MalformedEventError,
  type ProviderConfig,
  type ProviderErrorKind,
  type ProviderStreamRequest,
  type ProviderWire,
  runProviderRequest,
  type Usage,
  type WireAnswer,
} from "@knightcodeai/cli/kit";
import { SCRIPTED_API, SCRIPTED_MODEL, SCRIPTED_PROVIDER } from "./names.js";
import type { ScriptStep } from "./schema.js";
import { validateStep } from "./schema.js";

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

/** What the payload that was "sent" says. */
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

/** Waits `ms`, or less when the signal aborts (the timer is cleared). */
function sleep(ms: number | undefined, signal: AbortSignal): Promise<void> {
  if (!ms || ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Normalises the raw events into the writer, as a network provider's normaliser does with its API's events. */
class RawEventNormaliser {
  /** The writer's content index of each raw block index. */
  readonly #blocks: { kind: RawBlockKind; at: number }[] = [];

  constructor(private readonly writer: AssistantMessageWriter) {}

  handle(raw: ScriptedRawEvent): void {
    const writer = this.writer;
    switch (raw.type) {
      case "message_start":
        writer.usage(usageOf(raw.usage));
        writer.start();
        return;
      case "block_start": {
        const at =
          raw.kind === "text"
            ? writer.textStart()
            : raw.kind === "thinking"
              ? writer.thinkingStart()
              : writer.toolCallStart(raw.id ?? "", raw.name ?? "");
        this.#blocks[raw.index] = { kind: raw.kind, at };
        return;
      }
      case "chunk": {
        const block = this.#block(raw.index);
        writer.usage({ output: raw.output_tokens });
        if (block.kind === "text") writer.textDelta(block.at, raw.text);
        else if (block.kind === "thinking") writer.thinkingDelta(block.at, raw.text);
        else writer.toolCallDelta(block.at, raw.text);
        return;
      }
      case "block_end": {
        const block = this.#block(raw.index);
        if (block.kind === "text") writer.textEnd(block.at);
        else if (block.kind === "thinking") writer.thinkingEnd(block.at);
        else writer.toolCallEnd(block.at);
        return;
      }
      case "message_end":
        writer.usage(usageOf(raw.usage));
        writer.done(raw.stop_reason === "tool_use" ? "toolUse" : raw.stop_reason);
        return;
      case "error":
        writer.fail(raw.error.kind, raw.error.message, raw.error.retry_after_ms);
        return;
      default:
        throw new MalformedEventError(`unknown raw event ${JSON.stringify(raw)}`);
    }
  }

  #block(index: number): { kind: RawBlockKind; at: number } {
    const block = this.#blocks[index];
    if (!block) throw new MalformedEventError(`block ${index} was never started`);
    return block;
  }
}

function usageOf(raw: RawUsage): Partial<Omit<Usage, "cost" | "totalTokens">> {
  return {
    input: raw.input_tokens,
    output: raw.output_tokens,
    cacheRead: raw.cache_read_tokens,
    cacheWrite: raw.cache_write_tokens,
  };
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

/** Which step answers: the payload's `scriptedStep` when a handler put one there, else step N of the script. */
async function chooseStep(
  payload: Record<string, unknown>,
  request: ProviderStreamRequest,
  requestNumber: number,
  load: StepLoader,
  label: string,
): Promise<{ step: ScriptStep } | { problem: string }> {
  if (payload.scriptedStep !== undefined) {
    const checked = validateStep(payload.scriptedStep, "$.scriptedStep");
    return checked.ok
      ? { step: checked.value }
      : { problem: `The payload's scriptedStep is invalid at ${checked.path}: ${checked.message}` };
  }
  const loaded = await load();
  if (!loaded.ok) return { problem: loaded.message };
  if (requestNumber > loaded.steps.length) {
    const count = loaded.steps.length;
    return {
      problem: `No scripted response left for request ${requestNumber} (the script has ${count} step${count === 1 ? "" : "s"})`,
    };
  }
  const entry = loaded.steps[requestNumber - 1]!;
  let value: unknown = entry;
  if (typeof entry === "function") {
    try {
      value = await entry(request, requestNumber);
    } catch (error) {
      return { problem: `${label} failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  const checked = validateStep(value);
  return checked.ok
    ? { step: checked.value }
    : { problem: `${label} is invalid at ${checked.path}: ${checked.message}` };
}

/**
 * The script as a ProviderWire: "sending" picks the step and checks its `expect`, the answer streams the step as
 * raw events in small chunks, and the kit's request runner does the rest as for any network provider.
 */
function scriptedWire(
  request: ProviderStreamRequest,
  writer: AssistantMessageWriter,
  requestNumber: number,
  counters: Counters,
  load: StepLoader,
): ProviderWire {
  const model = request.model.id;
  const name = request.model.provider;
  // Held until the step is chosen, then dropped: each turn's request carries its own copy of the conversation, and
  // keeping it through the stream (the wire lives that long) grows the memory of long sessions (the RPC test of
  // 1,000 prompts measures it).
  let unsent: ProviderStreamRequest | undefined = request;
  const normaliser = new RawEventNormaliser(writer);
  const responseHeaders = (retryAfterMs?: number): Record<string, string> => ({
    "content-type": "text/event-stream",
    "x-scripted-request": String(requestNumber),
    ...(retryAfterMs === undefined
      ? {}
      : { "retry-after": String(Math.ceil(retryAfterMs / 1000)), "retry-after-ms": String(retryAfterMs) }),
  });

  /** The raw events of a step: content in chunks, cut by the step's error after `afterChunks` chunks. */
  async function* stream(
    answer: ScriptStep,
    inputChars: number,
    signal: AbortSignal,
  ): AsyncIterable<ScriptedRawEvent> {
    const failure = answer.error;
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
      yield errorEvent;
      return;
    }
    const usage = (outputChars: number, final: boolean): RawUsage => {
      const estimate = tokens(outputChars);
      return {
        input_tokens: answer.usage?.input ?? tokens(inputChars),
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

    yield { type: "message_start", id: `msg_scripted_${requestNumber}`, model, usage: usage(0, false) };
    let chunks = 0;
    let outputChars = 0;
    const blocks = blocksOf(answer, counters);
    for (const [index, block] of blocks.entries()) {
      if (errorEvent && chunks >= cutAfter) {
        yield errorEvent;
        return;
      }
      yield {
        type: "block_start",
        index,
        kind: block.kind,
        ...(block.id === undefined ? {} : { id: block.id }),
        ...(block.name === undefined ? {} : { name: block.name }),
      };
      for (const text of chunkText(block.text)) {
        if (chunks > 0) await sleep(answer.chunkDelayMs, signal);
        if (signal.aborted) return;
        if (errorEvent && chunks >= cutAfter) {
          yield errorEvent;
          return;
        }
        chunks++;
        outputChars += text.length;
        yield {
          type: "chunk",
          index,
          kind: block.kind,
          text,
          output_tokens: usage(outputChars, false).output_tokens,
        };
      }
      yield { type: "block_end", index };
    }
    if (errorEvent) {
      yield errorEvent;
      return;
    }
    const hasToolCalls = blocks.some((block) => block.kind === "tool_call");
    const stopReason = answer.stopReason ?? (hasToolCalls ? "tool_use" : "stop");
    yield { type: "message_end", stop_reason: stopReason, usage: usage(outputChars, true) };
  }

  return {
    name,
    buildPayload: () => buildPayload(unsent!),
    async send({ payload, signal }) {
      const request = unsent!;
      unsent = undefined;
      // What the payload that was "sent" says, after handlers of `before_provider_request` had their say.
      const sent: SentRequest = {
        system: typeof payload.system === "string" ? payload.system : "",
        messages: Array.isArray(payload.messages) ? payload.messages : [],
        tools: Array.isArray(payload.tools) ? payload.tools : [],
      };
      // A step that cannot answer is a request the "server" refuses, as a network provider's 400 answer.
      const refused = (message: string): WireAnswer => ({
        status: 400,
        headers: responseHeaders(),
        failure: { kind: "bad_request", message },
      });
      const label = `Scripted step ${requestNumber}`;
      const chosen = await chooseStep(payload, request, requestNumber, load, label);
      if ("problem" in chosen) return refused(chosen.problem);
      const answer = chosen.step;
      const unmet = checkExpect(answer, sent, label);
      if (unmet) return refused(unmet);
      await sleep(answer.delayMs, signal);
      const failure = answer.error;
      const headers = responseHeaders(failure?.retryAfterMs);
      // An error with an HTTP status and no content before it is an error answer: no stream, as over HTTP.
      if (failure && failure.afterChunks === undefined && (failure.status ?? 200) >= 400) {
        return {
          status: failure.status!,
          headers,
          failure: {
            kind: failure.kind,
            message: failure.message ?? `Scripted ${failure.kind} error`,
            ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
          },
        };
      }
      const inputChars = sent.system.length + sent.messages.reduce<number>((n, m) => n + messageChars(m), 0);
      return { status: failure?.status ?? 200, headers, events: stream(answer, inputChars, signal) };
    },
    handle: (event) => normaliser.handle(event as ScriptedRawEvent),
  };
}

/** The provider configuration answering from the steps `load` gives. Each configuration counts its own requests. */
/** The scripted `streamSimple`: each request takes the next step `load` gives. */
export function scriptedStream(load: StepLoader): (request: ProviderStreamRequest) => AssistantMessageStream {
  const counters: Counters = { requests: 0, toolCalls: 0 };
  return (request) => {
    const requestNumber = ++counters.requests;
    return runProviderRequest(request, (writer) =>
      scriptedWire(request, writer, requestNumber, counters, load),
    );
  };
}

export function scriptedProviderConfig(load: StepLoader): ProviderConfig {
  return {
    api: SCRIPTED_API,
    models: [{ ...SCRIPTED_MODEL }],
    testOnly: true,
    streamSimple: scriptedStream(load),
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
        message: `The scripted steps could not be read: ${errorMessage(error)}`,
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

/**
 * `streamSimple` for the `google-generative-ai` API: the Gemini API's `streamGenerateContent` with `alt=sse`. The
 * kit's request runner drives the request (hooks, abort, timeout, failures); this file sends the one POST with
 * Node's own `http`/`https` (no SDK: a request needs none) and normalises the streamed `GenerateContentResponse`
 * chunks into the assistant message.
 */
import { randomBytes } from "node:crypto";
import {
  type AssistantMessageStream,
  type AssistantMessageWriter,
  agentFilePath,
  classifyHttpError,
  classifyStreamError,
  headerRecord,
  MalformedEventError,
  type ProviderFailure,
  type ProviderStreamRequest,
  type ProviderWire,
  parseRetryAfter,
  postRequest,
  readBodyText,
  runProviderRequest,
  SseLineSplitter,
  VERSION,
} from "@knightcodeai/cli/kit";
import { buildPayload } from "./convert.js";
import { GOOGLE_BASE_URL, GOOGLE_KEY_ENV, GOOGLE_PROVIDER } from "./models.js";

/** Without an answer (headers, then each event) for this long, the request fails with "timeout". */
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

/** Streams one response. Returns at once; never throws; the stream always ends. */
export function streamGoogle(request: ProviderStreamRequest): AssistantMessageStream {
  return runProviderRequest(request, (writer) => googleWire(request, writer));
}

/**
 * The address of the streaming call. The base is the API's host (`https://generativelanguage.googleapis.com`) or,
 * as pi writes it, the host with its version (`.../v1beta`); a base without a version gets `/v1beta`.
 */
export function streamUrl(baseUrl: string | undefined, modelId: string): string {
  let base = (baseUrl?.trim() || GOOGLE_BASE_URL).replace(/\/+$/, "");
  if (!/\/v\d+(?:alpha|beta)?\d*$/.test(base)) base = `${base}/v1beta`;
  const model = encodeURIComponent(modelId.replace(/^models\//, ""));
  return `${base}/models/${model}:streamGenerateContent?alt=sse`;
}

function keyHint(request: ProviderStreamRequest): string {
  const provider = request.model.provider;
  const auth = agentFilePath(request, "auth.json");
  return provider === GOOGLE_PROVIDER
    ? `Set ${GOOGLE_KEY_ENV} (a key from aistudio.google.com/apikey), or add a key to ${auth} (/login in the terminal UI)`
    : `Set the apiKey of "${provider}" in ${agentFilePath(request, "models.json")}, or add a key to ${auth} (/login in the terminal UI)`;
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** The Gemini API as a ProviderWire. */
function googleWire(request: ProviderStreamRequest, writer: AssistantMessageWriter): ProviderWire {
  const provider = request.model.provider;
  const hint = keyHint(request);
  const url = streamUrl(request.baseUrl, request.model.id);
  const normaliser = new Normaliser(writer, hint);
  return {
    name: provider,
    endpoint: url.replace(/\/models\/.*$/, ""),
    timeoutMs: positive(request.compat?.timeoutMs) ?? DEFAULT_TIMEOUT_MS,
    refuse() {
      if (!request.apiKey) return { kind: "auth", message: `No API key for ${provider}. ${hint}.` };
      if (!/^https?:\/\/[^/]/i.test(url) || !URL.canParse(url)) {
        return {
          kind: "bad_request",
          message:
            `The baseUrl of "${provider}" (${JSON.stringify(request.baseUrl)}) is not an http(s) URL; set it in ` +
            `${agentFilePath(request, "models.json")}, e.g. "${GOOGLE_BASE_URL}".`,
        };
      }
      return undefined;
    },
    buildPayload: () => ({ ...buildPayload(request) }),
    async send({ payload, headers, signal, alive }) {
      const response = await postRequest(
        new URL(url),
        JSON.stringify(payload),
        {
          "content-type": "application/json",
          accept: "text/event-stream",
          "user-agent": `knightcode/${VERSION}`,
          "x-goog-api-key": request.apiKey!,
          ...headers,
        },
        signal,
      );
      const status = response.statusCode ?? 0;
      const answer = { status, headers: headerRecord(response.headers) };
      if (status >= 400) {
        const failure = httpFailure(status, await readBodyText(response), answer.headers, provider, hint);
        if (status === 404) {
          failure.message = `${failure.message.replace(/[.\s]+$/, "")}. Check the model id "${request.model.id}" and the baseUrl.`;
        }
        return { ...answer, failure };
      }
      const type = answer.headers["content-type"] ?? "";
      if (/text\/html/i.test(type)) {
        response.destroy();
        return {
          ...answer,
          failure: {
            kind: "bad_request",
            message: `${provider} answered with a web page, not an event stream: check its baseUrl "${request.baseUrl ?? GOOGLE_BASE_URL}"`,
          },
        };
      }
      if (/application\/json/i.test(type)) {
        // Without `alt=sse` (a proxy that dropped it) the API answers a JSON array of the same chunks.
        const text = await readBodyText(response);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new MalformedEventError(`invalid JSON instead of an event stream: ${preview(text)}`);
        }
        return { ...answer, events: Array.isArray(parsed) ? parsed : [parsed] };
      }
      return { ...answer, events: sseEvents(response, alive) };
    },
    handle: (event) => normaliser.handle(event),
    end: () => normaliser.finish(),
  };
}

/** The parsed `data:` events of an SSE body. */
async function* sseEvents(body: AsyncIterable<Uint8Array>, alive: () => void): AsyncIterable<unknown> {
  const splitter = new SseLineSplitter();
  const text = new TextDecoder("utf-8", { ignoreBOM: true });
  let data: string[] = [];
  let ready: string[] = [];
  let sawData = false;
  const line = (bytes: Uint8Array, comment: boolean) => {
    if (bytes.length === 0) {
      if (data.length > 0) ready.push(data.join("\n"));
      data = [];
      return;
    }
    if (comment) return;
    sawData = true;
    let value = text.decode(bytes);
    if (value.charCodeAt(0) === 0xfeff) value = value.slice(1);
    if (!value.startsWith("data:")) return; // event names, ids and retry lines: Gemini sends data only
    value = value.slice(5);
    data.push(value.startsWith(" ") ? value.slice(1) : value);
  };
  const parse = (raw: string): unknown => {
    try {
      return JSON.parse(raw);
    } catch {
      throw new MalformedEventError(`not JSON: ${preview(raw)}`);
    }
  };
  for await (const chunk of body) {
    sawData = false;
    splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk, line);
    // Part of a long event is a sign of life; a keep-alive comment is not.
    if (sawData || splitter.dataPending) alive();
    const events = ready;
    ready = [];
    for (const raw of events) yield parse(raw);
  }
  splitter.end(line);
  // A last event without its blank line counts only when it is whole: a cut-off one is a dropped connection.
  if (data.length > 0) {
    const raw = data.join("\n");
    try {
      JSON.parse(raw);
      ready.push(raw);
    } catch {
      // incomplete: the runner reports the stream as ended early
    }
  }
  for (const raw of ready) yield parse(raw);
}

/**
 * Turns `GenerateContentResponse` chunks into writer calls. Text parts become text, `thought: true` parts thinking
 * (text and thinking alternate in one open block at a time); each `functionCall` part is a whole tool call; a
 * part's `thoughtSignature` is kept on the block it belongs to (the thinking block, the text block or the tool call)
 * so it goes back with the next request. `usageMetadata` is cumulative; `finishReason` ends the message when the
 * stream ends.
 */
export class Normaliser {
  private open: { kind: "text" | "thinking"; index: number; signature?: string } | undefined;
  private finishReason: string | undefined;
  private readonly ids = new Set<string>();
  private calls = 0;

  constructor(
    private readonly writer: AssistantMessageWriter,
    private readonly keyHint = "Set the provider's key",
  ) {}

  handle(chunk: unknown): void {
    if (!isRecord(chunk)) throw new MalformedEventError(`expected a JSON object, got ${preview(chunk)}`);
    const writer = this.writer;
    const provider = writer.message.provider;
    if (chunk.error !== undefined) {
      const error = isRecord(chunk.error) ? chunk.error : { message: String(chunk.error) };
      const failure = classifyStreamError({
        provider,
        ...(typeof error.message === "string" ? { message: error.message } : {}),
        ...(typeof error.status === "string" ? { type: error.status } : {}),
        ...(typeof error.code === "number" ? { status: error.code } : {}),
        keyHint: this.keyHint,
      });
      writer.fail(failure.kind, failure.message, failure.retryAfterMs);
      return;
    }
    writer.start();
    if (chunk.usageMetadata !== undefined) {
      if (!isRecord(chunk.usageMetadata)) throw new MalformedEventError("`usageMetadata` is not an object");
      this.usage(chunk.usageMetadata);
    }
    const candidates = chunk.candidates;
    if (candidates === undefined) {
      const feedback = isRecord(chunk.promptFeedback) ? chunk.promptFeedback : {};
      if (typeof feedback.blockReason === "string") {
        writer.fail(
          "bad_request",
          `${provider} refused the prompt (blockReason ${feedback.blockReason})` +
            `${typeof feedback.blockReasonMessage === "string" ? `: ${feedback.blockReasonMessage}` : ""}`,
        );
      }
      return;
    }
    if (!Array.isArray(candidates)) throw new MalformedEventError("`candidates` is not an array");
    const candidate = candidates[0];
    if (candidate === undefined) return;
    if (!isRecord(candidate)) throw new MalformedEventError("a candidate is not an object");
    if (candidate.content !== undefined) {
      if (!isRecord(candidate.content)) throw new MalformedEventError("`content` is not an object");
      const parts = candidate.content.parts ?? [];
      if (!Array.isArray(parts)) throw new MalformedEventError("`content.parts` is not an array");
      for (const part of parts) {
        if (!isRecord(part)) throw new MalformedEventError("a part is not an object");
        this.part(part);
      }
    }
    if (typeof candidate.finishReason === "string" && candidate.finishReason) {
      this.finishReason = candidate.finishReason;
    }
  }

  private part(part: Record<string, unknown>): void {
    const signature =
      typeof part.thoughtSignature === "string" && part.thoughtSignature ? part.thoughtSignature : undefined;
    if (part.functionCall !== undefined) {
      const call = part.functionCall;
      if (!isRecord(call) || typeof call.name !== "string" || !call.name)
        throw new MalformedEventError(`a functionCall without a name: ${preview(call)}`);
      if (call.args !== undefined && call.args !== null && !isRecord(call.args))
        throw new MalformedEventError(`functionCall "${call.name}" has args that are not an object`);
      this.closeOpen();
      const args = isRecord(call.args) ? call.args : {};
      const index = this.writer.toolCallStart(this.callId(call.id), call.name);
      this.writer.toolCallDelta(index, JSON.stringify(args));
      if (signature) this.writer.toolCallSignature(index, signature);
      this.writer.toolCallEnd(index, args);
      this.calls++;
      return;
    }
    if (typeof part.text === "string") {
      const kind = part.thought === true ? "thinking" : "text";
      if (this.open?.kind !== kind) {
        this.closeOpen();
        this.open = { kind, index: kind === "text" ? this.writer.textStart() : this.writer.thinkingStart() };
      }
      if (kind === "text") this.writer.textDelta(this.open.index, part.text);
      else this.writer.thinkingDelta(this.open.index, part.text);
      if (signature) this.open.signature = signature;
      return;
    }
    // A signature on a part of its own belongs to what it follows.
    if (signature && this.open) this.open.signature = signature;
    // executableCode, codeExecutionResult, inlineData from the model: nothing to show or send back here.
  }

  /** Gemini's own id when it sent one (and it is new in this message), else one made here. */
  private callId(id: unknown): string {
    let chosen = typeof id === "string" && id && !this.ids.has(id) ? id : undefined;
    while (!chosen || this.ids.has(chosen)) chosen = `call_${randomBytes(8).toString("hex")}`;
    this.ids.add(chosen);
    return chosen;
  }

  private closeOpen(): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    if (open.kind === "text") this.writer.textEnd(open.index, open.signature);
    else {
      if (open.signature) this.writer.thinkingSignature(open.index, open.signature);
      this.writer.thinkingEnd(open.index);
    }
  }

  private usage(raw: Record<string, unknown>): void {
    const number = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
    const prompt = number(raw.promptTokenCount) + number(raw.toolUsePromptTokenCount);
    const cached = number(raw.cachedContentTokenCount);
    this.writer.usage({
      // promptTokenCount includes the cached part; thinking is billed as output.
      input: Math.max(0, prompt - cached),
      output: number(raw.candidatesTokenCount) + number(raw.thoughtsTokenCount),
      cacheRead: cached,
    });
  }

  /** The stream ended: with a finishReason the message is complete, without one the connection was lost. */
  finish(): void {
    const writer = this.writer;
    const provider = writer.message.provider;
    const reason = this.finishReason;
    if (!reason) {
      writer.fail("network", `${provider}: the stream ended before the response was complete`);
      return;
    }
    this.closeOpen();
    switch (reason) {
      case "STOP":
        writer.done(this.calls > 0 ? "toolUse" : "stop");
        return;
      case "MAX_TOKENS":
        writer.done("length");
        return;
      default:
        writer.fail(
          "unknown",
          `${provider} stopped the answer: ${FINISH_REASONS[reason] ?? "finishReason"} (${reason})`,
        );
    }
  }
}

/** What the finish reasons that end an answer early mean (ai.google.dev/api/generate-content#FinishReason). */
const FINISH_REASONS: Record<string, string> = {
  SAFETY: "its safety filters blocked the response",
  RECITATION: "the response recited training data too closely",
  LANGUAGE: "the response was in a language the model does not support",
  BLOCKLIST: "the response contained a term on the blocklist",
  PROHIBITED_CONTENT: "the response may contain prohibited content",
  SPII: "the response may contain sensitive personal information",
  MALFORMED_FUNCTION_CALL: "the model wrote a function call that is not valid",
  UNEXPECTED_TOOL_CALL: "the model called a tool that was not offered",
  TOO_MANY_TOOL_CALLS: "the model made too many tool calls in a row",
  IMAGE_SAFETY: "its safety filters blocked the generated image",
  OTHER: "the model stopped for an unspecified reason",
};

/**
 * An HTTP error answer: `{"error": {"code": 400, "message": "...", "status": "INVALID_ARGUMENT", "details": [...]}}`.
 * Gemini answers a wrong key with a 400 whose details name `API_KEY_INVALID`; that is an auth failure. A 429's
 * `RetryInfo` detail (`"retryDelay": "37s"`) gives the wait when no `retry-after` header does.
 */
export function httpFailure(
  status: number,
  body: string,
  headers: Record<string, string>,
  provider: string,
  keyHint: string,
): ProviderFailure {
  const error = errorOf(body);
  const message = error.message ?? preview(body.trim());
  const reasons = error.details.map((d) => (typeof d.reason === "string" ? d.reason : "")).join(" ");
  if (/API_KEY_INVALID|API_KEY_SERVICE_BLOCKED/.test(reasons) || /API key not valid/i.test(message)) {
    return { kind: "auth", message: `${provider} refused the API key (${status}): ${message}. ${keyHint}.` };
  }
  const failure = classifyHttpError({
    status,
    body: message,
    headers,
    provider,
    keyHint,
    ...(error.status ? { errorType: error.status } : {}),
  });
  if (failure.retryAfterMs === undefined && parseRetryAfter(headers) === undefined) {
    const delay = error.details.find((d) => typeof d.retryDelay === "string")?.retryDelay as
      | string
      | undefined;
    const seconds = delay ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
    if (seconds !== undefined && (failure.kind === "rate_limit" || failure.kind === "overloaded"))
      failure.retryAfterMs = Math.round(Number(seconds) * 1000);
  }
  return failure;
}

function errorOf(body: string): { message?: string; status?: string; details: Record<string, unknown>[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { details: [] };
  }
  // Some Google endpoints wrap the error in an array.
  if (Array.isArray(parsed)) parsed = parsed[0];
  const error = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined;
  if (!error) return { details: [] };
  return {
    ...(typeof error.message === "string" && error.message.trim() ? { message: error.message.trim() } : {}),
    ...(typeof error.status === "string" ? { status: error.status } : {}),
    details: Array.isArray(error.details) ? error.details.filter(isRecord) : [],
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function preview(value: unknown): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  text = text.replace(/\s+/g, " ").trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * What went wrong with a provider request, as an error kind the agent loop acts on (retry, compact, give up) and a
 * message a person can act on. One classification for every provider: an HTTP error answer, an error the server
 * reports inside a stream, and a failure without an answer (abort, timeout, a refused or dropped connection).
 */
import type { ProviderErrorKind } from "../../../kernel/index.js";

export interface ProviderFailure {
  kind: ProviderErrorKind;
  message: string;
  retryAfterMs?: number;
}

/** Ends a provider request with exactly this failure; the request runner reports it as it is. */
export class ProviderRequestError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }

  get failure(): ProviderFailure {
    return {
      kind: this.kind,
      message: this.message,
      ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
    };
  }
}

/**
 * A `before_provider_request` handler returned something other than a payload object. Nothing is sent: a request
 * without the change the handler meant would fail in a less clear way at the provider, or worse, succeed. In a
 * session the bus reports the handler's failure as `extension_error`, which names the extension.
 */
export class InvalidPayloadError extends ProviderRequestError {
  constructor(readonly value: unknown) {
    super(
      "bad_request",
      `A before_provider_request handler returned ${describeValue(value)} instead of a payload object, so the ` +
        "request was not sent. A handler returns the payload to send (changed or new) or nothing to keep it.",
    );
  }
}

export class InvalidHeadersError extends ProviderRequestError {
  constructor(readonly value: unknown) {
    super(
      "bad_request",
      `A before_provider_headers handler returned ${describeValue(value)} instead of a headers object (names to ` +
        "strings, or null to delete one), so the request was not sent.",
    );
  }
}

/** A raw stream event that is not what the wire API sends; normalisers throw it, the runner names the provider. */
export class MalformedEventError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = new.target.name;
  }
}

/** "a string", "null", "an array": what a value is, for messages about a value of the wrong type. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

const OVERFLOW =
  /context[ _-]?(length|window|size)|too many tokens|maximum context|prompt is too long|exceeds? the (model'?s )?(maximum|context)|exceeds? the available context|input is too long|context_length_exceeded|exceed_context_size/i;

/**
 * An HTTP error answer.
 * @param body the provider's own message (from the JSON error body).
 * @param headers response headers (for retry-after).
 * @param errorType, errorCode the error's `type` and `code` fields, when the body has them.
 * @param keyHint how to configure the key, for authentication messages.
 */
export function classifyHttpError(options: {
  status: number;
  body?: string;
  headers?: Record<string, string | undefined> | Headers;
  provider: string;
  keyHint?: string;
  errorType?: string;
  errorCode?: string;
}): ProviderFailure {
  const { status, provider } = options;
  const body = (options.body ?? "").trim();
  const retryAfterMs = parseRetryAfter(options.headers);
  const detail = body ? `: ${body}` : "";
  const retry = retryAfterMs !== undefined ? { retryAfterMs } : {};
  const signature = `${options.errorType ?? ""} ${options.errorCode ?? ""}`;
  if (status === 401 || status === 403) {
    return {
      kind: "auth",
      message: `${provider} refused the API key (${status})${detail}. ${options.keyHint ?? "Check the key configured for this provider."}`,
    };
  }
  // An exhausted quota is a billing state, not a passing limit: retrying (with backoff, as the loop does for rate
  // limits) cannot succeed until someone adds credits.
  if (status === 429 && /insufficient_quota/.test(signature)) {
    return {
      kind: "bad_request",
      message: `${provider} refused the request: the account has no quota left (429)${detail}`,
    };
  }
  if (status === 429)
    return { kind: "rate_limit", message: `${provider} rate limit reached (429)${detail}`, ...retry };
  if (status === 529 || status === 503 || options.errorType === "overloaded_error") {
    return { kind: "overloaded", message: `${provider} is overloaded (${status})${detail}`, ...retry };
  }
  if (status >= 400 && status < 500 && OVERFLOW.test(`${body} ${signature}`)) {
    return {
      kind: "context_overflow",
      message: `${provider}: the conversation is too long for the model${detail}`,
    };
  }
  if (status >= 500)
    return { kind: "overloaded", message: `${provider} server error (${status})${detail}`, ...retry };
  if (status >= 400)
    return { kind: "bad_request", message: `${provider} rejected the request (${status})${detail}` };
  return { kind: "unknown", message: `${provider} answered with status ${status}${detail}` };
}

/**
 * An error the server reported inside a stream that had started (HTTP 200): an `error` event, a failed response.
 * The kind comes from the HTTP-like status when the error carries one, else from its type and code.
 */
export function classifyStreamError(options: {
  provider: string;
  message?: string;
  type?: string;
  code?: string;
  status?: number;
  keyHint?: string;
}): ProviderFailure {
  const { provider } = options;
  const message = options.message?.trim() || "the server reported an error without a message";
  const label = [options.type, options.code]
    .filter((part) => part && part !== String(options.status))
    .join(", ");
  const described = `${label ? ` (${label})` : ""}: ${message}`;
  if (options.status) {
    const failure = classifyHttpError({
      status: options.status,
      body: `${message}${label ? ` (${label})` : ""}`,
      provider,
      ...(options.keyHint ? { keyHint: options.keyHint } : {}),
      ...(options.type ? { errorType: options.type } : {}),
      ...(options.code ? { errorCode: options.code } : {}),
    });
    return { ...failure, message: `${failure.message} (in the stream)` };
  }
  const kind = streamErrorKind(`${options.type ?? ""} ${options.code ?? ""}`, message);
  const retryAfterMs =
    kind === "rate_limit" || kind === "overloaded" ? retryAfterFromMessage(message) : undefined;
  const text =
    kind === "overloaded"
      ? `${provider} is overloaded${described}`
      : kind === "rate_limit"
        ? `${provider} rate limit reached${described}`
        : kind === "context_overflow"
          ? `${provider}: the conversation is too long for the model${described}`
          : kind === "auth"
            ? `${provider} stream error${described}. ${options.keyHint ?? "Check the key configured for this provider."}`
            : `${provider} stream error${described}`;
  return { kind, message: text, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

/** The kind of a streamed error by its type and code (the names Anthropic, OpenAI and compatible servers use). */
function streamErrorKind(signature: string, message: string): ProviderErrorKind {
  const s = signature.toLowerCase();
  if (/context_length|context_window|exceed_context|request_too_large/.test(s) || OVERFLOW.test(message)) {
    return "context_overflow";
  }
  if (/insufficient_quota|billing/.test(s)) return "bad_request"; // billing, not a passing limit
  if (/rate_limit|too_many_requests|ratelimit/.test(s)) return "rate_limit";
  if (/overload|server_error|api_error|unavailable|slow_down|internal|capacity/.test(s)) return "overloaded";
  if (/timeout|timed_out/.test(s)) return "timeout";
  if (/auth|api_key|permission|unauthori[sz]ed|forbidden/.test(s)) return "auth";
  if (/invalid|bad_request|image|unsupported|policy|not_found|residency|mismatch/.test(s))
    return "bad_request";
  if (/overloaded/i.test(message)) return "overloaded";
  return "unknown";
}

/** `Please try again in 1.5s` / `in 20ms`, as rate-limit messages say. */
function retryAfterFromMessage(message: string): number | undefined {
  const match = /try again in (\d+(?:\.\d+)?)\s*(ms|s)\b/i.exec(message);
  if (!match) return undefined;
  const value = Number(match[1]);
  return Math.round(match[2]!.toLowerCase() === "ms" ? value : value * 1000);
}

/** Connection errors that mean the address is wrong or nothing listens there. */
const UNREACHABLE = /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/;

/**
 * Errors without an HTTP answer: aborts, timeouts, refused or dropped connections.
 * @param context.endpoint the address the request went to, for the message.
 * @param context.streaming whether the answer had started (a dropped stream rather than a failed request).
 */
export function classifyTransportError(
  error: unknown,
  provider: string,
  signal?: AbortSignal,
  context: { endpoint?: string; streaming?: boolean } = {},
): ProviderFailure {
  const e = error as { name?: string; message?: string } | undefined;
  const message = e?.message ?? String(error);
  if (signal?.aborted || e?.name === "AbortError" || /aborted/i.test(e?.name ?? "")) {
    return { kind: "aborted", message: "Request was aborted" };
  }
  if (/timeout|timed out/i.test(`${e?.name ?? ""} ${message}`)) {
    return { kind: "timeout", message: `${provider} did not answer in time (${message})` };
  }
  const root = rootCause(error);
  const detail = `${root.code ? `${root.code}: ` : ""}${root.message}`;
  const at = context.endpoint ? ` at ${context.endpoint}` : "";
  if (context.streaming) {
    return {
      kind: "network",
      message: `The connection to ${provider} was lost before the response was complete (${detail})`,
    };
  }
  if (UNREACHABLE.test(root.code ?? "")) {
    const advice =
      root.code === "ECONNREFUSED" ? "Is the server running?" : "Check the address and the network.";
    return { kind: "network", message: `Could not reach ${provider}${at} (${detail}). ${advice}` };
  }
  return { kind: "network", message: `The request to ${provider}${at} failed (${detail})` };
}

/** The innermost cause of a transport error (SDKs wrap fetch's error, which wraps the socket's). */
function rootCause(error: unknown): { code?: string; message: string } {
  let current = error as { cause?: unknown; code?: unknown; message?: unknown } | undefined;
  let code: string | undefined;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; current && typeof current === "object" && depth < 6; depth++) {
    if (typeof current.code === "string" && !code) code = current.code;
    if (typeof current.message === "string" && current.message) message = current.message;
    current = current.cause as typeof current;
  }
  return code ? { code, message } : { message };
}

/** `retry-after-ms`, then `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfter(
  headers: Record<string, string | undefined> | Headers | undefined,
): number | undefined {
  if (!headers) return undefined;
  const get = (name: string) =>
    headers instanceof Headers
      ? (headers.get(name) ?? undefined)
      : (headers[name] ?? headers[name.toLowerCase()]);
  const ms = get("retry-after-ms");
  if (ms !== undefined && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = get("retry-after");
  if (value === undefined) return undefined;
  if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

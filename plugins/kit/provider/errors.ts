/** Maps what went wrong with a provider request to an error kind and a message a person can act on. */
import type { ProviderErrorKind } from "../../../kernel/index.js";

export interface ProviderFailure {
  kind: ProviderErrorKind;
  message: string;
  retryAfterMs?: number;
}

const OVERFLOW =
  /context[ _-]?(length|window)|too many tokens|maximum context|prompt is too long|exceeds? the (model'?s )?(maximum|context)|input is too long|context_length_exceeded/i;

/**
 * @param status HTTP status, when the server answered.
 * @param body the provider's error message (from the JSON error body).
 * @param headers response headers (for retry-after).
 * @param provider the provider name and @param keyHint how the key is configured, for authentication messages.
 */
export function classifyHttpError(options: {
  status: number;
  body?: string;
  headers?: Record<string, string | undefined> | Headers;
  provider: string;
  keyHint?: string;
  errorType?: string;
}): ProviderFailure {
  const { status, provider } = options;
  const body = (options.body ?? "").trim();
  const retryAfterMs = parseRetryAfter(options.headers);
  const detail = body ? `: ${body}` : "";
  const retry = retryAfterMs !== undefined ? { retryAfterMs } : {};
  if (status === 401 || status === 403) {
    return {
      kind: "auth",
      message: `${provider} refused the API key (${status})${detail}. ${options.keyHint ?? "Check the key configured for this provider."}`,
    };
  }
  if (status === 429)
    return { kind: "rate_limit", message: `${provider} rate limit reached (429)${detail}`, ...retry };
  if (status === 529 || status === 503 || options.errorType === "overloaded_error") {
    return { kind: "overloaded", message: `${provider} is overloaded (${status})${detail}`, ...retry };
  }
  if ((status === 400 || status === 413 || status === 422) && OVERFLOW.test(body)) {
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

/** Errors without an HTTP answer: aborts, timeouts, refused or dropped connections. */
export function classifyTransportError(
  error: unknown,
  provider: string,
  signal?: AbortSignal,
): ProviderFailure {
  const e = error as {
    name?: string;
    message?: string;
    code?: string;
    cause?: { code?: string; message?: string };
  };
  const message = e?.message ?? String(error);
  if (signal?.aborted || e?.name === "AbortError" || /aborted/i.test(e?.name ?? "")) {
    return { kind: "aborted", message: "Request was aborted" };
  }
  if (/timeout|timed out/i.test(`${e?.name ?? ""} ${message}`)) {
    return { kind: "timeout", message: `${provider} did not answer in time (${message})` };
  }
  const code = e?.code ?? e?.cause?.code;
  return {
    kind: "network",
    message: `Could not reach ${provider}${code ? ` (${code})` : ""}: ${e?.cause?.message ?? message}`,
  };
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

/**
 * Error answers of OpenAI-compatible servers, which differ in shape:
 *   OpenAI        {"error": {"message": "…", "type": "invalid_request_error", "code": "context_length_exceeded"}}
 *   OpenRouter    {"error": {"code": 502, "message": "…", "metadata": {…}}}
 *   llama.cpp     {"error": {"code": 400, "message": "…", "type": "exceed_context_size_error"}}
 *   Ollama        {"error": "model \"x\" not found"}
 *   vLLM (older)  {"object": "error", "message": "…", "type": "BadRequestError", "code": 400}
 * The same shapes arrive inside a stream when the failure happens after the response started.
 */
import { classifyHttpError, classifyStreamError, type ProviderFailure } from "@knightcodeai/cli/kit";

export interface ErrorDetails {
  message?: string;
  type?: string;
  code?: string;
  status?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  if (typeof value === "string" && value.trim()) return value.trim();
  if (typeof value === "number") return String(value);
  return undefined;
}

/** An HTTP-like status in a `code` or `status` field (`502`, `"429"`). */
function statusOf(...values: unknown[]): number | undefined {
  for (const value of values) {
    const number = typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : value;
    if (typeof number === "number" && Number.isInteger(number) && number >= 400 && number <= 599)
      return number;
  }
  return undefined;
}

/** The details of an error body or error chunk, whatever its shape; undefined when it is not one. */
export function errorDetails(body: unknown): ErrorDetails | undefined {
  if (!isRecord(body)) return undefined;
  const inner = body.error;
  if (typeof inner === "string") return { message: inner };
  if (isRecord(inner)) {
    const details: ErrorDetails = {};
    const message = text(inner.message) ?? text(inner.msg) ?? text(inner.detail);
    const type = text(inner.type);
    const code = text(inner.code);
    const status = statusOf(inner.code, inner.status, body.status, body.code);
    if (message) details.message = message;
    if (type) details.type = type;
    if (code) details.code = code;
    if (status) details.status = status;
    return details;
  }
  if (inner !== undefined && inner !== null && inner !== false) return { message: JSON.stringify(inner) };
  if (body.object === "error") {
    const details: ErrorDetails = {};
    const message = text(body.message);
    const type = text(body.type);
    const status = statusOf(body.code, body.status);
    if (message) details.message = message;
    if (type) details.type = type;
    if (status) details.status = status;
    return details;
  }
  return undefined;
}

/** The message to show for an HTTP error body (JSON or plain text). */
export function bodyMessage(body: string | undefined): { message: string; details?: ErrorDetails } {
  const raw = (body ?? "").trim();
  if (!raw) return { message: "" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { message: raw.length > 500 ? `${raw.slice(0, 500)}…` : raw };
  }
  const details = errorDetails(parsed);
  if (details?.message) return { message: details.message, details };
  if (isRecord(parsed) && text(parsed.detail)) return { message: text(parsed.detail)! };
  if (isRecord(parsed) && text(parsed.message)) return { message: text(parsed.message)! };
  return { message: raw.length > 500 ? `${raw.slice(0, 500)}…` : raw, ...(details ? { details } : {}) };
}

/** An HTTP error answer. */
export function httpFailure(options: {
  status: number;
  body: string | undefined;
  headers: Headers | Record<string, string> | undefined;
  provider: string;
  keyHint: string;
}): ProviderFailure {
  const { message, details } = bodyMessage(options.body);
  return classifyHttpError({
    status: options.status,
    body: message,
    ...(options.headers ? { headers: options.headers } : {}),
    provider: options.provider,
    keyHint: options.keyHint,
    ...(details?.type ? { errorType: details.type } : {}),
    ...(details?.code ? { errorCode: details.code } : {}),
  });
}

/** A failure the server reported inside the stream, after the response started. */
export function streamFailure(details: ErrorDetails, provider: string, keyHint: string): ProviderFailure {
  return classifyStreamError({
    provider,
    keyHint,
    ...(details.message ? { message: details.message } : {}),
    ...(details.type ? { type: details.type } : {}),
    ...(details.code ? { code: details.code } : {}),
    ...(details.status ? { status: details.status } : {}),
  });
}

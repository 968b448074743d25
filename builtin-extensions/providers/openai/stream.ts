/**
 * `streamSimple` for the OpenAI Responses API (`POST /responses` with `stream: true`), through the official SDK
 * (loaded on the first request). It calls the provider hooks in order (payload, headers, response, every raw
 * event), normalises the events into an AssistantMessageWriter and never throws: every failure ends the stream
 * with an error kind the agent loop can act on.
 */
import {
  type AssistantMessageStream,
  AssistantMessageWriter,
  classifyHttpError,
  classifyTransportError,
  type ProviderErrorKind,
  type ProviderStreamRequest,
} from "@knightcodeai/cli/kit";
import type OpenAI from "openai";
import { buildPayload, DEFAULT_BASE_URL } from "./convert.js";
import { ResponsesNormaliser, streamErrorFailure } from "./events.js";

export const OPENAI_PROVIDER = "openai";
export const OPENAI_API_KEY_ENV = "OPENAI_API_KEY";
/** Per request, unless `compat.timeoutMs` says otherwise; also the longest silence allowed within a stream. */
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;

type Sdk = typeof import("openai");

let sdkModule: Promise<Sdk> | undefined;
const MAX_CLIENTS = 16;
const clients = new Map<string, OpenAI>();

function loadSdk(): Promise<Sdk> {
  sdkModule ??= import("openai").catch((error: unknown) => {
    sdkModule = undefined;
    throw error;
  });
  return sdkModule;
}

/** One client per endpoint and key. Retries are the agent loop's job, so the SDK never retries. */
function clientFor(sdk: Sdk, baseUrl: string, apiKey: string): OpenAI {
  const key = `${baseUrl}\u0000${apiKey}`;
  let client = clients.get(key);
  if (!client) {
    client = new sdk.OpenAI({ apiKey, baseURL: baseUrl, maxRetries: 0, logLevel: "off" });
    if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value!);
    clients.set(key, client);
  }
  return client;
}

/** The name used in messages: "OpenAI" for the built-in provider, the configured name for custom ones. */
function displayName(provider: string): string {
  return provider === OPENAI_PROVIDER ? "OpenAI" : provider;
}

function keyHint(provider: string): string {
  return provider === OPENAI_PROVIDER
    ? `Set ${OPENAI_API_KEY_ENV} or add a key to <agentDir>/auth.json`
    : `Set the apiKey of "${provider}" in <agentDir>/models.json or add a key to <agentDir>/auth.json`;
}

function timeoutOf(compat: Record<string, unknown> | undefined): number {
  const value = compat?.timeoutMs;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : DEFAULT_TIMEOUT_MS;
}

function headersObject(headers: Headers | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  headers?.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The provider's own message from an SDK APIError (its JSON `error.message`, or the raw body). */
function apiErrorMessage(error: InstanceType<Sdk["APIError"]>): string {
  const body = error.error;
  if (isRecord(body) && typeof body.message === "string") return body.message;
  const message = error.message.replace(/^\d{3}\s*/, "");
  return /status code \(no body\)|no status code or body/.test(message) ? "" : message;
}

const ABORTED = "Request was aborted";

/** A provider hook (an extension's handler) threw: not the provider's fault, reported as such. */
class HookFailure extends Error {
  constructor(
    readonly hook: string,
    override readonly cause: unknown,
  ) {
    super(`${hook} failed`);
  }
}

async function hook<T>(name: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new HookFailure(name, error);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Streams one response. Returns the stream at once; the request runs in the background and never throws. */
export function streamOpenAIResponses(request: ProviderStreamRequest): AssistantMessageStream {
  const writer = new AssistantMessageWriter(request.model);
  run(request, writer).catch((error: unknown) => {
    writer.fail("unknown", `${displayName(request.model.provider)} provider failed: ${messageOf(error)}`);
  });
  return writer.stream;
}

async function run(request: ProviderStreamRequest, writer: AssistantMessageWriter): Promise<void> {
  const provider = request.model.provider;
  const name = displayName(provider);
  if (!request.apiKey) {
    writer.fail(
      "auth",
      provider === OPENAI_PROVIDER
        ? `No API key for OpenAI. Set ${OPENAI_API_KEY_ENV} or add a key to <agentDir>/auth.json.`
        : `No API key for provider "${provider}". ${keyHint(provider)}.`,
    );
    return;
  }
  const signal = request.signal;
  if (signal?.aborted) {
    writer.fail("aborted", ABORTED);
    return;
  }
  // Our own controller: the user's abort and a silent stream both cancel the request through it.
  const controller = new AbortController();
  let timedOut = false;
  let idleTimer: NodeJS.Timeout | undefined;
  const timeoutMs = timeoutOf(request.compat);
  const onAbort = () => {
    writer.fail("aborted", ABORTED);
    controller.abort();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  const watchSilence = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      timedOut = true;
      writer.fail(
        "timeout",
        `${name} sent nothing for ${Math.round(timeoutMs / 1000)} s; the request timed out`,
      );
      controller.abort();
    }, timeoutMs);
    idleTimer.unref?.();
  };
  let sdk: Sdk | undefined;
  let streaming = false;
  try {
    let built: Record<string, unknown>;
    try {
      built = buildPayload(request);
    } catch (error) {
      writer.fail("bad_request", `Could not build the request for ${name}: ${messageOf(error)}`);
      return;
    }
    const payload = await hook("before_provider_request", () => request.hooks.payload(built));
    const headers = await hook("before_provider_headers", () =>
      request.hooks.headers({ ...request.headers }),
    );
    if (writer.isFinished) return;
    if (!isRecord(payload)) {
      writer.fail(
        "bad_request",
        `The payload to send to ${name} is not an object (a before_provider_request handler replaced it)`,
      );
      return;
    }
    try {
      sdk = await loadSdk();
    } catch (error) {
      writer.fail("unknown", `Could not load the openai package: ${messageOf(error)}`);
      return;
    }
    const client = clientFor(sdk, request.baseUrl || DEFAULT_BASE_URL, request.apiKey);
    const body = { ...payload, stream: true } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming;
    let opened: Awaited<ReturnType<ReturnType<OpenAI["responses"]["create"]>["withResponse"]>>;
    try {
      opened = await client.responses
        .create(body, { headers, signal: controller.signal, timeout: timeoutMs })
        .withResponse();
    } catch (error) {
      if (error instanceof sdk.APIError && typeof error.status === "number") {
        const status = error.status;
        const responseHeaders = headersObject(error.headers);
        await hook("after_provider_response", () => request.hooks.response(status, responseHeaders));
        failHttp(writer, error, apiErrorMessage(error), provider);
        return;
      }
      throw error;
    }
    streaming = true;
    const { status, headers: responseHeaders } = opened.response;
    await hook("after_provider_response", () =>
      request.hooks.response(status, headersObject(responseHeaders)),
    );
    const normaliser = new ResponsesNormaliser(writer, name);
    watchSilence();
    for await (const event of opened.data as AsyncIterable<unknown>) {
      if (writer.isFinished) break;
      watchSilence();
      await hook("provider_stream_event", () => request.hooks.streamEvent(event));
      if (writer.isFinished) break;
      normaliser.handle(event);
      if (writer.isFinished) break;
    }
    if (!writer.isFinished) {
      if (signal?.aborted) writer.fail("aborted", ABORTED);
      else writer.fail("network", `${name}: the stream ended before the response was complete`);
    }
  } catch (error) {
    if (writer.isFinished) return;
    if (signal?.aborted) writer.fail("aborted", ABORTED);
    else if (timedOut) writer.fail("timeout", `${name} did not answer in time`);
    else if (error instanceof HookFailure) {
      writer.fail("unknown", `A ${error.hook} handler failed: ${messageOf(error.cause)}`);
    } else if (error instanceof SyntaxError) {
      writer.fail("unknown", `${name} sent a stream event that is not valid JSON (${error.message})`);
    } else if (
      sdk &&
      error instanceof sdk.APIError &&
      !(error instanceof sdk.APIConnectionError) &&
      !(error instanceof sdk.APIUserAbortError)
    ) {
      // An error object inside the stream (the SDK throws it): no HTTP status, but a code and a message.
      const failure = streamErrorFailure(name, error.error, error.message);
      writer.fail(failure.kind, failure.message, failure.retryAfterMs);
    } else {
      const cause = sdk && error instanceof sdk.APIConnectionError && error.cause ? error.cause : error;
      const failure = classifyTransportError(cause, name, signal);
      const message =
        streaming && failure.kind === "network"
          ? `${name}: the connection dropped before the response was complete (${messageOf(cause)})`
          : failure.message;
      writer.fail(failure.kind, message, failure.retryAfterMs);
    }
  } finally {
    clearTimeout(idleTimer);
    signal?.removeEventListener("abort", onAbort);
    if (!controller.signal.aborted && writer.isFinished) controller.abort();
  }
}

function failHttp(
  writer: AssistantMessageWriter,
  error: InstanceType<Sdk["APIError"]>,
  message: string,
  provider: string,
): void {
  const name = displayName(provider);
  const status = error.status as number;
  const code = typeof error.code === "string" ? error.code : undefined;
  // A 429 for an exhausted quota is a billing state, not a passing limit: retrying (with backoff, as the loop does
  // for rate limits) cannot succeed until someone adds credits, so it is reported as a request that was refused.
  if (status === 429 && code === "insufficient_quota") {
    writer.fail(
      "bad_request",
      `${name} refused the request: the account has no quota left (429)${message ? `: ${message}` : ""}`,
    );
    return;
  }
  const failure = classifyHttpError({
    status,
    body: message,
    headers: error.headers ?? undefined,
    provider: name,
    keyHint: keyHint(provider),
    ...(typeof error.type === "string" ? { errorType: error.type } : {}),
  });
  let kind: ProviderErrorKind = failure.kind;
  let text = failure.message;
  if (code === "context_length_exceeded" && kind !== "context_overflow") {
    kind = "context_overflow";
    text = `${name}: the conversation is too long for the model${message ? `: ${message}` : ""}`;
  }
  writer.fail(kind, text, kind === failure.kind ? failure.retryAfterMs : undefined);
}

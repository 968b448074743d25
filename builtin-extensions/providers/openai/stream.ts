/**
 * `streamSimple` for the OpenAI Responses API (`POST /responses` with `stream: true`). The kit's request runner
 * drives the request (hooks in order, abort, timeout, failures); this file sends it through the official SDK
 * (loaded on the first request) and hands the events to the ResponsesNormaliser.
 */
import {
  type AssistantMessageStream,
  type AssistantMessageWriter,
  agentFilePath,
  classifyHttpError,
  guardedSseFetch,
  ProviderRequestError,
  type ProviderStreamRequest,
  type ProviderWire,
  runProviderRequest,
} from "@knightcodeai/cli/kit";
import type OpenAI from "openai";
import { buildPayload } from "./convert.js";
import { ResponsesNormaliser } from "./events.js";
import { DEFAULT_BASE_URL, OPENAI_API_KEY_ENV, OPENAI_PROVIDER } from "./models.js";
import { chatgptAccountId, chatgptBackendUrl } from "./oauth.js";

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
    client = new sdk.OpenAI({
      apiKey,
      baseURL: baseUrl,
      maxRetries: 0,
      logLevel: "off",
      // Caps one stream event's size and hands the SDK whole lines: its reader copies and searches what it holds
      // again for every chunk, which a long line makes quadratic.
      fetch: guardedSseFetch(),
    });
    if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value!);
    clients.set(key, client);
  }
  return client;
}

/** The name used in messages: "OpenAI" for the built-in provider, the configured name for custom ones. */
function displayName(provider: string): string {
  return provider === OPENAI_PROVIDER ? "OpenAI" : provider;
}

function keyHint(request: ProviderStreamRequest): string {
  const provider = request.model.provider;
  const auth = agentFilePath(request, "auth.json");
  if (isSubscription(request))
    return `Sign in again with \`knightcode login ${provider}\` (or /login in the terminal UI)`;
  return provider === OPENAI_PROVIDER
    ? `Set ${OPENAI_API_KEY_ENV}, or add a key to ${auth} (/login in the terminal UI)`
    : `Set the apiKey of "${provider}" in ${agentFilePath(request, "models.json")}, or add a key to ${auth} (/login in the terminal UI)`;
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Streams one response. Returns the stream at once; the request runs in the background and never throws. */
export function streamOpenAIResponses(request: ProviderStreamRequest): AssistantMessageStream {
  const effective = subscriptionRequest(request);
  return runProviderRequest(effective, (writer) => responsesWire(effective, writer));
}

const isSubscription = (request: ProviderStreamRequest) => request.credential?.type === "oauth";

/**
 * A request with a ChatGPT subscription's token: it goes to the ChatGPT backend (unless models.json points the
 * provider elsewhere) with the account id the backend wants.
 */
function subscriptionRequest(request: ProviderStreamRequest): ProviderStreamRequest {
  if (!isSubscription(request)) return request;
  const stored = request.credential?.accountId;
  const accountId = typeof stored === "string" && stored ? stored : chatgptAccountId(request.apiKey);
  return {
    ...request,
    baseUrl: !request.baseUrl || request.baseUrl === DEFAULT_BASE_URL ? chatgptBackendUrl() : request.baseUrl,
    headers: {
      ...request.headers,
      "OpenAI-Beta": "responses=experimental",
      originator: "knightcode",
      ...(accountId ? { "chatgpt-account-id": accountId } : {}),
    },
  };
}

/** The Responses body; the ChatGPT backend refuses an output limit and needs instructions. */
function payloadFor(request: ProviderStreamRequest): Record<string, unknown> {
  const payload = buildPayload(request);
  if (!isSubscription(request)) return payload;
  delete payload.max_output_tokens;
  payload.instructions ??= "You are a helpful assistant.";
  return payload;
}

/**
 * `compat.keyHeader` (Cloudflare AI Gateway's `cf-aig-authorization`): the key goes as `Bearer <key>` in that header
 * and the SDK's `Authorization` is taken out (a null value removes a header the SDK would send).
 */
function keyHeaders(request: ProviderStreamRequest, headers: Record<string, string>) {
  const name = request.compat?.keyHeader;
  if (typeof name !== "string" || !name) return headers;
  return { ...headers, authorization: null, [name]: `Bearer ${request.apiKey}` };
}

/** The Responses API as a ProviderWire. */
function responsesWire(request: ProviderStreamRequest, writer: AssistantMessageWriter): ProviderWire {
  const provider = request.model.provider;
  const name = displayName(provider);
  const baseUrl = request.baseUrl || DEFAULT_BASE_URL;
  const timeoutMs = timeoutOf(request.compat);
  const normaliser = new ResponsesNormaliser(writer, name);
  return {
    name,
    endpoint: baseUrl,
    timeoutMs,
    refuse() {
      if (request.apiKey) return undefined;
      return {
        kind: "auth",
        message:
          provider === OPENAI_PROVIDER
            ? `No API key for OpenAI. ${keyHint(request)}.`
            : `No API key for provider "${provider}". ${keyHint(request)}.`,
      };
    },
    buildPayload: () => payloadFor(request),
    async send({ payload, headers, signal }) {
      let sdk: Sdk;
      try {
        sdk = await loadSdk();
      } catch (error) {
        throw new ProviderRequestError("unknown", `Could not load the openai package: ${messageOf(error)}`);
      }
      const client = clientFor(sdk, baseUrl, request.apiKey!);
      const body = { ...payload, stream: true } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming;
      try {
        const { data, response } = await client.responses
          .create(body, { headers: keyHeaders(request, headers), signal, timeout: timeoutMs })
          .withResponse();
        return {
          status: response.status,
          headers: headersObject(response.headers),
          events: errorsAsEvents(sdk, data),
        };
      } catch (error) {
        if (!(error instanceof sdk.APIError) || typeof error.status !== "number") throw error;
        return {
          status: error.status,
          headers: headersObject(error.headers),
          failure: classifyHttpError({
            status: error.status,
            body: apiErrorMessage(error),
            headers: error.headers ?? undefined,
            provider: name,
            keyHint: keyHint(request),
            ...(typeof error.type === "string" ? { errorType: error.type } : {}),
            ...(typeof error.code === "string" ? { errorCode: error.code } : {}),
          }),
        };
      }
    },
    handle: (event) => normaliser.handle(event),
  };
}

/**
 * The SDK throws an event that carries an `error` object instead of yielding it; this gives it back as an `error`
 * event, so the stream event hook sees it and the normaliser reports it like the flat `error` event.
 */
async function* errorsAsEvents(sdk: Sdk, stream: AsyncIterable<unknown>): AsyncIterable<unknown> {
  try {
    yield* stream;
  } catch (error) {
    const streamed =
      error instanceof sdk.APIError &&
      !(error instanceof sdk.APIConnectionError) &&
      error.status === undefined;
    if (!streamed) throw error;
    yield { type: "error", error: error.error ?? { message: error.message } };
  }
}

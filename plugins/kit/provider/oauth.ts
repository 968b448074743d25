/**
 * Sign-in helpers for provider extensions: the OAuth 2.0 authorization-code flow with PKCE (a loopback callback
 * server bound to 127.0.0.1, and a paste-the-code fallback), the device-authorization flow (RFC 8628: polling,
 * `slow_down`, expiry), and token refresh. What they return is a credential of type `oauth` for `auth.json`:
 * `key` is the access token requests send, `refresh` and `expires` (epoch milliseconds) let KnightCode refresh it
 * before it runs out (through `ProviderConfig.refreshCredential`).
 *
 * Every wait is bounded (the browser, the device code's lifetime, each HTTP request) and every failure is an
 * `OAuthError` whose `reason` says what went wrong: denied, expired, state mismatch, refresh failed, ...
 */
import type { Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ProviderLoginIO } from "../../../kernel/index.js";
import { secureRandomBytes } from "../util/random.js";

/** node:crypto loads with the first sign-in, not with every provider that offers one. */
const nodeCrypto = () => process.getBuiltinModule("node:crypto");

/** What `auth.json` keeps for a subscription sign-in. */
export interface OAuthCredential {
  type: "oauth";
  /** The access token: what requests send. */
  key: string;
  refresh?: string;
  /** When the access token expires, in epoch milliseconds. */
  expires?: number;
  [field: string]: unknown;
}

export type OAuthFailure =
  | "denied"
  | "expired"
  | "state_mismatch"
  | "timeout"
  | "cancelled"
  | "bad_response"
  | "token_request_failed"
  | "refresh_failed"
  | "callback_unavailable";

export class OAuthError extends Error {
  override readonly name = "OAuthError";
  constructor(
    readonly reason: OAuthFailure,
    message: string,
  ) {
    super(message);
  }
}

/** The raw token endpoint answer (RFC 6749 §5.1) with whatever else the server adds. */
export interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  token_type?: string;
  id_token?: string;
  scope?: string;
  [field: string]: unknown;
}

/** How long one request to an authorization server may take. */
export const OAUTH_REQUEST_TIMEOUT_MS = 30_000;
/** How long the authorization-code flow waits for the browser (or a pasted code). */
export const OAUTH_BROWSER_TIMEOUT_MS = 5 * 60_000;
/** The longest a device code is waited for, whatever the server says its lifetime is. */
export const OAUTH_DEVICE_MAX_WAIT_MS = 15 * 60_000;

const base64url = (bytes: Buffer) => bytes.toString("base64url");

/** A PKCE pair (RFC 7636, S256): the verifier stays here, the challenge goes in the authorization URL. */
export function createPkcePair(): { verifier: string; challenge: string } {
  const verifier = base64url(secureRandomBytes(32));
  return { verifier, challenge: base64url(nodeCrypto().createHash("sha256").update(verifier).digest()) };
}

/** An unguessable `state` value. */
export function randomState(): string {
  return secureRandomBytes(16).toString("hex");
}

/**
 * An endpoint of a provider's sign-in, overridable by `KNIGHTCODE_OAUTH_<PROVIDER>_<NAME>` (so tests and proxies
 * can point it elsewhere). An override must be https, or http on a loopback address: tokens never travel in the
 * clear over a network.
 */
export function oauthEndpoint(
  provider: string,
  name: string,
  fallback: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const variable = `KNIGHTCODE_OAUTH_${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_${name}`;
  const value = env[variable]?.trim();
  if (!value) return fallback;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError("bad_response", `${variable} is not a URL: ${JSON.stringify(value)}`);
  }
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw new OAuthError(
      "bad_response",
      `${variable} must be an https URL (or http on 127.0.0.1), not ${value}`,
    );
  }
  return value;
}

/**
 * The port of a provider's loopback callback, overridable by `KNIGHTCODE_OAUTH_<PROVIDER>_CALLBACK_PORT` (0: any
 * free port, for tests; a real provider only accepts the port its client was registered with).
 */
export function oauthCallbackPort(
  provider: string,
  fallback: number,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const variable = `KNIGHTCODE_OAUTH_${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_CALLBACK_PORT`;
  const value = env[variable]?.trim();
  if (!value) return fallback;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new OAuthError(
      "bad_response",
      `${variable} must be a port number (0 for any free one), not ${JSON.stringify(value)}`,
    );
  }
  return port;
}

/** The claims of a JWT (not verified: for reading an account id the server put there), or undefined. */
export function decodeJwtClaims(token: string): Record<string, unknown> | undefined {
  const part = token.split(".")[1];
  if (!part) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return claims && typeof claims === "object" && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export interface TokenRequestOptions {
  /** How the parameters are sent: a form (RFC 6749) or a JSON object (some providers want that). */
  format?: "form" | "json";
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The failure reason when the server refuses (`token_request_failed` unless said otherwise). */
  reason?: OAuthFailure;
}

/**
 * POSTs to a token endpoint and returns its answer. A refusal (an HTTP error, an OAuth `error`, an answer without
 * an `access_token`) throws an OAuthError naming the endpoint and the server's own words.
 */
export async function requestTokens(
  url: string,
  params: Record<string, string>,
  options: TokenRequestOptions = {},
): Promise<TokenResponse> {
  const answer = await postOAuth(url, params, options);
  if (!answer.ok) {
    throw new OAuthError(
      options.reason ?? "token_request_failed",
      `${url} refused the token request (HTTP ${answer.status}): ${describeOAuthError(answer.body)}`,
    );
  }
  const body = answer.body;
  if (!body || typeof body.access_token !== "string" || !body.access_token) {
    throw new OAuthError(options.reason ?? "bad_response", `${url} answered without an access_token`);
  }
  return body as TokenResponse;
}

/** What an OAuth-related server answered: its status, its body as text, and as a JSON object when it is one. */
export interface OAuthJsonAnswer {
  ok: boolean;
  status: number;
  /** The body parsed, when it is a JSON object. */
  body: Record<string, unknown> | undefined;
  text: string;
}

/**
 * One request of a sign-in (a token, device-code or token-exchange endpoint), bounded by `timeoutMs` (30 s unless
 * given) and `signal`. A cancelled `signal` is `OAuthError("cancelled")`, the time limit `OAuthError("timeout")`, a
 * server that cannot be reached `OAuthError(reason)`; any answer, whatever its status, is returned for the caller to
 * judge. Redirects are refused: a token endpoint that redirects is not one to send secrets to.
 */
export async function oauthFetchJson(
  url: string,
  init: { method: "GET" | "POST"; headers?: Record<string, string>; body?: string },
  options: { signal?: AbortSignal; timeoutMs?: number; reason?: OAuthFailure } = {},
): Promise<OAuthJsonAnswer> {
  const limit = options.timeoutMs ?? OAUTH_REQUEST_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(limit);
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      headers: { accept: "application/json", ...init.headers },
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      redirect: "error",
    });
  } catch (error) {
    if (options.signal?.aborted) throw new OAuthError("cancelled", "Sign-in was cancelled");
    if (timeout.aborted) throw new OAuthError("timeout", `${url} did not answer within ${limit / 1000} s`);
    throw new OAuthError(
      options.reason ?? "token_request_failed",
      `Could not reach ${url}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const text = await response.text().catch(() => "");
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  return { ok: response.ok, status: response.status, body, text };
}

/** One POST to an authorization server: status and JSON body (a non-JSON body becomes its error description). */
async function postOAuth(
  url: string,
  params: Record<string, string>,
  options: TokenRequestOptions,
): Promise<{ ok: boolean; status: number; body: Record<string, unknown> | undefined }> {
  const json = options.format === "json";
  const answer = await oauthFetchJson(
    url,
    {
      method: "POST",
      headers: { "content-type": json ? "application/json" : "application/x-www-form-urlencoded" },
      body: json ? JSON.stringify(params) : new URLSearchParams(params).toString(),
    },
    options,
  );
  const body = answer.body ?? (answer.text ? { error_description: answer.text.slice(0, 300) } : undefined);
  return { ok: answer.ok, status: answer.status, body };
}

function describeOAuthError(body: Record<string, unknown> | undefined): string {
  if (!body) return "no details";
  const code = typeof body.error === "string" ? body.error : undefined;
  const nested =
    body.error && typeof body.error === "object" ? (body.error as Record<string, unknown>) : undefined;
  const text =
    typeof body.error_description === "string"
      ? body.error_description
      : typeof nested?.message === "string"
        ? nested.message
        : undefined;
  return [code, text].filter(Boolean).join(": ") || "no details";
}

/**
 * The credential for a token answer: `expires` from `expires_in` (absent when the server gives no lifetime), the
 * refresh token (the previous one when the server keeps it), and the fields a provider adds.
 */
export function oauthCredential(
  tokens: TokenResponse,
  extra: Record<string, unknown> = {},
  previousRefresh?: string,
): OAuthCredential {
  const refresh =
    typeof tokens.refresh_token === "string" && tokens.refresh_token ? tokens.refresh_token : previousRefresh;
  const lifetime = Number(tokens.expires_in);
  return {
    ...extra,
    type: "oauth",
    key: tokens.access_token,
    ...(refresh ? { refresh } : {}),
    ...(Number.isFinite(lifetime) && lifetime > 0 ? { expires: Date.now() + lifetime * 1000 } : {}),
  };
}

/** Reads a pasted redirect URL, a `code#state` pair, a `code=...&state=...` query, or a bare code. */
export function parseAuthorizationInput(input: string): { code?: string; state?: string; error?: string } {
  const value = input.trim();
  if (!value) return {};
  const fromParams = (params: URLSearchParams) => ({
    ...(params.get("code") ? { code: params.get("code")! } : {}),
    ...(params.get("state") ? { state: params.get("state")! } : {}),
    ...(params.get("error") ? { error: params.get("error")! } : {}),
  });
  if (/^https?:\/\//i.test(value)) {
    try {
      return fromParams(new URL(value).searchParams);
    } catch {
      return {};
    }
  }
  if (value.includes("code=")) return fromParams(new URLSearchParams(value.replace(/^\?/, "")));
  const hash = value.indexOf("#");
  if (hash > 0) return { code: value.slice(0, hash), state: value.slice(hash + 1) };
  return { code: value };
}

export interface AuthorizationCodeOptions {
  /** Who is signing in to what, for messages ("Claude subscription"). */
  title: string;
  authorizeUrl: string;
  tokenUrl: string;
  clientId: string;
  scope?: string;
  /**
   * The loopback redirect: the server binds 127.0.0.1 on `port` (0: any free port) and the redirect URI names
   * `redirectHost` (default `localhost`, what most providers register) with that port and `path`.
   */
  callback: { port: number; path: string; redirectHost?: string };
  /** More authorization URL parameters. */
  authorizeParams?: Record<string, string>;
  /** How the token request is sent (default a form). */
  tokenFormat?: "form" | "json";
  /** Sends `state` with the code exchange too (Anthropic wants it). */
  stateInTokenRequest?: boolean;
  /** Milliseconds to wait for the browser or a pasted code (default 5 minutes). */
  timeoutMs?: number;
  /** Fields to add to the credential, from the token answer (an account id from its id_token, say). */
  extra?(tokens: TokenResponse): Record<string, unknown>;
}

/**
 * The authorization-code flow with PKCE: starts a callback server on 127.0.0.1, shows the authorization URL
 * (`io.notify`), and takes whichever comes first: the browser's redirect to the callback, or a redirect URL or
 * code pasted into `io.input` (for a browser on another machine). Then exchanges the code for tokens.
 * Resolves undefined when the person cancels the paste prompt.
 */
export async function authorizationCodeLogin(
  io: ProviderLoginIO,
  options: AuthorizationCodeOptions,
): Promise<OAuthCredential | undefined> {
  const pkce = createPkcePair();
  const state = randomState();
  const done = new AbortController();
  const timeoutMs = options.timeoutMs ?? OAUTH_BROWSER_TIMEOUT_MS;
  const callback = await startCallbackServer(options.callback.port, options.callback.path, state);
  try {
    const redirectUri = `http://${options.callback.redirectHost ?? "localhost"}:${callback.port}${options.callback.path}`;
    const url = new URL(options.authorizeUrl);
    const params: Record<string, string> = {
      response_type: "code",
      client_id: options.clientId,
      redirect_uri: redirectUri,
      ...(options.scope ? { scope: options.scope } : {}),
      code_challenge: pkce.challenge,
      code_challenge_method: "S256",
      state,
      ...options.authorizeParams,
    };
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    io.notify(
      `Sign in to your ${options.title} in a browser: ${url.toString()}\n` +
        `Waiting for the browser to come back to ${redirectUri} (up to ${Math.round(timeoutMs / 60_000)} min); ` +
        "on another machine, paste the address it ends on (or the code) instead.",
    );
    const signals = [done.signal, ...(io.signal ? [io.signal] : [])];
    const pasted = io
      .input("Paste the redirect URL or the code (or wait for the browser)", {
        placeholder: redirectUri,
        signal: AbortSignal.any(signals),
      })
      .then((text): Promise<{ code?: string; state?: string; error?: string } | "cancelled"> => {
        // Taken away because the browser answered first: that answer wins the race.
        if (done.signal.aborted) return new Promise(() => {});
        return Promise.resolve(text === undefined ? "cancelled" : parseAuthorizationInput(text));
      });
    const outcome = await raceWithin<{ code?: string; state?: string; error?: string } | "cancelled">(
      [callback.result, pasted],
      timeoutMs,
      io.signal,
      `The browser did not come back within ${Math.round(timeoutMs / 1000)} s; sign-in to your ${options.title} timed out`,
    );
    done.abort();
    if (outcome === "cancelled") return undefined;
    if (outcome.error) {
      throw new OAuthError(
        outcome.error === "access_denied" ? "denied" : "token_request_failed",
        outcome.error === "access_denied"
          ? `Sign-in to your ${options.title} was denied`
          : `The authorization server answered ${outcome.error}`,
      );
    }
    if (outcome.state !== undefined && outcome.state !== state) {
      throw new OAuthError(
        "state_mismatch",
        "The answer's state does not match this sign-in (a stale or forged redirect); sign in again",
      );
    }
    if (!outcome.code) throw new OAuthError("bad_response", "No authorization code was given");
    const tokens = await requestTokens(
      options.tokenUrl,
      {
        grant_type: "authorization_code",
        client_id: options.clientId,
        code: outcome.code,
        redirect_uri: redirectUri,
        code_verifier: pkce.verifier,
        ...(options.stateInTokenRequest ? { state } : {}),
      },
      { format: options.tokenFormat ?? "form", ...(io.signal ? { signal: io.signal } : {}) },
    );
    return oauthCredential(tokens, options.extra?.(tokens) ?? {});
  } finally {
    done.abort();
    await callback.close();
  }
}

/** The callback server: one GET to `path` with the expected state settles it; anything else gets an error page. */
async function startCallbackServer(
  port: number,
  path: string,
  state: string,
): Promise<{
  port: number;
  result: Promise<{ code?: string; state?: string; error?: string }>;
  close(): Promise<void>;
}> {
  let settle!: (value: { code?: string; state?: string; error?: string }) => void;
  const result = new Promise<{ code?: string; state?: string; error?: string }>((resolve) => {
    settle = resolve;
  });
  // Loaded here, not at start-up: only a sign-in needs an HTTP server.
  const { createServer } = await import("node:http");
  const page = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { "content-type": "text/html; charset=utf-8", connection: "close" });
    res.end(`<!doctype html><meta charset="utf-8"><title>KnightCode</title><p>${text}</p>`);
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== path) return page(res, 404, "Not found.");
    const error = url.searchParams.get("error");
    const got = url.searchParams.get("state") ?? undefined;
    // A request without our state is not our answer (a stale tab, another program): refuse it, keep waiting.
    if (got !== state)
      return page(res, 400, "This answer does not belong to the sign-in in progress (state mismatch).");
    if (error) {
      page(res, 400, `Sign-in did not complete: ${escapeHtml(error)}. You can close this tab.`);
      settle({ error, state: got });
      return;
    }
    const code = url.searchParams.get("code");
    if (!code) return page(res, 400, "The answer has no authorization code.");
    page(res, 200, "Signed in to KnightCode. You can close this tab.");
    settle({ code, state: got });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new OAuthError(
          "callback_unavailable",
          `Could not listen on 127.0.0.1:${port} for the browser's answer (${error.code ?? error.message}); ` +
            "close the program using it, or use another sign-in method",
        ),
      ),
    );
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    result,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The first of the promises, unless the time runs out (OAuthError timeout) or the signal aborts (cancelled). */
async function raceWithin<T>(
  promises: Promise<T>[],
  ms: number,
  signal: AbortSignal | undefined,
  late: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const limits = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new OAuthError("timeout", late)), ms);
    if (signal) {
      onAbort = () => reject(new OAuthError("cancelled", "Sign-in was cancelled"));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([...promises, limits]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

export interface DeviceAuthorizationOptions {
  title: string;
  /** The device authorization endpoint (RFC 8628 §3.1). */
  deviceAuthorizationUrl: string;
  tokenUrl: string;
  clientId: string;
  scope?: string;
  /** More parameters of the device authorization request. */
  params?: Record<string, string>;
  /** How much `slow_down` adds to the polling interval (RFC 8628: 5 s). */
  slowDownStepMs?: number;
  /** The longest wait, whatever the code's lifetime (default 15 minutes). */
  maxWaitMs?: number;
  extra?(tokens: TokenResponse): Record<string, unknown>;
}

/**
 * The device-authorization flow (RFC 8628): asks for a user code, shows it with the address to enter it at, and
 * polls the token endpoint at the server's interval (slower after `slow_down`) until the person approves, denies,
 * or the code expires. While it waits, `io.input` offers to cancel (an empty answer keeps waiting).
 */
export async function deviceAuthorizationLogin(
  io: ProviderLoginIO,
  options: DeviceAuthorizationOptions,
): Promise<OAuthCredential | undefined> {
  const start = await postOAuth(
    options.deviceAuthorizationUrl,
    { client_id: options.clientId, ...(options.scope ? { scope: options.scope } : {}), ...options.params },
    io.signal ? { signal: io.signal } : {},
  );
  const body = start.body;
  if (!start.ok || !body) {
    throw new OAuthError(
      "token_request_failed",
      `${options.deviceAuthorizationUrl} refused the device code request (HTTP ${start.status}): ${describeOAuthError(body)}`,
    );
  }
  const deviceCode = body.device_code;
  const userCode = body.user_code;
  const verificationUri = body.verification_uri ?? body.verification_url;
  if (typeof deviceCode !== "string" || typeof userCode !== "string" || typeof verificationUri !== "string") {
    throw new OAuthError(
      "bad_response",
      `${options.deviceAuthorizationUrl} answered without device_code, user_code and verification_uri`,
    );
  }
  const complete =
    typeof body.verification_uri_complete === "string" ? body.verification_uri_complete : undefined;
  const lifetimeMs = Number(body.expires_in) > 0 ? Number(body.expires_in) * 1000 : OAUTH_DEVICE_MAX_WAIT_MS;
  const interval = Number(body.interval);
  return pollDeviceCode(io, {
    title: options.title,
    userCode,
    verificationUri,
    ...(complete ? { verificationUriComplete: complete } : {}),
    intervalMs: Number.isFinite(interval) && interval >= 0 ? interval * 1000 : 5000,
    waitMs: Math.min(lifetimeMs, options.maxWaitMs ?? OAUTH_DEVICE_MAX_WAIT_MS),
    slowDownStepMs: options.slowDownStepMs ?? 5000,
    poll: async (signal) => {
      const answer = await postOAuth(
        options.tokenUrl,
        {
          grant_type: "urn:ietf:params:oauth:grant-type:device_code",
          device_code: deviceCode,
          client_id: options.clientId,
        },
        { signal },
      );
      if (answer.ok) {
        if (typeof answer.body?.access_token !== "string") {
          throw new OAuthError("bad_response", `${options.tokenUrl} answered without an access_token`);
        }
        const tokens = answer.body as TokenResponse;
        return { tokens: oauthCredential(tokens, options.extra?.(tokens) ?? {}) };
      }
      const code = typeof answer.body?.error === "string" ? answer.body.error : "";
      if (code === "authorization_pending") return "pending";
      if (code === "slow_down") return "slow_down";
      if (code === "access_denied") return "denied";
      if (code === "expired_token") return "expired";
      throw new OAuthError(
        "token_request_failed",
        `${options.tokenUrl} refused the device code (HTTP ${answer.status}): ${describeOAuthError(answer.body)}`,
      );
    },
  });
}

export type DevicePollAnswer = { tokens: OAuthCredential } | "pending" | "slow_down" | "denied" | "expired";

export interface DevicePollOptions {
  title: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  intervalMs: number;
  /** How long to poll before giving up as expired. */
  waitMs: number;
  slowDownStepMs?: number;
  /** One poll: tokens, or why not yet. */
  poll(signal: AbortSignal): Promise<DevicePollAnswer>;
}

/**
 * The waiting half of a device flow, for providers whose device endpoints are not RFC 8628's shape: shows the code,
 * polls until an answer, slows down when asked, and gives up when the code expires or the person cancels.
 */
export async function pollDeviceCode(
  io: ProviderLoginIO,
  options: DevicePollOptions,
): Promise<OAuthCredential | undefined> {
  const done = new AbortController();
  const signal = io.signal ? AbortSignal.any([done.signal, io.signal]) : done.signal;
  const deadline = Date.now() + options.waitMs;
  io.notify(
    `To sign in to your ${options.title}, open ${options.verificationUriComplete ?? options.verificationUri} and enter the code ${options.userCode}\n` +
      `Waiting for the sign-in (the code expires in ${Math.max(1, Math.round(options.waitMs / 60_000))} min).`,
  );
  let cancelled = false;
  // The prompt is only a way to give up: an answer (enter) keeps waiting, esc or a closed input cancels.
  void io
    .input(`Enter ${options.userCode} at ${options.verificationUri}; waiting (esc cancels)`, { signal })
    .then((text) => {
      if (text === undefined && !done.signal.aborted && !io.signal?.aborted) {
        cancelled = true;
        done.abort();
      }
    });
  let interval = options.intervalMs;
  try {
    for (;;) {
      if (cancelled) return undefined;
      if (io.signal?.aborted) throw new OAuthError("cancelled", "Sign-in was cancelled");
      if (Date.now() >= deadline) {
        throw new OAuthError(
          "expired",
          `The device code expired before the sign-in to your ${options.title} was approved; start again`,
        );
      }
      const answer = await options.poll(signal).catch((error: unknown) => {
        if (cancelled) return "cancelled" as const;
        throw error;
      });
      if (answer === "cancelled") return undefined;
      if (typeof answer === "object") return answer.tokens;
      if (answer === "denied") throw new OAuthError("denied", `Sign-in to your ${options.title} was denied`);
      if (answer === "expired") {
        throw new OAuthError(
          "expired",
          `The device code expired before the sign-in to your ${options.title} was approved; start again`,
        );
      }
      if (answer === "slow_down") interval += options.slowDownStepMs ?? 5000;
      await sleep(Math.min(interval, Math.max(0, deadline - Date.now())), signal);
    }
  } finally {
    done.abort();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    }
    signal.addEventListener("abort", finish, { once: true });
  });
}

export interface RefreshOptions {
  tokenUrl: string;
  clientId: string;
  scope?: string;
  format?: "form" | "json";
  signal?: AbortSignal;
  /** Fields to add from the new token answer (they replace the stored ones). */
  extra?(tokens: TokenResponse): Record<string, unknown>;
}

/**
 * Exchanges a credential's refresh token for a new access token. The answer keeps the credential's other fields;
 * a server that sends no new refresh token leaves the old one. Failure is an OAuthError `refresh_failed`.
 */
export async function refreshOAuthCredential(
  credential: { key: string; refresh?: unknown; [field: string]: unknown },
  options: RefreshOptions,
): Promise<OAuthCredential> {
  const refresh = typeof credential.refresh === "string" ? credential.refresh : "";
  if (!refresh) throw new OAuthError("refresh_failed", "The stored sign-in has no refresh token");
  const tokens = await requestTokens(
    options.tokenUrl,
    {
      grant_type: "refresh_token",
      refresh_token: refresh,
      client_id: options.clientId,
      ...(options.scope ? { scope: options.scope } : {}),
    },
    {
      format: options.format ?? "form",
      reason: "refresh_failed",
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
  const { type: _type, key: _key, refresh: _refresh, expires: _expires, ...kept } = credential;
  return oauthCredential(tokens, { ...kept, ...(options.extra?.(tokens) ?? {}) }, refresh);
}

/** `sk-abcdef1234` → `****1234`: where a stored key or token is shown, only its last four characters are. */
export function maskSecret(value: string): string {
  return `****${value.length > 8 ? value.slice(-4) : ""}`;
}

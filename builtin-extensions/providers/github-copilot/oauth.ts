/**
 * Sign-in with a GitHub Copilot subscription, as pi does it. Two tokens are involved:
 *
 * 1. A GitHub OAuth token from GitHub's device flow (a code entered at github.com/login/device; GitHub's answers
 *    are RFC 8628's, except that "not yet" comes back as HTTP 200 with an `error` field). It is long-lived and is
 *    kept as the credential's `refresh`.
 * 2. A short-lived Copilot token, from GET `api.github.com/copilot_internal/v2/token` with the GitHub token as a
 *    bearer (`{token, expires_at}`). It is the credential's `key`, what chat requests send. "Refreshing" it is this
 *    exchange again; GitHub refusing it means the GitHub token was revoked or the subscription ended.
 *
 * GitHub Enterprise: the sign-in asks for a domain (empty for github.com); the endpoints then live on that domain
 * (`https://<domain>/login/...`, `https://api.<domain>/copilot_internal/...`) and it is stored as `enterpriseDomain`.
 *
 * Then (account.ts) it reads which models the account has, switches on those whose policy is not set, and keeps
 * their ids as `availableModelIds`; each renewal reads them again.
 *
 * Every endpoint is overridable (tests point them at 127.0.0.1): KNIGHTCODE_OAUTH_GITHUB_COPILOT_DEVICE_CODE_URL,
 * ..._ACCESS_TOKEN_URL, ..._COPILOT_TOKEN_URL, and ..._API_URL (the chat endpoint's base).
 */
import {
  type OAuthCredential,
  OAuthError,
  type OAuthJsonAnswer,
  oauthEndpoint,
  oauthFetchJson,
  type ProviderLoginIO,
  pollDeviceCode,
} from "@knightcodeai/cli/kit";
import { enableCopilotModels, readCopilotModels, storedModelIds } from "./account.js";
import { GITHUB_COPILOT_MODELS } from "./catalogue.generated.js";
import { COPILOT_DEFAULT_BASE_URL, COPILOT_HEADERS, GITHUB_COPILOT_PROVIDER } from "./models.js";

/** The OAuth client id of GitHub's Copilot editor integration, which pi signs in with. */
const CLIENT_ID = Buffer.from("SXYxLmI1MDdhMDhjODdlY2ZlOTg=", "base64").toString("utf8");
const SCOPE = "read:user";

/** A GitHub Enterprise domain from what was typed (a bare host or a URL); undefined for github.com. */
export function enterpriseDomain(input: string): string | undefined {
  const text = input.trim();
  if (!text) return undefined;
  try {
    const host = new URL(text.includes("://") ? text : `https://${text}`).hostname;
    if (host.includes(".")) return host === "github.com" ? undefined : host;
  } catch {
    // reported below
  }
  throw new OAuthError(
    "bad_response",
    `${JSON.stringify(text)} is not a GitHub Enterprise domain (e.g. company.ghe.com); leave it empty for github.com`,
  );
}

function endpoints(domain: string | undefined) {
  const host = domain ?? "github.com";
  return {
    deviceCode: oauthEndpoint(
      GITHUB_COPILOT_PROVIDER,
      "DEVICE_CODE_URL",
      `https://${host}/login/device/code`,
    ),
    accessToken: oauthEndpoint(
      GITHUB_COPILOT_PROVIDER,
      "ACCESS_TOKEN_URL",
      `https://${host}/login/oauth/access_token`,
    ),
    copilotToken: oauthEndpoint(
      GITHUB_COPILOT_PROVIDER,
      "COPILOT_TOKEN_URL",
      `https://api.${host}/copilot_internal/v2/token`,
    ),
  };
}

/**
 * The base URL of Copilot's chat API for a Copilot token: the token's `proxy-ep` field (`proxy.X` → `https://api.X`),
 * else the enterprise domain's `copilot-api.` host, else the individual plan's endpoint.
 */
export function copilotBaseUrl(token: string | undefined, domain?: string): string {
  const proxy = token?.match(/(?:^|;)\s*proxy-ep=([^;\s]+)/)?.[1];
  if (proxy && /^[a-z0-9.-]+(:\d+)?$/i.test(proxy)) return `https://${proxy.replace(/^proxy\./i, "api.")}`;
  if (domain) return `https://copilot-api.${domain}`;
  return COPILOT_DEFAULT_BASE_URL;
}

/** Where chat requests go: the API_URL override, else what the token says. */
export function copilotApiUrl(token: string | undefined, domain?: string): string {
  return oauthEndpoint(GITHUB_COPILOT_PROVIDER, "API_URL", copilotBaseUrl(token, domain)).replace(/\/+$/, "");
}

function call(
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
  signal: AbortSignal | undefined,
  reason: "token_request_failed" | "refresh_failed",
): Promise<OAuthJsonAnswer> {
  return oauthFetchJson(url, init, { signal, reason });
}

function postForm(url: string, fields: Record<string, string>, signal: AbortSignal | undefined) {
  return call(
    url,
    {
      method: "POST",
      headers: {
        accept: "application/json",
        "content-type": "application/x-www-form-urlencoded",
        "user-agent": COPILOT_HEADERS["User-Agent"]!,
      },
      body: new URLSearchParams(fields).toString(),
    },
    signal,
    "token_request_failed",
  );
}

/** What GitHub said, briefly: `error: description`, a `message`, or the start of the body. */
function said(answer: OAuthJsonAnswer): string {
  const body = answer.body;
  if (typeof body?.error === "string") {
    return typeof body.error_description === "string"
      ? `${body.error}: ${body.error_description}`
      : body.error;
  }
  if (typeof body?.message === "string") return body.message;
  const flat = answer.text.replace(/\s+/g, " ").trim();
  return flat ? (flat.length > 200 ? `${flat.slice(0, 200)}…` : flat) : "no details";
}

/**
 * Exchanges a GitHub token for a Copilot token. A refusal is an OAuthError `refresh_failed` that says why it
 * usually happens (the GitHub token was revoked, or the account has no Copilot subscription).
 */
export async function exchangeForCopilotToken(
  githubToken: string,
  domain: string | undefined,
  signal?: AbortSignal,
): Promise<OAuthCredential> {
  const url = endpoints(domain).copilotToken;
  const answer = await call(
    url,
    {
      method: "GET",
      headers: { accept: "application/json", authorization: `Bearer ${githubToken}`, ...COPILOT_HEADERS },
    },
    signal,
    "refresh_failed",
  );
  if (!answer.ok) {
    throw new OAuthError(
      "refresh_failed",
      `GitHub refused the Copilot token exchange (HTTP ${answer.status}: ${said(answer)}); the GitHub sign-in ` +
        "may have been revoked, or the account has no active Copilot subscription",
    );
  }
  const token = answer.body?.token;
  const expiresAt = Number(answer.body?.expires_at);
  if (typeof token !== "string" || !token || !Number.isFinite(expiresAt) || expiresAt <= 0) {
    throw new OAuthError("refresh_failed", `${url} answered without a Copilot token and its expires_at`);
  }
  return {
    type: "oauth",
    key: token,
    refresh: githubToken,
    expires: expiresAt * 1000,
    ...(domain ? { enterpriseDomain: domain } : {}),
  };
}

/** The device flow at GitHub, then the first Copilot token exchange. */
export async function signInWithGitHubCopilot(io: ProviderLoginIO): Promise<OAuthCredential | undefined> {
  const typed = await io.input("GitHub Enterprise domain (leave empty for github.com)", {
    placeholder: "company.ghe.com",
    ...(io.signal ? { signal: io.signal } : {}),
  });
  if (typed === undefined) return undefined;
  const domain = enterpriseDomain(typed);
  const urls = endpoints(domain);
  const start = await postForm(urls.deviceCode, { client_id: CLIENT_ID, scope: SCOPE }, io.signal);
  const deviceCode = start.body?.device_code;
  const userCode = start.body?.user_code;
  const verificationUri = start.body?.verification_uri;
  if (!start.ok || typeof deviceCode !== "string" || typeof userCode !== "string") {
    throw new OAuthError(
      "token_request_failed",
      `${urls.deviceCode} refused the device code request (HTTP ${start.status}: ${said(start)})`,
    );
  }
  const interval = Number(start.body?.interval);
  const lifetime = Number(start.body?.expires_in);
  let githubToken: string | undefined;
  const approved = await pollDeviceCode(io, {
    title: "GitHub Copilot subscription",
    userCode,
    verificationUri:
      typeof verificationUri === "string"
        ? verificationUri
        : `https://${domain ?? "github.com"}/login/device`,
    intervalMs: Number.isFinite(interval) && interval >= 0 ? interval * 1000 : 5000,
    waitMs: Math.min(Number.isFinite(lifetime) && lifetime > 0 ? lifetime * 1000 : 900_000, 900_000),
    slowDownStepMs: 5000,
    poll: async (signal) => {
      const answer = await postForm(
        urls.accessToken,
        {
          client_id: CLIENT_ID,
          device_code: deviceCode,
          grant_type: "urn:ietf:params:oauth:grant-type:device_code",
        },
        signal,
      );
      const token = answer.body?.access_token;
      if (answer.ok && typeof token === "string" && token) {
        githubToken = token;
        return { tokens: { type: "oauth", key: token } };
      }
      // GitHub answers "not yet" with HTTP 200 and an error field.
      const error = typeof answer.body?.error === "string" ? answer.body.error : "";
      if (error === "authorization_pending") return "pending";
      if (error === "slow_down") return "slow_down";
      if (error === "access_denied") return "denied";
      if (error === "expired_token") return "expired";
      throw new OAuthError(
        "token_request_failed",
        `${urls.accessToken} refused the device code (HTTP ${answer.status}: ${said(answer)})`,
      );
    },
  });
  if (!approved || !githubToken) return undefined;
  let credential: OAuthCredential;
  try {
    credential = await exchangeForCopilotToken(githubToken, domain, io.signal);
  } catch (error) {
    if (error instanceof OAuthError && error.reason === "refresh_failed") {
      throw new OAuthError("token_request_failed", error.message);
    }
    throw error;
  }
  return withAccountModels(credential, domain, io);
}

const CATALOGUE_IDS = GITHUB_COPILOT_MODELS.map((model) => model.id);

function accountUrls(token: string, domain: string | undefined) {
  return { apiUrl: copilotApiUrl(token, domain), tokenBaseUrl: copilotBaseUrl(token, domain) };
}

/**
 * After the sign-in: reads which models the account has, switches on the catalogue models whose policy is not set,
 * and keeps the list with the credential (`availableModelIds`). A list that cannot be read does not fail the
 * sign-in: the credential is kept without it (every catalogue model is offered) and the person is told once.
 */
async function withAccountModels(
  credential: OAuthCredential,
  domain: string | undefined,
  io: ProviderLoginIO,
): Promise<OAuthCredential> {
  const urls = accountUrls(credential.key, domain);
  let account: { available: string[]; toEnable: string[] };
  try {
    account = await readCopilotModels(credential.key, urls, {
      catalogue: CATALOGUE_IDS,
      retries: 2,
      ...(io.signal ? { signal: io.signal } : {}),
    });
  } catch (error) {
    if (io.signal?.aborted) throw new OAuthError("cancelled", "Sign-in was cancelled");
    io.notify(
      `Could not read which models the Copilot account has (${error instanceof Error ? error.message : String(error)}); ` +
        "every model of the catalogue is offered until the sign-in is renewed.",
    );
    return credential;
  }
  let enabled: string[] = [];
  if (account.toEnable.length > 0) {
    io.notify(`Switching on for the Copilot account: ${account.toEnable.join(", ")}`);
    try {
      enabled = await enableCopilotModels(
        credential.key,
        urls.apiUrl,
        account.toEnable,
        (m) => io.notify(m),
        io.signal,
      );
    } catch (error) {
      if (io.signal?.aborted) throw new OAuthError("cancelled", "Sign-in was cancelled");
      throw error;
    }
  }
  return { ...credential, availableModelIds: [...new Set([...account.available, ...enabled])] };
}

/** Renews the Copilot token: the stored GitHub token is exchanged again, and the account's models read again. */
export async function refreshGitHubCopilot(
  credential: { key: string; [field: string]: unknown },
  options: { signal?: AbortSignal } = {},
): Promise<OAuthCredential> {
  const githubToken = typeof credential.refresh === "string" ? credential.refresh : "";
  if (!githubToken) {
    throw new OAuthError("refresh_failed", "The stored sign-in has no GitHub token");
  }
  const domain =
    typeof credential.enterpriseDomain === "string" && credential.enterpriseDomain
      ? credential.enterpriseDomain
      : undefined;
  const renewed = await exchangeForCopilotToken(githubToken, domain, options.signal);
  // The account's models are read again (no policy is switched on here). When they cannot be, the list kept
  // before stays: a renewal does not fail over it.
  const kept = storedModelIds(credential);
  try {
    const account = await readCopilotModels(renewed.key, accountUrls(renewed.key, domain), {
      catalogue: CATALOGUE_IDS,
      retries: 0,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { ...renewed, availableModelIds: account.available };
  } catch {
    return kept ? { ...renewed, availableModelIds: kept } : renewed;
  }
}

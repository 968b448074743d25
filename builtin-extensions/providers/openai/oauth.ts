/**
 * Sign-in with a ChatGPT subscription (Plus/Pro/Business), as Codex does: the authorization-code flow with PKCE
 * against auth.openai.com with a callback on 127.0.0.1:1455, or OpenAI's device-code flow (a code entered at
 * auth.openai.com/codex/device; its endpoints are OpenAI's own shape, not RFC 8628's). Tokens are renewed at the
 * same token endpoint. Requests with the token go to the ChatGPT backend's Responses endpoint with the account id
 * from the token (stream.ts).
 *
 * Overridable (tests point them at 127.0.0.1): KNIGHTCODE_OAUTH_OPENAI_ISSUER_URL (authorize, token and device
 * endpoints), KNIGHTCODE_OAUTH_OPENAI_CALLBACK_PORT, KNIGHTCODE_OAUTH_OPENAI_API_URL (the backend).
 */
import {
  authorizationCodeLogin,
  decodeJwtClaims,
  type OAuthCredential,
  OAuthError,
  oauthCallbackPort,
  oauthCredential,
  oauthEndpoint,
  oauthFetchJson,
  type ProviderLoginIO,
  pollDeviceCode,
  refreshOAuthCredential,
  requestTokens,
  type TokenResponse,
} from "@knightcodeai/cli/kit";
import { OPENAI_PROVIDER } from "./models.js";

const CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann";
const ISSUER = "https://auth.openai.com";
const CALLBACK_PORT = 1455;
const SCOPE = "openid profile email offline_access";
/** Where ChatGPT subscription requests go: `<this>/responses`. */
export const CHATGPT_BACKEND_URL = "https://chatgpt.com/backend-api/codex";
const AUTH_CLAIM = "https://api.openai.com/auth";

const issuer = () => oauthEndpoint(OPENAI_PROVIDER, "ISSUER_URL", ISSUER).replace(/\/+$/, "");

/** The ChatGPT backend URL requests with a subscription token go to. */
export function chatgptBackendUrl(): string {
  return oauthEndpoint(OPENAI_PROVIDER, "API_URL", CHATGPT_BACKEND_URL).replace(/\/+$/, "");
}

/** The ChatGPT account id the tokens are for (the backend wants it with every request). */
export function chatgptAccountId(token: string | undefined): string | undefined {
  const claims = token ? decodeJwtClaims(token) : undefined;
  const auth = claims?.[AUTH_CLAIM];
  const id =
    auth && typeof auth === "object" ? (auth as Record<string, unknown>).chatgpt_account_id : undefined;
  return typeof id === "string" && id ? id : undefined;
}

function accountFields(tokens: TokenResponse): Record<string, unknown> {
  const accountId = chatgptAccountId(tokens.id_token) ?? chatgptAccountId(tokens.access_token);
  if (!accountId) {
    throw new OAuthError(
      "bad_response",
      "The sign-in did not name a ChatGPT account (no chatgpt_account_id in the tokens); is the subscription active?",
    );
  }
  return { accountId };
}

export function signInWithChatGPT(io: ProviderLoginIO): Promise<OAuthCredential | undefined> {
  const base = issuer();
  return authorizationCodeLogin(io, {
    title: "ChatGPT subscription",
    authorizeUrl: `${base}/oauth/authorize`,
    tokenUrl: `${base}/oauth/token`,
    clientId: CLIENT_ID,
    scope: SCOPE,
    callback: { port: oauthCallbackPort(OPENAI_PROVIDER, CALLBACK_PORT), path: "/auth/callback" },
    authorizeParams: {
      id_token_add_organizations: "true",
      codex_cli_simplified_flow: "true",
      originator: "knightcode",
    },
    extra: accountFields,
  });
}

/** OpenAI's device-code sign-in: a user code to enter at `<issuer>/codex/device`, then a code exchange. */
export async function signInWithChatGPTDevice(io: ProviderLoginIO): Promise<OAuthCredential | undefined> {
  const base = issuer();
  const start = await postJson(
    `${base}/api/accounts/deviceauth/usercode`,
    { client_id: CLIENT_ID },
    io.signal,
  );
  const deviceAuthId = start.body?.device_auth_id;
  const userCode = start.body?.user_code ?? start.body?.usercode;
  if (!start.ok || typeof deviceAuthId !== "string" || typeof userCode !== "string") {
    throw new OAuthError(
      start.status === 404 ? "token_request_failed" : "bad_response",
      start.status === 404
        ? "Device-code sign-in is not enabled for this account; use the browser sign-in"
        : `${base} refused the device code request (HTTP ${start.status})`,
    );
  }
  const interval = Number(start.body?.interval);
  let grant: { code: string; verifier: string } | undefined;
  const signedIn = await pollDeviceCode(io, {
    title: "ChatGPT subscription",
    userCode,
    verificationUri: `${base}/codex/device`,
    intervalMs: Number.isFinite(interval) && interval >= 0 ? interval * 1000 : 5000,
    waitMs: 15 * 60_000,
    poll: async (signal) => {
      const answer = await postJson(
        `${base}/api/accounts/deviceauth/token`,
        { device_auth_id: deviceAuthId, user_code: userCode },
        signal,
      );
      // Not approved yet: OpenAI answers 403 or 404 until the code is entered.
      if (answer.status === 403 || answer.status === 404) return "pending";
      const code = answer.body?.authorization_code;
      const verifier = answer.body?.code_verifier;
      if (!answer.ok || typeof code !== "string" || typeof verifier !== "string") {
        const error = typeof answer.body?.error === "string" ? answer.body.error : "";
        if (error === "access_denied") return "denied";
        if (error === "expired_token") return "expired";
        throw new OAuthError(
          "token_request_failed",
          `${base} refused the device sign-in (HTTP ${answer.status})`,
        );
      }
      grant = { code, verifier };
      return { tokens: { type: "oauth", key: "" } };
    },
  });
  if (!signedIn || !grant) return undefined;
  const tokens = await requestTokens(
    `${base}/oauth/token`,
    {
      grant_type: "authorization_code",
      client_id: CLIENT_ID,
      code: grant.code,
      redirect_uri: `${base}/deviceauth/callback`,
      code_verifier: grant.verifier,
    },
    io.signal ? { signal: io.signal } : {},
  );
  return oauthCredential(tokens, accountFields(tokens));
}

export function refreshChatGPT(credential: {
  key: string;
  [field: string]: unknown;
}): Promise<OAuthCredential> {
  return refreshOAuthCredential(credential, {
    tokenUrl: `${issuer()}/oauth/token`,
    clientId: CLIENT_ID,
    extra: (tokens) => {
      const accountId = chatgptAccountId(tokens.id_token) ?? chatgptAccountId(tokens.access_token);
      return accountId ? { accountId } : {};
    },
  });
}

function postJson(url: string, body: Record<string, string>, signal: AbortSignal | undefined) {
  return oauthFetchJson(
    url,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
    { signal },
  );
}

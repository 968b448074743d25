/**
 * Sign-in with a Claude subscription (Pro/Max): the authorization-code flow with PKCE against claude.ai, a callback
 * on 127.0.0.1:53692 (or a pasted `code#state`), tokens renewed at the same token endpoint. Requests with the
 * access token go as `Authorization: Bearer` with the `oauth-2025-04-20` beta, and the system prompt starts with
 * the Claude Code identity line the subscription requires (stream.ts).
 *
 * Endpoints are overridable (tests point them at 127.0.0.1): KNIGHTCODE_OAUTH_ANTHROPIC_AUTHORIZE_URL,
 * KNIGHTCODE_OAUTH_ANTHROPIC_TOKEN_URL, KNIGHTCODE_OAUTH_ANTHROPIC_CALLBACK_PORT.
 */
import {
  authorizationCodeLogin,
  type OAuthCredential,
  oauthCallbackPort,
  oauthEndpoint,
  type ProviderLoginIO,
  refreshOAuthCredential,
} from "@knightcodeai/cli/kit";
import { ANTHROPIC_PROVIDER } from "./models.js";

const CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const AUTHORIZE_URL = "https://claude.ai/oauth/authorize";
const TOKEN_URL = "https://platform.claude.com/v1/oauth/token";
const CALLBACK_PORT = 53692;
const SCOPES =
  "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";

const tokenUrl = () => oauthEndpoint(ANTHROPIC_PROVIDER, "TOKEN_URL", TOKEN_URL);

export function signInWithClaude(io: ProviderLoginIO): Promise<OAuthCredential | undefined> {
  return authorizationCodeLogin(io, {
    title: "Claude subscription",
    authorizeUrl: oauthEndpoint(ANTHROPIC_PROVIDER, "AUTHORIZE_URL", AUTHORIZE_URL),
    tokenUrl: tokenUrl(),
    clientId: CLIENT_ID,
    scope: SCOPES,
    callback: { port: oauthCallbackPort(ANTHROPIC_PROVIDER, CALLBACK_PORT), path: "/callback" },
    authorizeParams: { code: "true" },
    tokenFormat: "json",
    stateInTokenRequest: true,
  });
}

export function refreshClaude(credential: {
  key: string;
  [field: string]: unknown;
}): Promise<OAuthCredential> {
  return refreshOAuthCredential(credential, { tokenUrl: tokenUrl(), clientId: CLIENT_ID, format: "json" });
}

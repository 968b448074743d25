/**
 * A provider whose users sign in with an account instead of pasting an API key: `knightcode login acme` (or
 * /login) runs the OAuth device flow of the provider kit, `auth.json` keeps the tokens (mode 0600), and
 * KnightCode renews the access token through `refreshCredential` before it runs out.
 *
 * Shows: `login` methods and `refreshCredential` on `registerProvider`, built on the kit's
 * `deviceAuthorizationLogin` and `refreshOAuthCredential`; `oauthEndpoint` makes each endpoint overridable by
 * `KNIGHTCODE_OAUTH_ACME_<NAME>` (the test points them at a server on 127.0.0.1). Requests go through the built-in
 * `openai-completions` wire, which sends the access token as `Authorization: Bearer`.
 */
import {
  deviceAuthorizationLogin,
  type ExtensionAPI,
  oauthEndpoint,
  refreshOAuthCredential,
} from "@knightcodeai/cli/kit";

const AUTH_SERVER = "https://auth.acme.example";
const CLIENT_ID = "knightcode-example";

const endpoint = (name: string, path: string) => oauthEndpoint("acme", name, `${AUTH_SERVER}${path}`);

export default function (knightcode: ExtensionAPI) {
  knightcode.registerProvider("acme", {
    api: "openai-completions",
    baseUrl: "https://api.acme.example/v1",
    models: [{ id: "acme-1", name: "Acme One", contextWindow: 32_000, maxTokens: 4_000 }],
    login: [
      {
        label: "Acme account (device code)",
        login: (io) =>
          deviceAuthorizationLogin(io, {
            title: "Acme account",
            deviceAuthorizationUrl: endpoint("DEVICE_URL", "/oauth/device_authorization"),
            tokenUrl: endpoint("TOKEN_URL", "/oauth/token"),
            clientId: CLIENT_ID,
            scope: "inference offline_access",
          }),
      },
    ],
    refreshCredential: (credential) =>
      refreshOAuthCredential(credential, {
        tokenUrl: endpoint("TOKEN_URL", "/oauth/token"),
        clientId: CLIENT_ID,
      }),
  });
}

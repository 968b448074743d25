/**
 * OAuth for HTTP MCP servers, through the SDK's client-provider interface: authorization code with PKCE and
 * dynamic client registration, a loopback redirect on 127.0.0.1, and tokens kept per server URL in
 * `<agentDir>/mcp-auth.json` (mode 0600), which the SDK refreshes when they expire.
 *
 * Background connections use a provider that never opens anything: when a server needs sign-in, the connection
 * ends as `needs-auth` and `/mcp login <name>` runs the interactive flow (`signIn`): a callback server on
 * 127.0.0.1, the authorization URL shown to the person (and opened in their browser where possible), the code
 * exchanged when the browser comes back.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { readJsonObjectFile, writeFileAtomic } from "@knightcodeai/cli/kit";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";

/** What the auth file keeps for one server URL. */
interface StoredAuth {
  clientInformation?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  codeVerifier?: string;
  /** The redirect URL the client was registered with. */
  redirectUrl?: string;
}

/** How long `/mcp login` waits for the browser to come back. */
export const SIGN_IN_TIMEOUT_MS = 5 * 60_000;
const CALLBACK_PATH = "/callback";

export function authFilePath(agentDir: string): string {
  return join(agentDir, "mcp-auth.json");
}

/** Per-URL records in the auth file, read and written whole (atomically, 0600) on every change. */
export class AuthStore {
  constructor(private readonly file: string) {}

  get(url: string): StoredAuth {
    const read = readJsonObjectFile(this.file);
    if (read.status !== "ok") return {};
    return (read.value[url] as StoredAuth | undefined) ?? {};
  }

  update(url: string, change: (entry: StoredAuth) => StoredAuth | undefined): void {
    const read = readJsonObjectFile(this.file);
    // A damaged file is replaced rather than kept: it holds nothing but credentials that can be fetched again.
    const all = read.status === "ok" ? { ...read.value } : {};
    const next = change({ ...((all[url] as StoredAuth | undefined) ?? {}) });
    if (next === undefined) delete all[url];
    else all[url] = next;
    writeFileAtomic(this.file, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  }
}

/**
 * The provider the SDK calls. `onRedirect` receives the authorization URL; background connections pass one that
 * only records that sign-in is needed.
 */
export class McpOAuthProvider implements OAuthClientProvider {
  private readonly stateValue = randomBytes(16).toString("hex");

  constructor(
    private readonly store: AuthStore,
    private readonly serverUrl: string,
    private readonly redirect: string,
    private readonly onRedirect: (url: URL) => void,
    private readonly scope?: string,
  ) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "KnightCode",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(this.scope ? { scope: this.scope } : {}),
    };
  }

  state(): string {
    return this.stateValue;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const stored = this.store.get(this.serverUrl);
    // A client registered for another redirect URL cannot finish this sign-in: register again.
    if (stored.redirectUrl && stored.redirectUrl !== this.redirect) return undefined;
    return stored.clientInformation;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.store.update(this.serverUrl, (e) => ({ ...e, clientInformation: info, redirectUrl: this.redirect }));
  }

  tokens(): OAuthTokens | undefined {
    return this.store.get(this.serverUrl).tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.store.update(this.serverUrl, (e) => ({ ...e, tokens }));
  }

  redirectToAuthorization(url: URL): void {
    this.onRedirect(url);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.store.update(this.serverUrl, (e) => ({ ...e, codeVerifier }));
  }

  codeVerifier(): string {
    const verifier = this.store.get(this.serverUrl).codeVerifier;
    if (!verifier) throw new Error("no PKCE code verifier saved for this sign-in");
    return verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    this.store.update(this.serverUrl, (e) => {
      if (scope === "all") return undefined;
      const next = { ...e };
      if (scope === "client") delete next.clientInformation;
      if (scope === "tokens") delete next.tokens;
      if (scope === "verifier") delete next.codeVerifier;
      return next;
    });
  }
}

/** The redirect URL a background connection registers with: the one of the last sign-in, else a fixed default. */
export function storedRedirectUrl(store: AuthStore, serverUrl: string): string {
  return store.get(serverUrl).redirectUrl ?? `http://127.0.0.1:33418${CALLBACK_PATH}`;
}

/**
 * The interactive sign-in: listens on 127.0.0.1 (the port of the last sign-in when free), runs the SDK's `auth()`
 * until it asks for the browser, hands the URL to `show`, waits for the redirect with the code (bounded), and
 * exchanges it. Resolves when tokens are saved.
 */
export async function signIn(options: {
  store: AuthStore;
  serverUrl: string;
  show: (url: URL) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
  scope?: string;
}): Promise<void> {
  const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
  const previous = options.store.get(options.serverUrl).redirectUrl;
  const preferredPort = previous ? Number(new URL(previous).port) : 0;
  const callback = await listenForCallback(preferredPort);
  try {
    let shown: URL | undefined;
    const provider = new McpOAuthProvider(
      options.store,
      options.serverUrl,
      callback.redirectUrl,
      (url) => {
        shown = url;
      },
      options.scope,
    );
    const first = await auth(provider, { serverUrl: options.serverUrl });
    if (first === "AUTHORIZED") return;
    if (!shown) throw new Error("the server asked for sign-in but gave no authorization URL");
    options.show(shown);
    const code = await callback.code(
      provider.state(),
      options.timeoutMs ?? SIGN_IN_TIMEOUT_MS,
      options.signal,
    );
    const second = await auth(provider, { serverUrl: options.serverUrl, authorizationCode: code });
    if (second !== "AUTHORIZED") throw new Error("the authorization code was not accepted");
  } finally {
    await callback.close();
  }
}

/** Removes the stored tokens and client registration of one server URL. */
export function signOut(store: AuthStore, serverUrl: string): boolean {
  const had = Object.keys(store.get(serverUrl)).length > 0;
  if (had) store.update(serverUrl, () => undefined);
  return had;
}

interface Callback {
  redirectUrl: string;
  code(state: string, timeoutMs: number, signal?: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

async function listenForCallback(preferredPort: number): Promise<Callback> {
  let deliver: ((query: URLSearchParams) => void) | undefined;
  const received: URLSearchParams[] = [];
  // Loaded here: only a sign-in needs an HTTP server, and every session start would pay for node:http otherwise.
  const { createServer } = await import("node:http");
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== CALLBACK_PATH) {
      res.writeHead(404).end();
      return;
    }
    const ok = url.searchParams.has("code");
    res.writeHead(ok ? 200 : 400, { "content-type": "text/plain; charset=utf-8" });
    res.end(
      ok
        ? "KnightCode: signed in. You can close this tab."
        : `KnightCode: sign-in failed (${url.searchParams.get("error") ?? "no code"}).`,
    );
    received.push(url.searchParams);
    deliver?.(url.searchParams);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  try {
    await listen(preferredPort);
  } catch {
    await listen(0);
  }
  const { port } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    code(state, timeoutMs, signal) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`sign-in timed out after ${Math.round(timeoutMs / 1000)} s`)),
          timeoutMs,
        );
        const accept = (query: URLSearchParams) => {
          if (query.get("state") !== null && query.get("state") !== state) return;
          clearTimeout(timer);
          const code = query.get("code");
          if (code) resolve(code);
          else
            reject(
              new Error(
                `sign-in failed: ${query.get("error_description") ?? query.get("error") ?? "no code"}`,
              ),
            );
        };
        signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            reject(new Error("sign-in cancelled"));
          },
          { once: true },
        );
        deliver = accept;
        for (const query of received) accept(query);
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

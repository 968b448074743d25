/**
 * Provider credentials through `knightcode app-server` (`account/*`): read with nothing stored, an API key stored
 * (masked as `knightcode login --list` masks it, never sent back, the provider's models usable at once, also in a
 * thread loaded before), logout, and sign-ins against a server on 127.0.0.1 that plays the authorization servers:
 * Claude's PKCE flow (the browser's redirect, and a pasted code answering the sign-in's `ui/dialog`), GitHub
 * Copilot's device code (its enterprise question as a dialog), OpenAI's device code cancelled midway, and an
 * extension's method that asks a secret. Every message is checked against the protocol by the harness.
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import {
  type AppServerClient,
  type AppServerParams,
  connectAppServer,
  type SpawnedAppServer,
} from "../../../hosts/sdk/app-server-client.js";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness, notifications } from "./harness.js";
import { protocolCheck } from "./protocol-check.js";

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};

/** A provider (from an extension) whose sign-in asks one secret question and stores the answer. */
const VAULT_EXTENSION = `
export default function (knightcode) {
  knightcode.registerProvider("vault", {
    api: "openai-completions",
    baseUrl: "http://127.0.0.1:9/v1",
    apiKey: "VAULT_KEY",
    models: [{ id: "v1", contextWindow: 8000, maxTokens: 1000 }],
    login: [
      {
        id: "token",
        label: "Vault token",
        login: async (io) => {
          const token = await io.input("Vault token", { secret: true, placeholder: "hvs.…" });
          return token ? { type: "vault-token", key: token } : undefined;
        },
      },
    ],
  });
}
`;

type Dialog = Record<string, any> & { requestId?: string };
type DialogReply = { value?: string; confirmed?: boolean };

describe("knightcode app-server: account/* (provider credentials and sign-in)", function () {
  this.timeout(60_000);
  let h: Harness;
  const sockets: AppServerClient[] = [];
  afterEach(async () => {
    for (const c of sockets.splice(0)) c.close();
    await h?.close();
  });
  const tmp = useTempDir("kc-appserver-account-");
  /** What the OAuth routes of the test server do. */
  let devicePolls: number;

  const authPath = () => join(h.agentDir, "auth.json");
  const readAuth = () => JSON.parse(readFileSync(authPath(), "utf8"));
  const requestsTo = (path: string) => h.model.requests.filter((r) => r.path.startsWith(path));

  async function setUp(args?: string[]): Promise<SpawnedAppServer> {
    devicePolls = 0;
    h = await harness(tmp.path, { "vault.ts": VAULT_EXTENSION });
    // Beside the harness's `local` (whose key comes from LOCAL_KEY), a server that needs no key.
    writeFileSync(
      join(h.agentDir, "models.json"),
      JSON.stringify({
        providers: {
          local: {
            api: "openai-completions",
            baseUrl: `${h.model.url}/v1`,
            apiKey: "LOCAL_KEY",
            models: [{ id: "m", contextWindow: 32000, maxTokens: 1024 }],
          },
          lan: {
            api: "openai-completions",
            baseUrl: `${h.model.url}/lan/v1`,
            models: [{ id: "lan-1", contextWindow: 8000, maxTokens: 1000 }],
          },
        },
      }),
    );
    const url = h.model.url;
    h.model.respond(async (req, res) => {
      const path = req.path.split("?")[0]!;
      if (path === "/claude/authorize") {
        const query = new URL(req.path, url).searchParams;
        const back = new URL(query.get("redirect_uri")!);
        back.searchParams.set("code", "claude-code-1");
        back.searchParams.set("state", query.get("state")!);
        res.writeHead(302, { location: back.toString() }).end();
        return;
      }
      if (path === "/claude/token")
        return json(res, 200, {
          access_token: `claude-at-${req.body.code}`,
          refresh_token: "claude-rt-1",
          expires_in: 3600,
        });
      if (path === "/openai/api/accounts/deviceauth/usercode")
        return json(res, 200, { device_auth_id: "dev-auth-1", user_code: "KNGT-7788", interval: "1" });
      if (path === "/openai/api/accounts/deviceauth/token") {
        devicePolls++;
        return json(res, 403, { error: { message: "pending" } });
      }
      if (path === "/github/login/device/code")
        return json(res, 200, {
          device_code: "gh-device-1",
          user_code: "GHUB-4242",
          verification_uri: `${url}/github/login/device`,
          expires_in: 900,
          interval: 0,
        });
      if (path === "/github/login/oauth/access_token") {
        if (++devicePolls < 3) return json(res, 200, { error: "authorization_pending" });
        return json(res, 200, { access_token: "gho_github1", token_type: "bearer", scope: "read:user" });
      }
      if (path === "/api/copilot_internal/v2/token")
        return json(res, 200, {
          token: "tid=t1;exp=1893456000;proxy-ep=proxy.business.githubcopilot.com;8kp=1:sig1",
          expires_at: Math.floor(Date.now() / 1000) + 1800,
          refresh_in: 1500,
        });
      res.writeHead(404).end(`no route for ${req.method} ${req.path}`);
    });
    const env = {
      HOME: join(tmp.path, "home"),
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
      COPILOT_GITHUB_TOKEN: "",
      VAULT_KEY: "",
      KNIGHTCODE_OAUTH_ANTHROPIC_AUTHORIZE_URL: `${url}/claude/authorize`,
      KNIGHTCODE_OAUTH_ANTHROPIC_TOKEN_URL: `${url}/claude/token`,
      KNIGHTCODE_OAUTH_ANTHROPIC_CALLBACK_PORT: "0",
      KNIGHTCODE_OAUTH_OPENAI_ISSUER_URL: `${url}/openai`,
      KNIGHTCODE_OAUTH_OPENAI_CALLBACK_PORT: "0",
      KNIGHTCODE_OAUTH_GITHUB_COPILOT_DEVICE_CODE_URL: `${url}/github/login/device/code`,
      KNIGHTCODE_OAUTH_GITHUB_COPILOT_ACCESS_TOKEN_URL: `${url}/github/login/oauth/access_token`,
      KNIGHTCODE_OAUTH_GITHUB_COPILOT_COPILOT_TOKEN_URL: `${url}/api/copilot_internal/v2/token`,
    };
    return args ? h.start(env, args) : h.start(env);
  }

  /** Records every `ui/dialog` the server asks; `answer` decides the reply (a promise that never settles: none). */
  function dialogs(
    server: SpawnedAppServer,
    answer: (d: Dialog) => DialogReply | Promise<DialogReply> = () => new Promise(() => {}),
  ) {
    const asked: Dialog[] = [];
    server.client.onRequest("ui/dialog", (params) => {
      const request = server.client.received.findLast((m) => m.method === "ui/dialog");
      const dialog: Dialog = { ...params, requestId: String(request?.id) };
      asked.push(dialog);
      return answer(dialog);
    });
    return asked;
  }

  async function waitUntil(what: string, check: () => boolean, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const wire = (server: SpawnedAppServer) => JSON.stringify(server.client.received);

  it("reads the providers with nothing stored, stores an API key (masked, usable at once), logs out; bad input is refused", async () => {
    const server = await setUp();
    const { client } = server;
    await client.initialize();
    const thread = await client.request("thread/start", { cwd: h.project });
    const threadId = thread.thread.id;

    const read = await client.request("account/read", {});
    expect(read.path).to.equal(authPath());
    const byName = new Map(read.providers.map((p) => [p.provider, p]));
    expect([...byName.keys()]).to.include.members([
      "anthropic",
      "openai",
      "github-copilot",
      "local",
      "lan",
      "vault",
    ]);
    expect(byName.has("scripted"), "test-only providers are not offered").to.equal(false);
    expect(byName.get("anthropic")).to.deep.equal({
      provider: "anthropic",
      credential: { type: "none" },
      needsKey: true,
      acceptsApiKey: true,
      keyVariable: "ANTHROPIC_API_KEY",
      loginMethods: [{ id: "browser", label: "Claude subscription (Pro/Max)" }],
    });
    expect(byName.get("openai")!.loginMethods.map((m) => m.id)).to.deep.equal(["browser", "device-code"]);
    expect(byName.get("local")).to.deep.include({
      credential: { type: "none" },
      needsKey: true,
      keyVariable: "LOCAL_KEY",
      keySource: "environment",
    });
    expect(byName.get("lan")).to.deep.include({ needsKey: false, acceptsApiKey: false, loginMethods: [] });
    const unusable = await client.request("model/list", { includeUnusable: true });
    expect(unusable.data.find((m) => m.provider === "anthropic")).to.deep.include({
      usable: false,
      auth: "missing",
    });

    // An API key: stored (0600), everyone told with the key masked, the provider's models usable, also for the
    // thread whose session was loaded before the key was stored.
    const key = "sk-ant-api03-secret-value-4242";
    expect(
      await client.request("account/login/start", { provider: "anthropic", apiKey: ` ${key}\n` }),
    ).to.deep.equal({
      type: "apiKey",
    });
    const updated = await client.waitFor("account/updated", (p) => p.provider === "anthropic");
    expect(updated.credential).to.deep.equal({ type: "api_key", masked: "****4242" });
    expect(readAuth().anthropic).to.deep.equal({ type: "api_key", key });
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);
    const listed = await runCli(["login", "--list"], {
      cwd: tmp.path,
      env: { KNIGHTCODE_AGENT_DIR: h.agentDir, HOME: join(tmp.path, "home") },
    });
    expect(listed.stdout, "masked exactly as knightcode login --list masks it").to.match(
      /^anthropic {2}API key \*\*\*\*4242$/m,
    );
    const after = await client.request("account/read", {});
    expect(after.providers.find((p) => p.provider === "anthropic")).to.deep.include({
      credential: { type: "api_key", masked: "****4242" },
      keySource: "auth.json",
    });
    for (const params of [{}, { threadId }] as { threadId?: string }[]) {
      const models = await client.request("model/list", { ...params });
      const claude = models.data.filter((m) => m.provider === "anthropic");
      expect(claude.length, JSON.stringify(params)).to.be.greaterThan(0);
      expect(claude.every((m) => m.usable && m.auth === "key")).to.equal(true);
    }

    // Refusals, each clear.
    const refused = async (params: AppServerParams<"account/login/start">) =>
      client.request("account/login/start", params).then(
        () => expect.fail(`accepted ${JSON.stringify(params)}`),
        (e) => e,
      );
    const unknownProvider = await refused({ provider: "nope", apiKey: "x" });
    expect(unknownProvider.data).to.deep.include({
      code: "invalidParams",
      reason: "provider",
      provider: "nope",
    });
    expect(unknownProvider.message).to.contain('No provider "nope" (known: ').and.contain("anthropic");
    const unknownMethod = await refused({ provider: "openai", method: "carrier-pigeon" });
    expect(unknownMethod.data).to.deep.include({ reason: "method", methods: ["browser", "device-code"] });
    expect(unknownMethod.message).to.equal(
      'account/login/start: openai has no sign-in method "carrier-pigeon" (its methods: browser, device-code)',
    );
    expect((await refused({ provider: "local", method: "x" })).message).to.contain(
      "local has no sign-in method; store an API key",
    );
    expect((await refused({ provider: "openai" })).data).to.deep.include({ reason: "params" });
    expect((await refused({ provider: "openai", apiKey: "k", method: "browser" })).data?.reason).to.equal(
      "params",
    );
    expect((await refused({ provider: "lan", apiKey: "k-for-lan" })).message).to.equal(
      "account/login/start: lan takes no key: its models are usable without one",
    );
    expect((await refused({ provider: "openai", apiKey: "   " })).data?.reason).to.equal("apiKey");
    expect((await refused({ provider: "openai", apiKey: "" })).data).to.deep.include({
      code: "invalidParams",
      path: "/apiKey",
    });

    // Logout: removed, everyone told, the models unusable again (the thread's too); again: nothing to remove.
    expect(await client.request("account/logout", { provider: "anthropic" })).to.deep.equal({
      removed: true,
    });
    await client.waitFor(
      "account/updated",
      (p) => p.provider === "anthropic" && p.credential.type === "none",
    );
    expect(readAuth()).to.deep.equal({});
    for (const params of [{}, { threadId }] as { threadId?: string }[]) {
      const models = await client.request("model/list", { ...params, includeUnusable: true });
      expect(models.data.filter((m) => m.provider === "anthropic").every((m) => !m.usable)).to.equal(true);
    }
    expect(await client.request("account/logout", { provider: "anthropic" })).to.deep.equal({
      removed: false,
    });
    const logoutUnknown = await client.request("account/logout", { provider: "nope" }).catch((e) => e);
    expect(logoutUnknown.data).to.deep.include({ code: "invalidParams", reason: "provider" });
    expect(notifications(server, "account/updated")).to.have.length(2);
    expect(wire(server), "the key is never sent back").to.not.contain("secret-value");
  });

  it("signs in to a Claude subscription: the URL as progress, the paste dialog withdrawn when the browser answers, completed, stored, usable", async () => {
    const server = await setUp();
    const { client } = server;
    const asked = dialogs(server);
    await client.initialize();
    const start = await client.request("account/login/start", { provider: "anthropic", method: "browser" });
    if (start.type !== "signIn") throw new Error("not a sign-in");
    const { loginId } = start;
    const progress = await client.waitFor("account/login/progress", (p) => p.loginId === loginId);
    expect(progress.provider).to.equal("anthropic");
    expect(progress.message).to.contain("Sign in to your Claude subscription in a browser");
    expect(progress.url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/claude\/authorize\?/);
    expect(progress.message).to.contain(progress.url);
    const query = new URL(progress.url!).searchParams;
    expect(query.get("code_challenge_method")).to.equal("S256");

    // The paste fallback is a dialog of the sign-in (no thread), asked of this client.
    await waitUntil("the paste dialog", () => asked.length > 0);
    expect(asked[0]).to.deep.include({
      loginId,
      kind: "input",
      title: "Paste the redirect URL or the code (or wait for the browser)",
      placeholder: query.get("redirect_uri"),
    });
    expect(asked[0]).to.not.have.property("threadId");
    expect(asked[0]).to.not.have.property("secret");

    // One sign-in per provider at a time.
    const second = await client
      .request("account/login/start", { provider: "anthropic", method: "browser" })
      .catch((e) => e);
    expect(second.data).to.deep.equal({ code: "loginInProgress", provider: "anthropic", loginId });
    expect(second.message).to.contain("A sign-in to anthropic is already running");
    const apiKeyMeanwhile = await client
      .request("account/login/start", { provider: "anthropic", apiKey: "sk-meanwhile" })
      .catch((e) => e);
    expect(apiKeyMeanwhile.data?.code).to.equal("loginInProgress");
    const reading = await client.request("account/read", {});
    expect(reading.providers.find((p) => p.provider === "anthropic")?.loginInProgress).to.equal(loginId);

    // The browser: authorize redirects to the sign-in's callback on 127.0.0.1.
    const authorize = await fetch(progress.url!, { redirect: "manual" });
    expect(authorize.status).to.equal(302);
    const page = await fetch(authorize.headers.get("location")!.replace("//localhost:", "//127.0.0.1:"));
    expect(page.status).to.equal(200);

    const completed = await client.waitFor("account/login/completed", (p) => p.loginId === loginId);
    expect(completed).to.deep.equal({ loginId, provider: "anthropic", success: true });
    const updated = await client.waitFor("account/updated", (p) => p.provider === "anthropic");
    expect(updated.credential.type).to.equal("oauth");
    expect(updated.credential.masked).to.equal("****de-1");
    expect(updated.credential.expires).to.be.greaterThan(Date.now() + 3_000_000);
    const order = client.received.map((m) => m.method);
    expect(order.indexOf("account/login/completed")).to.be.lessThan(order.indexOf("account/updated"));
    // The browser answered first: the paste dialog was withdrawn.
    const cancelled = await client.waitFor(
      "serverRequest/cancelled",
      (p) => p.requestId === asked[0]!.requestId,
    );
    expect(cancelled).to.not.have.property("threadId");

    expect(readAuth().anthropic).to.deep.include({
      type: "oauth",
      key: "claude-at-claude-code-1",
      refresh: "claude-rt-1",
    });
    expect(requestsTo("/claude/token")[0]!.body).to.deep.include({
      grant_type: "authorization_code",
      code: "claude-code-1",
      state: query.get("state"),
    });
    const models = await client.request("model/list", {});
    expect(models.data.some((m) => m.provider === "anthropic" && m.usable)).to.equal(true);
    const after = await client.request("account/read", {});
    expect(after.providers.find((p) => p.provider === "anthropic")).to.not.have.property("loginInProgress");
    expect(wire(server)).to.not.contain("claude-at-claude-code-1").and.not.contain("claude-rt-1");
  });

  it("a pasted code answers the sign-in's dialog; an extension's secret question is a secret dialog", async () => {
    const server = await setUp();
    const { client } = server;
    dialogs(server, (d) => {
      if (d.title === "Vault token") return { value: "hvs.vault-token-0099" };
      // The person pastes the code with the state of the URL they opened: the progress came before the dialog.
      const progress = client.received.find(
        (m) => m.method === "account/login/progress" && (m.params as Dialog).loginId === d.loginId,
      );
      const url = (progress?.params as { url?: string } | undefined)?.url;
      return { value: `pasted-code#${url ? new URL(url).searchParams.get("state") : "no-progress-yet"}` };
    });
    await client.initialize();
    const start = await client.request("account/login/start", { provider: "anthropic", method: "browser" });
    if (start.type !== "signIn") throw new Error("not a sign-in");
    const progress = await client.waitFor("account/login/progress", (p) => p.loginId === start.loginId);
    const state = new URL(progress.url!).searchParams.get("state")!;
    const completed = await client.waitFor("account/login/completed", (p) => p.loginId === start.loginId);
    expect(completed.success, completed.error).to.equal(true);
    expect(requestsTo("/claude/token")[0]!.body).to.deep.include({ code: "pasted-code", state });
    expect(readAuth().anthropic.key).to.equal("claude-at-pasted-code");

    const vault = await client.request("account/login/start", { provider: "vault", method: "token" });
    if (vault.type !== "signIn") throw new Error("not a sign-in");
    const asked = await new Promise<Dialog>((resolve) => {
      const check = () => {
        const found = client.received.find(
          (m) => m.method === "ui/dialog" && (m.params as Dialog).loginId === vault.loginId,
        );
        if (found) resolve(found.params as Dialog);
        else setTimeout(check, 20);
      };
      check();
    });
    expect(asked).to.deep.equal({
      loginId: vault.loginId,
      kind: "input",
      title: "Vault token",
      placeholder: "hvs.…",
      secret: true,
    });
    const done = await client.waitFor("account/login/completed", (p) => p.loginId === vault.loginId);
    expect(done).to.deep.equal({ loginId: vault.loginId, provider: "vault", success: true });
    const updated = await client.waitFor("account/updated", (p) => p.provider === "vault");
    expect(updated.credential).to.deep.equal({ type: "vault-token", masked: "****0099" });
    expect(readAuth().vault).to.deep.equal({ type: "vault-token", key: "hvs.vault-token-0099" });
    const models = await client.request("model/list", {});
    expect(models.data.find((m) => m.id === "vault/v1")?.usable).to.equal(true);
  });

  it("GitHub Copilot's device code: the enterprise question as a dialog, the code and URL as progress, then signed in", async () => {
    const server = await setUp();
    const { client } = server;
    const asked = dialogs(server, (d) =>
      /Enterprise/.test(String(d.title)) ? { value: "" } : new Promise(() => {}),
    );
    await client.initialize();
    const start = await client.request("account/login/start", {
      provider: "github-copilot",
      method: "device-code",
    });
    if (start.type !== "signIn") throw new Error("not a sign-in");
    const progress = await client.waitFor(
      "account/login/progress",
      (p) => p.loginId === start.loginId && p.message.includes("GHUB-4242"),
    );
    expect(progress.url).to.equal(`${h.model.url}/github/login/device`);
    const completed = await client.waitFor("account/login/completed", (p) => p.loginId === start.loginId);
    expect(completed.success, completed.error).to.equal(true);
    expect(asked.map((d) => d.loginId)).to.deep.equal([start.loginId, start.loginId]);
    expect(asked[0]!.title).to.match(/GitHub Enterprise domain/);
    expect(asked[1]!.title).to.contain("GHUB-4242");
    // The waiting question was withdrawn once the device code was approved.
    await client.waitFor("serverRequest/cancelled", (p) => p.requestId === asked[1]!.requestId);
    expect(readAuth()["github-copilot"]).to.deep.include({ type: "oauth", refresh: "gho_github1" });
    const updated = await client.waitFor("account/updated", (p) => p.provider === "github-copilot");
    expect(updated.credential).to.deep.include({ type: "oauth", masked: "****sig1" });
    expect(wire(server)).to.not.contain("gho_github1");
  });

  it("cancels a sign-in midway: completed without success, nothing stored, the dialog withdrawn; a new one may start", async () => {
    const server = await setUp();
    const { client } = server;
    const asked = dialogs(server);
    await client.initialize();
    const start = await client.request("account/login/start", { provider: "openai", method: "device-code" });
    if (start.type !== "signIn") throw new Error("not a sign-in");
    const progress = await client.waitFor("account/login/progress", (p) => p.loginId === start.loginId);
    expect(progress.message).to.contain("KNGT-7788");
    await waitUntil("the first poll", () => devicePolls > 0);
    await waitUntil("the waiting dialog", () => asked.length > 0);
    expect(await client.request("account/login/cancel", { loginId: start.loginId })).to.deep.equal({
      status: "cancelled",
    });
    const completed = await client.waitFor("account/login/completed", (p) => p.loginId === start.loginId);
    expect(completed).to.deep.include({ loginId: start.loginId, provider: "openai", success: false });
    expect(completed.error).to.match(/cancelled/i);
    await client.waitFor("serverRequest/cancelled", (p) => p.requestId === asked[0]!.requestId);
    expect(notifications(server, "account/updated")).to.deep.equal([]);
    expect(() => readAuth()).to.throw(); // no auth.json was ever written
    expect(await client.request("account/login/cancel", { loginId: start.loginId })).to.deep.equal({
      status: "notFound",
    });

    const again = await client.request("account/login/start", { provider: "openai", method: "device-code" });
    expect(again.type).to.equal("signIn");
    if (again.type === "signIn") await client.request("account/login/cancel", { loginId: again.loginId });
    await client.waitFor(
      "account/login/completed",
      (p) => again.type === "signIn" && p.loginId === again.loginId,
    );
  });

  it("a client that handles no dialogs still signs in by the browser; closing the connection that started a sign-in cancels it", async () => {
    const server = await setUp(["app-server", "--listen", "ws://127.0.0.1:0"]);
    await server.client.initialize();
    const deadline = Date.now() + 20_000;
    let port = 0;
    while (!port && Date.now() < deadline) {
      port = Number(/listening on ws:\/\/127\.0\.0\.1:(\d+)/.exec(server.stderr())?.[1] ?? 0);
      if (!port) await new Promise((r) => setTimeout(r, 25));
    }
    expect(port, server.stderr()).to.be.greaterThan(0);
    const connect = async () => {
      const client = await connectAppServer(`ws://127.0.0.1:${port}`, {
        timeoutMs: 20_000,
        check: protocolCheck,
      });
      sockets.push(client);
      await client.initialize("ws", "1");
      return client;
    };

    // No ui/dialog handler: the paste question is answered with an error, and the sign-in keeps waiting for the
    // browser.
    const plain = await connect();
    const start = await plain.request("account/login/start", { provider: "anthropic", method: "browser" });
    if (start.type !== "signIn") throw new Error("not a sign-in");
    const progress = await plain.waitFor("account/login/progress", (p) => p.loginId === start.loginId);
    await waitUntil("the paste dialog", () => plain.received.some((m) => m.method === "ui/dialog"));
    const authorize = await fetch(progress.url!, { redirect: "manual" });
    const page = await fetch(authorize.headers.get("location")!.replace("//localhost:", "//127.0.0.1:"));
    expect(page.status).to.equal(200);
    const completed = await plain.waitFor("account/login/completed", (p) => p.loginId === start.loginId);
    expect(completed.success, completed.error).to.equal(true);
    // The other client (stdio) was told too, but got no progress: that goes to the one that started it.
    await server.client.waitFor("account/login/completed", (p) => p.loginId === start.loginId);
    await server.client.waitFor("account/updated", (p) => p.provider === "anthropic");
    expect(notifications(server, "account/login/progress")).to.deep.equal([]);

    // The starter disconnects midway: the sign-in is cancelled, and the others hear it ended.
    const leaving = await connect();
    const device = await leaving.request("account/login/start", {
      provider: "openai",
      method: "device-code",
    });
    if (device.type !== "signIn") throw new Error("not a sign-in");
    await leaving.waitFor("account/login/progress", (p) => p.loginId === device.loginId);
    leaving.close();
    const ended = await server.client.waitFor("account/login/completed", (p) => p.loginId === device.loginId);
    expect(ended).to.deep.include({ provider: "openai", success: false });
    expect(ended.error).to.match(/cancelled/i);
    expect(readAuth()).to.not.have.property("openai");
    const read = await server.client.request("account/read", {});
    expect(read.providers.find((p) => p.provider === "openai")).to.not.have.property("loginInProgress");
  });
});

/**
 * `knightcode login` / `logout` through the built CLI, against one server on 127.0.0.1 that plays the
 * authorization servers (Anthropic's PKCE, OpenAI's device code, an RFC 8628 server for an extension's provider)
 * and the model APIs (which check the bearer token). The test plays the browser: it reads the URL the CLI prints
 * and follows it with fetch.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { textAnswer } from "../../builtin-extensions/providers/anthropic/wire.js";
import { ResponsesWire } from "../../builtin-extensions/providers/openai/responses-wire.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import {
  type RecordedRequest,
  startTestServer,
  type TestServer,
  writeSse,
} from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const EXAMPLE = fileURLToPath(new URL("../../../examples/extensions/oauth-provider.ts", import.meta.url));
const CLAUDE = "anthropic/claude-sonnet-5-5";
const GPT = "openai/gpt-6.2-sol";

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};
const form = (r: RecordedRequest) => Object.fromEntries(new URLSearchParams(String(r.body)));
/** An unsigned JWT whose claims name a ChatGPT account, as OpenAI's access tokens do. */
const chatgptToken = (n: number) =>
  [
    Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url"),
    Buffer.from(
      JSON.stringify({ "https://api.openai.com/auth": { chatgpt_account_id: "acct-42" }, n }),
    ).toString("base64url"),
    "sig",
  ].join(".");

/** A CLI process whose stderr the test watches while it runs. */
function startCli(args: string[], env: Record<string, string>, cwd: string) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [cliBin, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  const listeners = new Set<() => void>();
  child.stderr.on("data", (d) => {
    stderr += d;
    for (const l of listeners) l();
  });
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const exit = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
  return {
    child,
    exit,
    get stderr() {
      return stderr;
    },
    get stdout() {
      return stdout;
    },
    /** Resolves the first match of `pattern` on stderr (bounded by the process's own 30 s limit). */
    waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = stderr.match(pattern);
          if (match) {
            listeners.delete(check);
            resolve(match);
          }
        };
        listeners.add(check);
        exit.then(() => {
          check();
          if (listeners.has(check))
            reject(new Error(`the CLI ended without printing ${pattern}:\n${stderr}`));
        });
        check();
      });
    },
  };
}

describe("knightcode login / logout (subscriptions, through the built CLI)", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-login-");
  let server: TestServer;
  /** What the token endpoints answer to a refresh. */
  let refreshAnswer: "ok" | "revoked";
  let devicePolls: number;
  const running: ReturnType<typeof startCli>[] = [];

  const agentDir = () => join(tmp.path, "agent");
  const authPath = () => join(agentDir(), "auth.json");
  const readAuth = () => JSON.parse(readFileSync(authPath(), "utf8"));
  const env = (): Record<string, string> => ({
    KNIGHTCODE_AGENT_DIR: agentDir(),
    HOME: join(tmp.path, "home"),
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    KNIGHTCODE_OAUTH_ANTHROPIC_AUTHORIZE_URL: `${server.url}/claude/authorize`,
    KNIGHTCODE_OAUTH_ANTHROPIC_TOKEN_URL: `${server.url}/claude/token`,
    KNIGHTCODE_OAUTH_ANTHROPIC_CALLBACK_PORT: "0",
    KNIGHTCODE_OAUTH_OPENAI_ISSUER_URL: `${server.url}/openai`,
    KNIGHTCODE_OAUTH_OPENAI_CALLBACK_PORT: "0",
    KNIGHTCODE_OAUTH_OPENAI_API_URL: `${server.url}/backend`,
    KNIGHTCODE_OAUTH_ACME_DEVICE_URL: `${server.url}/acme/device`,
    KNIGHTCODE_OAUTH_ACME_TOKEN_URL: `${server.url}/acme/token`,
  });
  const cli = (args: string[], stdin?: string) =>
    runCli(args, { cwd: tmp.path, env: env(), ...(stdin !== undefined ? { stdin } : {}) });
  const live = (args: string[]) => {
    const proc = startCli(args, env(), tmp.path);
    running.push(proc);
    return proc;
  };
  const requestsTo = (path: string) => server.requests.filter((r) => r.path.startsWith(path));

  beforeEach(async () => {
    refreshAnswer = "ok";
    devicePolls = 0;
    server = await startTestServer();
    tmp.write(
      "agent/models.json",
      JSON.stringify({
        providers: { anthropic: { baseUrl: server.url }, acme: { baseUrl: `${server.url}/acme/v1` } },
      }),
    );
    server.respond(async (req, res) => {
      const path = req.path.split("?")[0]!;
      // ---- Anthropic: authorize (redirects back with a code), token (JSON), Messages API (bearer token).
      if (path === "/claude/authorize") {
        const query = new URL(req.path, server.url).searchParams;
        const back = new URL(query.get("redirect_uri")!);
        back.searchParams.set("code", "claude-code-1");
        back.searchParams.set("state", query.get("state")!);
        res.writeHead(302, { location: back.toString() }).end();
        return;
      }
      if (path === "/claude/token") {
        if (req.body.grant_type === "authorization_code")
          return json(res, 200, {
            access_token: "claude-at-1",
            refresh_token: "claude-rt-1",
            expires_in: 3600,
          });
        if (refreshAnswer === "revoked")
          return json(res, 400, {
            error: "invalid_grant",
            error_description: "Refresh token not found or invalid",
          });
        return json(res, 200, {
          access_token: "claude-at-2",
          refresh_token: "claude-rt-2",
          expires_in: 3600,
        });
      }
      if (path === "/v1/messages") return writeSse(res, textAnswer(req.body.model, "Hello from Claude."));
      // ---- OpenAI: device code (its own endpoints), token (form), the ChatGPT backend.
      if (path === "/openai/api/accounts/deviceauth/usercode")
        return json(res, 200, { device_auth_id: "dev-auth-1", user_code: "KNGT-7788", interval: "0" });
      if (path === "/openai/api/accounts/deviceauth/token") {
        if (++devicePolls < 3) return json(res, 403, { error: { message: "pending" } });
        return json(res, 200, {
          authorization_code: "dev-code",
          code_verifier: "dev-verifier",
          code_challenge: "x",
        });
      }
      if (path === "/openai/oauth/token") {
        const grant = form(req).grant_type;
        return json(res, 200, {
          access_token: chatgptToken(grant === "refresh_token" ? 2 : 1),
          refresh_token: "gpt-rt",
          id_token: chatgptToken(0),
          expires_in: 3600,
        });
      }
      if (path === "/backend/responses")
        return writeSse(res, new ResponsesWire().created().text(["Hello from ChatGPT."]).completed().events);
      // ---- An extension's provider on RFC 8628.
      if (path === "/acme/device")
        return json(res, 200, {
          device_code: "acme-dev",
          user_code: "ACME-0001",
          verification_uri: `${server.url}/acme/activate`,
          expires_in: 60,
          interval: 0,
        });
      if (path === "/acme/token") {
        if (++devicePolls < 2) return json(res, 400, { error: "authorization_pending" });
        return json(res, 200, { access_token: "acme-at", refresh_token: "acme-rt", expires_in: 3600 });
      }
      if (path === "/acme/v1/chat/completions") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "acme-1", choices: [{ index: 0, delta: { role: "assistant", content: "Hello from Acme." }, finish_reason: null }] })}\n\n`,
        );
        res.write(
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "acme-1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`,
        );
        res.end("data: [DONE]\n\n");
        return;
      }
      res.writeHead(404).end(`no route for ${req.method} ${req.path}`);
    });
  });
  afterEach(async () => {
    for (const proc of running.splice(0)) {
      if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
      await proc.exit;
    }
    await server.close();
  });

  /** Plays the browser: opens the printed authorization URL and follows its redirect to the CLI's callback. */
  async function browse(url: string): Promise<{ status: number; text: string }> {
    const authorize = await fetch(url, { redirect: "manual" });
    expect(authorize.status).to.equal(302);
    // The redirect names `localhost` (what the providers register); the callback listens on 127.0.0.1.
    const back = authorize.headers.get("location")!.replace("//localhost:", "//127.0.0.1:");
    const page = await fetch(back);
    return { status: page.status, text: await page.text() };
  }

  it("signs in to a Claude subscription (PKCE), prompts with the token, refreshes it, masks it, logs out", async () => {
    const login = live(["login", "anthropic"]);
    const [url] = await login.waitFor(/http:\/\/127\.0\.0\.1:\d+\/claude\/authorize\S+/);
    const params = new URL(url).searchParams;
    expect(params.get("code_challenge_method")).to.equal("S256");
    expect(params.get("redirect_uri")).to.match(/^http:\/\/localhost:\d+\/callback$/);
    const page = await browse(url);
    expect(page.status).to.equal(200);
    expect(page.text).to.contain("Signed in to KnightCode");
    expect(await login.exit, login.stderr).to.equal(0);
    expect(login.stderr).to.contain("Signed in to anthropic");
    expect(login.stderr).to.not.contain("claude-at-1");
    // The code exchange carried the PKCE verifier of the challenge and the state.
    const exchange = requestsTo("/claude/token")[0]!.body;
    expect(exchange).to.deep.include({
      grant_type: "authorization_code",
      code: "claude-code-1",
      state: params.get("state"),
    });
    expect(exchange.code_verifier).to.be.a("string");
    // auth.json: the tokens, private.
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);
    const stored = readAuth().anthropic;
    expect(stored).to.deep.include({ type: "oauth", key: "claude-at-1", refresh: "claude-rt-1" });
    expect(stored.expires).to.be.greaterThan(Date.now() + 3_000_000);

    // A prompt goes with the access token as a bearer token, the subscription's beta and identity line.
    const first = await cli(["-p", "hi", "--model", CLAUDE, "--no-session"]);
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.contain("Hello from Claude.");
    const sent = requestsTo("/v1/messages")[0]!;
    expect(sent.headers.authorization).to.equal("Bearer claude-at-1");
    expect(sent.headers["x-api-key"]).to.equal(undefined);
    expect(String(sent.headers["anthropic-beta"])).to.contain("oauth-2025-04-20");
    expect(sent.body.system[0].text).to.equal("You are Claude Code, Anthropic's official CLI for Claude.");
    expect(requestsTo("/claude/token")).to.have.length(1);

    // Expired: renewed before the request, and saved.
    writeFileSync(authPath(), JSON.stringify({ anthropic: { ...stored, expires: Date.now() - 60_000 } }), {
      mode: 0o600,
    });
    const second = await cli(["-p", "hi again", "--model", CLAUDE, "--no-session"]);
    expect(second.code, second.stderr).to.equal(0);
    const refresh = requestsTo("/claude/token")[1]!.body;
    expect(refresh).to.deep.include({ grant_type: "refresh_token", refresh_token: "claude-rt-1" });
    expect(requestsTo("/v1/messages")[1]!.headers.authorization).to.equal("Bearer claude-at-2");
    expect(readAuth().anthropic).to.deep.include({ key: "claude-at-2", refresh: "claude-rt-2" });
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);

    // Shown masked.
    const listed = await cli(["login", "--list"]);
    expect(listed.stdout).to.match(/^anthropic {2}subscription sign-in \*\*\*\*at-2, token expires /m);
    expect(listed.stdout).to.not.contain("claude-at-2");
    expect(listed.stdout).to.not.contain("claude-rt-2");

    // Logout removes it.
    const logout = await cli(["logout", "anthropic"]);
    expect(logout.code, logout.stderr).to.equal(0);
    expect(readAuth()).to.deep.equal({});
    const again = await cli(["logout", "anthropic"]);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain('no credential is stored for "anthropic"');
  });

  it("a refresh the server refuses fails the prompt with how to sign in again", async () => {
    refreshAnswer = "revoked";
    tmp.write(
      "agent/auth.json",
      JSON.stringify({
        anthropic: { type: "oauth", key: "claude-at-old", refresh: "gone", expires: Date.now() - 1 },
      }),
    );
    const run = await cli(["-p", "hi", "--model", CLAUDE, "--no-session"]);
    expect(run.code).to.not.equal(0);
    expect(run.stderr).to.contain("Could not renew the anthropic sign-in");
    expect(run.stderr).to.contain("invalid_grant: Refresh token not found or invalid");
    expect(run.stderr).to.contain("Sign in again with `knightcode login anthropic`");
    expect(requestsTo("/v1/messages")).to.have.length(0);
  });

  it("the paste fallback: a pasted redirect with another state is refused, the right one signs in", async () => {
    const forged = live(["login", "anthropic"]);
    await forged.waitFor(/\/claude\/authorize\S+/);
    forged.child.stdin.write("http://localhost:1/callback?code=x&state=forged\n");
    expect(await forged.exit).to.equal(1);
    expect(forged.stderr).to.contain("state does not match");
    expect(requestsTo("/claude/token")).to.have.length(0);

    const pasted = live(["login", "anthropic"]);
    const [url] = await pasted.waitFor(/http:\S+\/claude\/authorize\S+/);
    pasted.child.stdin.write(`pasted-code#${new URL(url).searchParams.get("state")}\n`);
    expect(await pasted.exit, pasted.stderr).to.equal(0);
    expect(requestsTo("/claude/token")[0]!.body.code).to.equal("pasted-code");
    expect(readAuth().anthropic.key).to.equal("claude-at-1");
  });

  it("signs in to a ChatGPT subscription with a device code and prompts through the ChatGPT backend", async () => {
    const ambiguous = await cli(["login", "openai"]);
    expect(ambiguous.code).to.equal(2);
    // Each method with the id --method (and the app-server's account/login/start) takes.
    expect(ambiguous.stderr)
      .to.contain("choose one with --method")
      .and.contain("2. ChatGPT subscription (device code) (device-code)")
      .and.contain("3. API key (api-key)");

    const login = live(["login", "openai", "--method", "device-code"]);
    await login.waitFor(/enter the code KNGT-7788/);
    expect(login.stderr).to.contain(`${server.url}/openai/codex/device`);
    expect(await login.exit, login.stderr).to.equal(0);
    expect(devicePolls).to.equal(3);
    const exchange = form(requestsTo("/openai/oauth/token")[0]!);
    expect(exchange).to.deep.include({
      grant_type: "authorization_code",
      code: "dev-code",
      code_verifier: "dev-verifier",
      redirect_uri: `${server.url}/openai/deviceauth/callback`,
    });
    expect(readAuth().openai).to.deep.include({ type: "oauth", key: chatgptToken(1), accountId: "acct-42" });
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);

    const run = await cli(["-p", "hi", "--model", GPT, "--no-session"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from ChatGPT.");
    const sent = requestsTo("/backend/responses")[0]!;
    expect(sent.headers.authorization).to.equal(`Bearer ${chatgptToken(1)}`);
    expect(sent.headers["chatgpt-account-id"]).to.equal("acct-42");
    expect(sent.body.store).to.equal(false);
    expect(sent.body).to.not.have.property("max_output_tokens");
  });

  it("signs in to a ChatGPT subscription in the browser (PKCE, form-encoded exchange)", async () => {
    const login = live(["login", "openai", "--method", "browser"]);
    const [url] = await login.waitFor(/http:\/\/127\.0\.0\.1:\d+\/openai\/oauth\/authorize\S+/);
    expect(new URL(url).searchParams.get("redirect_uri")).to.match(
      /^http:\/\/localhost:\d+\/auth\/callback$/,
    );
    // The browser's round trip, short: straight back to the callback with a code.
    const query = new URL(url).searchParams;
    const back = new URL(query.get("redirect_uri")!.replace("//localhost:", "//127.0.0.1:"));
    back.searchParams.set("code", "gpt-code");
    back.searchParams.set("state", query.get("state")!);
    expect((await fetch(back)).status).to.equal(200);
    expect(await login.exit, login.stderr).to.equal(0);
    expect(form(requestsTo("/openai/oauth/token")[0]!)).to.deep.include({
      grant_type: "authorization_code",
      code: "gpt-code",
    });
    expect(readAuth().openai).to.deep.include({ type: "oauth", accountId: "acct-42" });
  });

  it("an extension's provider signs in with the kit's RFC 8628 device flow", async () => {
    const login = live(["login", "acme", "-e", EXAMPLE]);
    await login.waitFor(/enter the code ACME-0001/);
    expect(await login.exit, login.stderr).to.equal(0);
    expect(readAuth().acme).to.deep.include({ type: "oauth", key: "acme-at", refresh: "acme-rt" });
    const run = await cli(["-e", EXAMPLE, "-p", "hi", "--model", "acme/acme-1", "--no-session"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from Acme.");
    expect(requestsTo("/acme/v1/chat/completions")[0]!.headers.authorization).to.equal("Bearer acme-at");
  });

  it("lists providers when none is named, stores an API key from stdin, and refuses unknown providers", async () => {
    const none = await cli(["login"]);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.contain("anthropic: Claude subscription (Pro/Max); API key");
    const unknown = await cli(["login", "nope"]);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain('no provider "nope"');
    const key = await cli(["login", "anthropic", "--with-api-key"], "sk-ant-test-0123456789\n");
    expect(key.code, key.stderr).to.equal(0);
    expect(key.stderr).to.contain("****6789").and.not.contain("sk-ant-test");
    expect(readAuth().anthropic).to.deep.equal({ type: "api_key", key: "sk-ant-test-0123456789" });
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);
  });
});

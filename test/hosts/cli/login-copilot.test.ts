/**
 * `knightcode login github-copilot` and Copilot requests through the built CLI, against one server on 127.0.0.1
 * that plays GitHub (the device flow, answering "not yet" with HTTP 200 as GitHub does), GitHub's Copilot token
 * endpoint, and Copilot's three model endpoints, each in its wire format: Chat Completions (`/chat/completions`),
 * OpenAI's Responses (`/responses`) and Anthropic's Messages (`/v1/messages`), all of which check the Copilot token.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import {
  copilotBaseUrl,
  copilotRequestHeaders,
  enableCopilotModels,
  enterpriseDomain,
  GITHUB_COPILOT_MODELS,
  parseCopilotModels,
} from "../../../builtin-extensions/providers/github-copilot/index.js";
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

/** A model Copilot serves over Chat Completions (in pi's catalogue, as are the two below). */
const MODEL = "github-copilot/gemini-3.5-flash";
/** A GPT-5 model, which Copilot serves over OpenAI's Responses API. */
const RESPONSES_MODEL = "github-copilot/gpt-5.5";
/** A Claude model, which Copilot serves over Anthropic's Messages API. */
const MESSAGES_MODEL = "github-copilot/claude-opus-4.7";
/** Copilot's editor identity, sent with every request. */
const EDITOR_HEADERS = {
  "user-agent": "GitHubCopilotChat/0.35.0",
  "editor-version": "vscode/1.107.0",
  "editor-plugin-version": "copilot-chat/0.35.0",
  "copilot-integration-id": "vscode-chat",
};
/**
 * What Copilot's `/models` answers for the signed-in account (its shape as pi reads it): the picker's models unless
 * their policy is disabled, those with an unset (`unconfigured`) policy switched on at sign-in, models that cannot
 * call tools left out.
 */
const ACCOUNT_MODELS = [
  { id: "gemini-3.5-flash", model_picker_enabled: true, policy: { state: "enabled" } },
  { id: "gpt-5.5", model_picker_enabled: true, capabilities: { supports: { tool_calls: true } } },
  // unset policies: switched on (the second refuses: reported, still in the picker, so kept as pi keeps it)
  { id: "claude-opus-4.7", model_picker_enabled: true, policy: { state: "unconfigured" } },
  { id: "claude-sonnet-4.6", model_picker_enabled: true, policy: { state: "unconfigured" } },
  // not the account's: a disabled policy, a model off the picker, one that cannot call tools
  { id: "grok-4.5", model_picker_enabled: true, policy: { state: "disabled" } },
  { id: "kimi-k3", model_picker_enabled: false, policy: { state: "unconfigured" } },
  { id: "gpt-5.4", model_picker_enabled: true, capabilities: { supports: { tool_calls: false } } },
  // not in the catalogue: kept in the list, never switched on
  { id: "copilot-embedding-1", model_picker_enabled: true, policy: { state: "unconfigured" } },
];
/** The catalogue models the account has, as the sign-in leaves them. */
const ACCOUNT_CATALOGUE = ["claude-opus-4.7", "claude-sonnet-4.6", "gemini-3.5-flash", "gpt-5.5"];
/** pi's (and VS Code's) Copilot client id. */
const CLIENT_ID = "Iv1.b507a08c87ecfe98";
/** A Copilot token as GitHub shapes them: `;`-separated fields, `proxy-ep` naming the chat endpoint's host. */
const copilotToken = (n: number) =>
  `tid=t${n};exp=1893456000;sku=copilot_for_business;proxy-ep=proxy.business.githubcopilot.com;8kp=1:sig${n}`;

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};
const form = (r: RecordedRequest) => Object.fromEntries(new URLSearchParams(String(r.body)));

function startCli(args: string[], env: Record<string, string>, cwd: string) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [cliBin, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  const listeners = new Set<() => void>();
  child.stderr.on("data", (d) => {
    stderr += d;
    for (const l of listeners) l();
  });
  child.stdout.resume();
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

describe("knightcode login github-copilot (through the built CLI)", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-copilot-");
  let server: TestServer;
  let polls: number;
  let exchange: "ok" | "refused";
  let exchanges: number;
  /** A Copilot token the chat endpoint refuses (revoked before its time). */
  let revoked: string | undefined;
  /** How Copilot's model list answers: the account's list, or a server error. */
  let modelList: "ok" | "fail";
  /** The models Copilot's policy endpoint refuses to switch on. */
  let policyRefused: Set<string>;
  const running: ReturnType<typeof startCli>[] = [];

  const agentDir = () => join(tmp.path, "agent");
  const authPath = () => join(agentDir(), "auth.json");
  const readAuth = () => JSON.parse(readFileSync(authPath(), "utf8"));
  const env = (): Record<string, string> => ({
    KNIGHTCODE_AGENT_DIR: agentDir(),
    HOME: join(tmp.path, "home"),
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    COPILOT_GITHUB_TOKEN: "",
    KNIGHTCODE_OAUTH_GITHUB_COPILOT_DEVICE_CODE_URL: `${server.url}/github/login/device/code`,
    KNIGHTCODE_OAUTH_GITHUB_COPILOT_ACCESS_TOKEN_URL: `${server.url}/github/login/oauth/access_token`,
    KNIGHTCODE_OAUTH_GITHUB_COPILOT_COPILOT_TOKEN_URL: `${server.url}/api/copilot_internal/v2/token`,
    KNIGHTCODE_OAUTH_GITHUB_COPILOT_API_URL: `${server.url}/copilot`,
  });
  const cli = (args: string[]) => runCli(args, { cwd: tmp.path, env: env() });
  const requestsTo = (path: string) => server.requests.filter((r) => r.path.startsWith(path));

  beforeEach(async () => {
    polls = 0;
    exchanges = 0;
    exchange = "ok";
    revoked = undefined;
    modelList = "ok";
    policyRefused = new Set(["claude-sonnet-4.6"]);
    server = await startTestServer();
    server.respond(async (req, res) => {
      const path = req.path.split("?")[0]!;
      if (path === "/github/login/device/code")
        return json(res, 200, {
          device_code: "gh-device-1",
          user_code: "GHUB-4242",
          verification_uri: `${server.url}/github/login/device`,
          expires_in: 900,
          interval: 0,
        });
      if (path === "/github/login/oauth/access_token") {
        // GitHub says "not yet" with HTTP 200 and an error field.
        if (++polls < 3) return json(res, 200, { error: "authorization_pending" });
        return json(res, 200, { access_token: "gho_github1", token_type: "bearer", scope: "read:user" });
      }
      if (path === "/api/copilot_internal/v2/token") {
        if (req.headers.authorization !== "Bearer gho_github1" || exchange === "refused")
          return json(res, 401, { message: "Bad credentials" });
        exchanges++;
        return json(res, 200, {
          token: copilotToken(exchanges),
          expires_at: Math.floor(Date.now() / 1000) + 1800,
          refresh_in: 1500,
        });
      }
      const copilotEndpoint = ["/copilot/chat/completions", "/copilot/responses", "/copilot/v1/messages"];
      const policy = path.match(/^\/copilot\/models\/([^/]+)\/policy$/);
      if (path === "/copilot/models" || policy) {
        if (!String(req.headers.authorization).startsWith("Bearer tid="))
          return json(res, 401, { error: { message: "unauthorized" } });
        if (policy) {
          const id = decodeURIComponent(policy[1]!);
          if (req.method !== "POST") return json(res, 405, { message: "POST only" });
          if (policyRefused.has(id)) return json(res, 403, { message: `policy of ${id} is managed` });
          return json(res, 200, { state: "enabled" });
        }
        if (modelList === "fail") return json(res, 503, { message: "models unavailable" });
        return json(res, 200, { data: ACCOUNT_MODELS });
      }
      if (
        copilotEndpoint.includes(path) &&
        (!String(req.headers.authorization).startsWith("Bearer tid=") ||
          req.headers.authorization === `Bearer ${revoked}`)
      )
        return json(res, 401, { error: { message: "unauthorized" } });
      if (path === "/copilot/responses") {
        const wire = new ResponsesWire("resp_copilot1", req.body.model);
        return writeSse(res, wire.created().text(["Hello from ", "GPT-5 on Copilot."]).completed().events);
      }
      if (path === "/copilot/v1/messages")
        return writeSse(res, textAnswer(req.body.model, "Hello from Claude on Copilot."));
      if (path === "/copilot/chat/completions") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: unknown, finish: string | null) =>
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: req.body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(chunk({ role: "assistant", content: "Hello from Copilot." }, null));
        res.write(chunk({}, "stop"));
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

  it("signs in with GitHub's device flow, exchanges the token, prompts with Copilot's token and headers, re-exchanges an expired one", async () => {
    const login = startCli(["login", "github-copilot"], env(), tmp.path);
    running.push(login);
    await login.waitFor(/GitHub Enterprise domain/);
    login.child.stdin.write("\n");
    await login.waitFor(/enter the code GHUB-4242/);
    expect(login.stderr).to.contain(`${server.url}/github/login/device`);
    expect(await login.exit, login.stderr).to.equal(0);
    expect(login.stderr).to.contain("Signed in to github-copilot");
    expect(login.stderr).to.not.contain("gho_github1");

    // The device code request and the polls carry pi's client id; the polls ran until GitHub gave a token.
    expect(form(requestsTo("/github/login/device/code")[0]!)).to.deep.equal({
      client_id: CLIENT_ID,
      scope: "read:user",
    });
    expect(polls).to.equal(3);
    expect(form(requestsTo("/github/login/oauth/access_token")[2]!)).to.deep.equal({
      client_id: CLIENT_ID,
      device_code: "gh-device-1",
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
    });
    // The GitHub token was exchanged for a Copilot token, with the editor's identity.
    const first = requestsTo("/api/copilot_internal/v2/token")[0]!;
    expect(first.method).to.equal("GET");
    expect(first.headers.authorization).to.equal("Bearer gho_github1");
    expect(first.headers["editor-version"]).to.equal("vscode/1.107.0");
    expect(first.headers["user-agent"]).to.equal("GitHubCopilotChat/0.35.0");

    // auth.json: the Copilot token as the key, the GitHub token to exchange again, the expiry; private.
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);
    const stored = readAuth()["github-copilot"];
    expect(stored).to.deep.include({ type: "oauth", key: copilotToken(1), refresh: "gho_github1" });
    expect(stored.availableModelIds).to.have.members([...ACCOUNT_CATALOGUE, "copilot-embedding-1"]);
    expect(stored.expires).to.be.within(Date.now() + 1_700_000, Date.now() + 1_800_001);

    // Signed in, the Copilot models are offered.
    const listed = await cli(["--list-models", "github-copilot"]);
    expect(listed.stdout).to.match(/^github-copilot +gemini-3\.5-flash .*oauth \(auth\.json\)$/m);

    // A prompt reaches Copilot's chat endpoint with the Copilot token and Copilot's headers.
    const run = await cli(["-p", "hi", "--model", MODEL, "--no-session"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from Copilot.");
    const sent = requestsTo("/copilot/chat/completions")[0]!;
    expect(sent.headers.authorization).to.equal(`Bearer ${copilotToken(1)}`);
    expect(sent.headers).to.deep.include({
      ...EDITOR_HEADERS,
      "x-initiator": "user",
      "openai-intent": "conversation-edits",
    });
    expect(sent.body.model).to.equal("gemini-3.5-flash");
    expect(sent.body).to.not.have.property("store");
    expect(sent.body.messages[0].role).to.equal("system");
    expect(requestsTo("/api/copilot_internal/v2/token")).to.have.length(1);

    // An expired Copilot token is exchanged again (with the stored GitHub token) before the request, and saved,
    // and the account's models are read again with the new token (no policy is switched on then).
    writeFileSync(
      authPath(),
      JSON.stringify({ "github-copilot": { ...stored, expires: Date.now() - 60_000 } }),
      {
        mode: 0o600,
      },
    );
    const again = await cli(["-p", "hi again", "--model", MODEL, "--no-session"]);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.contain("Hello from Copilot.");
    expect(requestsTo("/api/copilot_internal/v2/token")).to.have.length(2);
    expect(requestsTo("/api/copilot_internal/v2/token")[1]!.headers.authorization).to.equal(
      "Bearer gho_github1",
    );
    expect(requestsTo("/copilot/chat/completions")[1]!.headers.authorization).to.equal(
      `Bearer ${copilotToken(2)}`,
    );
    expect(readAuth()["github-copilot"]).to.deep.include({ key: copilotToken(2), refresh: "gho_github1" });
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);
    const lists = requestsTo("/copilot/models").filter((r) => r.path === "/copilot/models");
    expect(lists.map((r) => r.headers.authorization)).to.deep.equal([
      `Bearer ${copilotToken(1)}`,
      `Bearer ${copilotToken(2)}`,
    ]);
    expect(requestsTo("/copilot/models/").filter((r) => r.path.endsWith("/policy"))).to.have.length(2);
    expect(readAuth()["github-copilot"].availableModelIds).to.have.members([
      ...ACCOUNT_CATALOGUE,
      "copilot-embedding-1",
    ]);
  });

  /** Signs in through the CLI (github.com), resolving the login's stderr. */
  async function login(): Promise<string> {
    const proc = startCli(["login", "github-copilot"], env(), tmp.path);
    running.push(proc);
    await proc.waitFor(/GitHub Enterprise domain/);
    proc.child.stdin.write("\n");
    expect(await proc.exit, proc.stderr).to.equal(0);
    return proc.stderr;
  }

  it("at sign-in reads the account's models, switches on the unset policies as pi does, and offers only the account's models", async () => {
    const said = await login();
    expect(said).to.contain("Signed in to github-copilot");

    // The model list was read once with the Copilot token, Copilot's editor headers and pi's API version.
    const [list, ...more] = server.requests.filter((r) => r.path === "/copilot/models");
    expect(more).to.have.length(0);
    expect(list!.method).to.equal("GET");
    expect(list!.headers.authorization).to.equal(`Bearer ${copilotToken(1)}`);
    expect(list!.headers).to.deep.include({ ...EDITOR_HEADERS, "x-github-api-version": "2026-06-01" });

    // One POST {"state":"enabled"} per catalogue model whose policy is unconfigured and that the picker shows.
    const posts = server.requests.filter((r) => r.path.endsWith("/policy"));
    expect(posts.map((r) => r.path)).to.deep.equal([
      "/copilot/models/claude-opus-4.7/policy",
      "/copilot/models/claude-sonnet-4.6/policy",
    ]);
    for (const post of posts) {
      expect(post.method).to.equal("POST");
      expect(post.body).to.deep.equal({ state: "enabled" });
      expect(post.headers.authorization).to.equal(`Bearer ${copilotToken(1)}`);
      expect(post.headers).to.deep.include({
        ...EDITOR_HEADERS,
        "content-type": "application/json",
        "openai-intent": "chat-policy",
        "x-interaction-type": "chat-policy",
      });
    }
    // The refused one is reported and skipped.
    expect(said).to.contain("Switching on for the Copilot account: claude-opus-4.7, claude-sonnet-4.6");
    expect(said).to.contain(
      'Copilot refused to switch on claude-sonnet-4.6 for the account (HTTP 403: {"message":"policy of claude-sonnet-4.6 is managed"}); it is left out.',
    );

    // Only the account's models are listed; the model endpoint is not asked again.
    const listed = await cli(["--list-models", "github-copilot"]);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(
      copilotRows(listed.stdout)
        .map((row) => row[1])
        .sort(),
    ).to.deep.equal(ACCOUNT_CATALOGUE);
    expect(server.requests.filter((r) => r.path === "/copilot/models")).to.have.length(1);

    // A model of the catalogue the account lacks, asked for by name, fails before any request, naming the
    // account's models.
    const run = await cli(["-p", "hi", "--model", "github-copilot/grok-4.5", "--no-session"]);
    expect(run.code).to.not.equal(0);
    expect(run.stderr).to.contain(
      "The github-copilot account signed in does not offer github-copilot/grok-4.5; its models: " +
        "gemini-3.5-flash, gpt-5.5, claude-opus-4.7, claude-sonnet-4.6.",
    );
    expect(requestsTo("/copilot/responses")).to.have.length(0);
    expect(requestsTo("/copilot/chat/completions")).to.have.length(0);

    // One it has goes through.
    const ok = await cli(["-p", "hi", "--model", MESSAGES_MODEL, "--no-session"]);
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).to.contain("Hello from Claude on Copilot.");
  });

  it("a model list Copilot fails to give at sign-in does not fail the sign-in: the whole catalogue stays, said once", async () => {
    modelList = "fail";
    const said = await login();
    expect(said).to.contain("Signed in to github-copilot");
    const warning = "Could not read which models the Copilot account has";
    expect(said.split(warning)).to.have.length(2);
    expect(said).to.contain("HTTP 503");
    expect(server.requests.filter((r) => r.path.endsWith("/policy"))).to.have.length(0);
    expect(readAuth()["github-copilot"]).to.not.have.property("availableModelIds");

    const listed = await cli(["--list-models", "github-copilot"]);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(copilotRows(listed.stdout)).to.have.length(GITHUB_COPILOT_MODELS.length);
  });

  it("a renewal whose model list fails keeps the list the sign-in stored", async () => {
    modelList = "fail";
    tmp.write(
      "agent/auth.json",
      JSON.stringify({
        "github-copilot": {
          type: "oauth",
          key: copilotToken(0),
          refresh: "gho_github1",
          expires: Date.now() - 1,
          availableModelIds: ["gemini-3.5-flash"],
        },
      }),
    );
    const run = await cli(["-p", "hi", "--model", MODEL, "--no-session"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(server.requests.filter((r) => r.path === "/copilot/models")).to.have.length(1);
    expect(readAuth()["github-copilot"]).to.deep.include({
      key: copilotToken(1),
      availableModelIds: ["gemini-3.5-flash"],
    });
    const listed = await cli(["--list-models", "github-copilot"]);
    expect(copilotRows(listed.stdout).map((row) => row[1])).to.deep.equal(["gemini-3.5-flash"]);
  });

  it("a Copilot token the chat endpoint refuses before its time is exchanged again once and the request sent again", async () => {
    revoked = copilotToken(0);
    tmp.write(
      "agent/auth.json",
      JSON.stringify({
        "github-copilot": {
          type: "oauth",
          key: copilotToken(0),
          refresh: "gho_github1",
          expires: Date.now() + 1_500_000,
        },
      }),
    );
    const run = await cli(["-p", "hi", "--model", MODEL, "--no-session"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from Copilot.");
    const chats = requestsTo("/copilot/chat/completions").map((r) => r.headers.authorization);
    expect(chats).to.deep.equal([`Bearer ${copilotToken(0)}`, `Bearer ${copilotToken(1)}`]);
    expect(requestsTo("/api/copilot_internal/v2/token")).to.have.length(1);
    expect(readAuth()["github-copilot"].key).to.equal(copilotToken(1));
  });

  it("a refused exchange fails the prompt with GitHub's answer and how to sign in again", async () => {
    exchange = "refused";
    tmp.write(
      "agent/auth.json",
      JSON.stringify({
        "github-copilot": {
          type: "oauth",
          key: copilotToken(0),
          refresh: "gho_github1",
          expires: Date.now() - 1,
        },
      }),
    );
    const run = await cli(["-p", "hi", "--model", MODEL, "--no-session"]);
    expect(run.code).to.not.equal(0);
    expect(run.stderr).to.contain("Could not renew the github-copilot sign-in");
    expect(run.stderr).to.contain("GitHub refused the Copilot token exchange (HTTP 401: Bad credentials)");
    expect(run.stderr).to.contain("Sign in again with `knightcode login github-copilot`");
    expect(requestsTo("/copilot/chat/completions")).to.have.length(0);
  });

  it("a refused first exchange fails the sign-in and stores nothing", async () => {
    exchange = "refused";
    const login = startCli(["login", "github-copilot"], env(), tmp.path);
    running.push(login);
    await login.waitFor(/GitHub Enterprise domain/);
    login.child.stdin.write("\n");
    expect(await login.exit).to.equal(1);
    expect(login.stderr).to.contain("GitHub refused the Copilot token exchange (HTTP 401: Bad credentials)");
    expect(login.stderr).to.contain("no active Copilot subscription");
    expect(existsSync(authPath()) ? readAuth() : {}).to.not.have.property("github-copilot");
  });

  it("a question stdin can no longer answer (an ended pipe) ends the sign-in instead of waiting forever", async () => {
    const run = await cli(["login", "github-copilot"]);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain("knightcode login: cancelled; nothing was saved");
    expect(server.requests).to.have.length(0);
    expect(existsSync(authPath()) ? readAuth() : {}).to.not.have.property("github-copilot");
  });

  /** A stored sign-in whose Copilot token is still good for 25 minutes. */
  const signIn = () =>
    tmp.write(
      "agent/auth.json",
      JSON.stringify({
        "github-copilot": {
          type: "oauth",
          key: copilotToken(1),
          refresh: "gho_github1",
          expires: Date.now() + 1_500_000,
        },
      }),
    );
  /** The `github-copilot` rows of `--list-models`: model id and the rest of the row. */
  const copilotRows = (stdout: string) =>
    stdout
      .split("\n")
      .filter((line) => line.startsWith("github-copilot "))
      .map((line) => line.split(/\s+/));

  it("a GPT-5 model goes to Copilot's Responses endpoint with the Copilot token, Copilot's headers and pi's effort", async () => {
    signIn();
    const run = await cli(["-p", "hi", "--model", RESPONSES_MODEL, "--thinking", "minimal", "--no-session"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from GPT-5 on Copilot.");
    expect(requestsTo("/copilot/chat/completions")).to.have.length(0);
    expect(requestsTo("/copilot/v1/messages")).to.have.length(0);
    const [sent, ...more] = requestsTo("/copilot/responses");
    expect(more).to.have.length(0);
    expect(sent!.method).to.equal("POST");
    expect(sent!.headers.authorization).to.equal(`Bearer ${copilotToken(1)}`);
    expect(sent!.headers).to.deep.include({
      ...EDITOR_HEADERS,
      "x-initiator": "user",
      "openai-intent": "conversation-edits",
    });
    // Not sent as a ChatGPT subscription's request (the Copilot sign-in is no ChatGPT sign-in).
    expect(sent!.headers).to.not.have.any.keys("chatgpt-account-id", "originator", "copilot-vision-request");
    expect(sent!.body).to.deep.include({
      model: "gpt-5.5",
      stream: true,
      store: false,
      instructions: sent!.body.instructions,
    });
    expect(sent!.body.instructions).to.be.a("string").and.not.equal("You are a helpful assistant.");
    expect(sent!.body.max_output_tokens).to.be.a("number");
    // pi's map for Copilot's GPT-5 models: minimal thinking asks for low effort.
    expect(sent!.body.reasoning).to.deep.equal({ effort: "low", summary: "auto" });
    expect(sent!.body.input.at(-1)).to.deep.include({ role: "user" });
  });

  it("a Claude model goes to Copilot's Messages endpoint with the Copilot token as a bearer and Copilot's headers", async () => {
    signIn();
    const run = await cli(["-p", "hi", "--model", MESSAGES_MODEL, "--thinking", "high", "--no-session"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from Claude on Copilot.");
    expect(requestsTo("/copilot/chat/completions")).to.have.length(0);
    expect(requestsTo("/copilot/responses")).to.have.length(0);
    const [sent, ...more] = requestsTo("/copilot/v1/messages");
    expect(more).to.have.length(0);
    expect(sent!.headers.authorization).to.equal(`Bearer ${copilotToken(1)}`);
    expect(sent!.headers).to.not.have.property("x-api-key");
    expect(sent!.headers).to.deep.include({
      ...EDITOR_HEADERS,
      "x-initiator": "user",
      "openai-intent": "conversation-edits",
    });
    // Not sent as a Claude subscription's request: no Claude Code betas, identity or app header.
    expect(String(sent!.headers["anthropic-beta"] ?? "")).to.not.contain("oauth-2025-04-20");
    expect(sent!.headers).to.not.have.property("x-app");
    expect(JSON.stringify(sent!.body.system ?? [])).to.not.contain("Claude Code");
    expect(sent!.body.model).to.equal("claude-opus-4.7");
    expect(sent!.body.stream).to.equal(true);
    // Copilot's dotted id is read as Claude Opus 4.7: adaptive thinking with an effort, no budget.
    expect(sent!.body.thinking).to.deep.equal({ type: "adaptive", display: "summarized" });
    expect(sent!.body.output_config).to.deep.equal({ effort: "high" });
  });

  it("a Claude model whose level map names max gets effort max at --thinking max (not xhigh, which it does not take)", async () => {
    signIn();
    const run = await cli(["-p", "hi", "--model", "claude-sonnet-4.6", "--thinking", "max", "--no-session"]);
    expect(run.code, run.stderr).to.equal(0);
    const [sent] = requestsTo("/copilot/v1/messages");
    expect(sent!.body.model).to.equal("claude-sonnet-4.6");
    expect(sent!.body.output_config).to.deep.equal({ effort: "max" });
  });

  it("signed in, --list-models lists pi's whole Copilot catalogue (every API's models); without a sign-in, none", async () => {
    // (With no model usable at all, the command says so and fails.)
    const before = await cli(["--list-models", "github-copilot"]);
    expect(before.stderr).to.contain("no model can be used");
    expect(copilotRows(before.stdout)).to.deep.equal([]);

    signIn();
    const after = await cli(["--list-models", "github-copilot"]);
    expect(after.code, after.stderr).to.equal(0);
    const rows = copilotRows(after.stdout);
    expect(rows.map((row) => row[1]).sort()).to.deep.equal(GITHUB_COPILOT_MODELS.map((m) => m.id).sort());
    const row = (id: string) =>
      rows
        .find((r) => r[1] === id)!
        .slice(2)
        .join(" ");
    // context, max output, thinking, images, and the sign-in it is usable through
    expect(row("gpt-5.5")).to.equal("1M 128k yes yes oauth (auth.json)");
    expect(row("claude-opus-4.7")).to.equal("1M 32k yes yes oauth (auth.json)");
    expect(row("gemini-3.5-flash")).to.equal("200k 64k yes yes oauth (auth.json)");
    expect(row("mai-code-1-flash-picker")).to.equal("256k 128k yes no oauth (auth.json)");
    expect(server.requests).to.have.length(0);
  });

  it("without a sign-in the Copilot models are not usable", async () => {
    for (const model of [MODEL, RESPONSES_MODEL, MESSAGES_MODEL]) {
      const run = await cli(["-p", "hi", "--model", model, "--no-session"]);
      expect(run.code, model).to.not.equal(0);
      expect(run.stderr).to.contain("Not signed in to GitHub Copilot: run `knightcode login github-copilot`");
    }
    expect(server.requests).to.have.length(0);
  });
});

describe("github-copilot account models (pi's reading of Copilot's /models)", () => {
  const catalogue = GITHUB_COPILOT_MODELS.map((m) => m.id);
  it("keeps the picker's models unless disabled and switches on unset catalogue policies", () => {
    expect(parseCopilotModels({ data: ACCOUNT_MODELS }, { individualPlan: false, catalogue })).to.deep.equal({
      available: [
        "gemini-3.5-flash",
        "gpt-5.5",
        "claude-opus-4.7",
        "claude-sonnet-4.6",
        "copilot-embedding-1",
      ],
      toEnable: ["claude-opus-4.7", "claude-sonnet-4.6"],
    });
  });

  it("on the individual plan, an empty picker falls back to enabled policies (and switches on the unset ones)", () => {
    const data = [
      { id: "gpt-5.5", model_picker_enabled: false, policy: { state: "enabled" } },
      { id: "kimi-k3", model_picker_enabled: false, policy: { state: "unconfigured" } },
      { id: "grok-4.5", model_picker_enabled: false, policy: { state: "disabled" } },
    ];
    expect(parseCopilotModels({ data }, { individualPlan: true, catalogue })).to.deep.equal({
      available: ["gpt-5.5"],
      toEnable: ["kimi-k3"],
    });
    expect(parseCopilotModels({ data }, { individualPlan: false, catalogue })).to.deep.equal({
      available: [],
      toEnable: [],
    });
  });

  it("switching policies on: a refusal is reported and skipped; a 429 that persists after two retries stops the rest", async () => {
    const policyServer = await startTestServer();
    try {
      policyServer.respond((req, res) => {
        if (req.path.includes("/kimi-k3/")) return json(res, 403, { message: "managed" });
        if (req.path.includes("/grok-4.5/"))
          return void res.writeHead(429, { "retry-after": "0" }).end("slow down");
        return json(res, 200, {});
      });
      const said: string[] = [];
      const enabled = await enableCopilotModels(
        "tid=1",
        policyServer.url,
        ["gpt-5.5", "kimi-k3", "grok-4.5", "claude-opus-4.7"],
        (m) => said.push(m),
      );
      expect(enabled).to.deep.equal(["gpt-5.5"]);
      expect(policyServer.requests.map((r) => r.path)).to.deep.equal([
        "/models/gpt-5.5/policy",
        "/models/kimi-k3/policy",
        "/models/grok-4.5/policy",
        "/models/grok-4.5/policy",
        "/models/grok-4.5/policy",
      ]);
      expect(said).to.have.length(2);
      expect(said[0]).to.contain("Copilot refused to switch on kimi-k3");
      expect(said[1]).to.contain("not switched on: grok-4.5, claude-opus-4.7");
    } finally {
      await policyServer.close();
    }
  });

  it("refuses an answer without a data list", () => {
    expect(() => parseCopilotModels({ models: [] }, { individualPlan: false, catalogue })).to.throw(/data/);
  });
});

describe("github-copilot endpoints and headers", () => {
  it("derives the chat endpoint from the token's proxy-ep, else the enterprise domain, else the individual plan's", () => {
    expect(copilotBaseUrl(copilotToken(1))).to.equal("https://api.business.githubcopilot.com");
    expect(copilotBaseUrl("tid=1;exp=2", "company.ghe.com")).to.equal("https://copilot-api.company.ghe.com");
    expect(copilotBaseUrl(undefined)).to.equal("https://api.individual.githubcopilot.com");
  });

  it("reads an enterprise domain from a host or URL, and refuses what is neither", () => {
    expect(enterpriseDomain("")).to.equal(undefined);
    expect(enterpriseDomain("github.com")).to.equal(undefined);
    expect(enterpriseDomain("https://company.ghe.com/")).to.equal("company.ghe.com");
    expect(() => enterpriseDomain("not a domain")).to.throw(/not a GitHub Enterprise domain/);
  });

  it("marks follow-ups after tool results as agent-initiated and flags images", () => {
    const user = { role: "user" as const, content: "hi", timestamp: 1 };
    expect(copilotRequestHeaders([user])["X-Initiator"]).to.equal("user");
    const result = {
      role: "toolResult" as const,
      toolCallId: "1",
      toolName: "read",
      content: [{ type: "image" as const, data: "AA==", mimeType: "image/png" }],
      isError: false,
      timestamp: 2,
    };
    const headers = copilotRequestHeaders([user, result]);
    expect(headers["X-Initiator"]).to.equal("agent");
    expect(headers["Copilot-Vision-Request"]).to.equal("true");
  });
});

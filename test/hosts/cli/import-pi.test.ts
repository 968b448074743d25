/**
 * `knightcode import pi` through the built CLI, with temp folders as pi's agent folder and KnightCode's, and one
 * server on 127.0.0.1 that plays the model APIs (Chat Completions for a models.json provider, Anthropic's Messages
 * API for a Claude subscription) and checks the credential each request carries.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import { textAnswer } from "../../builtin-extensions/providers/anthropic/wire.js";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const LOCAL_KEY = "sk-local-secret-7788";
const CLAUDE_ACCESS = "claude-pi-access-4321";
const CLAUDE = "anthropic/claude-sonnet-5-5";
/** An unsigned JWT whose claims name a ChatGPT account, as OpenAI's access tokens do. */
const CHATGPT_ACCESS = [
  Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url"),
  Buffer.from(JSON.stringify({ "https://api.openai.com/auth": { chatgpt_account_id: "acct-42" } })).toString(
    "base64url",
  ),
  "sigZ",
].join(".");

function chatAnswer(res: ServerResponse, text: string): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m1", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: "assistant", content: text }, null));
  res.write(chunk({}, "stop"));
  res.end("data: [DONE]\n\n");
}

describe("knightcode import pi (through the built CLI)", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-import-pi-");
  let server: TestServer;

  const piDir = () => join(tmp.path, "pi");
  const kcDir = () => join(tmp.path, "kc");
  const project = () => join(tmp.path, "project");
  const env = (): Record<string, string> => ({
    KNIGHTCODE_AGENT_DIR: kcDir(),
    PI_CODING_AGENT_DIR: piDir(),
    HOME: join(tmp.path, "home"),
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    // The code cache is the only other thing a command writes into the agent folder.
    KNIGHTCODE_CODE_CACHE: "0",
  });
  const cli = (args: string[], cwd = tmp.path) => runCli(args, { cwd, env: env() });
  const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
  const writePi = (name: string, value: unknown) =>
    tmp.write(`pi/${name}`, typeof value === "string" ? value : JSON.stringify(value, null, 2));

  beforeEach(async () => {
    server = await startTestServer();
    mkdirSync(join(tmp.path, "home"), { recursive: true });
    server.respond(async (req, res) => {
      const path = req.path.split("?")[0]!;
      if (path === "/local/v1/chat/completions") {
        if (req.headers.authorization !== `Bearer ${LOCAL_KEY}`) {
          res.writeHead(401, { "content-type": "application/json" }).end('{"error":{"message":"bad key"}}');
          return;
        }
        return chatAnswer(res, "Hello from the local server.");
      }
      if (path === "/v1/messages") {
        if (req.headers.authorization !== `Bearer ${CLAUDE_ACCESS}`) {
          res
            .writeHead(401, { "content-type": "application/json" })
            .end('{"type":"error","error":{"type":"authentication_error","message":"bad token"}}');
          return;
        }
        return writeSse(res, textAnswer(req.body.model, "Hello from Claude."));
      }
      res.writeHead(404).end(`no route for ${req.method} ${req.path}`);
    });
  });
  afterEach(async () => {
    await server.close();
  });

  /** A pi agent folder with keys, sign-ins, a models.json pointing at the test server, settings and bindings. */
  function piSetup(): void {
    writePi("auth.json", {
      local: { type: "api_key", key: LOCAL_KEY },
      anthropic: {
        type: "oauth",
        access: CLAUDE_ACCESS,
        refresh: "claude-pi-refresh",
        expires: Date.now() + 3_600_000,
      },
      "openai-codex": {
        type: "oauth",
        access: CHATGPT_ACCESS,
        refresh: "gpt-pi-refresh",
        expires: Date.now() + 3_600_000,
      },
      "github-copilot": {
        type: "oauth",
        access: "copilot-pi-token-5555",
        refresh: "gho_pi_github_token",
        expires: Date.now() + 600_000,
        enterpriseUrl: "https://company.ghe.com",
        availableModelIds: ["gpt-5.5", "claude-opus-4.7"],
      },
      "google-gemini-cli": {
        type: "oauth",
        access: "gemini-pi-token",
        refresh: "r",
        expires: 1,
        projectId: "p",
      },
      groq: { type: "api_key", key: "!op read op://vault/groq" },
    });
    writePi("models.json", {
      providers: {
        local: {
          baseUrl: `${server.url}/local/v1`,
          api: "openai-completions",
          models: [{ id: "m1", contextWindow: 32000, maxTokens: 1000 }],
        },
        anthropic: { baseUrl: server.url },
        vertex: { api: "google-vertex", models: [{ id: "gemini" }] },
      },
    });
    writePi("settings.json", {
      defaultProvider: "local",
      defaultModel: "m1",
      compaction: { reserveTokens: 8000, modelOverrides: {} },
      hideThinkingBlock: true,
      packages: ["npm:pi-skills@1.2.0"],
    });
    writePi("keybindings.json", {
      "app.message.followUp": "ctrl+j",
      "app.session.tree": "ctrl+y",
      cursorUp: ["up", "alt+k"],
      selectConfirm: "ctrl+m",
      undo: "ctrl+u",
      "tui.editor.undo": "ctrl+-",
    });
    writePi("extensions/hello.ts", "export default function () {}\n");
  }

  it("imports keys and sign-ins in KnightCode's form, masked in the report; a run then uses them", async () => {
    piSetup();
    const result = await cli(["import", "pi"]);
    expect(result.code, result.stderr + result.stdout).to.equal(0);
    const out = result.stdout;
    // Masked everywhere: no key or token of pi's file is printed whole.
    for (const secret of [
      LOCAL_KEY,
      CLAUDE_ACCESS,
      CHATGPT_ACCESS,
      "copilot-pi-token-5555",
      "gho_pi_github_token",
    ]) {
      expect(out).to.not.contain(secret);
      expect(result.stderr).to.not.contain(secret);
    }
    expect(out).to.match(/imported +local: API key \*\*\*\*7788/);
    expect(out).to.match(/imported +anthropic: Claude subscription \*\*\*\*4321, expires /);
    expect(out).to.match(/imported +openai-codex → openai: ChatGPT subscription \*\*\*\*sigZ/);
    expect(out).to.match(/imported +github-copilot: GitHub Copilot subscription \*\*\*\*5555/);
    expect(out).to.match(/not imported +google-gemini-cli: KnightCode cannot sign in to google-gemini-cli/);
    expect(out).to.match(/not imported +groq: the key is a shell command/);
    expect(out).to.match(/not imported +provider vertex: KnightCode implements no google-vertex API/);
    expect(out).to.match(/skipped +compaction\.modelOverrides: KnightCode has no such setting/);
    expect(out).to.match(/skipped +hideThinkingBlock: KnightCode has no such setting/);
    expect(out).to.match(/not imported +app\.session\.tree: KnightCode has no such binding/);

    const authPath = join(kcDir(), "auth.json");
    expect(statSync(authPath).mode & 0o777).to.equal(0o600);
    const auth = readJson(authPath);
    expect(auth.local).to.deep.equal({ type: "api_key", key: LOCAL_KEY });
    expect(auth.anthropic).to.deep.include({
      type: "oauth",
      key: CLAUDE_ACCESS,
      refresh: "claude-pi-refresh",
    });
    expect(auth.openai).to.deep.include({ type: "oauth", key: CHATGPT_ACCESS, accountId: "acct-42" });
    expect(auth["github-copilot"]).to.deep.include({
      type: "oauth",
      key: "copilot-pi-token-5555",
      refresh: "gho_pi_github_token",
      enterpriseDomain: "company.ghe.com",
      availableModelIds: ["gpt-5.5", "claude-opus-4.7"],
    });
    expect(auth).to.not.have.any.keys("openai-codex", "google-gemini-cli", "groq");
    const settings = readJson(join(kcDir(), "settings.json"));
    expect(settings).to.deep.include({ defaultProvider: "local", defaultModel: "m1" });
    expect(settings.compaction).to.deep.equal({ reserveTokens: 8000 });
    expect(settings.packages).to.deep.equal(["npm:pi-skills@1.2.0"]);
    expect(settings.extensions).to.deep.equal([join(piDir(), "extensions")]);
    expect(settings).to.not.have.property("hideThinkingBlock");
    // pi's old plain names map to the namespaced ones; where the file has both, the new one wins (as in pi).
    expect(out).to.match(/skipped +undo → tui\.editor\.undo: pi's file also has tui\.editor\.undo/);
    expect(readJson(join(kcDir(), "keybindings.json"))).to.deep.equal({
      "app.followUp": "ctrl+j",
      "tui.editor.cursorUp": ["up", "alt+k"],
      "tui.select.confirm": "ctrl+m",
      "tui.editor.undo": "ctrl+-",
    });
    expect(Object.keys(readJson(join(kcDir(), "models.json")).providers)).to.deep.equal([
      "local",
      "anthropic",
    ]);

    // The imported key reaches the local server (the default provider and model came from pi's settings).
    const run = await cli(["-p", "hi", "--no-session", "--offline", "-ne"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from the local server.");
    const sent = server.requests.filter((r) => r.path.startsWith("/local/"));
    expect(sent).to.have.length(1);
    expect(sent[0]!.headers.authorization).to.equal(`Bearer ${LOCAL_KEY}`);
    // The Claude sign-in goes as a bearer token.
    const claude = await cli(["-p", "hi", "--model", CLAUDE, "--no-session", "--offline", "-ne"]);
    expect(claude.code, claude.stderr).to.equal(0);
    expect(claude.stdout).to.contain("Hello from Claude.");
    expect(server.requests.filter((r) => r.path === "/v1/messages")[0]!.headers.authorization).to.equal(
      `Bearer ${CLAUDE_ACCESS}`,
    );
  });

  it("an imported sign-in that has expired is renewed with pi's refresh token (the same OAuth client)", async () => {
    writePi("auth.json", {
      anthropic: {
        type: "oauth",
        access: "claude-pi-expired",
        refresh: "claude-pi-refresh",
        expires: Date.now() - 1000,
      },
    });
    writePi("models.json", { providers: { anthropic: { baseUrl: server.url } } });
    const imported = await cli(["import", "pi"]);
    expect(imported.code, imported.stderr).to.equal(0);
    expect(imported.stdout).to.match(
      /imported +anthropic: Claude subscription \*\*\*\*ired, expired \(renewed on the next request\)/,
    );
    server.respond(async (req, res) => {
      if (req.path === "/claude/token") {
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            access_token: CLAUDE_ACCESS,
            refresh_token: "claude-kc-refresh",
            expires_in: 3600,
          }),
        );
        return;
      }
      if (req.path.startsWith("/v1/messages") && req.headers.authorization === `Bearer ${CLAUDE_ACCESS}`) {
        return writeSse(res, textAnswer(req.body.model, "Hello from Claude."));
      }
      res.writeHead(401).end("{}");
    });
    const run = await runCli(["-p", "hi", "--model", CLAUDE, "--no-session", "--offline"], {
      cwd: tmp.path,
      env: { ...env(), KNIGHTCODE_OAUTH_ANTHROPIC_TOKEN_URL: `${server.url}/claude/token` },
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from Claude.");
    const renewal = server.requests.find((r) => r.path === "/claude/token")!;
    expect(renewal.body).to.deep.include({ grant_type: "refresh_token", refresh_token: "claude-pi-refresh" });
    expect(readJson(join(kcDir(), "auth.json")).anthropic).to.deep.include({
      key: CLAUDE_ACCESS,
      refresh: "claude-kc-refresh",
    });
  });

  it("--dry-run prints the plan and writes nothing", async () => {
    piSetup();
    const result = await cli(["import", "pi", "--dry-run"]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain("Dry run (nothing written)");
    expect(result.stdout).to.match(/would import +local: API key \*\*\*\*7788/);
    expect(result.stdout).to.not.contain(LOCAL_KEY);
    expect(existsSync(kcDir()) ? readdirSync(kcDir()) : []).to.deep.equal([]);
  });

  it("keeps what KnightCode already has unless --force", async () => {
    piSetup();
    tmp.write("kc/auth.json", JSON.stringify({ local: { type: "api_key", key: "sk-ours-1111" } }));
    tmp.write("kc/settings.json", JSON.stringify({ defaultModel: "ours", packages: ["npm:pi-skills"] }));
    const kept = await cli(["import", "pi"]);
    expect(kept.code, kept.stderr).to.equal(0);
    expect(kept.stdout).to.match(
      /skipped +local: already in KnightCode's auth\.json \(--force replaces it\)/,
    );
    expect(kept.stdout).to.match(/skipped +defaultModel: already in KnightCode's settings\.json/);
    expect(kept.stdout).to.match(/skipped +package npm:pi-skills@1\.2\.0: already in/);
    expect(kept.stdout).to.not.contain("sk-ours-1111");
    const auth = readJson(join(kcDir(), "auth.json"));
    expect(auth.local.key).to.equal("sk-ours-1111");
    expect(auth.anthropic.key).to.equal(CLAUDE_ACCESS);
    const settings = readJson(join(kcDir(), "settings.json"));
    expect(settings.defaultModel).to.equal("ours");
    expect(settings.defaultProvider).to.equal("local");
    expect(settings.packages).to.deep.equal(["npm:pi-skills"]);

    // Run again: everything is already there.
    const again = await cli(["import", "pi"]);
    expect(again.stdout).to.match(/0 imported, \d+ skipped/);

    const forced = await cli(["import", "pi", "--force"]);
    expect(forced.code, forced.stderr).to.equal(0);
    expect(readJson(join(kcDir(), "auth.json")).local.key).to.equal(LOCAL_KEY);
    expect(readJson(join(kcDir(), "settings.json")).defaultModel).to.equal("m1");
    expect(statSync(join(kcDir(), "auth.json")).mode & 0o777).to.equal(0o600);
  });

  it("pi's ChatGPT provider name in defaultProvider and enabledModels becomes KnightCode's (openai), and the model is found", async () => {
    writePi("settings.json", {
      defaultProvider: "openai-codex",
      defaultModel: "gpt-5.5",
      enabledModels: ["openai-codex/gpt-5.4", "anthropic/claude-opus-4-7", "gpt-5.5"],
    });
    const result = await cli(["import", "pi"]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/imported +defaultProvider: "openai" \(pi's "openai-codex"\)/);
    expect(result.stdout).to.match(
      /imported +enabledModels: .*"openai\/gpt-5\.4".* \(pi's .*"openai-codex\/gpt-5\.4"/,
    );
    const settings = readJson(join(kcDir(), "settings.json"));
    expect(settings).to.deep.include({
      defaultProvider: "openai",
      defaultModel: "gpt-5.5",
      enabledModels: ["openai/gpt-5.4", "anthropic/claude-opus-4-7", "gpt-5.5"],
    });
    // The settings name a model KnightCode knows (pi-ai's OpenAI models are in builtin:openai's list).
    const listed = await runCli(["--list-models", "gpt-5.5"], {
      cwd: tmp.path,
      env: { ...env(), OPENAI_API_KEY: "sk-test" },
    });
    expect(listed.stdout).to.match(/^openai +gpt-5\.5 /m);
  });

  it("says nothing of pi's names when enabledModels names no provider KnightCode calls otherwise", async () => {
    writePi("settings.json", { enabledModels: ["anthropic/claude-opus-4-7", "gpt-5.5"] });
    const result = await cli(["import", "pi"]);
    expect(result.code, result.stderr).to.equal(0);
    const line = result.stdout.split("\n").find((l) => /imported +enabledModels:/.test(l));
    expect(line, result.stdout).to.be.a("string").and.not.contain("pi's");
  });

  it("a malformed pi file is reported with its line and column; the other files still import", async () => {
    piSetup();
    writePi("settings.json", '{\n  "defaultModel": "m1",\n}\n');
    const result = await cli(["import", "pi"]);
    expect(result.code).to.equal(1);
    expect(result.stdout).to.match(
      new RegExp(
        `error +settings\\.json: ${join(piDir(), "settings.json").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:3:1: invalid JSON`,
      ),
    );
    expect(result.stderr).to.contain("knightcode import: 1 item could not be imported: settings.json");
    expect(readJson(join(kcDir(), "auth.json")).local.key).to.equal(LOCAL_KEY);
    expect(existsSync(join(kcDir(), "settings.json")), "pi's extensions folder is still added").to.equal(
      true,
    );
    expect(readJson(join(kcDir(), "settings.json"))).to.not.have.property("defaultModel");
  });

  it("a KnightCode file that does not parse is never overwritten; its items are errors", async () => {
    piSetup();
    const broken = '{ "defaultModel": "ours", }';
    tmp.write("kc/settings.json", broken);
    const result = await cli(["import", "pi"]);
    expect(result.code).to.equal(1);
    // The file's problem in full once, then briefly for its other items.
    expect(result.stdout).to.match(
      /error +defaultProvider: .*settings\.json:1:27: invalid JSON.*; KnightCode's file was left as it is/,
    );
    expect(result.stdout).to.match(/error +defaultModel: .*settings\.json cannot be changed \(see above\)/);
    expect(readFileSync(join(kcDir(), "settings.json"), "utf8")).to.equal(broken);
    expect(readJson(join(kcDir(), "auth.json")).local.key).to.equal(LOCAL_KEY);
  });

  it("a pi auth.json copied as it is (tokens under `access`) is used by a run", async () => {
    tmp.write(
      "kc/auth.json",
      JSON.stringify({
        anthropic: { type: "oauth", access: CLAUDE_ACCESS, refresh: "r", expires: Date.now() + 3_600_000 },
      }),
    );
    tmp.write("kc/models.json", JSON.stringify({ providers: { anthropic: { baseUrl: server.url } } }));
    const run = await cli(["-p", "hi", "--model", CLAUDE, "--no-session", "--offline"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("Hello from Claude.");
    expect(server.requests[0]!.headers.authorization).to.equal(`Bearer ${CLAUDE_ACCESS}`);
    const listed = await cli(["login", "--list"]);
    expect(listed.stdout).to.match(/^anthropic {2}subscription sign-in \*\*\*\*4321/m);
  });

  it("--project is refused in an untrusted project and imports .pi/ once it is trusted", async () => {
    tmp.write(
      "project/.pi/settings.json",
      JSON.stringify({ defaultModel: "m1", defaultProjectTrust: "always", skills: ["skills/review"] }),
    );
    tmp.write("project/.pi/extensions/tool.ts", "export default function () {}\n");
    tmp.write(
      "project/.pi/mcp.json",
      JSON.stringify({ mcpServers: { docs: { url: "https://mcp.example.com" } } }),
    );
    const refused = await cli(["import", "pi", "--project"], project());
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain("is not a trusted project");
    expect(refused.stderr).to.contain("--trust-project");
    expect(existsSync(join(project(), ".knightcode"))).to.equal(false);

    // Trusted through KnightCode's own saved decision.
    tmp.write(
      "kc/trust.json",
      JSON.stringify({
        version: 1,
        decisions: { [project()]: { trusted: true, at: new Date().toISOString() } },
      }),
    );
    const result = await cli(["import", "pi", "--project"], project());
    expect(result.code, result.stderr + result.stdout).to.equal(0);
    expect(result.stdout).to.match(
      /not imported +defaultProjectTrust: a project cannot decide its own trust/,
    );
    const settings = readJson(join(project(), ".knightcode", "settings.json"));
    expect(settings).to.deep.equal({
      defaultModel: "m1",
      skills: ["../.pi/skills/review"],
      extensions: ["../.pi/extensions"],
    });
    expect(readJson(join(project(), ".knightcode", "mcp.json")).mcpServers.docs.url).to.equal(
      "https://mcp.example.com",
    );
    // The agent folder's files are not touched by --project.
    expect(existsSync(join(kcDir(), "settings.json"))).to.equal(false);
  });

  it("usage errors: another agent, a missing pi folder", async () => {
    const other = await cli(["import", "claude"]);
    expect(other.code).to.equal(2);
    expect(other.stderr).to.contain('cannot import from "claude"');
    const missing = await cli(["import", "pi"]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain(`no pi agent folder at ${piDir()}`);
    const help = await cli(["--help"]);
    expect(help.stdout).to.contain("import pi [--dry-run] [--force]");
  });
});

describe("knightcode import pi: pieces", () => {
  it("the CLI's list of the interactive mode's bindings matches the mode's own", async () => {
    const { KNIGHTCODE_APP_BINDINGS } = await import("../../../hosts/cli/import-pi.js");
    const { APP_KEYBINDINGS } = await import("../../../builtin-extensions/mode-interactive/keybindings.js");
    expect([...KNIGHTCODE_APP_BINDINGS].sort()).to.deep.equal(Object.keys(APP_KEYBINDINGS).sort());
  });

  it("showValue masks keys and tokens at any depth", async () => {
    const { showValue } = await import("../../../hosts/cli/import-pi.js");
    const shown = showValue({ apiKey: "sk-1234", nested: { token: "t-9", name: "x" } }, () => "****");
    expect(shown).to.equal('{apiKey: ****, nested: {token: ****, name: "x"}}');
  });
});

/**
 * pi's sessions: hand-written pi files (fixtures/pi-sessions: version 3 with a tool call, a compaction, a branch, a
 * label, `!` commands and pi's `usage` entry; version 1 and version 2) in a temp pi folder, imported through the
 * built CLI, then continued by the built CLI against a local Chat Completions server.
 */
describe("knightcode import pi: sessions", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-import-pi-sessions-");
  let server: TestServer;
  const fixtures = join(import.meta.dirname, "fixtures", "pi-sessions");
  const SHOP_ID = "5e1f0c2a-7b44-4d1e-9a60-0c3b2f1d8a01";
  const V1_ID = "9c0d7e55-1f2a-4b3c-8d4e-5f6a7b8c9d02";
  const V2_ID = "b7a61e20-3c4d-4e5f-8a9b-0c1d2e3f4a03";

  const piDir = () => join(tmp.path, "pi");
  const kcDir = () => join(tmp.path, "kc");
  const shop = () => join(tmp.path, "shop");
  const util = () => join(tmp.path, "util");
  /** pi's folder name for a cwd. */
  const piFolder = (cwd: string) => `--${cwd.replace(/^\//, "").replace(/\//g, "-")}--`;
  const env = (): Record<string, string> => ({
    KNIGHTCODE_AGENT_DIR: kcDir(),
    PI_CODING_AGENT_DIR: piDir(),
    HOME: join(tmp.path, "home"),
    KNIGHTCODE_CODE_CACHE: "0",
  });
  const cli = (args: string[], cwd = tmp.path) => runCli(args, { cwd, env: env() });
  const chat = (args: string[], cwd: string) => cli(["--provider", "local", "--model", "m1", ...args], cwd);

  /** Copies a fixture into pi's sessions folder as the session of `cwd`; returns its path. */
  function piSession(fixture: string, cwd: string, fileName: string, edit = (text: string) => text): string {
    const text = readFileSync(join(fixtures, fixture), "utf8").replaceAll("__CWD__", cwd);
    return tmp.write(`pi/sessions/${piFolder(cwd)}/${fileName}`, edit(text));
  }
  function piSessions(): void {
    piSession("v3-shop.jsonl", shop(), `2026-03-01T09-00-00-000Z_${SHOP_ID}.jsonl`);
    piSession("v1-util.jsonl", util(), `2025-12-10T14-00-00-000Z_${V1_ID}.jsonl`);
    piSession("v2-hooks.jsonl", util(), `2025-12-27T08-00-00-000Z_${V2_ID}.jsonl`);
  }
  /** KnightCode's session files, relative to its sessions folder. */
  function kcSessionFiles(): string[] {
    const root = join(kcDir(), "sessions");
    if (!existsSync(root)) return [];
    return readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => readdirSync(join(root, d.name)).map((f) => `${d.name}/${f}`))
      .sort();
  }
  const lines = (path: string) =>
    readFileSync(path, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  /** The text of every message of the last request, in order. */
  const sentTexts = (): string[] =>
    (server.requests.at(-1)?.body.messages ?? []).map((m: { content: unknown }) =>
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p: { text?: string }) => p.text ?? "").join("")
          : "",
    );

  beforeEach(async () => {
    mkdirSync(join(tmp.path, "home"), { recursive: true });
    mkdirSync(shop(), { recursive: true });
    mkdirSync(util(), { recursive: true });
    server = await startTestServer();
    server.respond((_req, res) => writeSse(res, [...textStream("Noted.")]));
    writeLocalModels(kcDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "local-key",
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
  });
  afterEach(() => server.close());

  it("imports the sessions of two projects (versions 3, 1 and 2); KnightCode lists them, continues them and sends the earlier conversation", async () => {
    piSessions();
    const result = await cli(["import", "pi"]);
    expect(result.code, result.stderr + result.stdout).to.equal(0);
    expect(result.stdout).to.match(
      new RegExp(`imported +${shop()}: 1 session, .*2 !commands in KnightCode's form`),
    );
    expect(result.stdout).to.match(
      new RegExp(`imported +${util()}: 2 sessions, .*2 migrated from pi's older`),
    );
    expect(kcSessionFiles()).to.deep.equal([
      `${piFolder(shop())}/2026-03-01T09-00-00-000Z_${SHOP_ID}.jsonl`,
      `${piFolder(util())}/2025-12-10T14-00-00-000Z_${V1_ID}.jsonl`,
      `${piFolder(util())}/2025-12-27T08-00-00-000Z_${V2_ID}.jsonl`,
    ]);
    const shopFile = join(kcDir(), "sessions", kcSessionFiles()[0]!);
    expect(statSync(shopFile).mode & 0o777).to.equal(0o600);

    // The listing /resume and -r show: each project's own sessions, with pi's name and label.
    const { SessionManager } = await import("../../../plugins/session-store/session-manager.js");
    const shopList = SessionManager.list({ cwd: shop(), agentDir: kcDir() });
    expect(shopList.map((s) => [s.id, s.name, s.labels])).to.deep.equal([
      [SHOP_ID, "Shop prices", ["price question"]],
    ]);
    const utilList = SessionManager.list({ cwd: util(), agentDir: kcDir() });
    expect(utilList.map((s) => s.id)).to.deep.equal([V2_ID, V1_ID]);

    // -c in the shop continues pi's session: the model sees the compaction summary, the kept messages, the branch
    // summary and the `!` command, not the abandoned branch nor the `!!` command pi kept out of the context.
    const shopRun = await chat(["-c", "-p", "And the VAT rate?"], shop());
    expect(shopRun.code, shopRun.stderr).to.equal(0);
    expect(shopRun.stderr, "KnightCode reads every line of the imported file").to.not.match(/line \d+/);
    const sent = sentTexts();
    expect(sent.slice(1)).to.deep.equal([
      sent[1]!.startsWith("Earlier turns of this conversation were compacted")
        ? sent[1]
        : "a compaction summary",
      "The price list is prices.csv.",
      sent[3]!.includes("Looked at prices.csv: it holds 40 rows.") ? sent[3] : "a branch summary",
      "Ran `wc -l prices.csv`\n```\n40 prices.csv\n```",
      "Thanks. Which currency are the prices in?",
      "They are in euros.",
      "Remember: prices exclude VAT.",
      "And the VAT rate?",
    ]);
    expect(sent[1]).to.contain("The user asked where the price list is kept: prices.csv, 40 rows.");
    expect(sent.join("\n")).to.not.contain("Summarise prices.csv").and.not.contain(".netrc");
    // The new turn is appended to the imported file, after pi's last entry (its `usage` entry).
    expect(kcSessionFiles()).to.have.length(3);
    const after = lines(shopFile);
    const prompt = after.find((l) => l.type === "message" && l.message.content === "And the VAT rate?");
    expect(prompt?.parentId).to.equal("0a1b2c13");
    expect(after.at(-1).message).to.include({ role: "assistant" });

    // -c in util takes the most recently active one, the version-2 session, whose hook message is a custom message now.
    const v2Run = await chat(["-c", "-p", "Thanks"], util());
    expect(v2Run.code, v2Run.stderr).to.equal(0);
    expect(sentTexts().slice(1)).to.deep.equal([
      "Check the lint setup",
      "The linter is biome, configured in biome.json.",
      "Biome is set up.",
      "Thanks",
    ]);
    // A version-1 session by id: the compaction kept what pi's firstKeptEntryIndex pointed at.
    const v1Run = await chat(["--session-id", V1_ID, "-p", "Does the test pass?"], util());
    expect(v1Run.code, v1Run.stderr).to.equal(0);
    expect(v1Run.stderr).to.not.contain("creating a new session");
    const v1Sent = sentTexts().slice(1);
    expect(v1Sent[0]).to.contain("The helper in util.ts was renamed to formatPrice.");
    expect(v1Sent.slice(1)).to.deep.equal([
      "Renamed it to formatPrice.",
      "Now add a test for formatPrice",
      "Added util.test.ts with three cases.",
      "Does the test pass?",
    ]);
    expect(kcSessionFiles()).to.have.length(3);
  });

  it("never overwrites: a session id KnightCode has (in any folder) is skipped and reported, and a second import skips all", async () => {
    piSessions();
    const mine = tmp.write(
      `kc/sessions/--elsewhere--/2026-01-01T00-00-00-000Z_${SHOP_ID}.jsonl`,
      `${JSON.stringify({ type: "session", version: 3, id: SHOP_ID, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/elsewhere" })}\n`,
    );
    const before = readFileSync(mine, "utf8");
    const result = await cli(["import", "pi"]);
    expect(result.code, result.stderr + result.stdout).to.equal(0);
    expect(result.stdout).to.contain(
      `skipped      session ${SHOP_ID} (${shop()}): KnightCode already has a session with this id: ${mine}`,
    );
    expect(readFileSync(mine, "utf8")).to.equal(before);
    expect(kcSessionFiles().filter((f) => f.includes(SHOP_ID))).to.deep.equal([
      `--elsewhere--/2026-01-01T00-00-00-000Z_${SHOP_ID}.jsonl`,
    ]);
    expect(result.stdout).to.match(new RegExp(`imported +${util()}: 2 sessions`));

    const again = await cli(["import", "pi"]);
    expect(again.code, again.stderr + again.stdout).to.equal(0);
    expect(again.stdout).to.contain("0 imported, 3 skipped");
    expect(kcSessionFiles()).to.have.length(3);
  });

  it("a malformed session file is reported by name and skipped, unreadable lines are left out and reported, the rest import", async () => {
    piSessions();
    tmp.write(`pi/sessions/${piFolder(util())}/broken.jsonl`, "{not json\n");
    piSession("v2-hooks.jsonl", util(), "future.jsonl", (t) =>
      t.replace('"version":2', '"version":9').replace(V2_ID, "c0ffee00-0000-4000-8000-000000000009"),
    );
    // A v3 session with a torn line in the middle: the entry after it is attached to the one before.
    piSession("v3-shop.jsonl", util(), "torn.jsonl", (t) =>
      t
        .replace(SHOP_ID, "d00dfeed-0000-4000-8000-000000000010")
        .replace(
          /\n\{"type":"message","id":"0a1b2c06".*\n/,
          '\n{"type":"message","id":"0a1b2c06","parentId":\n',
        ),
    );
    const result = await cli(["import", "pi"]);
    expect(result.code, result.stderr + result.stdout).to.equal(0);
    expect(result.stdout).to.contain(
      `not imported sessions/${piFolder(util())}/broken.jsonl: line 1 is not valid JSON, so it is not a session header; skipped`,
    );
    expect(result.stdout).to.contain(
      `not imported sessions/${piFolder(util())}/future.jsonl: its version 9 is not one KnightCode can import`,
    );
    expect(result.stdout).to.contain(
      `not imported sessions/${piFolder(util())}/torn.jsonl (session d00dfeed-0000-4000-8000-000000000010): line 7 is not valid JSON; 1 entry whose parent was left out attached to the entry before; the rest of the session was imported`,
    );
    expect(result.stdout).to.match(new RegExp(`imported +${util()}: 3 sessions`));
    expect(result.stdout).to.match(new RegExp(`imported +${shop()}: 1 session`));
    const torn = kcSessionFiles().find((f) => f.includes("d00dfeed"));
    expect(torn).to.be.a("string");
    const run = await chat(["--session-id", "d00dfeed-0000-4000-8000-000000000010", "-p", "hi"], util());
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.not.match(/line \d+/);
    const label = lines(join(kcDir(), "sessions", torn!)).find((l) => l.id === "0a1b2c07");
    expect(label.parentId).to.equal("0a1b2c05");
  });

  it("--dry-run counts the sessions per project and writes nothing; --no-sessions leaves them out", async () => {
    piSessions();
    const dry = await cli(["import", "pi", "--dry-run"]);
    expect(dry.code, dry.stderr + dry.stdout).to.equal(0);
    expect(dry.stdout).to.match(new RegExp(`would import +${shop()}: 1 session, [\\d.]+ KiB`));
    expect(dry.stdout).to.match(new RegExp(`would import +${util()}: 2 sessions, [\\d.]+ KiB`));
    expect(existsSync(join(kcDir(), "sessions"))).to.equal(false);

    const none = await cli(["import", "pi", "--no-sessions"]);
    expect(none.code, none.stderr + none.stdout).to.equal(0);
    expect(none.stdout).to.not.contain("sessions/");
    expect(existsSync(join(kcDir(), "sessions"))).to.equal(false);

    const project = await cli(["import", "pi", "--project", "--sessions"], shop());
    expect(project.code).to.equal(2);
    expect(project.stderr).to.contain("--sessions imports the sessions of pi's agent folder");
  });
});

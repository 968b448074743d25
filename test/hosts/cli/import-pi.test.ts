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
import { runCli } from "../../helpers/cli.js";
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

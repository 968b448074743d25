/**
 * Keys and header values given as `!command` (pi's form): the built `knightcode` against a local Chat Completions
 * server, a two-request run (one `read` call) so that a models.json command is seen to run for each request and an
 * auth.json command once per process; a failing command fails the run with what ran and why, and no key is shown.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../../helpers/cli.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("keys from commands (!command)", function () {
  this.timeout(40_000);
  const tmp = useTempDir("kc-key-commands-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_1", "read", { path: "hello.txt" })),
      (_req, res) => writeSse(res, textStream("It says hello.")),
    );
  });
  afterEach(() => server.close());

  const agentDir = () => join(tmp.path, "agent");
  const counter = () => join(tmp.path, "runs.log");
  /** A shell command that prints `key` and counts its runs in runs.log. */
  const counted = (key: string) => `!echo run >> '${counter()}'; printf '%s\\n' '${key}'`;
  const runs = () => readFileSync(counter(), "utf8").trim().split("\n").length;
  function models(provider: Record<string, unknown>) {
    tmp.write(
      "agent/models.json",
      JSON.stringify({
        providers: {
          local: {
            api: "openai-completions",
            baseUrl: `${server.url}/v1`,
            models: [{ id: "m1", contextWindow: 32000, maxTokens: 1000 }],
            ...provider,
          },
        },
      }),
    );
  }
  const run = () =>
    runCli(["--mode", "json", "--no-session", "--provider", "local", "--model", "m1", "Read hello.txt"], {
      cwd: tmp.path,
      env: { KNIGHTCODE_AGENT_DIR: agentDir() },
    });

  it("runs a models.json apiKey and header command for each request", async () => {
    tmp.write("hello.txt", "hello\n");
    models({
      apiKey: counted("sk-from-command"),
      headers: { "x-team": "!printf team-7", "x-plain": "literal" },
    });
    const result = await run();
    expect(result.code, result.stderr).to.equal(0);
    expect(server.requests).to.have.length(2);
    for (const request of server.requests) {
      expect(request.headers.authorization).to.equal("Bearer sk-from-command");
      expect(request.headers["x-team"]).to.equal("team-7");
      expect(request.headers["x-plain"]).to.equal("literal");
    }
    expect(runs()).to.equal(2);
    expect(result.stdout + result.stderr).to.not.contain("sk-from-command");
  });

  it("runs an auth.json key command once per process", async () => {
    tmp.write("hello.txt", "hello\n");
    models({});
    writeFileSync(
      join(agentDir(), "auth.json"),
      JSON.stringify({ local: { type: "api_key", key: counted("sk-stored") } }),
    );
    const result = await run();
    expect(result.code, result.stderr).to.equal(0);
    expect(server.requests.map((r) => r.headers.authorization)).to.deep.equal([
      "Bearer sk-stored",
      "Bearer sk-stored",
    ]);
    expect(runs()).to.equal(1);
  });

  it("fails the request with what ran and why when the command fails, sending nothing", async () => {
    models({ apiKey: "!echo 'vault locked' >&2; exit 3" });
    const result = await run();
    expect(result.code).to.not.equal(0);
    const failed = result.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((record) => record.type === "message_end" && record.message.role === "assistant");
    expect(failed.message.stopReason).to.equal("error");
    expect(failed.message.errorMessage).to.match(/^The apiKey of provider "local": the command `echo/);
    expect(failed.message.errorMessage).to.contain("exit code 3").and.contain("vault locked");
    expect(server.requests).to.have.length(0);
  });
});

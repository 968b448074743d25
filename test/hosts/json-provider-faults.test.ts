/**
 * `knightcode --mode json` against a local OpenAI-compatible fault server: what a user sees (stderr, the JSON
 * stream, the session file) when the server repeats the key it refused, when the baseUrl carries a password, and
 * when the server never answers.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../helpers/cli.js";
import { writeLocalModels } from "../helpers/local-models.js";
import { startTestServer, type TestServer, writeJsonError } from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

const KEY = "kc-e2e-secret-key-7d41b9";
const PASSWORD = "hunter2-e2e-password";

/** Every file under `dir`, as text. */
function readTree(dir: string): string {
  let text = "";
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    text += statSync(path).isDirectory() ? readTree(path) : readFileSync(path, "utf8");
  }
  return text;
}

describe("knightcode --mode json with a faulty OpenAI-compatible server", () => {
  const tmp = useTempDir("kc-e2e-provider-faults-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  function configure(compat: Record<string, unknown> = {}): string {
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeLocalModels(agentDir, {
      baseUrl: `${server.url.replace("://", `://proxy-user:${PASSWORD}@`)}/v1`,
      apiKey: "LOCAL_SECRET_KEY",
      compat,
      models: [{ id: "m", contextWindow: 32000, maxTokens: 1024 }],
    });
    // One attempt: a retried failure would only repeat what is checked here.
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
    return agentDir;
  }

  it("keeps a key the server repeats in its 401 and the baseUrl's password out of stderr, the stream and the session", async () => {
    const agentDir = configure();
    server.respond((request, res) =>
      writeJsonError(res, 401, {
        error: {
          message: `Invalid API key ${KEY}; got "${request.headers.authorization}" for http://proxy-user:${PASSWORD}@127.0.0.1/v1`,
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      }),
    );
    const result = await runCli(["--mode", "json", "--provider", "local", "--model", "m", "Hello"], {
      cwd: tmp.path,
      env: { KNIGHTCODE_AGENT_DIR: agentDir, LOCAL_SECRET_KEY: KEY },
    });
    expect(server.requests, "the request reached the server").to.have.length(1);
    expect(server.requests[0]!.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(result.code, result.stderr).to.equal(1);
    const records = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; message?: { role: string; errorMessage?: string } });
    const end = records.find((r) => r.type === "message_end" && r.message?.role === "assistant")!;
    expect(end.message!.errorMessage).to.contain("Invalid API key [redacted]");
    const session = readTree(join(agentDir, "sessions"));
    expect(session, "the session file holds the error").to.contain("Invalid API key [redacted]");
    for (const [where, text] of Object.entries({ stderr: result.stderr, stdout: result.stdout, session })) {
      expect(text, where).not.to.contain(KEY);
      expect(text, where).not.to.contain(PASSWORD);
    }
  });

  it("says on stderr that it is still waiting for a silent server, then times out", async () => {
    const agentDir = configure({ timeoutMs: 1200 });
    server.respond(() => {
      // Never answers; the server closes the connection after the test.
    });
    const result = await runCli(["--mode", "json", "--provider", "local", "--model", "m", "Hello"], {
      cwd: tmp.path,
      env: { KNIGHTCODE_AGENT_DIR: agentDir, LOCAL_SECRET_KEY: KEY },
    });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(
      /local has sent nothing for \d+ ms; still waiting \(the request times out after 1 s of silence; compat\.timeoutMs sets the limit\)/,
    );
    expect(result.stdout).to.contain("sent nothing for 1.2s, so the request timed out");
  });
});

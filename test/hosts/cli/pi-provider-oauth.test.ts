/**
 * A provider an extension written for pi registers with pi's `oauth` block (`login(callbacks)`, `refreshToken`,
 * `getApiKey`): `knightcode login` runs pi's login through KnightCode's sign-in, `auth.json` keeps pi's credentials
 * with the key `getApiKey` made, and an expiring sign-in is renewed through `refreshToken` before a request to a
 * local Chat Completions server.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../../helpers/cli.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const extension = (baseUrl: string) => `
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.registerProvider("corp", {
    baseUrl: ${JSON.stringify(baseUrl)},
    api: "openai-completions",
    models: [{ id: "corp-1", name: "Corp One", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32000, maxTokens: 1000 }],
    oauth: {
      name: "Corp SSO",
      async login(callbacks: any) {
        callbacks.onAuth({ url: "https://sso.corp.example/authorize?client=kc", instructions: "Sign in with your corp account" });
        const code = await callbacks.onPrompt({ message: "Paste the code" });
        return { access: "at-" + code.trim(), refresh: "rt-1", expires: Date.now() + 3_600_000, tenant: "t1" };
      },
      async refreshToken(credentials: any) {
        if (credentials.refresh !== "rt-1") throw new Error("unknown refresh token " + credentials.refresh);
        return { ...credentials, access: "at-renewed", refresh: "rt-2", expires: Date.now() + 3_600_000 };
      },
      getApiKey(credentials: any) {
        return "Corp-" + credentials.access;
      },
    },
  });
}
`;

describe("a pi extension's provider with pi's oauth block", function () {
  this.timeout(40_000);
  const tmp = useTempDir("kc-pi-oauth-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
    server.respond((_req, res) => writeSse(res, [...textStream("Hello from Corp.")]));
  });
  afterEach(() => server.close());

  it("signs in through knightcode login, keeps pi's credentials, and renews them through refreshToken", async () => {
    const agentDir = join(tmp.path, "agent");
    const ext = tmp.write("corp.ts", extension(`${server.url}/v1`));
    const env = { KNIGHTCODE_AGENT_DIR: agentDir };

    const login = await runCli(["login", "corp", "-e", ext], { cwd: tmp.path, env, stdin: "c0de\n" });
    expect(login.code, login.stderr).to.equal(0);
    expect(login.stderr)
      .to.contain("Sign in with your corp account")
      .and.contain("https://sso.corp.example/authorize");
    expect(login.stderr).to.contain("Paste the code");
    expect(login.stderr).to.not.contain("Corp-at-c0de");
    const authPath = join(agentDir, "auth.json");
    const stored = JSON.parse(readFileSync(authPath, "utf8")).corp;
    expect(stored).to.deep.include({
      type: "oauth",
      key: "Corp-at-c0de",
      access: "at-c0de",
      refresh: "rt-1",
      tenant: "t1",
    });

    // A request sends the key getApiKey made.
    const first = await runCli(
      ["--mode", "json", "--no-session", "--provider", "corp", "--model", "corp-1", "-e", ext, "hi"],
      {
        cwd: tmp.path,
        env,
      },
    );
    expect(first.code, first.stderr).to.equal(0);
    expect(server.requests[0]!.headers.authorization).to.equal("Bearer Corp-at-c0de");

    // Expiring within five minutes: renewed through pi's refreshToken first, and saved.
    writeFileSync(authPath, JSON.stringify({ corp: { ...stored, expires: Date.now() + 60_000 } }));
    const second = await runCli(
      ["--mode", "json", "--no-session", "--provider", "corp", "--model", "corp-1", "-e", ext, "hi"],
      {
        cwd: tmp.path,
        env,
      },
    );
    expect(second.code, second.stderr).to.equal(0);
    expect(server.requests[1]!.headers.authorization).to.equal("Bearer Corp-at-renewed");
    expect(JSON.parse(readFileSync(authPath, "utf8")).corp).to.deep.include({
      type: "oauth",
      key: "Corp-at-renewed",
      access: "at-renewed",
      refresh: "rt-2",
      tenant: "t1",
    });
  });
});

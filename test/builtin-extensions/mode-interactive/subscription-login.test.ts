/**
 * `/login` in the full terminal UI offers the built-in subscription sign-ins: the Claude one shows its
 * authorization URL and a paste prompt; a pasted code is exchanged at the token endpoint (a server on 127.0.0.1),
 * the tokens land in auth.json (0600), and the next prompt goes with the access token as a bearer token.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { textAnswer } from "../providers/anthropic/wire.js";
import { type TmuxDriver, useTerminalAndModel } from "./tmux-driver.js";

describe("interactive UI: /login with a subscription (tmux, local authorization server)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-sublogin-");
  let server: TestServer;
  let term: TmuxDriver;

  useTerminalAndModel((started) => {
    ({ server, term } = started);
  });

  it("/login anthropic → Claude subscription: the pasted code signs in and the next prompt uses the token", async () => {
    const agentDir = join(tmp.path, "agent");
    tmp.write("agent/models.json", JSON.stringify({ providers: { anthropic: { baseUrl: server.url } } }));
    server.respond((req, res) => {
      if (req.path === "/token") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ access_token: `at-${req.body.code}`, refresh_token: "rt", expires_in: 3600 }),
        );
        return;
      }
      if (req.path === "/v1/messages") return writeSse(res, textAnswer(req.body.model, "Subscribed answer."));
      res.writeHead(404).end();
    });
    const command = [
      `KNIGHTCODE_AGENT_DIR=${agentDir} ANTHROPIC_API_KEY= OPENAI_API_KEY=`,
      `KNIGHTCODE_OAUTH_ANTHROPIC_AUTHORIZE_URL=${server.url}/authorize`,
      `KNIGHTCODE_OAUTH_ANTHROPIC_TOKEN_URL=${server.url}/token KNIGHTCODE_OAUTH_ANTHROPIC_CALLBACK_PORT=0`,
      process.execPath,
      cliBin,
    ].join(" ");
    term.start(command, tmp.path, 120, 40);
    await term.waitFor("No model yet");
    term.enter("/login anthropic");
    const methods = await term.waitFor("Claude subscription (Pro/Max)");
    expect(methods).to.contain("API key");
    term.key("Enter");
    await term.waitFor("Paste the redirect URL or the code");
    expect(term.screen()).to.contain("Sign in to your Claude subscription in a browser:");
    term.type("tui-code");
    term.key("Enter");
    await term.waitFor("Signed in to anthropic (****code): sign-in saved in");
    const auth = join(agentDir, "auth.json");
    expect(JSON.parse(readFileSync(auth, "utf8")).anthropic).to.deep.include({
      type: "oauth",
      key: "at-tui-code",
      refresh: "rt",
    });
    expect(statSync(auth).mode & 0o777).to.equal(0o600);
    const exchange = server.requests.find((r) => r.path === "/token")!.body;
    expect(exchange).to.deep.include({ grant_type: "authorization_code", code: "tui-code" });
    await term.waitFor("anthropic/claude");
    term.enter("hello");
    await term.waitFor("Subscribed answer.");
    expect(server.requests.at(-1)!.headers.authorization).to.equal("Bearer at-tui-code");
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });
});

/**
 * OAuth sign-in against the SDK's example server with its authorization server, both on 127.0.0.1: a server that
 * needs sign-in is reported, `/mcp login` registers a client, shows the authorization address (the test plays the
 * browser and follows it), exchanges the code, stores the tokens with mode 0600 and connects; `/mcp logout` forgets
 * them.
 */
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { createTestSession, type TestSession } from "../../../hosts/testing/test-session.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type HttpServer, startOAuthServer } from "./servers.js";

describe("builtin:mcp OAuth sign-in", function () {
  this.timeout(60_000);
  const temp = useTempDir("kc-mcp-oauth-");
  let server: HttpServer | undefined;
  let session: TestSession | undefined;

  afterEach(async () => {
    await session?.dispose();
    session = undefined;
    await server?.close();
    server = undefined;
  });

  const notifications = (s: TestSession) => s.ui.notifications.map((n) => n.message).join("\n");

  /** Plays the browser: waits for the address to be shown, follows the authorization server's redirect to the callback. */
  async function actAsBrowser(s: TestSession): Promise<void> {
    const deadline = Date.now() + 20_000;
    let address: string | undefined;
    while (!address && Date.now() < deadline) {
      address = /sign in to "secure": (\S+)/.exec(notifications(s))?.[1];
      if (!address) await new Promise((r) => setTimeout(r, 50));
    }
    if (!address) throw new Error(`no authorization address was shown:\n${notifications(s)}`);
    const approval = await fetch(address, { redirect: "manual" });
    const location = approval.headers.get("location");
    expect(approval.status).to.equal(302);
    expect(location).to.match(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
    const callback = await fetch(location!);
    expect(callback.status).to.equal(200);
    await callback.text();
  }

  it("reports that sign-in is needed, signs in through the browser flow, stores the tokens privately and connects", async () => {
    server = await startOAuthServer();
    const agentDir = join(temp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "mcp.json"),
      JSON.stringify({ mcpServers: { secure: { url: server.url } } }),
    );
    session = await createTestSession({
      agentDir,
      cwd: temp.path,
      settings: { mcp: { startupWaitMs: 30_000, openBrowser: false } },
      script: [
        { text: "before sign-in" },
        { toolCalls: [{ name: "mcp__secure__greet", arguments: { name: "Ada" } }] },
        { text: "done" },
      ] as never,
    });
    await session.prompt("first");
    await session.prompt("/mcp");
    expect(notifications(session)).to.contain("secure: needs-auth");
    expect(session.logs.map((l) => l.message).join("\n")).to.contain("needs sign-in: run /mcp login secure");

    const browser = actAsBrowser(session);
    await session.prompt("/mcp login secure");
    await browser;
    const authFile = join(agentDir, "mcp-auth.json");
    expect(statSync(authFile).mode & 0o777).to.equal(0o600);
    await session.prompt("/mcp");
    expect(notifications(session)).to.contain("secure: connected, http");

    await session.prompt("greet Ada");
    const greet = session.toolCalls().find((c) => c.toolName === "mcp__secure__greet")!;
    expect(greet.isError).to.equal(false);
    expect(JSON.stringify(greet.result!.content)).to.contain("Ada");

    await session.prompt("/mcp logout secure");
    await session.prompt("/mcp");
    expect(
      notifications(session)
        .split("\n")
        .filter((l) => l.startsWith("secure:"))
        .at(-1),
    ).to.contain("needs-auth");
  });
});

/**
 * `registerMcpServer()` throws for an invalid config (extensions.md). The ACP mode registers the servers a client
 * names in `session/new`; one the client describes badly must be skipped with an error while the session's own
 * extension still installs the permission gate, which the built `knightcode acp` shows here: a bash call is still
 * asked about, and the good server's tool still runs.
 */
import type { ContentBlock, RequestPermissionRequest } from "@agentclientprotocol/sdk";
import { expect } from "chai";
import { everythingServer } from "../builtin-extensions/mcp/servers.js";
import { useTempDir } from "../helpers/temp-dir.js";
import { type AcpHarness, acpHarness, toolMessages, toolPerPrompt } from "../hosts/acp/harness.js";

const prompt = (text: string): ContentBlock[] => [{ type: "text", text }];

describe("spec rows: knightcode acp with an MCP server the client describes badly", function () {
  this.timeout(60_000);
  let h: AcpHarness | undefined;
  // Registered before the temp folder's hook: the child stops before its folder goes.
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  const tmp = useTempDir("kc-spec-acp-");

  it("skips the bad server with an error, connects the good one, and still gates bash", async () => {
    h = await acpHarness(tmp.path, { "tools.json": { "classifier-gate": { enabled: true, ask: "bash" } } });
    toolPerPrompt(h.model);
    const asked: RequestPermissionRequest[] = [];
    const acp = await h.start({
      permission: (request) => {
        asked.push(request);
        return { outcome: { outcome: "selected", optionId: "reject_once" } };
      },
    });
    const { sessionId } = await acp.agent.request("session/new", {
      cwd: h.project,
      mcpServers: [
        { type: "http", name: "broken", url: "ftp://mcp.example.test/", headers: [] },
        { name: "everything", command: process.execPath, args: [everythingServer, "stdio"], env: [] },
      ],
    });
    expect(acp.stderr()).to.contain('MCP server "broken" from the ACP client is skipped');
    expect(acp.stderr()).to.contain('"url" must start with http:// or https://');

    await acp.agent.request("session/prompt", {
      sessionId,
      prompt: prompt('mcp__everything__echo: {"message":"still here"}'),
    });
    expect(toolMessages(h.model.requests.at(-1))).to.contain("Echo: still here");

    await acp.agent.request("session/prompt", { sessionId, prompt: prompt('bash: {"command":"echo hi"}') });
    expect(asked).to.have.length(1);
    expect(toolMessages(h.model.requests.at(-1))).to.contain("declined");
  });
});

/**
 * `knightcode --mode json --provider local --model <id> "..."` with a models.json that points a custom provider at a
 * local server speaking the OpenAI Chat Completions wire format: a tool turn, then a text turn.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  DONE,
  textStream,
  toolCallStream,
} from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../helpers/cli.js";
import { startTestServer, type TestServer, writeSse } from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

describe("knightcode --mode json with a models.json provider (OpenAI-compatible server)", () => {
  const tmp = useTempDir("kc-e2e-local-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  it("runs a tool turn and a text turn against the local server", async () => {
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({
        providers: {
          local: {
            baseUrl: `${server.url}/v1`,
            api: "openai-completions",
            apiKey: "LOCAL_TEST_KEY",
            models: [{ id: "qwen-test", contextWindow: 32000, maxTokens: 1024 }],
          },
        },
      }),
    );
    const ext = join(tmp.path, "echo.ts");
    writeFileSync(
      ext,
      `import { Type } from "@sinclair/typebox";
       export default (kc: any) => kc.registerTool({
         name: "echo", description: "Echo", parameters: Type.Object({ text: Type.String() }),
         execute: async (_id: string, p: { text: string }) => ({ content: [{ type: "text", text: "echo:" + p.text }], details: undefined }),
       });`,
    );
    server.respondInOrder(
      (_req, res) => writeSse(res, [...toolCallStream("call_x1", "echo", { text: "hi" })]),
      (_req, res) => writeSse(res, [...textStream("The tool said echo:hi")]),
    );
    const result = await runCli(
      ["--mode", "json", "-e", ext, "--provider", "local", "--model", "qwen-test", "Use the echo tool"],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agentDir, LOCAL_TEST_KEY: "sk-local" } },
    );
    expect(result.code, `${result.stderr}\n${result.stdout.slice(-2000)}`).to.equal(0);
    const records = result.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; [k: string]: any });
    const toolEnd = records.find((r) => r.type === "tool_execution_end")!;
    expect(toolEnd.result.content[0].text).to.equal("echo:hi");
    const finals = records.filter((r) => r.type === "message_end" && r.message.role === "assistant");
    expect(finals.map((r) => r.message.stopReason)).to.deep.equal(["toolUse", "stop"]);
    expect(finals[1].message.content[0].text).to.equal("The tool said echo:hi");
    expect(finals[1].message.provider).to.equal("local");
    expect(server.requests).to.have.length(2);
    expect(server.requests[0]!.path).to.equal("/v1/chat/completions");
    expect(server.requests[0]!.headers.authorization).to.equal("Bearer sk-local");
    expect(server.requests[0]!.body.model).to.equal("qwen-test");
    expect(server.requests[0]!.body.tools.map((t: any) => t.function.name)).to.include("echo");
    const toolMessage = server.requests[1]!.body.messages.find((m: any) => m.role === "tool");
    expect(toolMessage).to.deep.include({ tool_call_id: "call_x1" });
    expect(JSON.stringify(toolMessage.content)).to.contain("echo:hi");
    void DONE;
  });
});

/**
 * The built `knightcode` with the built-in `google` provider: `--mode json --provider google --model ...` with the key
 * in GEMINI_API_KEY and models.json pointing `google` at a local server speaking the Gemini API (an entry with only
 * a baseUrl keeps the built-in catalogue and key). A tool turn with a thought signature, then a text turn.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../../../helpers/cli.js";
import { startTestServer, type TestServer } from "../../../helpers/sse-server.js";
import { useTempDir } from "../../../helpers/temp-dir.js";
import { chunk, textChunks, writeGemini } from "./wire.js";

describe("knightcode --mode json --provider google (built CLI, local Gemini server)", () => {
  const tmp = useTempDir("kc-google-cli-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  function setUp(): { agentDir: string; ext: string } {
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({ providers: { google: { baseUrl: server.url } } }),
    );
    const ext = join(tmp.path, "echo.ts");
    writeFileSync(
      ext,
      `import { Type } from "@sinclair/typebox";
       export default (kc: any) => kc.registerTool({
         name: "echo", description: "Echo", parameters: Type.Object({ text: Type.String() }, { additionalProperties: false }),
         execute: async (_id: string, p: { text: string }) => ({ content: [{ type: "text", text: "echo:" + p.text }], details: undefined }),
       });`,
    );
    return { agentDir, ext };
  }

  it("runs a tool turn and a text turn, sending the call's id and signature back with the functionResponse", async () => {
    const { agentDir, ext } = setUp();
    server.respondInOrder(
      (_req, res) =>
        writeGemini(res, [
          chunk([{ text: "Checking.", thought: true }], { model: "gemini-3-flash-preview" }),
          chunk(
            [
              {
                functionCall: { id: "fc_e2e_1", name: "echo", args: { text: "hi" } },
                thoughtSignature: "ZTJlLXNpZw==",
              },
            ],
            { finishReason: "STOP", usage: { prompt: 300, candidates: 20, thoughts: 10 } },
          ),
        ]),
      (_req, res) =>
        writeGemini(res, textChunks(["The tool said ", "echo:hi"], { prompt: 340, candidates: 8 })),
    );
    const result = await runCli(
      [
        "--mode",
        "json",
        "-e",
        ext,
        "--provider",
        "google",
        "--model",
        "gemini-3-flash-preview",
        "--thinking",
        "high",
        "Use the echo tool",
      ],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agentDir, GEMINI_API_KEY: "gm-e2e-key" } },
    );
    expect(result.code, `${result.stderr}\n${result.stdout.slice(-2000)}`).to.equal(0);
    const records = result.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; [k: string]: any });
    const toolEnd = records.find((r) => r.type === "tool_execution_end")!;
    expect(toolEnd).to.deep.include({ toolCallId: "fc_e2e_1", toolName: "echo" });
    expect(toolEnd.result.content[0].text).to.equal("echo:hi");
    const finals = records.filter((r) => r.type === "message_end" && r.message.role === "assistant");
    expect(finals.map((r) => r.message.stopReason)).to.deep.equal(["toolUse", "stop"]);
    expect(finals[0].message.content).to.deep.equal([
      { type: "thinking", thinking: "Checking." },
      {
        type: "toolCall",
        id: "fc_e2e_1",
        name: "echo",
        arguments: { text: "hi" },
        thoughtSignature: "ZTJlLXNpZw==",
      },
    ]);
    expect(finals[1].message).to.deep.include({ provider: "google", api: "google-generative-ai" });
    expect(finals[1].message.content).to.deep.equal([{ type: "text", text: "The tool said echo:hi" }]);
    // gemini-3-flash-preview: $0.50 input, $3 output per million tokens.
    expect(finals[0].message.usage.cost.total).to.be.closeTo((300 * 0.5 + 30 * 3) / 1e6, 1e-12);

    expect(server.requests).to.have.length(2);
    const [first, second] = server.requests as [(typeof server.requests)[0], (typeof server.requests)[0]];
    expect(first.path).to.equal("/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse");
    expect(first.headers["x-goog-api-key"]).to.equal("gm-e2e-key");
    expect(first.body.generationConfig.thinkingConfig).to.deep.equal({
      thinkingLevel: "HIGH",
      includeThoughts: true,
    });
    const echo = first.body.tools[0].functionDeclarations.find((d: any) => d.name === "echo");
    expect(echo.parameters).to.deep.equal({
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    });
    expect(second.body.contents.slice(-2)).to.deep.equal([
      {
        role: "model",
        parts: [
          { thought: true, text: "Checking." },
          {
            functionCall: { name: "echo", args: { text: "hi" }, id: "fc_e2e_1" },
            thoughtSignature: "ZTJlLXNpZw==",
          },
        ],
      },
      {
        role: "user",
        parts: [{ functionResponse: { name: "echo", response: { output: "echo:hi" }, id: "fc_e2e_1" } }],
      },
    ]);
  });

  it("lists the Gemini models as usable through $GEMINI_API_KEY, and not without it", async () => {
    const { agentDir } = setUp();
    const env = { KNIGHTCODE_AGENT_DIR: agentDir, ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" };
    const listed = await runCli(["--list-models", "gemini-2.5"], {
      cwd: tmp.path,
      env: { ...env, GEMINI_API_KEY: "gm-e2e-key" },
    });
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.match(
      /^google\s+gemini-2\.5-pro\s+1\.05M\s+66k\s+yes\s+yes\s+\$GEMINI_API_KEY$/m,
    );
    expect(listed.stdout).to.match(/^google\s+gemini-2\.5-flash\s/m);
    const bare = await runCli(["--list-models", "gemini-2.5"], {
      cwd: tmp.path,
      env: { ...env, GEMINI_API_KEY: "" },
    });
    expect(bare.stdout).not.to.match(/^google\s/m);
    expect(server.requests).to.have.length(0);
  });
});

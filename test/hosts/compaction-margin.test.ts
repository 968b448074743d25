/**
 * Compaction that frees something (issue 32), through the built CLI in JSON mode against a local server speaking
 * the OpenAI Chat Completions wire, with the small window: 4,000 tokens, `reserveTokens` 1,000,
 * `keepRecentTokens` 700. The server counts prompt tokens over everything it receives (system prompt and tool
 * declarations included), as a real one does. Before the fix the first compaction replaced one 12-character message
 * with a 1,355-character summary, every later request went out over the threshold, and compaction ran before
 * every prompt.
 */
import { join } from "node:path";
import { expect } from "chai";
import { DONE, finishChunk, usageChunk } from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../helpers/cli.js";
import { writeLocalModels } from "../helpers/local-models.js";
import { type RecordedRequest, startTestServer, type TestServer, writeSse } from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

type Rec = { type: string; [key: string]: any };

const THRESHOLD = 3000;
const SUMMARY = "S".repeat(1355);

const isSummaryRequest = (request: RecordedRequest) =>
  String(request.body.messages[0]?.content).includes("condense");

/** Everything the request carries, about four characters a token. */
const tokensOf = (request: RecordedRequest) =>
  Math.ceil(JSON.stringify({ m: request.body.messages, t: request.body.tools ?? [] }).length / 4);

function answer(text: string, prompt: number) {
  return [
    {
      data: {
        id: "c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }],
      },
    },
    finishChunk("stop"),
    usageChunk(prompt, Math.ceil(text.length / 4)),
    DONE,
  ];
}

describe("compaction frees something, or says why it cannot (small window, built CLI)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-compact-margin-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
    // Each answer is about 750 tokens; a summary is 1,355 characters.
    server.respond((req, res) =>
      writeSse(res, answer(isSummaryRequest(req) ? SUMMARY : `answer ${"a".repeat(3000)}`, tokensOf(req))),
    );
  });
  afterEach(() => server.close());

  async function run(agentsChars: number): Promise<Rec[]> {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-local",
      models: [{ id: "m", contextWindow: 4000, maxTokens: 500 }],
    });
    tmp.write(
      "agent/settings.json",
      JSON.stringify({ compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 700 } }),
    );
    // Project notes in the system prompt take a fixed share of every request.
    tmp.write("project/AGENTS.md", `# Notes\n${"w ".repeat(agentsChars / 2)}`);
    const prompts = ["first quest.", "second question", "third question", "fourth q", "fifth q"];
    const { code, stdout, stderr } = await runCli(
      ["--provider", "local", "--model", "m", "--no-session", "--mode", "json", ...prompts],
      { cwd: join(tmp.path, "project"), env: { KNIGHTCODE_AGENT_DIR: agentDir }, timeoutMs: 80_000 },
    );
    expect(code, stderr).to.equal(0);
    return stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec);
  }

  it("keeps every request after a compaction under the threshold, the summary replacing more than it adds", async () => {
    const records = await run(2900);
    const requests = server.requests.filter((r) => !isSummaryRequest(r)).map(tokensOf);
    const ends = records.filter((r) => r.type === "compaction_end");
    expect(ends.length, JSON.stringify(requests)).to.be.greaterThan(0);
    for (const end of ends) expect(end.result, end.errorMessage).to.be.an("object");
    // The first request goes out before any compaction; every later one is under the threshold.
    for (const tokens of requests) expect(tokens, JSON.stringify(requests)).to.be.below(THRESHOLD);
    // Each summary request summarised more than the summary it got back.
    for (const request of server.requests.filter(isSummaryRequest)) {
      expect(tokensOf(request)).to.be.greaterThan(SUMMARY.length / 4);
    }
  });

  it("does not compact when no compaction can get under the threshold, and says so once", async () => {
    // The system prompt alone is about as large as the threshold: no summary can bring the context under it.
    const records = await run(7000);
    expect(server.requests.filter(isSummaryRequest)).to.have.length(0);
    const ends = records.filter((r) => r.type === "compaction_end");
    expect(ends).to.have.length(1);
    expect(ends[0]!.errorMessage).to.match(/^Not compacting: even a compaction that keeps only the newest/);
    expect(ends[0]!.errorMessage).to.contain("over the compaction threshold (3000 tokens)");
    expect(records.filter((r) => r.type === "message_end" && r.message.role === "assistant")).to.have.length(
      5,
    );
  });
});

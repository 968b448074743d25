/**
 * Compaction end to end through the built CLI: the threshold and overflow triggers against a local server speaking
 * the OpenAI Chat Completions wire with a small context window (JSON mode), the compaction records checked against
 * json.md field by field, and the RPC `compact` command (scripted provider: the wire does not matter there).
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  DONE,
  finishChunk,
  textStream,
  toolCallChunks,
  usageChunk,
} from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin, runCli } from "../helpers/cli.js";
import { writeLocalModels } from "../helpers/local-models.js";
import { RpcProcess } from "../helpers/rpc-process.js";
import {
  type RecordedRequest,
  startTestServer,
  type TestServer,
  writeJsonError,
  writeSse,
} from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

type Rec = { type: string; [key: string]: any };

/** A tool whose result is 4,000 characters (about 1,000 tokens): two calls fill the small window. */
const BULKY_TOOL = `import { Type } from "@sinclair/typebox";
export default (kc: any) => kc.registerTool({
  name: "bulky", description: "Returns a lot of text", parameters: Type.Object({ n: Type.Number() }),
  execute: async (_id: string, p: { n: number }) => ({
    content: [{ type: "text", text: "RESULT" + p.n + " " + "x".repeat(4000) }], details: undefined,
  }),
});`;

/** Prompt tokens as a real server would count them (messages other than the system prompt, ~4 chars a token). */
function promptTokens(request: RecordedRequest): number {
  const messages = request.body.messages.filter((m: { role: string }) => m.role !== "system");
  return Math.ceil(JSON.stringify(messages).length / 4);
}

const isSummaryRequest = (request: RecordedRequest) =>
  String(request.body.messages[0]?.content).includes("condense");

function bulkyCall(request: RecordedRequest, n: number) {
  return [
    ...toolCallChunks(0, `call_${n}`, "bulky", { n }),
    finishChunk("tool_calls"),
    usageChunk(promptTokens(request), 12),
    DONE,
  ];
}

/** The keys of json.md's `compaction_end` example, and of its `result`. */
const END_KEYS = ["type", "reason", "result", "aborted", "willRetry"];
const RESULT_KEYS = [
  "summary",
  "firstKeptEntryId",
  "tokensBefore",
  "estimatedTokensAfter",
  "usage",
  "details",
];

describe("compaction through the CLI", () => {
  const tmp = useTempDir("kc-compaction-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  function setup(contextWindow: number, compaction: Record<string, unknown>) {
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_TEST_KEY",
      models: [{ id: "small", contextWindow, maxTokens: 512 }],
    });
    writeFileSync(
      join(agentDir, "settings.json"),
      JSON.stringify({ compaction, retry: { baseDelayMs: 1, maxDelayMs: 10 } }),
    );
    const ext = join(tmp.path, "bulky.ts");
    writeFileSync(ext, BULKY_TOOL);
    return async (prompt: string) => {
      const result = await runCli(
        ["--mode", "json", "-e", ext, "--provider", "local", "--model", "small", "--no-session", prompt],
        { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agentDir, LOCAL_TEST_KEY: "sk-local" } },
      );
      expect(result.code, `${result.stderr}\n${result.stdout.slice(-2000)}`).to.equal(0);
      return result.stdout
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as Rec);
    };
  }

  it("compacts before a request once the context passes contextWindow - reserveTokens (3,000 - 1,000)", async () => {
    const run = setup(3000, { reserveTokens: 1000, keepRecentTokens: 500 });
    server.respond((request, res) => {
      if (isSummaryRequest(request)) return writeSse(res, textStream("WIRE SUMMARY", [900, 20]));
      const calls = server.requests.filter((r) => !isSummaryRequest(r)).length;
      if (calls <= 2) return writeSse(res, bulkyCall(request, calls));
      return writeSse(res, textStream("All done", [promptTokens(request), 5]));
    });
    const records = await run("Call bulky twice");

    const start = records.filter((r) => r.type === "compaction_start");
    expect(start).to.deep.equal([{ type: "compaction_start", reason: "threshold" }]);
    const end = records.find((r) => r.type === "compaction_end")!;
    expect(Object.keys(end)).to.deep.equal(END_KEYS);
    expect(end).to.deep.include({ reason: "threshold", aborted: false, willRetry: false });
    expect(Object.keys(end.result)).to.deep.equal(RESULT_KEYS);
    expect(end.result.summary).to.equal("WIRE SUMMARY");
    expect(end.result.tokensBefore).to.be.greaterThan(2000);
    expect(end.result.estimatedTokensAfter).to.be.lessThan(end.result.tokensBefore);
    expect(end.result.details).to.deep.equal({ readFiles: [], modifiedFiles: [] });
    expect(end.result.usage).to.include({ input: 900, output: 20 });

    // Requests: two tool turns, the summary, then the turn that follows it with the summary and the kept part.
    expect(server.requests).to.have.length(4);
    const summaryInput = String(server.requests[2]!.body.messages.at(-1).content);
    expect(summaryInput).to.contain("[User]: Call bulky twice").and.contain("RESULT1");
    // Tool results are shortened in the summary input.
    expect(summaryInput).to.contain("more characters left out").and.not.contain("x".repeat(2100));
    const after = JSON.stringify(server.requests[3]!.body.messages);
    expect(after).to.contain("WIRE SUMMARY").and.contain("RESULT2").and.not.contain("RESULT1");
    // The kept part starts at the assistant's call, so its result is never without it.
    const roles = server.requests[3]!.body.messages.map((m: { role: string }) => m.role);
    expect(roles).to.deep.equal(["system", "user", "assistant", "tool"]);
    expect(records.at(-1)).to.deep.include({ type: "agent_settled" });
  });

  it("recovers from a context overflow: compacts, then retries the request once (willRetry)", async () => {
    const run = setup(100_000, { reserveTokens: 1000, keepRecentTokens: 500 });
    let overflowed = false;
    server.respond((request, res) => {
      if (isSummaryRequest(request)) return writeSse(res, textStream("OVERFLOW SUMMARY"));
      const calls = server.requests.filter((r) => !isSummaryRequest(r)).length;
      if (calls <= 2) return writeSse(res, bulkyCall(request, calls));
      if (!overflowed) {
        overflowed = true;
        return writeJsonError(res, 400, {
          error: {
            message: "This model's maximum context length is 3000 tokens",
            type: "invalid_request_error",
          },
        });
      }
      return writeSse(res, textStream("Answered after compaction"));
    });
    const records = await run("Call bulky twice");
    const types = records.map((r) => r.type);
    const agentEnds = records.filter((r) => r.type === "agent_end");
    expect(agentEnds.map((r) => r.willRetry)).to.deep.equal([true, false]);
    const start = types.indexOf("compaction_start");
    expect(start).to.be.greaterThan(types.indexOf("agent_end"));
    expect(records[start]).to.deep.equal({ type: "compaction_start", reason: "overflow" });
    const end = records.find((r) => r.type === "compaction_end")!;
    expect(Object.keys(end)).to.deep.equal(END_KEYS);
    expect(end).to.deep.include({ reason: "overflow", aborted: false, willRetry: true });
    expect(server.requests).to.have.length(5);
    expect(JSON.stringify(server.requests[4]!.body.messages))
      .to.contain("OVERFLOW SUMMARY")
      .and.not.contain("RESULT1");
    const final = records.filter((r) => r.type === "message_end").at(-1)!;
    expect(final.message.content[0].text).to.equal("Answered after compaction");
  });

  it("a failing summary retries with back-off, then compaction_end carries errorMessage", async () => {
    const run = setup(3000, { reserveTokens: 1000, keepRecentTokens: 500 });
    server.respond((request, res) => {
      if (isSummaryRequest(request)) return writeJsonError(res, 529, { error: { message: "overloaded" } });
      const calls = server.requests.filter((r) => !isSummaryRequest(r)).length;
      if (calls <= 2) return writeSse(res, bulkyCall(request, calls));
      return writeSse(res, textStream("Went on without compacting"));
    });
    const records = await run("Call bulky twice");
    const retry = records.filter((r) => r.type.startsWith("summarization_retry"));
    expect(retry.map((r) => r.type)).to.deep.equal([
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_finished",
    ]);
    expect(Object.keys(retry[0]!)).to.deep.equal([
      "type",
      "attempt",
      "maxAttempts",
      "delayMs",
      "errorMessage",
    ]);
    expect(retry[0]).to.deep.include({ attempt: 1, maxAttempts: 3, delayMs: 1 });
    expect(retry[1]).to.deep.equal({
      type: "summarization_retry_attempt_start",
      source: "compaction",
      reason: "threshold",
    });
    expect(retry[6]).to.deep.equal({ type: "summarization_retry_finished" });
    const end = records.find((r) => r.type === "compaction_end")!;
    expect(Object.keys(end)).to.deep.equal(["type", "reason", "aborted", "willRetry", "errorMessage"]);
    expect(end).to.deep.include({ reason: "threshold", aborted: false, willRetry: false });
    expect(end.errorMessage).to.contain("overloaded");
    // The turn still ran: a failed threshold compaction does not stop the request.
    expect(records.filter((r) => r.type === "message_end").at(-1)!.message.content[0].text).to.equal(
      "Went on without compacting",
    );
  });
});

describe("RPC compact", () => {
  const tmp = useTempDir("kc-rpc-compact-");
  const running: RpcProcess[] = [];
  afterEach(() => {
    for (const p of running.splice(0)) p.kill();
  });

  it("compacts with custom instructions and answers with the result", async () => {
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 10 } }));
    const long = (word: string) => `${word} `.repeat(40);
    const script = join(tmp.path, "script.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          { text: long("first") },
          { text: long("second") },
          { text: "RPC SUMMARY", expect: { lastUserTextContains: "Focus of this summary: the tests" } },
        ],
      }),
    );
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--provider", "scripted", "--script", script, "--no-session"],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir } },
    );
    const p = new RpcProcess(child);
    running.push(p);
    for (const [i, text] of [long("one"), long("two")].entries()) {
      await p.request(`p${i}`, "prompt", { message: text });
      await p.waitFor(
        (r) => r.type === "agent_settled" && p.records.filter((x) => x.type === "agent_settled").length > i,
      );
    }
    const response = await p.request("c", "compact", { customInstructions: "the tests" });
    expect(response).to.deep.include({ type: "response", command: "compact", success: true });
    expect(Object.keys(response.data as object)).to.deep.equal(RESULT_KEYS);
    expect((response.data as { summary: string }).summary).to.equal("RPC SUMMARY");
    expect(p.records.filter((r) => r.type === "compaction_start")).to.deep.equal([
      { type: "compaction_start", reason: "manual" },
    ]);
    const bad = await p.request("b", "compact", { customInstructions: 5 });
    expect(bad).to.deep.include({ success: false, command: "compact" });
    // Nothing older than keepRecentTokens is left: a clear error, not a silent success.
    const again = await p.request("a", "compact");
    expect(again).to.deep.include({ success: false });
    expect(String(again.error)).to.contain("Nothing to compact");
    expect(await p.end()).to.equal(0);
  });
});

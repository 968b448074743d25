/**
 * A model that streams a big `write` call in tiny pieces, through the built `knightcode --mode json` and a local
 * OpenAI-compatible server: a 2 MB argument in 4-character deltas (530,000 of them) made 48 MB of JSON-mode output,
 * one `message_update` with its cumulative `usage` per delta. The output must stay a small multiple of the argument
 * (the complete call is rightly repeated in `toolcall_end`, `message_end`, `tool_execution_start`, `turn_end` and
 * `agent_end`), the file must be written whole, and a reader appending the deltas must get the argument back.
 */

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { startTestServer, type TestServer } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const sse = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  sse({
    id: "chatcmpl-args",
    object: "chat.completion.chunk",
    created: 1741570283,
    model: "args",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

/** Streams one `write` call whose arguments are `args`, `size` characters per delta, in batches as a server does. */
async function streamCall(res: ServerResponse, args: string, size: number): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  let batch =
    chunk({ role: "assistant", content: null }) +
    chunk({
      tool_calls: [
        { index: 0, id: "call_big", type: "function", function: { name: "write", arguments: "" } },
      ],
    });
  for (let at = 0; at < args.length; at += size) {
    batch += chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(at, at + size) } }] });
    if (batch.length > 256 * 1024) {
      if (!res.write(batch)) await new Promise((resolve) => res.once("drain", resolve));
      batch = "";
    }
    if (res.destroyed) return;
  }
  res.end(batch + chunk({}, "tool_calls") + sse("[DONE]"));
}

/** Runs the CLI, counting stdout bytes; under GNU time when there is one, for the peak RSS. */
function runMeasured(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string; peakKb?: number }> {
  const time = existsSync("/usr/bin/time");
  const argv = [process.execPath, cliBin, ...args];
  const child = time
    ? spawn("/usr/bin/time", ["-f", "peak-kb %M", ...argv], { cwd, env: { ...process.env, ...env } })
    : spawn(argv[0]!, argv.slice(1), { cwd, env: { ...process.env, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  child.stdin.end();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`knightcode did not finish in time\n${stderr.slice(-2000)}`));
    }, 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const peak = /peak-kb (\d+)\s*$/.exec(stderr);
      resolve({ code, stdout, stderr, ...(peak ? { peakKb: Number(peak[1]) } : {}) });
    });
  });
}

describe("knightcode --mode json: a tool call's arguments streamed in tiny deltas", function () {
  this.timeout(150_000);
  const tmp = useTempDir("kc-tool-args-");
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  it("keeps the output of a 2 MB write streamed in 4-character deltas a small multiple of the argument", async () => {
    const line = `${"x".repeat(63)}\n`;
    const content = line.repeat((2 * 1024 * 1024) / line.length);
    const args = JSON.stringify({ path: "big.txt", content });
    server.respondInOrder(
      (_req, res) => streamCall(res, args, 4),
      (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(chunk({ content: "Written." }) + chunk({}, "stop") + sse("[DONE]"));
      },
    );
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({
        providers: {
          local: {
            baseUrl: `${server.url}/v1`,
            api: "openai-completions",
            models: [{ id: "args", contextWindow: 1_000_000_000, maxTokens: 1_000_000_000 }],
          },
        },
      }),
    );
    const result = await runMeasured(
      ["--mode", "json", "--provider", "local", "--model", "args", "--no-session", "Write the file"],
      tmp.path,
      { KNIGHTCODE_AGENT_DIR: agentDir },
    );
    expect(result.code, result.stderr.slice(-2000)).to.equal(0);
    expect(readFileSync(join(tmp.path, "big.txt"), "utf8")).to.equal(content);

    const records = result.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; [k: string]: any });
    const deltas = records.filter((r) => r.assistantMessageEvent?.type === "toolcall_delta");
    expect(deltas.map((r) => r.assistantMessageEvent.delta).join("")).to.equal(args);
    for (const record of deltas)
      expect(Object.keys(record)).to.deep.equal(["type", "usage", "assistantMessageEvent"]);
    // Six copies of the argument are expected (the deltas and five complete records); one record per delta
    // made it 24 times the argument.
    const outputBytes = Buffer.byteLength(result.stdout);
    expect(outputBytes, `${(outputBytes / 1e6).toFixed(1)} MB of output`).to.be.below(8 * args.length);
    expect(deltas.length, "one record per 4-character delta").to.be.below(args.length / 400);
    // A sanity bound on memory (Node and the CLI alone take about 100 MB), measured when GNU time is there.
    if (result.peakKb !== undefined) expect(result.peakKb / 1024, "peak RSS in MB").to.be.below(400);
  });
});

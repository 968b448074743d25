/**
 * A long run keeps its requests bounded by compacting: one prompt whose answer is 499 tool-call turns and a final
 * text turn, against a local server on 127.0.0.1 speaking the OpenAI Chat Completions wire, for a model with a
 * 16,384-token window (`compaction.reserveTokens` 4,096, `keepRecentTokens` 4,000). Each tool result is about 800
 * tokens, so the conversation grows to about 400,000 tokens and must be compacted again and again. The server counts
 * each request's tokens the way the context is estimated (about four characters a token, system prompt and tool
 * declarations included) and reports them as usage. Prints the largest request, the compactions, and the time.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { createAgentSession, createStandardKernel } from "../hosts/sdk/create-agent-session.js";
import type { ExtensionAPI } from "../kernel/index.js";

const TURNS = 500;
const WINDOW = 16_384;
const RESULT_CHARS = 3_200;

function bulkyTool(kc: ExtensionAPI): void {
  kc.registerTool({
    name: "bulky",
    label: "bulky",
    description: "Returns a page of text",
    parameters: Type.Object({ n: Type.Number() }),
    execute: async (_id, params) => ({
      content: [{ type: "text", text: `page ${params.n}: ${"lorem ipsum ".repeat(RESULT_CHARS / 12)}` }],
      details: undefined,
    }),
  });
}

const sse = (res: ServerResponse, chunks: unknown[]) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  res.end("data: [DONE]\n\n");
};

const delta = (d: unknown, finish: string | null = null) => ({
  id: "b",
  object: "chat.completion.chunk",
  created: 0,
  model: "long",
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});

export async function compactionBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "kc-bench-compaction-"));
  let largest = 0;
  let requests = 0;
  let summaries = 0;
  let calls = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    const body = JSON.parse(text) as { messages: { content: unknown }[]; tools?: unknown };
    const tokens = Math.ceil(
      (JSON.stringify(body.messages).length + JSON.stringify(body.tools ?? []).length) / 4,
    );
    const usage = { prompt_tokens: tokens, completion_tokens: 20, total_tokens: tokens + 20 };
    const summary = String(body.messages[0]?.content).includes("condense");
    if (summary) {
      summaries++;
      return sse(res, [
        delta({ role: "assistant", content: "Pages were read; keep reading." }, "stop"),
        { ...delta({}), choices: [], usage },
      ]);
    }
    requests++;
    largest = Math.max(largest, tokens);
    if (calls >= TURNS - 1)
      return sse(res, [
        delta({ role: "assistant", content: "done" }, "stop"),
        { ...delta({}), choices: [], usage },
      ]);
    calls++;
    const call = {
      index: 0,
      id: `call_${calls}`,
      type: "function",
      function: { name: "bulky", arguments: JSON.stringify({ n: calls }) },
    };
    return sse(res, [
      delta({ role: "assistant", content: null, tool_calls: [call] }, "tool_calls"),
      { ...delta({}), choices: [], usage },
    ]);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        local: {
          baseUrl: `http://127.0.0.1:${port}/v1`,
          api: "openai-completions",
          apiKey: "bench",
          models: [{ id: "long", contextWindow: WINDOW, maxTokens: 1024 }],
        },
      },
    }),
  );
  const kernel = await createStandardKernel({ agentDir, cacheDir: false });
  const warnings: string[] = [];
  let compactions = 0;
  let failed = 0;
  try {
    const handle = await createAgentSession({
      cwd: dir,
      agentDir,
      kernel,
      provider: "local",
      model: "long",
      tools: ["bulky"],
      session: { inMemory: true },
      settings: { compaction: { reserveTokens: 4096, keepRecentTokens: 4000 } },
      extensions: [bulkyTool],
      warn: (message) => warnings.push(message),
    });
    handle.subscribe((event) => {
      if (event.type === "compaction_end") {
        if (event.result) compactions++;
        else failed++;
      }
    });
    const start = process.hrtime.bigint();
    try {
      await handle.prompt("Read every page");
    } finally {
      await handle.dispose();
    }
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (requests !== TURNS || failed > 0) {
      throw new Error(
        `compaction bench: ${requests} of ${TURNS} requests, ${failed} failed compactions; ${warnings.join("; ")}`,
      );
    }
    console.log(
      `compaction: ${TURNS} turns, tool results of ~${RESULT_CHARS / 4} tokens, ${WINDOW}-token window`,
    );
    console.log(
      `  largest request ${largest} tokens (${((largest / WINDOW) * 100).toFixed(0)} % of the window), ` +
        `${compactions} compactions (${summaries} summary requests), ${(ms / 1000).toFixed(1)} s`,
    );
  } finally {
    await kernel.dispose();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `knightcode acp` as an editor meets it: the built CLI on stdio, driven by the ACP SDK's client side, against a
 * local OpenAI-compatible model server on 127.0.0.1. For 5 fresh processes: the time from spawn to the answer of
 * `initialize` (what an editor waits for before it shows the agent) and of `session/new`; then, in the last one,
 * 20 prompts: the time from the model server writing its first text byte to the client receiving the first
 * `agent_message_chunk` (both clocks are this process's), median and worst. Targets: initialize ≤ 1 s, first
 * chunk ≤ 20 ms. Run alone with `npm run bench -- acp` (builds dist/ first when it is missing).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist", "hosts", "cli", "main.js");
const PROCESSES = 5;
const TURNS = 20;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number) => `${value.toFixed(1)} ms`;

export async function acpBench(): Promise<void> {
  if (!existsSync(cli)) execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
  const dir = mkdtempSync(join(tmpdir(), "kc-bench-acp-"));
  const firstByteAt: number[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "b", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const model = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      firstByteAt.push(performance.now());
      res.write(chunk({ role: "assistant", content: "Hello" }));
      res.write(chunk({ content: " from the bench" }));
      res.end(`${chunk({}, "stop")}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
  const agentDir = join(dir, "agent");
  const project = join(dir, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(project);
  const { port } = model.address() as AddressInfo;
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        local: {
          api: "openai-completions",
          baseUrl: `http://127.0.0.1:${port}/v1`,
          apiKey: "sk-bench",
          models: [{ id: "m", contextWindow: 32000, maxTokens: 1024 }],
        },
      },
    }),
  );
  const children: ChildProcess[] = [];
  try {
    const initialize: number[] = [];
    const newSession: number[] = [];
    const firstChunk: number[] = [];
    for (let p = 0; p < PROCESSES; p++) {
      const started = performance.now();
      const child = spawn(process.execPath, [cli, "acp", "--provider", "local", "--model", "m"], {
        cwd: project,
        env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir },
        stdio: ["pipe", "pipe", "inherit"],
      });
      children.push(child);
      let chunkAt: number | undefined;
      const connection = client({ name: "bench" })
        .onNotification("session/update", ({ params }) => {
          if (params.update.sessionUpdate === "agent_message_chunk") chunkAt ??= performance.now();
        })
        .connect(
          ndJsonStream(
            Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
            Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
          ),
        );
      await connection.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      initialize.push(performance.now() - started);
      const before = performance.now();
      const { sessionId } = await connection.agent.request("session/new", { cwd: project, mcpServers: [] });
      newSession.push(performance.now() - before);
      if (p === PROCESSES - 1) {
        for (let t = 0; t < TURNS; t++) {
          chunkAt = undefined;
          await connection.agent.request("session/prompt", {
            sessionId,
            prompt: [{ type: "text", text: `turn ${t}` }],
          });
          if (chunkAt !== undefined) firstChunk.push(chunkAt - firstByteAt.at(-1)!);
        }
      }
      child.stdin!.end();
      await new Promise((resolve) => child.once("close", resolve));
      connection.close();
    }
    console.log(`acp: ${PROCESSES} fresh processes, ${TURNS} prompts in the last`);
    console.log(
      `  spawn to initialize answer: median ${ms(median(initialize))}, worst ${ms(Math.max(...initialize))} (target ≤ 1000 ms)`,
    );
    console.log(`  session/new: median ${ms(median(newSession))}, worst ${ms(Math.max(...newSession))}`);
    console.log(
      `  model's first byte to first agent_message_chunk: median ${ms(median(firstChunk))}, worst ${ms(Math.max(...firstChunk))} (target ≤ 20 ms)`,
    );
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

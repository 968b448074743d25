/**
 * What the CLI bench (cli.bench.ts) and the start-up profile (cli-profile.ts) both run: a local Chat Completions
 * server and an agent folder whose `models.json` points at it, for a two-turn JSON run that calls `read` once.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export interface ChatServer {
  url: string;
  /** performance.now() of each request's arrival since the last call of takeArrivals(), then cleared. */
  takeArrivals(): number[];
  close(): Promise<void>;
}

/**
 * A Chat Completions server on 127.0.0.1: a request whose conversation has no tool result yet gets one call of
 * `read`, the next gets a short text answer, both streamed as the SSE chunks such servers send.
 */
export async function startChatServer(): Promise<ChatServer> {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: "chatcmpl-bench",
      object: "chat.completion.chunk",
      created: 1741570283,
      model: "bench-model",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })}\n\n`;
  let arrivals: number[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    arrivals.push(performance.now());
    let body = "";
    for await (const part of req) body += part;
    const messages = (JSON.parse(body) as { messages: { role: string }[] }).messages;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(chunk({ role: "assistant", content: "" }));
    if (messages.some((m) => m.role === "tool")) {
      res.write(chunk({ content: "The file says hello." }));
      res.write(chunk({}, "stop"));
    } else {
      res.write(
        chunk({
          tool_calls: [
            {
              index: 0,
              id: "call_bench",
              type: "function",
              function: { name: "read", arguments: JSON.stringify({ path: "hello.txt" }) },
            },
          ],
        }),
      );
      res.write(chunk({}, "tool_calls"));
    }
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    takeArrivals: () => {
      const taken = arrivals;
      arrivals = [];
      return taken;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The arguments of the two-turn JSON run against the local server (`local` provider, `bench-model`). */
export const LOCAL_RUN = [
  "--mode",
  "json",
  "--no-session",
  "--provider",
  "local",
  "--model",
  "bench-model",
  "Read hello.txt",
];

/**
 * Writes `<dir>/agent/models.json` (a `local` provider at the server) and `<dir>/hello.txt`; returns the agent
 * folder, for KNIGHTCODE_AGENT_DIR. The run's working directory is `dir`.
 */
export function writeLocalRunFixture(dir: string, serverUrl: string): string {
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        local: {
          baseUrl: `${serverUrl}/v1`,
          api: "openai-completions",
          models: [{ id: "bench-model", contextWindow: 32000, maxTokens: 1024 }],
        },
      },
    }),
  );
  writeFileSync(join(dir, "hello.txt"), "hello\n");
  return agentDir;
}

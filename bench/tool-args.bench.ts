/**
 * A model that writes a big file: a local OpenAI-compatible server streams one `write` call whose `content` is 1, 10
 * and 30 MB, split into argument deltas of DELTA_BYTES as a model streams tokens, and 2 MB in 4-byte deltas (the
 * reliability issue's case: 530,000 deltas), then answers the next request with a short text. The built `knightcode --mode json` runs it; the row shows wall time, peak RSS (GNU time, when
 * present, with the CPU time, which a busy machine disturbs less) and the bytes of JSON-mode output, which must grow linearly with the argument (json.md: `message_update`
 * is delta-only). Needs `npm run build` first. `KC_BENCH_TOOL_ARGS_MB=1,4,2@4` (`MB@delta bytes`) and
 * `KC_BENCH_DELTA_BYTES=4` (the default delta) change the sizes.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../dist/hosts/cli/main.js", import.meta.url));
const useTime = existsSync("/usr/bin/time");
/** About four tokens of a model's output per delta. */
const DELTA_BYTES = Number(process.env.KC_BENCH_DELTA_BYTES ?? 16);
const CASES = (process.env.KC_BENCH_TOOL_ARGS_MB ?? "1,10,30,2@4").split(",").map((entry) => {
  const [mb, delta] = entry.split("@");
  return { megabytes: Number(mb), deltaBytes: delta ? Number(delta) : DELTA_BYTES };
});
/** A run that takes longer than this is stopped and reported as such. */
const LIMIT_MS = 300_000;

function sse(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return sse({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1741570283,
    model: "bench",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
}

/** Streams the call, writing events in batches and waiting for the socket to drain, as a real server does. */
async function streamWrite(res: ServerResponse, megabytes: number, deltaBytes: number): Promise<number> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const line = `${"x".repeat(63)}\n`;
  const content = line.repeat(Math.ceil((megabytes * 1024 * 1024) / line.length));
  const args = JSON.stringify({ path: "big.txt", content });
  let batch =
    chunk({ role: "assistant", content: null }) +
    chunk({
      tool_calls: [
        { index: 0, id: "call_big", type: "function", function: { name: "write", arguments: "" } },
      ],
    });
  let deltas = 0;
  for (let at = 0; at < args.length; at += deltaBytes) {
    batch += chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(at, at + deltaBytes) } }] });
    deltas++;
    if (batch.length > 256 * 1024) {
      if (!res.write(batch)) await new Promise((resolve) => res.once("drain", resolve));
      batch = "";
    }
    if (res.destroyed) return deltas;
  }
  res.end(batch + chunk({}, "tool_calls") + sse("[DONE]"));
  return deltas;
}

interface Row {
  megabytes: number;
  deltaBytes: number;
  deltas: number;
  ms: number;
  peakMb?: number;
  /** User and system CPU time of the process: steadier than wall time on a busy machine. */
  cpuMs?: number;
  outputBytes: number;
  outcome: string;
}

async function run(megabytes: number, deltaBytes: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), "kc-bench-tool-args-"));
  let deltas = 0;
  let requests = 0;
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    if (requests++ === 0) deltas = await streamWrite(res, megabytes, deltaBytes);
    else {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(chunk({ content: "Written." }) + chunk({}, "stop") + sse("[DONE]"));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const agentDir = join(dir, "agent");
    mkdirSync(agentDir);
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({
        providers: {
          local: {
            baseUrl: `http://127.0.0.1:${port}/v1`,
            api: "openai-completions",
            models: [{ id: "bench", contextWindow: 1_000_000_000, maxTokens: 1_000_000_000 }],
          },
        },
      }),
    );
    const argv = [process.execPath, bin, "--mode", "json", "--provider", "local", "--model", "bench"];
    argv.push("--no-session", "Write the file");
    const started = performance.now();
    const env = { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir };
    // Its own process group, so a run over the limit is stopped with GNU time's child, not only GNU time.
    const child = useTime
      ? spawn("/usr/bin/time", ["-f", "%M %U %S", ...argv], { cwd: dir, env, detached: true })
      : spawn(argv[0]!, argv.slice(1), { cwd: dir, env, detached: true });
    let outputBytes = 0;
    let stderr = "";
    child.stdout.on("data", (data: Buffer) => {
      outputBytes += data.length;
    });
    child.stderr.on("data", (data: Buffer) => {
      stderr += data;
    });
    child.stdin.end();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, "SIGKILL");
    }, LIMIT_MS);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearTimeout(timer);
    const ms = performance.now() - started;
    const [kb, user, sys] = useTime
      ? (stderr.trim().split("\n").at(-1) ?? "").split(" ").map(Number)
      : [Number.NaN, Number.NaN, Number.NaN];
    const written = existsSync(join(dir, "big.txt")) ? statSync(join(dir, "big.txt")).size : 0;
    const outcome = timedOut
      ? `stopped after ${LIMIT_MS / 1000} s`
      : code === 0
        ? `exit 0, wrote ${(written / 1024 / 1024).toFixed(1)} MB`
        : `exit ${code}: ${stderr.trim().split("\n").slice(-2).join(" ").slice(0, 160)}`;
    return {
      megabytes,
      deltaBytes,
      deltas,
      ms,
      ...(Number.isFinite(kb) && !timedOut ? { peakMb: kb! / 1024, cpuMs: (user! + sys!) * 1000 } : {}),
      outputBytes,
      outcome,
    };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function toolArgsBench(): Promise<void> {
  console.log(
    "tool-args: knightcode --mode json, one streamed write call (argument deltas of the given bytes) from a local server",
  );
  console.log("  argument   delta     deltas  wall time   CPU time   peak RSS   JSON-mode output   outcome");
  for (const { megabytes, deltaBytes } of CASES) {
    const row = await run(megabytes, deltaBytes);
    console.log(
      `  ${`${row.megabytes} MB`.padEnd(9)}  ${`${row.deltaBytes} B`.padStart(5)}  ${String(row.deltas).padStart(9)}  ${`${(row.ms / 1000).toFixed(1)} s`.padStart(9)}` +
        `  ${row.cpuMs === undefined ? "        -" : `${(row.cpuMs / 1000).toFixed(1)} s`.padStart(9)}` +
        `  ${row.peakMb === undefined ? "        -" : `${row.peakMb.toFixed(0)} MB`.padStart(9)}` +
        `   ${`${(row.outputBytes / 1024 / 1024).toFixed(1)} MB`.padStart(16)}   ${row.outcome}`,
    );
  }
}

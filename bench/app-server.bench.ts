/**
 * The app-server under load, driven as a client drives it (the built `knightcode app-server` on stdio, a local
 * OpenAI-compatible model server on 127.0.0.1):
 * - memory: 100 threads loaded in one process (each its own session and extension instances), one prompt each,
 *   all idle at the end: the server's RSS before and after, per-thread memory, and its peak RSS (VmHWM);
 *   target ≤ 300 MB for the 100 idle loaded threads;
 * - first delta: the time from the model server writing its first text byte to the client receiving the first
 *   `item/agentMessage/delta` (both clocks are this process's), median and worst of 20 turns; target ≤ 20 ms;
 * - thread/list over 10,000 session files (100 folders of 100), as the client sees the round trip: the first call
 *   right after initialize (the catalogue's warm-up still running) and 1 s later (done), then the next calls;
 *   target ≤ 200 ms.
 * - the editor side (app-server-editor.ts): thread/diff/read and thread/diff/revert on 3 and 1,000 changed files
 *   (target ≤ 100 ms on 3), and fuzzyFileSearch over 100,000 files.
 * Run alone with `npm run bench -- app-server` (builds dist/ first when it is missing).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnAppServer } from "../hosts/sdk/app-server-client.js";
import { cwdSessionDir, sessionFileName } from "../plugins/session-store/paths.js";
import { editorBench } from "./app-server-editor.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist", "hosts", "cli", "main.js");
const THREADS = 100;
const LATENCY_TURNS = 20;
const LIST_FOLDERS = 100;
const LIST_PER_FOLDER = 100;

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A chat-completions stream; `firstByteAt` records when the first text chunk was written. */
function startModel(): Promise<{ url: string; firstByteAt: number[]; close(): void }> {
  const firstByteAt: number[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "b", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: "" }));
      firstByteAt.push(performance.now());
      res.write(chunk({ content: "Hello" }));
      setTimeout(() => {
        res.write(chunk({ content: " there" }));
        res.write(chunk({}, "stop"));
        res.end("data: [DONE]\n\n");
      }, 5);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        firstByteAt,
        close: () => {
          server.closeAllConnections();
          server.close();
        },
      }),
    ),
  );
}

function agentDirFor(dir: string, modelUrl: string): string {
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        local: {
          api: "openai-completions",
          baseUrl: `${modelUrl}/v1`,
          apiKey: "BENCH_KEY",
          models: [{ id: "m", contextWindow: 32000, maxTokens: 1024 }],
        },
      },
    }),
  );
  writeFileSync(
    join(agentDir, "settings.json"),
    JSON.stringify({ retry: { enabled: false }, defaultProvider: "local", defaultModel: "m" }),
  );
  return agentDir;
}

function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

function start(agentDir: string, cwd: string) {
  return spawnAppServer({
    command: process.execPath,
    args: [cli, "app-server"],
    cwd,
    env: {
      ...process.env,
      KNIGHTCODE_AGENT_DIR: agentDir,
      BENCH_KEY: "k",
      KNIGHTCODE_APP_SERVER_UNLOAD_MS: "3600000",
    },
    timeoutMs: 60_000,
  });
}

async function memoryAndLatency(dir: string): Promise<void> {
  const model = await startModel();
  const agentDir = agentDirFor(dir, model.url);
  const project = join(dir, "project");
  mkdirSync(project, { recursive: true });
  const server = start(agentDir, dir);
  try {
    const { client } = server;
    await client.initialize("bench", "1");
    const before = (await client.request("server/diagnostics", {})).process.residentMemoryBytes;
    const started = performance.now();
    for (let i = 0; i < THREADS; i++) {
      const { thread } = await client.request("thread/start", { cwd: project });
      const done = client.waitFor("turn/completed", (p) => p.threadId === thread.id);
      await client.request("turn/start", {
        threadId: thread.id,
        input: [{ type: "text", text: `Prompt ${i}` }],
      });
      await done;
    }
    const loadMs = performance.now() - started;
    const diag = await client.request("server/diagnostics", {});
    const idle = diag.threads.filter((t) => t.status.type === "idle").length;
    const after = diag.process.residentMemoryBytes;
    console.log(
      `app-server: ${THREADS} threads loaded, one prompt each (${idle} idle) in ${(loadMs / 1000).toFixed(1)} s: RSS ${mb(before)} MB → ${mb(after)} MB, ${mb((after - before) / THREADS)} MB per thread, peak RSS ${mb(peakRss(server.child.pid!))} MB (target ≤ 300 MB)`,
    );

    // First delta: one more thread, several turns.
    const { thread } = await client.request("thread/start", { cwd: project });
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_TURNS; i++) {
      const firstDelta = new Promise<number>((resolve) => {
        const off = client.onNotification("item/agentMessage/delta", (p) => {
          if (p.threadId !== thread.id) return;
          off();
          resolve(performance.now());
        });
      });
      const before = model.firstByteAt.length;
      const { turn } = await client.request("turn/start", {
        threadId: thread.id,
        input: [{ type: "text", text: `Latency ${i}` }],
      });
      const at = await firstDelta;
      latencies.push(at - model.firstByteAt[before]!);
      await client.waitFor("turn/completed", (p) => p.turn.id === turn.id);
    }
    console.log(
      `app-server: first delta after the model's first byte: median ${median(latencies).toFixed(1)} ms, worst ${Math.max(...latencies).toFixed(1)} ms over ${LATENCY_TURNS} turns (target ≤ 20 ms)`,
    );
  } finally {
    await server.stop(10_000);
    model.close();
  }
}

async function listing(dir: string): Promise<void> {
  const agentDir = agentDirFor(dir, "http://127.0.0.1:9");
  const sessions = join(agentDir, "sessions");
  const base = Date.parse("2026-01-01T00:00:00.000Z");
  for (let f = 0; f < LIST_FOLDERS; f++) {
    const cwd = `/bench/project-${f}`;
    const folder = cwdSessionDir(sessions, cwd);
    mkdirSync(folder, { recursive: true });
    for (let i = 0; i < LIST_PER_FOLDER; i++) {
      const n = f * LIST_PER_FOLDER + i;
      const timestamp = new Date(base + n * 1000).toISOString();
      const id = `00000000-0000-4000-8000-${n.toString().padStart(12, "0")}`;
      const lines = [
        { type: "session", version: 3, id, timestamp, cwd },
        {
          type: "message",
          id: "e1",
          parentId: null,
          timestamp,
          message: { role: "user", content: `Question ${n} about the code`, timestamp: base + n * 1000 },
        },
      ];
      writeFileSync(
        join(folder, sessionFileName(timestamp, id)),
        `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`,
      );
    }
  }
  // A client that lists as soon as initialize answers meets the catalogue's warm-up half done; one that lists
  // a moment later finds it done.
  for (const pauseMs of [0, 1_000]) {
    const server = start(agentDir, dir);
    try {
      const { client } = server;
      await client.initialize("bench", "1");
      await new Promise((r) => setTimeout(r, pauseMs));
      const times: number[] = [];
      let count = 0;
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const page = await client.request("thread/list", { limit: 50 });
        times.push(performance.now() - t0);
        count = page.data.length;
      }
      console.log(
        `app-server: thread/list over ${LIST_FOLDERS * LIST_PER_FOLDER} session files (a page of ${count}), ${pauseMs === 0 ? "right after initialize" : `${pauseMs} ms after initialize`}: first ${times[0]!.toFixed(0)} ms, then median ${median(times.slice(1)).toFixed(0)} ms (target ≤ 200 ms)`,
      );
    } finally {
      await server.stop(10_000);
    }
  }
}

/**
 * History paging: a thread of HISTORY_ENTRIES entries (a user message and an answer per turn) read back a page at
 * a time with `thread/resume` and its cursor, with a compaction at the end. The first read loads the thread; after it, a page should cost the
 * same at the newest end, in the middle and at the oldest end.
 */
const HISTORY_ENTRIES = 100_000;

export async function historyPages(dir: string): Promise<void> {
  const agentDir = agentDirFor(dir, "http://127.0.0.1:9");
  const cwd = join(dir, "project");
  mkdirSync(cwd, { recursive: true });
  const folder = cwdSessionDir(join(agentDir, "sessions"), cwd);
  mkdirSync(folder, { recursive: true });
  const base = Date.parse("2026-01-01T00:00:00.000Z");
  const timestamp = new Date(base).toISOString();
  const id = "00000000-0000-4000-8000-000000000001";
  const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp, cwd })];
  let parent: string | null = null;
  for (let i = 0; i < HISTORY_ENTRIES; i++) {
    const entryId = `h${i.toString(16).padStart(7, "0")}`;
    const at = base + i;
    const message =
      i % 2 === 0
        ? { role: "user", content: `Question ${i} about the code`, timestamp: at }
        : {
            role: "assistant",
            content: [{ type: "text", text: `Answer ${i}: ${"lorem ipsum ".repeat(8)}` }],
            api: "openai-completions",
            provider: "local",
            model: "m",
            usage: {
              input: 1,
              output: 1,
              cacheRead: 0,
              cacheWrite: 0,
              totalTokens: 2,
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
            },
            stopReason: "stop",
            timestamp: at,
          };
    lines.push(
      JSON.stringify({
        type: "message",
        id: entryId,
        parentId: parent,
        timestamp: new Date(at).toISOString(),
        message,
      }),
    );
    parent = entryId;
  }
  // A compaction near the end, as a long session has: the session lets go of the entries before what it kept, so
  // reading them means reading the file again.
  lines.push(
    JSON.stringify({
      type: "compaction",
      id: "hcompact",
      parentId: parent,
      timestamp: new Date(base + HISTORY_ENTRIES).toISOString(),
      summary: "What happened so far",
      firstKeptEntryId: `h${(HISTORY_ENTRIES - 20).toString(16).padStart(7, "0")}`,
      tokensBefore: 100_000,
    }),
  );
  writeFileSync(join(folder, sessionFileName(timestamp, id)), `${lines.join("\n")}\n`);
  const server = start(agentDir, dir);
  try {
    const { client } = server;
    await client.initialize("bench", "1");
    const timed = async (cursor: string | undefined) => {
      const t0 = performance.now();
      const page = await client.request("thread/resume", { threadId: id, ...(cursor ? { cursor } : {}) });
      return { ms: performance.now() - t0, page };
    };
    const load = await timed(undefined);
    const total = Number(load.page.nextCursor ?? 0) + load.page.turns.length;
    const rows: [string, string | undefined][] = [
      ["first (newest)", undefined],
      ["middle", String(Math.floor(total / 2))],
      ["last (oldest)", load.page.turns.length < total ? String(load.page.turns.length) : undefined],
    ];
    const costs: string[] = [];
    for (const [name, cursor] of rows) {
      const times: number[] = [];
      let turns = 0;
      for (let i = 0; i < 5; i++) {
        const { ms, page } = await timed(cursor);
        times.push(ms);
        turns = page.turns.length;
      }
      costs.push(`${name} ${median(times).toFixed(1)} ms (${turns} turns)`);
    }
    console.log(
      `app-server: history of ${HISTORY_ENTRIES.toLocaleString("en")} entries (${total} turns) by thread/resume pages: loading ${load.ms.toFixed(0)} ms, then a page: ${costs.join(", ")}`,
    );
  } finally {
    await server.stop(10_000);
  }
}

/** Diff read and revert on 3 and 1,000 changed files, and file search over 100,000 files (app-server-editor.ts). */
async function editor(dir: string): Promise<void> {
  const agentDir = agentDirFor(dir, "http://127.0.0.1:9");
  const server = start(agentDir, dir);
  try {
    await editorBench(server, dir);
  } finally {
    await server.stop(10_000);
  }
}

export async function appServerBench(): Promise<void> {
  if (!existsSync(cli)) execFileSync("npx", ["tsx", "scripts/build.ts"], { cwd: root, stdio: "inherit" });
  const dir = mkdtempSync(join(tmpdir(), "kc-bench-app-server-"));
  try {
    await memoryAndLatency(join(dir, "load"));
    await listing(join(dir, "list"));
    await historyPages(join(dir, "history"));
    await editor(join(dir, "editor"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

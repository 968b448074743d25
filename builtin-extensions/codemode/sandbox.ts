/**
 * The host side of the codemode sandbox: a process-wide pool of sandbox workers and the run of one script on one.
 *
 * The pool is module state on purpose: every session of the process shares it, so `maxConcurrent` bounds the
 * sandboxes of the whole process (the app server runs many sessions in one). Scripts beyond the cap wait in
 * first-come order. One idle worker is kept warm (its QuickJS module compiled), unreferenced so it never keeps the
 * process alive; every script still gets a fresh QuickJS runtime inside it. A worker that missed a deadline,
 * crashed or was terminated is never reused.
 *
 * Stopping a script does not depend on the script: at the deadline (or on abort) the host raises the shared
 * interrupt flag and asks the worker to cancel; a worker busy in a loop sees the flag at its next interrupt check,
 * an idle one answers the cancel at once, and one that does neither within `STOP_GRACE_MS` is terminated.
 *
 * Memory: a worker is made for one memory limit, the maximum of its WebAssembly memory (protocol.ts), and its own
 * V8 heap has `resourceLimits`. While a script runs the host reads the memory the worker reports in a shared buffer
 * and terminates a worker past its allowance; a worker V8 stops for its heap limit is reported as a memory failure
 * too. A worker whose wasm memory grew past `KEEP_WARM_BYTES` is not kept warm, so the process gives that memory
 * back once the script ends.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import {
  CROSSING,
  type HostToWorker,
  type RunFailureKind,
  type RunOutcome,
  type SandboxLimits,
  type SandboxTool,
  type SandboxWorkerData,
  STATS_HEAP_KB,
  STATS_SLOTS,
  STATS_WASM_PAGES,
  WASM_MIN_BYTES,
  WASM_PAGE,
  type WorkerToHost,
  wasmMemoryPages,
} from "./protocol.js";

/** How long a worker has to stop a script after the interrupt before it is terminated. */
export const STOP_GRACE_MS = 250;
/** Idle workers kept warm. */
const WARM_WORKERS = 1;
/** QuickJS's own stack limit: deep recursion fails with a RangeError well before the worker's native stack. */
const STACK_BYTES = 512 * 1024;
/**
 * The worker's own V8 heap. It holds the worker's code and copies of what crosses (each capped, see `CROSSING` in
 * protocol.ts); the script's memory is the wasm memory, outside it.
 */
const WORKER_HEAP = { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 } as const;
/** Past its wasm limit and heap limits, the slack the host allows a worker's reported memory before ending it. */
const WATCH_MARGIN_BYTES = 16 * 1024 * 1024;
/** How often the host reads a running worker's memory. */
const WATCH_INTERVAL_MS = 25;
/** A worker whose wasm memory grew past this ends after its script instead of being kept warm. */
const KEEP_WARM_BYTES = 2 * WASM_MIN_BYTES;

export interface SandboxCall {
  kind: "tool" | "search";
  name: string;
  args: unknown;
  signal: AbortSignal;
}

/** A call's answer as the script sees it: a value, or an error the script's `await` throws. */
export type SandboxAnswer = { value: unknown } | { error: string };

export interface ScriptRequest {
  code: string;
  tools: SandboxTool[];
  catalogue: string;
  timeoutMs: number;
  memoryMb: number;
  maxConcurrent: number;
  signal?: AbortSignal;
  onCall(call: SandboxCall): Promise<SandboxAnswer>;
  onLog?(level: string, text: string): void;
}

export interface ScriptResult {
  outcome: RunOutcome;
  /** Tool calls still running when the script ended; they were aborted. */
  cancelled: string[];
  /** Time spent waiting for a free sandbox (the concurrency cap). */
  queuedMs: number;
  /** Time to get a ready worker: near zero when a warm one was free. */
  startMs: number;
  /** Whether the worker was started for this script. */
  coldStart: boolean;
  runMs: number;
}

export class SandboxAbortedError extends Error {}

interface PooledWorker {
  worker: Worker;
  /** The memory limit it was made for: the maximum of its wasm memory. */
  memoryBytes: number;
  /** What the worker reports of its memory (`STATS_*` slots). */
  stats: Int32Array;
  /** Set once the worker exits or errs; such a worker is never handed out again. */
  dead: boolean;
  /** Why the worker died, for a run that was using it. */
  exitReason?: string;
  onEvent?: (message: WorkerToHost) => void;
  onDeath?: (kind: RunFailureKind, reason: string) => void;
}

const pool = {
  running: 0,
  queue: [] as { grant: () => void }[],
  idle: [] as PooledWorker[],
};

let nextRunId = 1;

/**
 * QuickJS compiled once per process and handed to each worker: V8 shares a compiled WebAssembly module, and the
 * code it compiled lazily, between threads, so a worker started after a timeout or crash skips the compilation.
 */
let quickjsModule: Promise<object> | undefined;
/** Node's global `WebAssembly`, which the TypeScript libs of this project do not declare. */
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<object> } })
  .WebAssembly;
function compiledQuickjs(): Promise<object> {
  quickjsModule ??= readFile(
    createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm"),
  ).then((bytes) => wasm.compile(bytes));
  return quickjsModule;
}

/** Runs one script: waits for a slot, takes a worker, runs, and returns the worker (or ends it). */
export async function runScript(request: ScriptRequest): Promise<ScriptResult> {
  const queuedAt = performance.now();
  await acquireSlot(request.maxConcurrent, request.signal);
  const queuedMs = performance.now() - queuedAt;
  try {
    const startAt = performance.now();
    const memoryBytes = request.memoryMb * 1024 * 1024;
    // A warm worker made for another limit cannot serve: its wasm memory's maximum is that limit.
    const index = pool.idle.findIndex((p) => p.memoryBytes === memoryBytes);
    const coldStart = index < 0;
    const pooled = coldStart ? await spawnWorker(memoryBytes) : pool.idle.splice(index, 1)[0]!;
    const startMs = performance.now() - startAt;
    const runAt = performance.now();
    const { outcome, cancelled, reusable } = await runOn(pooled, request);
    if (reusable) keepWarm(pooled);
    else void pooled.worker.terminate();
    return { outcome, cancelled, queuedMs, startMs, coldStart, runMs: performance.now() - runAt };
  } finally {
    releaseSlot();
  }
}

/** Ends the idle workers (tests and benchmarks that want a cold start). */
export async function drainPool(): Promise<void> {
  await Promise.all(pool.idle.splice(0).map((p) => p.worker.terminate()));
}

/** Sandboxes running and scripts waiting, process-wide. */
export function poolState(): { running: number; queued: number; idle: number } {
  return { running: pool.running, queued: pool.queue.length, idle: pool.idle.length };
}

function acquireSlot(max: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(new SandboxAbortedError("aborted before the script started"));
  if (pool.running < Math.max(1, max) && pool.queue.length === 0) {
    pool.running++;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const entry = {
      grant: () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
    };
    const onAbort = () => {
      const index = pool.queue.indexOf(entry);
      if (index >= 0) pool.queue.splice(index, 1);
      reject(new SandboxAbortedError("aborted while waiting for a free sandbox"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    pool.queue.push(entry);
  });
}

/** Hands the slot to the first script waiting, or frees it. */
function releaseSlot(): void {
  const next = pool.queue.shift();
  if (next) next.grant();
  else pool.running--;
}

/** Keeps the worker as the warm one (ending an older one), unless it died or holds a grown wasm memory. */
function keepWarm(pooled: PooledWorker): void {
  if (pooled.dead || Atomics.load(pooled.stats, STATS_WASM_PAGES) * WASM_PAGE > KEEP_WARM_BYTES) {
    void pooled.worker.terminate();
    return;
  }
  pooled.onEvent = undefined;
  pooled.onDeath = undefined;
  pooled.worker.unref();
  pool.idle.push(pooled);
  for (const old of pool.idle.splice(0, Math.max(0, pool.idle.length - WARM_WORKERS)))
    void old.worker.terminate();
}

/**
 * The worker's entry: the build's own entry in dist/, or, when KnightCode runs from its TypeScript source (tests,
 * benchmarks), a bootstrap that registers tsx in the worker first: tsx's loader does not reach worker threads.
 */
function workerEntry(): { entry: string; eval: boolean } {
  const own = new URL(import.meta.url);
  if (own.pathname.endsWith(".ts")) {
    const tsx = createRequire(own)
      .resolve("tsx/esm/api")
      .replace(/\.cjs$/, ".mjs");
    const worker = new URL("./sandbox-worker.ts", own).href;
    return {
      entry: `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(worker)}); });`,
      eval: true,
    };
  }
  for (const candidate of ["../builtin-extensions/codemode/sandbox-worker.js", "./sandbox-worker.js"]) {
    const path = fileURLToPath(new URL(candidate, own));
    if (existsSync(path)) return { entry: path, eval: false };
  }
  throw new Error(`codemode: the sandbox worker file is missing next to ${fileURLToPath(own)}`);
}

/** The message the model reads when a script is stopped for its memory from outside. */
function memoryStopped(memoryBytes: number): string {
  return `The script was stopped for exceeding its ${Math.round(memoryBytes / (1024 * 1024))} MB memory limit`;
}

/** The most a worker may report before the host ends it: its wasm maximum, its heap limits, and a margin. */
function memoryAllowance(memoryBytes: number): number {
  const heap = (WORKER_HEAP.maxOldGenerationSizeMb + WORKER_HEAP.maxYoungGenerationSizeMb) * 1024 * 1024;
  return wasmMemoryPages(memoryBytes).maximum * WASM_PAGE + heap + WATCH_MARGIN_BYTES;
}

/** What the worker last reported of its memory, in bytes. */
function reportedBytes(pooled: PooledWorker): number {
  return (
    Atomics.load(pooled.stats, STATS_WASM_PAGES) * WASM_PAGE +
    Atomics.load(pooled.stats, STATS_HEAP_KB) * 1024
  );
}

async function spawnWorker(memoryBytes: number): Promise<PooledWorker> {
  const wasm = await compiledQuickjs();
  return new Promise((resolve, reject) => {
    const { entry, eval: isCode } = workerEntry();
    const stats = new SharedArrayBuffer(STATS_SLOTS * 4);
    const workerData: SandboxWorkerData = { wasm, memoryBytes, stats };
    const worker = new Worker(entry, {
      eval: isCode,
      workerData,
      // The worker needs none of the host's Node flags; inheriting a loader (tsx, say) only slows its start.
      execArgv: [],
      // QuickJS memory lives in wasm memory, outside these limits; they bound the worker's own JavaScript.
      resourceLimits: WORKER_HEAP,
      // Whatever the wasm runtime prints must not reach the host's stdout, which may be a protocol stream. The
      // worker drops it itself: reading these streams here would keep the process alive after unref().
      stdout: true,
      stderr: true,
    });
    const pooled: PooledWorker = { worker, memoryBytes, stats: new Int32Array(stats), dead: false };
    const died = (kind: RunFailureKind, reason: string) => {
      if (pooled.dead) return;
      pooled.dead = true;
      pooled.exitReason = reason;
      const index = pool.idle.indexOf(pooled);
      if (index >= 0) pool.idle.splice(index, 1);
      pooled.onDeath?.(kind, reason);
    };
    worker.on("message", (message: WorkerToHost) => {
      if (message.type === "ready") resolve(pooled);
      else pooled.onEvent?.(message);
    });
    worker.on("error", (error) => {
      if ((error as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY") {
        died("memory", `${memoryStopped(memoryBytes)} (the sandbox worker ran out of its heap)`);
      } else died("sandbox", `the sandbox worker failed: ${error.message}`);
      reject(error);
    });
    worker.on("exit", (code) => {
      died("sandbox", `the sandbox worker exited (code ${code})`);
      reject(new Error(`the sandbox worker exited (code ${code}) before it was ready`));
    });
  });
}

/** One script on one worker. Resolves when the script settled and every call it left running has finished. */
function runOn(
  pooled: PooledWorker,
  request: ScriptRequest,
): Promise<{ outcome: RunOutcome; cancelled: string[]; reusable: boolean }> {
  const runId = nextRunId++;
  const interrupt = new SharedArrayBuffer(4);
  const flag = new Int32Array(interrupt);
  const limits: SandboxLimits = {
    memoryBytes: request.memoryMb * 1024 * 1024,
    stackBytes: STACK_BYTES,
    deadline: Date.now() + request.timeoutMs,
  };
  const pending = new Map<number, { name: string; controller: AbortController; done: Promise<void> }>();
  const post = (message: HostToWorker) => pooled.worker.postMessage(message);
  const deadlineMessage = `The script did not finish within its ${request.timeoutMs} ms deadline.`;
  pooled.worker.ref();

  return new Promise((resolve) => {
    let stopping: { kind: RunFailureKind; message: string } | undefined;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;

    const end = async (outcome: RunOutcome, reusable: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadlineTimer);
      clearTimeout(graceTimer);
      clearInterval(watchTimer);
      request.signal?.removeEventListener("abort", onAbort);
      const cancelled = [...pending.values()].map((p) => p.name);
      for (const call of pending.values()) call.controller.abort(new Error("the script ended"));
      await Promise.allSettled([...pending.values()].map((p) => p.done));
      // The worker's own report of the deadline ("interrupted") says less than the host's.
      const final: RunOutcome = stopping
        ? { ok: false, ...stopping }
        : !outcome.ok && outcome.kind === "timeout"
          ? { ok: false, kind: "timeout", message: deadlineMessage }
          : outcome;
      resolve({ outcome: final, cancelled, reusable });
    };

    const stop = (kind: RunFailureKind, message: string) => {
      if (stopping || settled) return;
      stopping = { kind, message };
      Atomics.store(flag, 0, 1);
      post({ type: "cancel", runId });
      graceTimer = setTimeout(() => {
        void pooled.worker.terminate();
        void end({ ok: false, kind, message }, false);
      }, STOP_GRACE_MS);
    };

    const deadlineTimer = setTimeout(() => stop("timeout", deadlineMessage), request.timeoutMs);
    // The worker cannot grow its wasm memory past the limit; should it report more anyway, it ends now, from here.
    const allowance = memoryAllowance(limits.memoryBytes);
    const watchTimer = setInterval(() => {
      const used = reportedBytes(pooled);
      if (used <= allowance || settled) return;
      stopping = {
        kind: "memory",
        message: `${memoryStopped(limits.memoryBytes)} (its sandbox held ${Math.round(used / (1024 * 1024))} MB).`,
      };
      void pooled.worker.terminate();
      void end({ ok: false, ...stopping }, false);
    }, WATCH_INTERVAL_MS);
    const onAbort = () => stop("aborted", "The script was aborted.");
    if (request.signal?.aborted) onAbort();
    else request.signal?.addEventListener("abort", onAbort, { once: true });

    pooled.onDeath = (kind, reason) => void end({ ok: false, kind, message: reason }, false);
    pooled.onEvent = (message) => {
      if (message.type === "ready" || message.runId !== runId) return;
      if (message.type === "log") request.onLog?.(message.level, message.text);
      else if (message.type === "done") void end(message.outcome, !pooled.dead && !message.retire);
      else if (message.type === "call") {
        const controller = new AbortController();
        let args: unknown;
        try {
          args = JSON.parse(message.args);
        } catch {
          args = {};
        }
        const done = request
          .onCall({ kind: message.kind, name: message.name, args, signal: controller.signal })
          .catch((error: unknown): SandboxAnswer => ({ error: String((error as Error)?.message ?? error) }))
          .then((answer) => {
            pending.delete(message.callId);
            if (settled || stopping) return;
            post({ type: "settle", runId, callId: message.callId, json: answerJson(answer, message.name) });
          });
        pending.set(message.callId, { name: message.name, controller, done });
      }
    };
    post({
      type: "run",
      runId,
      code: request.code,
      tools: request.tools,
      catalogue: request.catalogue,
      limits,
      interrupt,
    });
  });
}

/** The answer as JSON text; a value JSON cannot write, or one too large to pass, becomes an error the script sees. */
function answerJson(answer: SandboxAnswer, name: string): string {
  try {
    const json = JSON.stringify(answer);
    if (json.length <= CROSSING.messageChars) return json;
    const size = (chars: number) => `${(chars / (1024 * 1024)).toFixed(1)} MB`;
    return JSON.stringify({
      error: `The result of ${name} is ${size(json.length)} as JSON, over the ${size(CROSSING.messageChars)} a tool call may pass to a script.`,
    });
  } catch (error) {
    return JSON.stringify({
      error: `the result cannot be passed to the script: ${(error as Error).message}`,
    });
  }
}

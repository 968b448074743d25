/**
 * `images.autoResize` off the main thread: each image over the limit is decoded, scaled and encoded again in a
 * worker thread of its own (image-resize-worker.ts), so the terminal UI keeps drawing and taking keys meanwhile.
 * `node:worker_threads` loads with the first image that needs it, never at start-up.
 *
 * Bounded: a resize that runs past `RESIZE_TIMEOUT_MS`, or that the caller stops (its signal), ends the worker
 * (`terminate()`); a worker that fails or exits without answering rejects with a message that says what happened.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Worker } from "node:worker_threads";

/** The longest side pi sends. */
export const MAX_IMAGE_SIDE = 2000;
/** Long enough for a 64 MB photo on a slow machine; a resize still running then has gone wrong. */
export const RESIZE_TIMEOUT_MS = 30_000;

/** What the worker gets: the file's bytes (a copy) and the longest side allowed. */
export interface ResizeJob {
  bytes: Uint8Array;
  mimeType: "image/png" | "image/jpeg";
  max: number;
}

interface Size {
  width: number;
  height: number;
}

/** The worker's one message. */
export type ResizeReply =
  | { type: "resized"; bytes: Uint8Array; from: Size; to: Size }
  /** Within the limit after all (its header said otherwise): send the file as it is. */
  | { type: "fits" }
  | { type: "failed"; message: string };

export interface Resized {
  bytes: Buffer;
  from: Size;
  to: Size;
}

export interface ResizeOptions {
  /** Stops the resize (the worker is ended) and rejects with `ResizeStoppedError`. */
  signal?: AbortSignal;
  /** Default `RESIZE_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** The worker's V8 heap limit in MB (its old generation); the pixels themselves live outside it. */
  heapLimitMb?: number;
}

/** A resize the user stopped (esc). */
export class ResizeStoppedError extends Error {
  constructor() {
    super("the resize was stopped");
    this.name = "ResizeStoppedError";
  }
}

/**
 * The image scaled to fit in `MAX_IMAGE_SIDE`x`MAX_IMAGE_SIDE` pixels in its own format, computed in a worker
 * thread; `undefined` when it fits already. Rejects, saying why, when the image does not decode, the worker fails,
 * the deadline passes or the signal stops it.
 */
export function resizeOffThread(
  bytes: Uint8Array,
  mimeType: "image/png" | "image/jpeg",
  options: ResizeOptions = {},
): Promise<Resized | undefined> {
  const { signal, timeoutMs = RESIZE_TIMEOUT_MS } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new ResizeStoppedError());
      return;
    }
    const { Worker } = process.getBuiltinModule("node:worker_threads");
    const job: ResizeJob = { bytes, mimeType, max: MAX_IMAGE_SIDE };
    let worker: Worker;
    try {
      const entry = workerEntry();
      worker = new Worker(entry.code, {
        eval: entry.eval,
        workerData: job,
        // The host's flags (a loader, say) only slow the worker's start.
        execArgv: [],
        ...(options.heapLimitMb ? { resourceLimits: { maxOldGenerationSizeMb: options.heapLimitMb } } : {}),
        // Nothing the worker might print may reach the terminal the UI draws on.
        stdout: true,
        stderr: true,
      });
    } catch (error) {
      reject(new Error(`the resize worker did not start: ${(error as Error).message}`));
      return;
    }
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      void worker.terminate();
      settle();
    };
    const onAbort = () => finish(() => reject(new ResizeStoppedError()));
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(
      () => finish(() => reject(new Error(`it took longer than ${duration(timeoutMs)} and was stopped`))),
      timeoutMs,
    );
    worker.on("message", (reply: ResizeReply) =>
      finish(() => {
        if (reply.type === "failed") reject(new Error(reply.message));
        else if (reply.type === "fits") resolve(undefined);
        else
          resolve({
            bytes: Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength),
            from: reply.from,
            to: reply.to,
          });
      }),
    );
    worker.on("error", (error: NodeJS.ErrnoException) =>
      finish(() =>
        reject(
          new Error(
            error.code === "ERR_WORKER_OUT_OF_MEMORY"
              ? "the resize worker ran out of memory"
              : `the resize worker failed: ${error.message}`,
          ),
        ),
      ),
    );
    worker.on("exit", (code) =>
      finish(() => reject(new Error(`the resize worker stopped before it answered (exit code ${code})`))),
    );
  });
}

/**
 * The worker's entry. Built (dist/), it is the build's own entry file,
 * `dist/builtin-extensions/mode-interactive/image-resize-worker.js` (scripts/build.ts), found from this code's
 * address: a chunk or CLI bundle in `dist/chunks/`. From the TypeScript source (tests), a bootstrap registers tsx in
 * the worker before importing the entry: tsx's hooks do not reach worker threads.
 */
function workerEntry(): { code: string; eval: boolean } {
  const own = new URL(import.meta.url);
  if (own.pathname.endsWith(".ts")) {
    const tsx = createRequire(own)
      .resolve("tsx/esm/api")
      .replace(/\.cjs$/, ".mjs");
    const entry = new URL("./image-resize-worker.ts", own).href;
    return {
      code: `import(${JSON.stringify(pathToFileURL(tsx).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`,
      eval: true,
    };
  }
  for (const candidate of [
    "../builtin-extensions/mode-interactive/image-resize-worker.js",
    "./image-resize-worker.js",
  ]) {
    const path = fileURLToPath(new URL(candidate, own));
    if (existsSync(path)) return { code: path, eval: false };
  }
  throw new Error(`its file, image-resize-worker.js, is missing next to ${fileURLToPath(own)}`);
}

const duration = (ms: number): string => (ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`);

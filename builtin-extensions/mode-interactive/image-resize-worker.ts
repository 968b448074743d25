/**
 * The worker thread behind `images.autoResize`: it gets one image (`workerData`, a `ResizeJob`), scales it down with
 * image-resize.ts, posts one `ResizeReply` and ends. A worker does one image; image-resize-thread.ts starts it, and
 * ends it early on a deadline or when the user stops the resize.
 */
import { parentPort, workerData } from "node:worker_threads";
import { resizeToFit } from "./image-resize.js";
import type { ResizeJob, ResizeReply } from "./image-resize-thread.js";

const job = workerData as ResizeJob;
let reply: ResizeReply;
const transfer: ArrayBuffer[] = [];
try {
  const input = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
  const fitted = resizeToFit(input, job.mimeType, job.max);
  if (fitted) {
    const bytes = new Uint8Array(fitted.bytes.buffer, fitted.bytes.byteOffset, fitted.bytes.byteLength);
    // Handed over rather than copied when the encoder's buffer holds nothing else.
    if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength)
      transfer.push(bytes.buffer as ArrayBuffer);
    reply = { type: "resized", bytes, from: fitted.from, to: fitted.to };
  } else reply = { type: "fits" };
} catch (error) {
  reply = { type: "failed", message: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(reply, transfer);

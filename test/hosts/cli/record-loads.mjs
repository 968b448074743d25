/**
 * Module hooks for `node --import`: registers itself as a loader hook that appends the URL of every module Node
 * loads to the file named by KC_RECORD_LOADS. The hooks run on Node's loader thread, so they write the file
 * directly instead of talking to the main thread.
 */
import { appendFileSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

if (isMainThread) {
  const { register } = await import("node:module");
  register(import.meta.url, { data: { file: process.env.KC_RECORD_LOADS } });
}

let file;

export function initialize(data) {
  file = data.file;
}

export async function load(url, context, nextLoad) {
  appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}

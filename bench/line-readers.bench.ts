/**
 * The two line readers that take bytes from outside: the SSE reader of the openai-completions provider and the RPC
 * stdin reader. Each is fed one long line in 64 KB chunks (as a socket or a pipe delivers it), of 4, 8 and 15 MB
 * (under both caps, 16 MiB), and then a line over the cap. The time must grow with the size, not with its square:
 * a reader that appends each chunk to what it holds and searches it again from the start took 24.6 s for 40 MB.
 */
import { PassThrough } from "node:stream";
import { SseDecoder } from "../builtin-extensions/providers/openai-compatible/sse.js";
import { JsonlReader } from "../plugins/kit/wire/jsonl.js";

const CHUNK = 64 * 1024;

function chunks(prefix: string, megabytes: number, suffix: string): Buffer[] {
  const body = Buffer.alloc(Math.round(megabytes * 1024 * 1024), 0x61);
  const whole = Buffer.concat([Buffer.from(prefix), body, Buffer.from(suffix)]);
  const out: Buffer[] = [];
  for (let at = 0; at < whole.length; at += CHUNK) out.push(whole.subarray(at, at + CHUNK));
  return out;
}

function sse(megabytes: number): { ms: number; outcome: string } {
  const input = chunks('data: {"padding":"', megabytes, '"}\n\n');
  const decoder = new SseDecoder();
  const started = performance.now();
  let outcome = "";
  try {
    let messages = 0;
    for (const chunk of input) messages += decoder.push(chunk).messages.length;
    messages += decoder.end().length;
    outcome = `${messages} message`;
  } catch (error) {
    outcome = (error as Error).name;
  }
  return { ms: performance.now() - started, outcome };
}

async function rpc(megabytes: number): Promise<{ ms: number; outcome: string }> {
  const input = chunks('{"type":"prompt","message":"', megabytes, '"}\n');
  const stream = new PassThrough({ highWaterMark: CHUNK });
  const reader = new JsonlReader(stream);
  const started = performance.now();
  const feeding = (async () => {
    for (const chunk of input) if (!stream.write(chunk)) await new Promise((r) => stream.once("drain", r));
    stream.end();
  })();
  let outcome = "";
  for await (const item of reader.lines()) {
    outcome = "line" in item ? `a line of ${(item.line.length / 1024 / 1024).toFixed(1)} MB` : "too long";
  }
  await feeding;
  return { ms: performance.now() - started, outcome };
}

export async function lineReadersBench(): Promise<void> {
  console.log("line-readers: one long line in 64 KB chunks");
  console.log("  line      SSE reader              RPC stdin reader");
  for (const megabytes of [4, 8, 15, 60]) {
    const a = sse(megabytes);
    const b = await rpc(megabytes);
    console.log(
      `  ${`${megabytes} MB`.padEnd(8)}  ${`${a.ms.toFixed(0)} ms`.padStart(8)} ${a.outcome.padEnd(22)}` +
        `${`${b.ms.toFixed(0)} ms`.padStart(8)} ${b.outcome}`,
    );
  }
}

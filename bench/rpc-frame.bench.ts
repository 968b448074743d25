/**
 * Peak memory of `knightcode --mode rpc` when a client sends one 100 MB line: the frame cap (16 MiB) makes the
 * reader drop the line's bytes instead of holding them, so the peak stays near an idle process's. Prints the peak
 * RSS (VmHWM) of an idle process and of one that got the line, each after a `get_state` round trip. Linux only
 * (reads /proc). Needs `npm run build` first.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../dist/hosts/cli/main.js", import.meta.url));
const LINE_MB = 100;

async function peakRss(dir: string, lineMb: number): Promise<{ peakMb: number; error?: string }> {
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify({ steps: [] }));
  const child = spawn(
    process.execPath,
    [bin, "--mode", "rpc", "--provider", "scripted", "--script", script, "--no-session"],
    { cwd: dir, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(dir, "agent") } },
  );
  let output = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    output += chunk;
  });
  const write = async (data: Buffer | string) => {
    if (!child.stdin.write(data)) await once(child.stdin, "drain");
  };
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  if (lineMb > 0) {
    await write('{"id":"big","type":"prompt","message":"');
    for (let i = 0; i < lineMb; i++) await write(chunk);
    await write('"}\n');
  }
  await write('{"id":"state","type":"get_state"}\n');
  const until = Date.now() + 60_000;
  while (!output.includes('"id":"state"')) {
    if (Date.now() > until) throw new Error("no get_state answer within 60 s");
    await new Promise((r) => setTimeout(r, 20));
  }
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  const peakMb = Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024;
  const error = output
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { command?: string; error?: string })
    .find((r) => r.command === "parse")?.error;
  child.stdin.end();
  await once(child, "close");
  return { peakMb, ...(error ? { error } : {}) };
}

export async function rpcFrameBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "kc-bench-rpc-frame-"));
  try {
    const idle = await peakRss(dir, 0);
    const big = await peakRss(dir, LINE_MB);
    console.log("rpc-frame: peak RSS (VmHWM) of knightcode --mode rpc");
    console.log(`  idle, one get_state            ${idle.peakMb.toFixed(1)} MB`);
    console.log(`  after one ${LINE_MB} MB line           ${big.peakMb.toFixed(1)} MB`);
    console.log(`  answer to the line: ${big.error ?? "(none)"}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

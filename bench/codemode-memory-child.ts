/**
 * One measurement of the codemode memory row of bench/codemode.bench.ts, in a process of its own so its peak RSS
 * is the sandbox's and not the bench's. `node --import tsx bench/codemode-memory-child.ts <sandbox module> <json>`
 * where json is `{ code, bombs, memoryMb, ceilingMb }`: runs `bombs` scripts of `return 1` at once (the baseline:
 * the process with that many started workers), then `bombs` copies of `code` at once, and prints one JSON line
 * `{ baselineMb, peakMb, kinds, overCeiling }` (peak RSS from getrusage). Past `ceilingMb` of growth the process
 * stops at once and says so, so a sandbox without a working limit cannot take the machine's memory.
 */
import type * as Sandbox from "../builtin-extensions/codemode/sandbox.js";

const [modulePath, json] = process.argv.slice(2);
if (!modulePath || !json) throw new Error("usage: codemode-memory-child <sandbox module> <json>");
const { code, bombs, memoryMb, ceilingMb } = JSON.parse(json) as {
  code: string;
  bombs: number;
  memoryMb: number;
  ceilingMb: number;
};
const sandbox = (await import(modulePath)) as typeof Sandbox;
const peakMb = () => process.resourceUsage().maxRSS / 1024;
const run = (script: string) =>
  sandbox.runScript({
    code: script,
    tools: [],
    catalogue: JSON.stringify({ tools: [], namespaces: [] }),
    timeoutMs: 60_000,
    memoryMb,
    maxConcurrent: bombs,
    onCall: async () => ({ value: null }),
    onLog: () => {},
  });

await Promise.all(Array.from({ length: bombs }, () => run("return 1;")));
const baselineMb = peakMb();
const watch = setInterval(() => {
  if (process.memoryUsage.rss() / (1024 * 1024) - baselineMb <= ceilingMb) return;
  console.log(JSON.stringify({ baselineMb, peakMb: peakMb(), kinds: [], overCeiling: true }));
  process.exit(0);
}, 5);
const results = await Promise.all(Array.from({ length: bombs }, () => run(code)));
clearInterval(watch);
const report = {
  baselineMb,
  peakMb: peakMb(),
  kinds: results.map((r) => (r.outcome.ok ? "ok" : r.outcome.kind)),
  overCeiling: false,
};
await sandbox.drainPool();
console.log(JSON.stringify(report));

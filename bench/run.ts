/**
 * Runs the benchmarks in order: `npm run bench`, or some of them by name: `npm run bench -- cli tool-pipeline`.
 * Add a benchmark by writing bench/<name>.bench.ts (exporting an async function) and listing it here.
 */
import { acpBench } from "./acp.bench.js";
import { agentLoopBench } from "./agent-loop.bench.js";
import { appServerBench } from "./app-server.bench.js";
import { cliBench } from "./cli.bench.js";
import { codemodeBench } from "./codemode.bench.js";
import { compactionBench } from "./compaction.bench.js";
import { dispatchBench } from "./dispatch.bench.js";
import { gateBench } from "./gate.bench.js";
import { gitBench } from "./git.bench.js";
import { lineReadersBench } from "./line-readers.bench.js";
import { rpcFrameBench } from "./rpc-frame.bench.js";
import { searchBench } from "./search.bench.js";
import { sessionResumeBench } from "./session-resume.bench.js";
import { toolArgsBench } from "./tool-args.bench.js";
import { toolPipelineBench } from "./tool-pipeline.bench.js";
import { tuiBench } from "./tui.bench.js";

const benchmarks: ReadonlyArray<readonly [string, () => Promise<void>]> = [
  ["dispatch", dispatchBench],
  ["session-resume", sessionResumeBench],
  ["agent-loop", agentLoopBench],
  ["compaction", compactionBench],
  ["tool-pipeline", toolPipelineBench],
  ["search", searchBench],
  ["cli", cliBench],
  ["rpc-frame", rpcFrameBench],
  ["tool-args", toolArgsBench],
  ["line-readers", lineReadersBench],
  ["gate", gateBench],
  ["tui", tuiBench],
  ["codemode", codemodeBench],
  ["app-server", appServerBench],
  ["git", gitBench],
  ["acp", acpBench],
];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !benchmarks.some(([known]) => known === name));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(", ")} (known: ${benchmarks.map(([n]) => n).join(", ")})`);
  process.exit(2);
}
for (const [name, bench] of benchmarks) if (wanted.length === 0 || wanted.includes(name)) await bench();

/**
 * Runs every benchmark in order: `npm run bench`.
 * Add a benchmark by writing bench/<name>.bench.ts (exporting an async function) and listing it here.
 */
import { agentLoopBench } from "./agent-loop.bench.js";
import { cliBench } from "./cli.bench.js";
import { dispatchBench } from "./dispatch.bench.js";
import { searchBench } from "./search.bench.js";
import { sessionResumeBench } from "./session-resume.bench.js";
import { toolPipelineBench } from "./tool-pipeline.bench.js";

const benchmarks: ReadonlyArray<() => Promise<void>> = [
  dispatchBench,
  sessionResumeBench,
  agentLoopBench,
  toolPipelineBench,
  searchBench,
  cliBench,
];

for (const bench of benchmarks) await bench();

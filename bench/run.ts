/**
 * Runs every benchmark in order: `npm run bench`.
 * Add a benchmark by writing bench/<name>.bench.ts (exporting an async function) and listing it here.
 */
import { dispatchBench } from "./dispatch.bench.js";
import { sessionResumeBench } from "./session-resume.bench.js";

const benchmarks: ReadonlyArray<() => Promise<void>> = [dispatchBench, sessionResumeBench];

for (const bench of benchmarks) await bench();

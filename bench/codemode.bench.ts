/**
 * Codemode: how long a sandbox takes to start, and what a tool call from a script costs.
 *
 * - Sandbox start, from the build (dist/, as `knightcode` runs it; run `npm run build` first): a cold start (a new
 *   worker loads and compiles QuickJS, then runs `return 1`) and a warm one (the pooled worker, a fresh QuickJS
 *   runtime), median of several scripts.
 * - The bridge alone: a script making 100 calls whose host answer is immediate, one after another and all at once
 *   (Promise.all); per call = (script time - the empty script's time just before) / 100.
 * - The whole pipeline: in a session (scripted provider), the codemode tool runs a script making 100 calls of a
 *   trivial tool through `ctx.executeTool` (validation, gates, events, nested-call records); wall time is the
 *   codemode call's duration, per call as above. Warm sandbox; median of 5 prompts.
 * - Memory under a memory bomb, from the build: a script keeping 1 MB strings until its limit stops it, one and two
 *   at once, at the default limit (64 MB), in a process of its own (the memory test's driver,
 *   test/builtin-extensions/codemode/fixtures/memory-bomb.ts) so the peak RSS is the sandbox's: its growth over the same process with as many idle workers, against the target "each
 *   sandbox's limit plus 100 MB". Past 1 GB of growth the child stops, so the row cannot take the machine down.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import type * as Sandbox from "../builtin-extensions/codemode/sandbox.js";
import { createScriptedProvider } from "../builtin-extensions/scripted-provider/index.js";
import { createAgentSession, createStandardKernel } from "../hosts/sdk/create-agent-session.js";
import type { ExtensionAPI } from "../kernel/index.js";

const CALLS = 100;
const COLD_ROUNDS = 5;
const WARM_ROUNDS = 20;
const PIPELINE_ROUNDS = 5;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number) => `${value.toFixed(1)} ms`;

/** The built sandbox module: the chunk of dist/ that `builtin-extensions/codemode/sandbox.ts` became. */
async function builtSandbox(): Promise<typeof Sandbox> {
  return (await import(builtSandboxPath())) as typeof Sandbox;
}

function builtSandboxPath(): string {
  const chunks = fileURLToPath(new URL("../dist/chunks/", import.meta.url));
  let file: string | undefined;
  try {
    file = readdirSync(chunks).find((name) => /^sandbox-[\w-]+\.js$/.test(name));
  } catch {
    // reported below
  }
  if (!file) throw new Error("codemode bench: no built sandbox in dist/chunks; run `npm run build` first");
  return join(chunks, file);
}

const request = (code: string, onCall: Sandbox.ScriptRequest["onCall"]): Sandbox.ScriptRequest => ({
  code,
  tools: [{ name: "noop", keys: ["noop"], namespaces: [] }],
  catalogue: JSON.stringify({ tools: [], namespaces: [] }),
  timeoutMs: 60_000,
  memoryMb: 64,
  maxConcurrent: 1,
  onCall,
});

const immediate: Sandbox.ScriptRequest["onCall"] = async () => ({ value: "ok" });
const sequential = `for (let i = 0; i < ${CALLS}; i++) await tools.noop({ i }); return "done";`;
const parallel = `await Promise.all(Array.from({ length: ${CALLS} }, (_, i) => tools.noop({ i }))); return "done";`;

async function sandboxFigures(lines: string[]): Promise<void> {
  const sandbox = await builtSandbox();
  const cold: number[] = [];
  const coldStart: number[] = [];
  for (let i = 0; i < COLD_ROUNDS; i++) {
    await sandbox.drainPool();
    const started = performance.now();
    const result = await sandbox.runScript(request("return 1;", immediate));
    cold.push(performance.now() - started);
    coldStart.push(result.startMs);
  }
  const timed = async (code: string) => {
    const started = performance.now();
    await sandbox.runScript(request(code, immediate));
    return performance.now() - started;
  };
  for (let i = 0; i < 3; i++) await timed(sequential); // the worker's first runs compile QuickJS lazily
  const warm: number[] = [];
  const seq: number[] = [];
  const par: number[] = [];
  for (let i = 0; i < WARM_ROUNDS; i++) {
    warm.push(await timed("return 1;"));
    seq.push((await timed(sequential)) - warm[i]!);
    par.push((await timed(parallel)) - warm[i]!);
  }
  await sandbox.drainPool();
  const perCall = (values: number[]) => `${((median(values) / CALLS) * 1000).toFixed(0)} µs per call`;
  lines.push(
    `sandbox start, built (median of ${COLD_ROUNDS} cold, ${WARM_ROUNDS} warm scripts of \`return 1\`)`,
    `  cold: ${ms(median(cold))} per script, of which ${ms(median(coldStart))} starting the worker`,
    `  warm: ${ms(median(warm))} per script (fresh QuickJS runtime in the pooled worker)`,
    `bridge only, ${CALLS} calls answered at once by the host (median of ${WARM_ROUNDS}, over an empty script)`,
    `  one after another: +${ms(median(seq))}, ${perCall(seq)}`,
    `  Promise.all:       +${ms(median(par))}, ${perCall(par)}`,
  );
}

async function pipelineFigures(lines: string[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "kc-bench-codemode-"));
  const agentDir = join(dir, "agent");
  const kernel = await createStandardKernel({ agentDir, cacheDir: false });
  const noop = (kc: ExtensionAPI) => {
    kc.registerTool({
      name: "noop",
      description: "Does nothing",
      parameters: Type.Object({ i: Type.Optional(Type.Integer()) }),
      exposure: "codemode",
      execute: async () => ({ content: [{ type: "text", text: "ok" }], details: undefined }),
    });
  };
  const durationOf = async (code: string): Promise<number> => {
    const handle = await createAgentSession({
      cwd: dir,
      agentDir,
      kernel,
      provider: "scripted",
      model: "scripted",
      session: { inMemory: true },
      extensions: [
        createScriptedProvider([
          { toolCalls: [{ name: "codemode", arguments: { code } }], chunkDelayMs: 0 },
          { text: "done", chunkDelayMs: 0 },
        ]),
        noop,
      ],
      warn: () => {},
    });
    let duration = Number.NaN;
    handle.subscribe((event) => {
      const e = event as { type: string; toolName?: string; durationMs?: number; isError?: boolean };
      if (e.type === "tool_execution_end" && e.toolName === "codemode") {
        if (e.isError) throw new Error("codemode bench: the script failed");
        duration = e.durationMs ?? Number.NaN;
      }
    });
    await handle.prompt("run it");
    await handle.dispose();
    return duration;
  };
  try {
    for (let i = 0; i < 3; i++) await durationOf(sequential); // starts the worker, compiles QuickJS lazily
    const empty: number[] = [];
    const seq: number[] = [];
    const par: number[] = [];
    for (let i = 0; i < PIPELINE_ROUNDS; i++) {
      empty.push(await durationOf("return 1;"));
      seq.push((await durationOf(sequential)) - empty[i]!);
      par.push((await durationOf(parallel)) - empty[i]!);
    }
    const perCall = (values: number[]) => `${((median(values) / CALLS) * 1000).toFixed(0)} µs per call`;
    lines.push(
      `whole pipeline, ${CALLS} calls of a trivial tool through ctx.executeTool (median of ${PIPELINE_ROUNDS} prompts)`,
      `  empty script:      ${ms(median(empty))}`,
      `  one after another: +${ms(median(seq))}, ${perCall(seq)}`,
      `  Promise.all:       +${ms(median(par))}, ${perCall(par)}`,
    );
  } finally {
    await kernel.dispose();
    const { drainPool } = await import("../builtin-extensions/codemode/sandbox.js");
    await drainPool();
    rmSync(dir, { recursive: true, force: true });
  }
}

const MEMORY_BOMB = "const kept = []; for (;;) kept.push('x'.repeat(1 << 20));";
const BOMB_LIMIT_MB = 64;
const BOMB_ALLOWANCE_MB = 100;
const BOMB_CEILING_MB = 1024;

/** One row's figures, from the memory-bomb driver the sandbox's memory test uses, run on the built sandbox. */
function bombChild(
  bombs: number,
): Promise<{ baselineMb: number; peakMb: number; kinds: string[]; overCeiling: boolean }> {
  const driver = fileURLToPath(
    new URL("../test/builtin-extensions/codemode/fixtures/memory-bomb.ts", import.meta.url),
  );
  const input = { code: MEMORY_BOMB, bombs, memoryMb: BOMB_LIMIT_MB, ceilingMb: BOMB_CEILING_MB };
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", driver, JSON.stringify(input), builtSandboxPath()],
      { timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`the memory-bomb driver failed: ${error.message}\n${stderr}`));
        const report = JSON.parse(stdout.trim().split("\n").pop()!) as {
          baselineMb: number;
          peakMb: number;
          outcomes: { ok: boolean; kind?: string }[];
          overCeiling: boolean;
        };
        resolve({ ...report, kinds: report.outcomes.map((o) => (o.ok ? "ok" : o.kind!)) });
      },
    );
  });
}

async function memoryFigures(lines: string[]): Promise<void> {
  lines.push(
    `host memory under a memory bomb (1 MB strings kept until the ${BOMB_LIMIT_MB} MB limit stops it), built, in a process of its own`,
  );
  for (const bombs of [1, 2]) {
    const r = await bombChild(bombs);
    const growth = r.peakMb - r.baselineMb;
    const target = bombs * BOMB_LIMIT_MB + BOMB_ALLOWANCE_MB;
    const met = !r.overCeiling && growth < target;
    const how = r.overCeiling
      ? `stopped by the bench past +${BOMB_CEILING_MB} MB`
      : `stopped: ${r.kinds.join(", ")}`;
    lines.push(
      `  ${bombs === 1 ? "one bomb: " : "two at once:"} peak ${r.peakMb.toFixed(0)} MB RSS, +${growth.toFixed(0)} MB over ${r.baselineMb.toFixed(0)} MB with ${bombs} idle worker(s) (${how}); target +${target} MB (${bombs} x limit + ${BOMB_ALLOWANCE_MB} MB): ${met ? "met" : "NOT met"}`,
    );
  }
}

export async function codemodeBench(): Promise<void> {
  const lines = ["codemode"];
  await sandboxFigures(lines);
  await pipelineFigures(lines);
  await memoryFigures(lines);
  console.log(`${lines.join("\n")}\n`);
}

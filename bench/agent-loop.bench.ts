/**
 * Per-turn overhead of the agent loop: one prompt whose scripted answer is 200 tool-call turns (each calls a
 * trivial `noop` tool) and a final text turn, with no chunk delay, so the time is the loop's own (events, hooks,
 * tool pipeline, session log, system prompt) plus the scripted provider's streaming. Each round uses a fresh
 * session on one kernel; one warm-up round runs first. Reports the median of 3 rounds for an in-memory session
 * and a file-backed one (temp dir, removed afterwards), and the heap held at the end of the run (heapUsed growth,
 * exact after a forced gc when node runs with --expose-gc, else approximate).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { createScriptedProvider, type ScriptEntry } from "../builtin-extensions/scripted-provider/index.js";
import {
  type CreateAgentSessionOptions,
  createAgentSession,
  createStandardKernel,
} from "../hosts/sdk/create-agent-session.js";
import { sessionInternals } from "../hosts/sdk/session-internals.js";
import type { ExtensionAPI, Kernel } from "../kernel/index.js";

const ROUNDS = 3;
const TOOL_TURNS = 200;
const TURNS = TOOL_TURNS + 1;

const gc = (globalThis as { gc?: () => void }).gc;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function script(): ScriptEntry[] {
  const steps: ScriptEntry[] = [];
  for (let i = 0; i < TOOL_TURNS; i++) {
    steps.push({ toolCalls: [{ name: "noop", arguments: {} }], chunkDelayMs: 0 });
  }
  steps.push({ text: "done", chunkDelayMs: 0 });
  return steps;
}

function noopTool(kc: ExtensionAPI): void {
  kc.registerTool({
    name: "noop",
    label: "noop",
    description: "Does nothing",
    parameters: Type.Object({}),
    execute: async () => ({ content: [{ type: "text", text: "ok" }], details: undefined }),
  });
}

interface Mode {
  name: string;
  session: (dir: string) => CreateAgentSessionOptions["session"];
  extensions?: ((kc: ExtensionAPI) => void)[];
}

/** A `context` handler that leaves the messages as they are. */
function contextReader(kc: ExtensionAPI): void {
  kc.on("context", () => undefined);
}

const modes: readonly Mode[] = [
  { name: "in-memory", session: () => ({ inMemory: true }) },
  { name: "+context", session: () => ({ inMemory: true }), extensions: [contextReader] },
  { name: "file", session: (dir) => ({ sessionDir: join(dir, "sessions") }) },
];

/** One fresh session running the whole script; returns the prompt's wall time and the heap it grew by. */
async function runOnce(
  kernel: Kernel,
  dir: string,
  mode: Mode,
  warnings: string[],
): Promise<{ ms: number; heapMb: number }> {
  const handle = await createAgentSession({
    cwd: dir,
    agentDir: join(dir, "agent"),
    kernel,
    provider: "scripted",
    model: "scripted",
    tools: ["noop"],
    session: mode.session(dir),
    extensions: [createScriptedProvider(script()), noopTool, ...(mode.extensions ?? [])],
    warn: (message) => warnings.push(message),
  });
  try {
    gc?.();
    const before = process.memoryUsage().heapUsed;
    const start = process.hrtime.bigint();
    await handle.prompt("run the script");
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    gc?.();
    const heapMb = (process.memoryUsage().heapUsed - before) / (1024 * 1024);
    // Checked after the measurement: the run really took every turn.
    const messages = sessionInternals(handle).log.buildContext().messages;
    const results = messages.filter((m) => m.role === "toolResult" && !m.isError).length;
    const last = messages.at(-1);
    if (results !== TOOL_TURNS || last?.role !== "assistant" || last.stopReason !== "stop") {
      throw new Error(
        `agent-loop bench (${mode.name}): expected ${TOOL_TURNS} tool results and a final answer, got ${results} ` +
          `and ${last?.role === "assistant" ? `${last.stopReason} ${last.errorMessage ?? ""}` : last?.role}` +
          (warnings.length ? `; warnings: ${warnings.join("; ")}` : ""),
      );
    }
    return { ms, heapMb };
  } finally {
    await handle.dispose();
  }
}

function row(cells: readonly string[]): string {
  const widths = [11, 7, 10, 9, 9];
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("");
}

export async function agentLoopBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "kc-bench-loop-"));
  const kernel = await createStandardKernel({ agentDir: join(dir, "agent"), cacheDir: false });
  const warnings: string[] = [];
  try {
    console.log(
      `agent loop: ${TOOL_TURNS} tool-call turns + 1 text turn, scripted provider (median of ${ROUNDS} rounds)` +
        `${gc ? "" : ", heap approx (run node with --expose-gc for exact)"}`,
    );
    console.log(row(["session", "turns", "total ms", "ms/turn", "heap MB"]));
    for (const mode of modes) {
      await runOnce(kernel, dir, mode, warnings); // warm-up
      const times: number[] = [];
      const heaps: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const { ms, heapMb } = await runOnce(kernel, dir, mode, warnings);
        times.push(ms);
        heaps.push(heapMb);
      }
      const total = median(times);
      console.log(
        row([
          mode.name,
          String(TURNS),
          total.toFixed(1),
          (total / TURNS).toFixed(3),
          `${gc ? "" : "~"}${median(heaps).toFixed(1)}`,
        ]),
      );
    }
  } finally {
    await kernel.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

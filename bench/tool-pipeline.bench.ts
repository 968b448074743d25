/**
 * Per-call overhead of the tool pipeline: argument validation, the `tool_call` gate, execution of a trivial tool,
 * `tool_result` patches and the `tool_execution_*` events, with 0 and 50 handlers on each event.
 */
import { Type } from "@sinclair/typebox";
import { HookBus } from "../kernel/events/hook-bus.js";
import { ToolRunner } from "../plugins/agent-loop/tool-runner.js";
import { ToolRegistry } from "../plugins/tool-registry/tool-registry.js";

const CALLS = 5_000;
const ROUNDS = 5;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function setup(handlers: number): ToolRunner {
  const bus = new HookBus({ onHandlerError: () => {} });
  const registry = new ToolRegistry();
  const owner = { id: "bench:tools", origin: "cli" as const, order: 0 };
  registry.registerTool(owner, {
    name: "noop",
    description: "does nothing",
    parameters: Type.Object({ path: Type.String(), count: Type.Optional(Type.Integer()) }),
    execute: async () => ({ content: [{ type: "text", text: "ok" }], details: undefined }),
  });
  for (let i = 0; i < handlers; i++) {
    const handlerOwner = { id: `bench:${i}`, origin: "cli" as const, order: i + 1 };
    bus.on("tool_call", () => undefined, handlerOwner);
    bus.on("tool_result", () => undefined, handlerOwner);
    bus.on("tool_execution_start", () => {}, handlerOwner);
    bus.on("tool_execution_end", () => {}, handlerOwner);
  }
  const ctx = { cwd: "/" } as never;
  return new ToolRunner(registry, bus, () => ctx);
}

export async function toolPipelineBench(): Promise<void> {
  const lines = [
    `tool pipeline (median of ${ROUNDS} rounds of ${CALLS} calls)`,
    `${"handlers per event".padEnd(22)}${"µs/call".padStart(10)}`,
  ];
  for (const handlers of [0, 50]) {
    const runner = setup(handlers);
    const call = (i: number) =>
      runner.run(`call_${i}`, "noop", { path: "a.txt", count: i }, { signal: undefined, fromModel: false });
    for (let i = 0; i < 500; i++) await call(i);
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) await call(i);
      rounds.push(Number(process.hrtime.bigint() - started) / 1000 / CALLS);
    }
    lines.push(`${String(handlers).padEnd(22)}${median(rounds).toFixed(2).padStart(10)}`);
  }
  console.log(`${lines.join("\n")}\n`);
}

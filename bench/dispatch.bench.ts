/**
 * HookBus dispatch cost: one notify and one transform event with 1 and 50 handlers, plus the `has` check that
 * hot events make before building their payload. The `context` rows with messages show what checking each
 * handler's return against the event's schema costs on a real conversation (kernel/events/returns.ts).
 */
import type { HandlerOwner } from "../kernel/events/hook-bus.js";
import { HookBus } from "../kernel/events/hook-bus.js";

const ROUNDS = 5;
const WARMUP = 2_000;
const HAS_CHECKS = 1_000_000;

interface Case {
  event: "agent_start" | "context";
  kind: "notify" | "transform";
  handlers: number;
  iterations: number;
  /** Messages in the `context` value each handler returns (and the bus checks). */
  messages?: number;
}

const cases: readonly Case[] = [
  { event: "agent_start", kind: "notify", handlers: 1, iterations: 20_000 },
  { event: "agent_start", kind: "notify", handlers: 50, iterations: 5_000 },
  { event: "context", kind: "transform", handlers: 1, iterations: 20_000 },
  { event: "context", kind: "transform", handlers: 50, iterations: 5_000 },
  { event: "context", kind: "transform", handlers: 1, iterations: 2_000, messages: 200 },
];

/** A conversation of `n` messages: user prompts and assistant answers with a text block and a tool call. */
function conversation(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { role: "user", content: `question ${i}`, timestamp: i }
      : {
          role: "assistant",
          content: [
            { type: "text", text: "an answer of a few words" },
            { type: "toolCall", id: `call_${i}`, name: "read", arguments: { path: "notes.txt" } },
          ],
          timestamp: i,
        },
  );
}

const ctx = undefined;

function owner(i: number): HandlerOwner {
  return { id: `bench:${i}`, order: i, origin: "cli" };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A fresh bus per case, so one case's handlers never run in another. */
function busFor(c: Case): HookBus {
  const bus = new HookBus({ onHandlerError: () => {} });
  for (let i = 0; i < c.handlers; i++) {
    if (c.kind === "notify") bus.on(c.event, () => {}, owner(i));
    else bus.on(c.event, (value: { messages: unknown[] }) => ({ messages: value.messages }), owner(i));
  }
  return bus;
}

function dispatcher(bus: HookBus, c: Case): () => Promise<unknown> {
  // The cases name one notify event (agent_start) and one transform event (context).
  if (c.kind === "notify") return () => bus.emit("agent_start", {}, ctx);
  const messages = conversation(c.messages ?? 0) as never[];
  return () => bus.transform("context", { messages }, ctx);
}

/** Microseconds per dispatch over `iterations` sequential dispatches. */
async function time(dispatch: () => Promise<unknown>, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await dispatch();
  return Number(process.hrtime.bigint() - start) / 1_000 / iterations;
}

/** Nanoseconds per `has` check on an event nobody listens to. */
function timeHas(bus: HookBus, event: string): number {
  let hits = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < HAS_CHECKS; i++) if (bus.has(event)) hits++;
  const ns = Number(process.hrtime.bigint() - start) / HAS_CHECKS;
  // Using the result keeps the loop from being optimised away.
  if (hits !== 0) throw new Error(`${event} unexpectedly has listeners`);
  return ns;
}

function row(cells: readonly string[]): string {
  const widths = [17, 12, 17];
  return cells.map((c, i) => (i < widths.length ? c.padEnd(widths[i]!) : c)).join("");
}

export async function dispatchBench(): Promise<void> {
  console.log(`dispatch (median of ${ROUNDS} rounds)`);
  console.log(row(["event", "kind", "handlers", "µs/dispatch"]));
  for (const c of cases) {
    const dispatch = dispatcher(busFor(c), c);
    // Warm-up lets the JIT settle and builds the bus's cached tapable hook before timing starts.
    for (let i = 0; i < WARMUP; i++) await dispatch();
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await time(dispatch, c.iterations));
    const label = c.messages ? `${c.handlers} (${c.messages} msgs)` : String(c.handlers);
    console.log(row([c.event, c.kind, label, median(rounds).toFixed(3)]));
  }

  const bus = new HookBus({ onHandlerError: () => {} });
  timeHas(bus, "message_update"); // warm-up
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(timeHas(bus, "message_update"));
  console.log("");
  console.log(`has() with no listener (median of ${ROUNDS} rounds)`);
  console.log(row(["event", "kind", "handlers", "ns/check"]));
  console.log(row(["message_update", "notify", "0", median(rounds).toFixed(2)]));
}

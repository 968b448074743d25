/**
 * A session-level run around the turn loop: retries with their events, the settle boundary and its bound. The
 * turn loop is replaced by a list of outcomes, so each test states exactly what the low-level runs returned.
 */

import { expect } from "chai";
import {
  type AgentMessage,
  type AssistantMessage,
  type BoundaryState,
  type ExtensionContext,
  HookBus,
} from "../../../kernel/index.js";
import { MAX_CONTINUATIONS, runAgent } from "../../../plugins/agent-loop/agent-run.js";
import type { TurnsOutcome } from "../../../plugins/agent-loop/turn-loop.js";
import type { RetrySettings } from "../../../plugins/settings/settings.js";

const owner = { id: "test:run", order: 0 };
const RECORDED = ["agent_end", "auto_retry_start", "auto_retry_end", "agent_before_settle"];

const failed = (errorKind: AssistantMessage["errorKind"], errorMessage: string): TurnsOutcome => {
  const error = { role: "assistant", stopReason: "error", errorKind, errorMessage } as AssistantMessage;
  return { kind: "error", messages: [error], error };
};
const done: TurnsOutcome = { kind: "done", messages: [] };

function setup(outcomes: TurnsOutcome[], retry: Partial<RetrySettings> = {}) {
  const bus = new HookBus({ onHandlerError: () => {} });
  const events: Record<string, unknown>[] = [];
  for (const name of RECORDED) {
    bus.on(name, (event: object) => void events.push({ type: name, ...event }), owner);
  }
  const inputs: (readonly AgentMessage[])[] = [];
  const commits: BoundaryState[] = [];
  const ctx = {} as ExtensionContext;
  const config = {
    bus,
    context: () => ctx,
    retry: () => ({ enabled: true, maxRetries: 3, baseDelayMs: 1, maxDelayMs: 10, ...retry }),
    turns: async (input: readonly AgentMessage[]) => {
      inputs.push(input);
      return outcomes.shift() ?? done;
    },
    commit: async (state: BoundaryState) => void commits.push(state),
  };
  const types = () => events.map((e) => e.type);
  return { bus, events, types, inputs, commits, config };
}

const prompt: AgentMessage = { role: "user", content: "go", timestamp: 0 };

describe("agent run", () => {
  it("ends a finished run with agent_end and one agent_before_settle", async () => {
    const t = setup([done]);
    expect(await runAgent([prompt], t.config, new AbortController().signal)).to.deep.equal({
      aborted: false,
    });
    expect(t.events).to.deep.equal([
      { type: "agent_end", messages: [], willRetry: false },
      { type: "agent_before_settle", messages: [], entries: [], continue: false, end: false },
    ]);
    expect(t.inputs).to.deep.equal([[prompt]]);
    expect(t.commits).to.have.length(1);
  });

  it("retries a retryable failure after the planned delay and reports the retry's success as attempt 2 (json.md)", async () => {
    const t = setup([failed("overloaded", "529 overloaded"), done], { baseDelayMs: 4 });
    await runAgent([prompt], t.config, new AbortController().signal);
    expect(t.types()).to.deep.equal([
      "agent_end",
      "auto_retry_start",
      "agent_end",
      "auto_retry_end",
      "agent_before_settle",
    ]);
    expect(t.events.filter((e) => e.type === "agent_end").map((e) => e.willRetry)).to.deep.equal([
      true,
      false,
    ]);
    expect(t.events[1]).to.deep.equal({
      type: "auto_retry_start",
      attempt: 1,
      maxAttempts: 3,
      delayMs: 4,
      errorMessage: "529 overloaded",
    });
    expect(t.events[3]).to.deep.equal({ type: "auto_retry_end", success: true, attempt: 2 });
    // The retry repeats the request: the prompt is already in the transcript.
    expect(t.inputs).to.deep.equal([[prompt], []]);
  });

  it("gives up after maxRetries with the last error and does not settle, counting every attempt", async () => {
    const t = setup([failed("rate_limit", "a"), failed("rate_limit", "b"), failed("rate_limit", "c")], {
      maxRetries: 2,
    });
    expect(await runAgent([prompt], t.config, new AbortController().signal)).to.deep.equal({
      aborted: false,
    });
    expect(t.events.filter((e) => e.type === "auto_retry_start").map((e) => e.attempt)).to.deep.equal([1, 2]);
    expect(t.events.at(-1)).to.deep.equal({
      type: "auto_retry_end",
      success: false,
      attempt: 3,
      finalError: "c",
    });
    expect(t.types()).to.not.include("agent_before_settle");
  });

  it("ends at a failure that is not retryable, reporting a failed retry only if one was made", async () => {
    const first = setup([failed("auth", "bad key")]);
    await runAgent([prompt], first.config, new AbortController().signal);
    expect(first.events).to.deep.equal([
      { type: "agent_end", messages: first.events[0]!.messages, willRetry: false },
    ]);

    const second = setup([failed("network", "reset"), failed("bad_request", "too long")]);
    await runAgent([prompt], second.config, new AbortController().signal);
    expect(second.events.at(-1)).to.deep.equal({
      type: "auto_retry_end",
      success: false,
      attempt: 2,
      finalError: "too long",
    });
  });

  it("stops waiting for a retry when the signal aborts, and says so, counting only the attempt that ran", async () => {
    const t = setup([failed("overloaded", "busy"), done], { baseDelayMs: 60_000, maxDelayMs: 60_000 });
    const controller = new AbortController();
    t.bus.on("auto_retry_start", () => void setTimeout(() => controller.abort(), 5), owner);
    const started = Date.now();
    expect(await runAgent([prompt], t.config, controller.signal)).to.deep.equal({ aborted: true });
    expect(Date.now() - started).to.be.lessThan(10_000);
    expect(t.events.at(-1)).to.deep.equal({
      type: "auto_retry_end",
      success: false,
      attempt: 1,
      finalError: "aborted",
    });
    expect(t.inputs).to.have.length(1);
  });

  it("does not retry a run that was aborted, whatever its error", async () => {
    const controller = new AbortController();
    controller.abort();
    const t = setup([failed("overloaded", "busy")]);
    expect(await runAgent([prompt], t.config, controller.signal)).to.deep.equal({ aborted: true });
    expect(t.events).to.have.length(1);
    expect(t.events[0]!.willRetry).to.equal(false);
  });

  it("runs again while agent_before_settle asks to continue, at most MAX_CONTINUATIONS times", async () => {
    const t = setup([]);
    t.bus.on("agent_before_settle", () => ({ continue: true }), owner);
    await runAgent([prompt], t.config, new AbortController().signal);
    expect(t.inputs).to.have.length(MAX_CONTINUATIONS + 1);
    expect(t.commits.every((c) => c.continue)).to.equal(true);
  });

  it("stops continuing when a handler ends the run, and skips settle for a run a boundary ended", async () => {
    const t = setup([]);
    t.bus.on("agent_before_settle", () => ({ continue: true }), owner);
    t.bus.on("agent_before_settle", () => ({ end: true }), { id: "test:end", order: 1 });
    await runAgent([prompt], t.config, new AbortController().signal);
    expect(t.inputs).to.have.length(1);

    const ended = setup([{ kind: "end", messages: [] }]);
    await runAgent([prompt], ended.config, new AbortController().signal);
    expect(ended.types()).to.deep.equal(["agent_end"]);
  });
});

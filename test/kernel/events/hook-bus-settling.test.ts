/**
 * What the hook bus offers so a run can always settle: `pending()` lists the handlers called and not settled (to
 * name what a stuck run waits for), and a gate's `timeoutMs` makes a handler that does not answer in time fail
 * closed, blamed as a throwing one is, with its late answer ignored.
 */

import { expect } from "chai";
import { type HandlerErrorReport, type HandlerOwner, HookBus } from "../../../kernel/index.js";

const owner = (id: string, order = 0): HandlerOwner => ({ id, order });

describe("hook bus: pending handlers and gate time limits", () => {
  let reports: HandlerErrorReport[];
  let bus: HookBus;
  beforeEach(() => {
    reports = [];
    bus = new HookBus({ onHandlerError: (r) => reports.push(r) });
  });

  it("lists a handler while its promise is unsettled, and no more once it settles", async () => {
    let release: () => void = () => {};
    bus.on("turn_start", () => new Promise<void>((r) => (release = r)), owner("cli:/ext/slow.ts"));
    bus.on("turn_start", () => undefined, owner("cli:/ext/sync.ts", 1));
    const emitted = bus.emit("turn_start", { turnIndex: 0, timestamp: 0 });
    await new Promise((r) => setImmediate(r));
    expect(bus.pending().map((p) => [p.owner.id, p.event])).to.deep.equal([
      ["cli:/ext/slow.ts", "turn_start"],
    ]);
    release();
    await emitted;
    expect(bus.pending()).to.deep.equal([]);
  });

  it("fails a gate closed when a handler does not answer within timeoutMs, blaming it", async () => {
    // The handler answers only when the test lets it, after the gate has decided: the gate cannot have waited for
    // it, and the bound on the time allows a loaded machine.
    let late = false;
    let answer!: () => void;
    bus.on(
      "tool_call",
      () =>
        new Promise((r) => {
          answer = () => {
            late = true;
            r(undefined);
          };
        }),
      owner("cli:/ext/slow-gate.ts"),
    );
    const started = Date.now();
    const decision = await bus.gate(
      "tool_call",
      { toolCallId: "c1", toolName: "read", input: {} },
      undefined,
      {
        failClosed: (error, who) => ({ block: true, reason: `${who.id}: ${(error as Error).message}` }),
        isDecision: (r) => r?.block === true,
        timeoutMs: 50,
      },
    );
    expect(Date.now() - started).to.be.below(2000);
    expect(late).to.equal(false);
    expect(decision).to.deep.equal({
      block: true,
      reason: "cli:/ext/slow-gate.ts: did not answer within 50 ms",
    });
    expect(reports.map((r) => [r.owner.id, r.event, (r.error as Error).message])).to.deep.equal([
      ["cli:/ext/slow-gate.ts", "tool_call", "did not answer within 50 ms"],
    ]);
    answer();
    await new Promise((r) => setImmediate(r));
  });

  it("takes a gate handler's answer that comes in time, and has no limit without timeoutMs", async () => {
    bus.on(
      "tool_call",
      () => new Promise((r) => setTimeout(() => r({ block: true, reason: "no" }), 80)),
      owner("cli:/ext/gate.ts"),
    );
    const options = {
      failClosed: () => ({ block: true }),
      isDecision: (r: { block?: boolean }) => r?.block === true,
    };
    const payload = { toolCallId: "c1", toolName: "read", input: {} };
    expect(await bus.gate("tool_call", payload, undefined, { ...options, timeoutMs: 1_000 })).to.deep.equal({
      block: true,
      reason: "no",
    });
    expect(await bus.gate("tool_call", payload, undefined, options)).to.deep.equal({
      block: true,
      reason: "no",
    });
    expect(reports).to.deep.equal([]);
  });
});

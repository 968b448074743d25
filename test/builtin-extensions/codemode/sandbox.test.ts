/**
 * The codemode sandbox pool on its own: the process-wide cap on running sandboxes, the first-come queue behind it,
 * an abort while queued, and the warm worker.
 */
import { expect } from "chai";
import {
  drainPool,
  poolState,
  runScript,
  SandboxAbortedError,
  type ScriptRequest,
} from "../../../builtin-extensions/codemode/sandbox.js";

const request = (code: string, extra: Partial<ScriptRequest> = {}): ScriptRequest => ({
  code,
  tools: [{ name: "hold", keys: ["hold"], namespaces: [] }],
  catalogue: JSON.stringify({ tools: [], namespaces: [] }),
  timeoutMs: 10_000,
  memoryMb: 32,
  maxConcurrent: 1,
  onCall: async () => ({ value: "held" }),
  ...extra,
});

describe("the codemode sandbox pool", function () {
  this.timeout(30_000);
  after(() => drainPool());

  it("runs one script at a time under maxConcurrent 1, the others in arrival order", async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = runScript(
      request("await tools.hold({}); return 'first';", {
        onCall: async () => {
          order.push("first running");
          await held;
          return { value: null };
        },
      }),
    );
    // The first script is inside its tool call before the others arrive.
    while (order.length === 0) await new Promise((r) => setTimeout(r, 5));
    const second = runScript(request("return 'second';")).then((r) => order.push(`second ${r.outcome.ok}`));
    const third = runScript(request("return 'third';")).then((r) => order.push(`third ${r.outcome.ok}`));
    await new Promise((r) => setTimeout(r, 50));
    expect(poolState()).to.deep.include({ running: 1, queued: 2 });
    release();
    const done = await first;
    await Promise.all([second, third]);
    expect(done.outcome).to.deep.equal({ ok: true, json: '"first"' });
    expect(order).to.deep.equal(["first running", "second true", "third true"]);
    expect(poolState()).to.deep.include({ running: 0, queued: 0 });
  });

  it("leaves the queue when aborted while waiting", async () => {
    const controller = new AbortController();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = false;
    const first = runScript(
      request("await tools.hold({});", {
        onCall: async () => {
          started = true;
          await held;
          return { value: null };
        },
      }),
    );
    while (!started) await new Promise((r) => setTimeout(r, 5));
    const waiting = runScript(request("return 1;", { signal: controller.signal }));
    controller.abort();
    let error: unknown;
    try {
      await waiting;
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(SandboxAbortedError);
    expect(poolState().queued).to.equal(0);
    release();
    await first;
  });

  it("starts cold once, then reuses the warm worker with a fresh runtime per script", async () => {
    await drainPool();
    const cold = await runScript(request("globalThis.leftover = 1; return typeof leftover;"));
    const warm = await runScript(request("return typeof leftover;"));
    expect(cold.coldStart).to.equal(true);
    expect(warm.coldStart).to.equal(false);
    expect(warm.outcome).to.deep.equal({ ok: true, json: '"undefined"' });
    expect(poolState().idle).to.equal(1);
  });
});

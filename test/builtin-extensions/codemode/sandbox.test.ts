/**
 * The codemode sandbox pool on its own: the process-wide cap on running sandboxes, the first-come queue behind it,
 * an abort while queued, and the warm worker; and what may cross from a sandbox to the host.
 */
import { expect } from "chai";
import { CROSSING } from "../../../builtin-extensions/codemode/protocol.js";
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

  it("does not reuse a warm worker made for another memory limit (its wasm memory's maximum is that limit)", async () => {
    await drainPool();
    await runScript(request("return 1;", { memoryMb: 32 }));
    const other = await runScript(request("return 1;", { memoryMb: 48 }));
    const same = await runScript(request("return 1;", { memoryMb: 48 }));
    expect([other.coldStart, same.coldStart]).to.deep.equal([true, false]);
    expect(poolState().idle).to.equal(1);
  });
});

describe("what crosses from the codemode sandbox to the host", function () {
  this.timeout(30_000);
  after(() => drainPool());

  const logged = async (code: string) => {
    const lines: { level: string; text: string }[] = [];
    const result = await runScript(
      request(code, { memoryMb: 64, onLog: (level, text) => lines.push({ level, text }) }),
    );
    return { result, lines, chars: lines.reduce((n, l) => n + l.text.length, 0) };
  };

  it("cuts a console line past the line cap before it leaves the sandbox", async () => {
    const { result, lines } = await logged("console.log('x'.repeat(5 << 20)); return 'done';");
    expect(result.outcome).to.deep.equal({ ok: true, json: '"done"' });
    expect(lines).to.have.length(1);
    expect(lines[0]!.text.length).to.be.below(CROSSING.logLineChars + 100);
    expect(lines[0]!.text).to.match(/\[line cut: 5242880 characters in all\]$/);
  });

  it("keeps the head and the tail of long console output and says what was dropped between", async () => {
    const { lines, chars } = await logged(
      "for (let i = 0; i < 5000; i++) console.log('line ' + i + ' ' + 'y'.repeat(1000)); return 1;",
    );
    expect(chars).to.be.at.most(CROSSING.logHeadChars + CROSSING.logTailChars + 1000);
    expect(lines[0]!.text).to.match(/^line 0 /);
    expect(lines.at(-1)!.text).to.match(/^line 4999 /);
    const note = lines.find((l) => l.level === "warn" && l.text.includes("dropped"));
    expect(note?.text).to.match(/\d+ line\(s\), [\d.]+ MB, dropped here/);
  });

  it("refuses a returned value past the message cap", async () => {
    const { result } = await logged("return 'z'.repeat(5 << 20);");
    expect(result.outcome.ok).to.equal(false);
    expect(result.outcome).to.include({ kind: "script" });
    expect((result.outcome as { message: string }).message).to.contain("over the 4.0 MB a script may return");
  });

  it("rejects, inside the script, a tool call whose arguments pass the message cap", async () => {
    let calls = 0;
    const result = await runScript(
      request(
        "try { await tools.hold({ text: 'w'.repeat(5 << 20) }); return 'passed'; } catch (e) { return e.message; }",
        {
          memoryMb: 64,
          onCall: async () => {
            calls++;
            return { value: null };
          },
        },
      ),
    );
    expect(calls).to.equal(0);
    expect(result.outcome.ok).to.equal(true);
    expect((result.outcome as { json: string }).json).to.contain("over the 4.0 MB a tool call may pass");
  });

  it("bounds the text of a huge error", async () => {
    const { result } = await logged("throw new Error('e'.repeat(5 << 20));");
    expect(result.outcome).to.include({ ok: false, kind: "script" });
    expect((result.outcome as { message: string }).message.length).to.be.below(CROSSING.errorChars + 1000);
  });
});

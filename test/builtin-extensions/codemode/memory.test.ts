/**
 * The codemode sandbox's memory limit bounds the host process: memory bombs run in a child process of their own
 * (fixtures/memory-bomb.ts) and its peak RSS must stay within the limit of each sandbox plus a fixed allowance. Before
 * the wasm memory had the limit as its maximum, one such script took the host to 2 GB.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const FIXTURE = fileURLToPath(new URL("./fixtures/memory-bomb.ts", import.meta.url));
/** What a sandbox may add to the host besides its memory limit: its worker thread and V8 heap. */
const ALLOWANCE_MB = 100;

interface BombReport {
  baselineMb: number;
  peakMb: number;
  outcomes: { ok: boolean; kind?: string; message?: string }[];
  overCeiling: boolean;
}

function bomb(code: string, bombs: number, memoryMb: number): Promise<BombReport> {
  const ceilingMb = bombs * memoryMb + ALLOWANCE_MB + 200;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=knightcode-source",
        FIXTURE,
        JSON.stringify({ code, bombs, memoryMb, ceilingMb }),
      ],
      { timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split("\n").pop()!) as BombReport);
      },
    );
  });
}

describe("the codemode sandbox's memory", function () {
  this.timeout(40_000);

  const strings = "const kept = []; for (;;) { kept.push('x'.repeat(1 << 20)); console.log(kept.length); }";

  it("stops a script keeping 1 MB strings at its limit, and the host grows by no more than the limit plus 100 MB", async () => {
    const memoryMb = 32;
    const report = await bomb(strings, 1, memoryMb);
    expect(report.overCeiling, JSON.stringify(report)).to.equal(false);
    expect(report.outcomes).to.have.length(1);
    expect(report.outcomes[0]).to.include({ ok: false, kind: "memory" });
    expect(report.peakMb - report.baselineMb, JSON.stringify(report)).to.be.below(memoryMb + ALLOWANCE_MB);
  });

  it("keeps two bombs at once within twice the limit plus 100 MB", async () => {
    const memoryMb = 32;
    const report = await bomb(
      "const kept = []; for (;;) kept.push(new Array(1 << 16).fill(kept.length));",
      2,
      memoryMb,
    );
    expect(report.overCeiling, JSON.stringify(report)).to.equal(false);
    expect(report.outcomes.map((o) => o.kind)).to.deep.equal(["memory", "memory"]);
    expect(report.peakMb - report.baselineMb, JSON.stringify(report)).to.be.below(
      2 * memoryMb + ALLOWANCE_MB,
    );
  });
});

/**
 * Resuming long sessions: files of 10,000, 100,000, 300,000 and 1,000,000 entries shaped like a coding session (a user
 * message of ~0.5 KB, an assistant answer of ~1.5 KB with a tool call, a tool result of ~4 KB; a compaction every
 * 400 entries keeping the last 40, as a long run with a 200k-token window would write), plus 100,000 entries with
 * no compaction, whose whole branch is the context. Each measurement runs in a child process
 * (bench/session-resume-child.ts) so its peak RSS (getrusage high-water, start-up included) is its own:
 * - store: `SessionManager.open` + `buildContext()`;
 * - --session: `createAgentSession({ session: { path } })`, the real SDK path; `-c`: the same through
 *   `continue` (a listing of the cwd's sessions, then the open); `list`: the listing alone (cold summary cache).
 * A `new session` row gives the SDK's start-up without a file, the floor the resume rows stand on.
 * Run alone with `npm run bench -- session-resume`. The 1M file is ~2 GB; set KC_BENCH_RESUME_MAX=300000 to skip it.
 *
 * Then the goal (the reliability issue's): `-c` onto 100,000 and 300,000 entries in at most 1 s of wall time each,
 * with a peak RSS that does not grow with the file (300,000 entries within 10% of 100,000's), each marked met or not;
 * and the app-server's `thread/read` (with turns) of the same files from a server that has not loaded them (dist/,
 * so `npm run build` first): its round trip against the same 1 s, and the server's peak RSS.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cwdSessionDir, sessionFileName } from "../plugins/session-store/paths.js";

const child = fileURLToPath(new URL("./session-resume-child.ts", import.meta.url));
const MAX_ENTRIES = Number(process.env.KC_BENCH_RESUME_MAX ?? 1_000_000);
const COMPACT_EVERY = 400;
const KEEP = 40;
/** The goal for `-c`: wall time per resume, and how much the peak RSS may grow from 100,000 to 300,000 entries. */
const GOAL_MS = 1_000;
const GOAL_RSS_GROWTH = 0.1;

interface Sample {
  ms: number;
  cpuMs: number;
  rssMb: number;
  messages: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const prose = "The quick brown fox jumps over the lazy dog while the compiler reports no errors. ";
const usage = JSON.stringify({
  input: 41200,
  output: 300,
  cacheRead: 40000,
  cacheWrite: 0,
  totalTokens: 81500,
  cost: { input: 0.001, output: 0.002, cacheRead: 0.0001, cacheWrite: 0, total: 0.0031 },
});
const userText = JSON.stringify(prose.repeat(6));
const answerText = JSON.stringify(prose.repeat(18));
const resultText = JSON.stringify(prose.repeat(48));
const summary = JSON.stringify(`## Goal\n${prose.repeat(20)}`);

/** The `message` of entry `i`: user → assistant (tool call) → tool result, over and over. */
function messageJson(i: number, time: number): string {
  switch (i % 3) {
    case 0:
      return `{"role":"user","content":${userText},"timestamp":${time}}`;
    case 1:
      return `{"role":"assistant","content":[{"type":"text","text":${answerText}},{"type":"toolCall","id":"call_${i}","name":"read","arguments":{"path":"src/file-${i}.ts"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-bench","usage":${usage},"stopReason":"toolUse","timestamp":${time}}`;
    default:
      return `{"role":"toolResult","toolCallId":"call_${i - 1}","toolName":"read","content":[{"type":"text","text":${resultText}}],"isError":false,"timestamp":${time}}`;
  }
}

/** Writes a linear session of `entries` entries into `cwd`'s session dir and returns its path. */
export function writeBenchSession(agentDir: string, cwd: string, entries: number, compact: boolean): string {
  const start = Date.parse("2026-01-01T00:00:00.000Z");
  const id = `00000000-0000-4000-8000-${entries.toString().padStart(12, "0")}`;
  const timestamp = new Date(start).toISOString();
  const dir = cwdSessionDir(join(agentDir, "sessions"), cwd);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, sessionFileName(timestamp, id));
  const fd = openSync(file, "w");
  try {
    let batch = `${JSON.stringify({ type: "session", version: 3, id, timestamp, cwd })}\n`;
    const ids: string[] = [];
    for (let i = 0; i < entries; i++) {
      const entryId = i.toString(16).padStart(8, "0");
      const parent = i === 0 ? "null" : `"${ids[i - 1]}"`;
      const time = start + i * 1000;
      const head = `{"type":"%","id":"${entryId}","parentId":${parent},"timestamp":"${new Date(time).toISOString()}"`;
      if (compact && i % COMPACT_EVERY === COMPACT_EVERY - 1) {
        const kept = ids[i - KEEP];
        batch += `${head.replace("%", "compaction")},"summary":${summary},"firstKeptEntryId":"${kept}","tokensBefore":150000}\n`;
      } else {
        batch += `${head.replace("%", "message")},"message":${messageJson(i, time)}}\n`;
      }
      ids.push(entryId);
      if (batch.length > 1 << 20) {
        writeSync(fd, batch);
        batch = "";
      }
    }
    writeSync(fd, batch);
  } finally {
    closeSync(fd);
  }
  return file;
}

function run(args: string[]): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=knightcode-source", child, ...args],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    proc.stdout.on("data", (chunk) => {
      out += chunk;
    });
    proc.stderr.on("data", (chunk) => {
      err += chunk;
    });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 300_000);
    proc.on("error", reject);
    proc.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`session-resume-child ${args[0]} failed (${code}): ${err}`));
      resolve(JSON.parse(out.trim().split("\n").at(-1)!) as Sample);
    });
  });
}

async function measure(rounds: number, args: string[]): Promise<Sample> {
  const samples: Sample[] = [];
  for (let i = 0; i < rounds; i++) samples.push(await run(args));
  return pick(samples);
}

function pick(samples: Sample[]): Sample {
  return {
    ms: median(samples.map((s) => s.ms)),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    rssMb: median(samples.map((s) => s.rssMb)),
    messages: samples[0]!.messages,
  };
}

const cell = (s: Sample) =>
  `${s.ms.toFixed(0).padStart(6)} ${s.cpuMs.toFixed(0).padStart(6)} ${s.rssMb.toFixed(0).padStart(5)}`;
const HEAD = `${"ms".padStart(6)} ${"cpu".padStart(6)} ${"MB".padStart(5)}`;

export async function sessionResumeBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "kc-bench-resume-"));
  try {
    const agentDir = join(root, "agent");
    const cases = [
      { entries: 10_000, compact: true },
      { entries: 100_000, compact: true },
      { entries: 100_000, compact: false },
      { entries: 300_000, compact: true },
      { entries: 1_000_000, compact: true },
    ].filter((c) => c.entries <= MAX_ENTRIES);

    console.log(
      "session resume (each in its own process: wall ms, CPU ms, peak RSS MB; median of 3, 1 round for 1M)",
    );
    const columns = ["store", "--session", "-c", "list"].map((c) => c.padStart(19)).join("  ");
    console.log(`${"".padEnd(39)}  ${columns}`);
    console.log(
      `${"entries".padEnd(22)}${"file MB".padStart(8)}${"context".padStart(9)}  ${[1, 2, 3, 4].map(() => HEAD).join("  ")}`,
    );
    const floorCwd = join(root, "floor");
    mkdirSync(floorCwd);
    const floor = await measure(3, ["new", floorCwd, agentDir]);
    console.log(
      `${"new session (floor)".padEnd(22)}${"".padStart(8)}${"".padStart(9)}  ${"".padStart(19)}  ${cell(floor)}`,
    );

    const goal = new Map<number, Sample>();
    const reads = new Map<number, Sample>();
    for (const { entries, compact } of cases) {
      const cwd = join(root, `p${entries}${compact ? "" : "-full"}`);
      mkdirSync(cwd);
      const file = writeBenchSession(agentDir, cwd, entries, compact);
      const rounds = entries >= 1_000_000 ? 1 : 3;
      const store = await measure(rounds, ["store", cwd, agentDir, file]);
      const sdk = await measure(rounds, ["sdk", cwd, agentDir, file]);
      // A cold listing each round: the summary cache is under the session root, removed before each run.
      const index = join(agentDir, "sessions", ".session-index.json");
      const list: Sample[] = [];
      const resumed: Sample[] = [];
      for (let i = 0; i < rounds; i++) {
        rmSync(index, { force: true });
        list.push(await run(["list", cwd, agentDir]));
        rmSync(index, { force: true });
        resumed.push(await run(["continue", cwd, agentDir]));
      }
      if (compact) goal.set(entries, pick(resumed));
      if (compact && (entries === 100_000 || entries === 300_000))
        reads.set(entries, await measure(3, ["read", cwd, agentDir, file]));
      const label = `${entries.toLocaleString("en-US")}${compact ? "" : " (no compaction)"}`;
      console.log(
        `${label.padEnd(22)}${(statSync(file).size / 2 ** 20).toFixed(0).padStart(8)}${String(sdk.messages).padStart(9)}  ${cell(store)}  ${cell(sdk)}  ${cell(pick(resumed))}  ${cell(pick(list))}`,
      );
      rmSync(file, { force: true });
    }
    printGoal(goal, reads);
    console.log();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const met = (ok: boolean) => (ok ? "met" : "NOT met");

/** The issue's goal against the `-c` rows of 100,000 and 300,000 entries (compacting). */
function printGoal(resumed: Map<number, Sample>, reads: Map<number, Sample>): void {
  console.log(
    `goal: -c resumes in <= ${GOAL_MS} ms with a peak RSS that does not grow with the file (300,000 within ${GOAL_RSS_GROWTH * 100}% of 100,000)`,
  );
  for (const entries of [100_000, 300_000]) {
    const sample = resumed.get(entries);
    if (!sample) continue;
    console.log(
      `  ${`${entries.toLocaleString("en-US")} entries`.padEnd(20)}${sample.ms.toFixed(0).padStart(6)} ms ${sample.rssMb.toFixed(0).padStart(5)} MB  time ${met(sample.ms <= GOAL_MS)}`,
    );
  }
  const small = resumed.get(100_000);
  const large = resumed.get(300_000);
  if (small && large) {
    const growth = large.rssMb / small.rssMb - 1;
    console.log(
      `  peak RSS 100,000 -> 300,000 entries: ${growth >= 0 ? "+" : ""}${(growth * 100).toFixed(0)}%  memory ${met(growth <= GOAL_RSS_GROWTH)}`,
    );
  }
  for (const [entries, sample] of reads) {
    console.log(
      `  app-server thread/read, ${entries.toLocaleString("en-US")} entries: ${sample.ms.toFixed(0)} ms, ${sample.messages} turns on the page, server peak RSS ${sample.rssMb.toFixed(0)} MB  time ${met(sample.ms <= GOAL_MS)}`,
    );
  }
}

/**
 * `knightcode -c` onto a session of 100,000 entries, through the built CLI with the scripted provider. The reliability
 * probe once saw such a run exit 1 with nothing on stderr. The run must answer from the context after the last
 * compaction, with a small heap (resuming must not hold the history), and a run that does fail must say on stderr
 * what failed, even when the failure is someone else's silent `process.exit(1)`.
 */

import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cwdSessionDir, sessionFileName } from "../../../plugins/session-store/paths.js";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const ENTRIES = 100_000;
/** A compaction every 400 entries keeping the last 40, as a long run writes them. */
const COMPACT_EVERY = 400;
const KEEP = 40;

/** Writes a linear session of user/assistant pairs with compactions; returns its file and the last user text. */
function writeLargeSession(agentDir: string, cwd: string): { file: string; lastUser: string } {
  const id = "00000000-0000-4000-8000-00000000cafe";
  const start = Date.parse("2026-01-01T00:00:00.000Z");
  const timestamp = new Date(start).toISOString();
  const dir = cwdSessionDir(join(agentDir, "sessions"), cwd);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, sessionFileName(timestamp, id));
  const usage =
    '{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}';
  const fd = openSync(file, "w");
  let lastUser = "";
  try {
    let batch = `${JSON.stringify({ type: "session", version: 3, id, timestamp, cwd })}\n`;
    for (let i = 0; i < ENTRIES; i++) {
      const entryId = i.toString(16).padStart(8, "0");
      const parent = i === 0 ? "null" : `"${(i - 1).toString(16).padStart(8, "0")}"`;
      const time = start + i;
      const head = `{"type":"%","id":"${entryId}","parentId":${parent},"timestamp":"${new Date(time).toISOString()}"`;
      if (i % COMPACT_EVERY === COMPACT_EVERY - 1) {
        const kept = (i - KEEP).toString(16).padStart(8, "0");
        batch += `${head.replace("%", "compaction")},"summary":"work up to entry ${i}","firstKeptEntryId":"${kept}","tokensBefore":1000}\n`;
      } else if (i % 2 === 0) {
        lastUser = `question ${i}`;
        batch += `${head.replace("%", "message")},"message":{"role":"user","content":"${lastUser}","timestamp":${time}}}\n`;
      } else {
        batch += `${head.replace("%", "message")},"message":{"role":"assistant","content":[{"type":"text","text":"answer ${i}"}],"api":"scripted","provider":"scripted","model":"scripted","usage":${usage},"stopReason":"stop","timestamp":${time}}}\n`;
      }
      if (batch.length > 1 << 20) {
        writeSync(fd, batch);
        batch = "";
      }
    }
    writeSync(fd, batch);
  } finally {
    closeSync(fd);
  }
  return { file, lastUser };
}

describe("knightcode -c onto a session of 100,000 entries", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-large-resume-");
  const env = (extra: Record<string, string> = {}) => ({
    KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"),
    ...extra,
  });

  it("answers from the context after the last compaction, with a 48 MB heap", async () => {
    const cwd = join(tmp.path, "project");
    mkdirSync(cwd);
    const { file } = writeLargeSession(join(tmp.path, "agent"), cwd);
    const script = tmp.write("script.json", JSON.stringify({ steps: [{ text: "resumed" }] }));
    const { code, stdout, stderr } = await runCli(
      ["--provider", "scripted", "--script", script, "-c", "-p", "and now?"],
      { cwd, env: env({ NODE_OPTIONS: "--max-old-space-size=48" }), timeoutMs: 40_000 },
    );
    expect(code, stderr).to.equal(0);
    expect(stdout).to.equal("resumed\n");
    expect(stderr).to.equal("");
    // The prompt went into the 100,000-entry file, continuing its last entry.
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    const appended = lines.slice(ENTRIES + 1).map((l) => JSON.parse(l));
    const prompt = appended.find((e) => e.message?.role === "user");
    expect(prompt.parentId).to.equal((ENTRIES - 1).toString(16).padStart(8, "0"));
    expect(JSON.stringify(prompt.message.content)).to.contain("and now?");
  });

  it("says on stderr what ended a run that exits 1 without a message", async () => {
    const cwd = join(tmp.path, "project");
    mkdirSync(cwd);
    writeLargeSession(join(tmp.path, "agent"), cwd);
    const script = tmp.write("script.json", JSON.stringify({ steps: [{ text: "resumed" }] }));
    // Ends the process from inside the run, as a dependency that gives up might, and says nothing.
    const ext = tmp.write("quits.ts", `export default (k) => k.on("agent_start", () => process.exit(1));`);
    const { code, stdout, stderr } = await runCli(
      ["--provider", "scripted", "--script", script, "-e", ext, "-c", "-p", "and now?"],
      { cwd, env: env(), timeoutMs: 40_000 },
    );
    expect(code).to.equal(1);
    expect(stdout).to.equal("");
    expect(stderr).to.contain(
      "knightcode: exiting with code 1 without a message: process.exit(1) was called",
    );
    expect(stderr).to.contain(ext);
  });
});

/**
 * A session file with a corrupted middle line and a torn last line, opened by the built CLI in print, JSON and RPC
 * mode (regression: both were skipped silently). Every mode warns on stderr with the file and line, leaves the bad
 * bytes where they are, and appends after them on lines of its own.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("knightcode: a damaged session file", () => {
  const tmp = useTempDir("kc-damaged-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });

  /** header, a user message, garbage, an assistant message, then half of another entry without its newline. */
  function damagedSession(): { file: string; garbage: string; torn: string } {
    const file = join(tmp.path, "damaged.jsonl");
    const header = {
      type: "session",
      version: 3,
      id: "0a1b2c3d",
      timestamp: new Date().toISOString(),
      cwd: tmp.path,
    };
    const entry = (id: string, parentId: string | null, message: object) =>
      JSON.stringify({ type: "message", id, parentId, timestamp: new Date().toISOString(), message });
    const garbage = '{"type":"message","id":"bad###';
    const torn = entry("cccc0003", "bbbb0002", { role: "user", content: "lost", timestamp: 3 }).slice(0, 50);
    writeFileSync(
      file,
      [
        JSON.stringify(header),
        entry("aaaa0001", null, { role: "user", content: "first question", timestamp: 1 }),
        garbage,
        entry("bbbb0002", "aaaa0001", {
          role: "assistant",
          content: [{ type: "text", text: "first answer" }],
          api: "scripted",
          provider: "scripted",
          model: "scripted",
          usage: {
            input: 1,
            output: 1,
            cacheRead: 0,
            cacheWrite: 0,
            totalTokens: 2,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
          },
          stopReason: "stop",
          timestamp: 2,
        }),
        torn,
      ].join("\n"),
    );
    return { file, garbage, torn };
  }

  /** `tmp.write` returns the path it wrote. */
  const script = () => tmp.write("script.json", JSON.stringify({ steps: [{ text: "second answer" }] }));

  /** The warnings a mode must print, and the file's state after one prompt. */
  function expectWarnedAndKept(stderr: string, file: string, garbage: string, torn: string): void {
    expect(stderr).to.contain(`${file}: line 3 is not valid JSON and was skipped`);
    expect(stderr).to.contain(`${file}: line 5 is incomplete (torn write?) and was skipped`);
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines[2]).to.equal(garbage);
    expect(lines[4]).to.equal(torn);
    // What the run appended starts on the line after the torn bytes, and every one of those lines is JSON.
    const appended = lines.slice(5).filter((l) => l !== "");
    expect(appended.length).to.be.greaterThan(1);
    for (const line of appended) expect(() => JSON.parse(line), line).to.not.throw();
    const user = appended.map((l) => JSON.parse(l)).find((e) => e.message?.role === "user");
    // The new prompt continues the branch from the last entry that could be read.
    expect(user.parentId).to.equal("bbbb0002");
  }

  it("print mode warns and keeps the bad lines", async () => {
    const { file, garbage, torn } = damagedSession();
    const { code, stdout, stderr } = await runCli(
      ["--provider", "scripted", "--script", script(), "--session", file, "-p", "second question"],
      { cwd: tmp.path, env: env() },
    );
    expect(code, stderr).to.equal(0);
    expect(stdout).to.equal("second answer\n");
    expectWarnedAndKept(stderr, file, garbage, torn);
  });

  it("JSON mode warns on stderr, keeps stdout to JSON lines, and keeps the bad lines", async () => {
    const { file, garbage, torn } = damagedSession();
    const { code, stdout, stderr } = await runCli(
      [
        "--provider",
        "scripted",
        "--script",
        script(),
        "--session",
        file,
        "--mode",
        "json",
        "second question",
      ],
      { cwd: tmp.path, env: env() },
    );
    expect(code, stderr).to.equal(0);
    for (const line of stdout.trim().split("\n")) expect(() => JSON.parse(line), line).to.not.throw();
    expectWarnedAndKept(stderr, file, garbage, torn);
  });

  it("RPC mode warns on stderr and keeps the bad lines", async () => {
    const { file, garbage, torn } = damagedSession();
    const { code, stdout, stderr } = await runCli(
      ["--provider", "scripted", "--script", script(), "--session", file, "--mode", "rpc"],
      {
        cwd: tmp.path,
        env: env(),
        stdin: `${JSON.stringify({ id: "1", type: "prompt", message: "second question" })}\n`,
      },
    );
    expect(code, stderr).to.equal(0);
    expect(stdout).to.contain('"type":"agent_settled"');
    expectWarnedAndKept(stderr, file, garbage, torn);
  });
});

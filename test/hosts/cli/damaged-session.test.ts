/**
 * A session file with a corrupted middle line and a torn last line, opened by the built CLI in print, JSON and RPC
 * mode (regression: both were skipped silently). Every mode warns on stderr with the file and line, leaves the bad
 * bytes where they are, and appends after them on lines of its own.
 */

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
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

/**
 * Lines that are valid JSON but not a valid entry of their type (regression: `"message": null` made the file
 * unopenable with a generic TypeError and exit 1). Each is skipped with a warning naming the file, the line and
 * what is wrong; its children are re-attached so the branch still reaches the root.
 */
describe("knightcode: a session file with entries of a bad shape", () => {
  const tmp = useTempDir("kc-badshape-");
  const agentDir = () => join(tmp.path, "agent");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: agentDir() });
  const script = () => tmp.write("script.json", JSON.stringify({ steps: [{ text: "second answer" }] }));
  const now = () => new Date().toISOString();
  const usage = {
    input: 1,
    output: 1,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 2,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };

  /** Lines 3-6 are damaged: a bad compaction, bad custom_message content, a message without role, a null message. */
  function badShapes(): string[] {
    const line = (fields: object) => JSON.stringify({ timestamp: now(), ...fields });
    return [
      line({ type: "compaction", id: "dddd0001", parentId: "aaaa0001", summary: null, tokensBefore: "many" }),
      line({ type: "custom_message", id: "dddd0002", parentId: "dddd0001", customType: "x", content: 42 }),
      line({ type: "message", id: "dddd0003", parentId: "dddd0002", message: { content: "no role" } }),
      line({ type: "message", id: "dddd0004", parentId: "dddd0003", message: null }),
      line({
        type: "message",
        id: "bbbb0002",
        parentId: "dddd0004",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "first answer" }],
          api: "scripted",
          provider: "scripted",
          model: "scripted",
          usage,
          stopReason: "stop",
          timestamp: 2,
        },
      }),
    ];
  }

  function sessionFile(path: string, cwd: string): string {
    const header = { type: "session", version: 3, id: "0b1c2d3e-bad-shape", timestamp: now(), cwd };
    const first = {
      type: "message",
      id: "aaaa0001",
      parentId: null,
      timestamp: now(),
      message: { role: "user", content: "first question", timestamp: 1 },
    };
    writeFileSync(path, `${[JSON.stringify(header), JSON.stringify(first), ...badShapes()].join("\n")}\n`);
    return path;
  }

  function expectSkipped(stderr: string, file: string): void {
    const warning = (line: number) =>
      stderr.split("\n").find((l) => l.includes(`${file}: line ${line} (`)) ?? "";
    expect(warning(3)).to.contain(
      "(compaction entry dddd0001): firstKeptEntryId is missing; summary: expected",
    );
    expect(warning(3)).to.contain("so it was skipped");
    expect(warning(4)).to.contain("(custom_message entry dddd0002): display is missing; content: expected");
    expect(warning(5)).to.contain("(message entry dddd0003): message.role must be one of");
    expect(warning(6)).to.contain("(message entry dddd0004): message must be an object, not null");
    expect(stderr).not.to.contain("TypeError");
    // The damaged lines stay in the file; the new turn continues from the last readable entry.
    const entries = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(entries[5].message).to.equal(null);
    const user = entries.slice(7).find((e) => e.message?.role === "user");
    expect(user.parentId).to.equal("bbbb0002");
  }

  it("print mode with --session skips them with a warning and answers", async () => {
    const file = sessionFile(join(tmp.path, "bad.jsonl"), tmp.path);
    const { code, stdout, stderr } = await runCli(
      ["--provider", "scripted", "--script", script(), "--session", file, "-p", "second question"],
      { cwd: tmp.path, env: env() },
    );
    expect(code, stderr).to.equal(0);
    expect(stdout).to.equal("second answer\n");
    expectSkipped(stderr, file);
  });

  it("print mode with --continue finds the session and skips them with a warning", async () => {
    const seeded = await runCli(["--provider", "scripted", "--script", script(), "-p", "seed"], {
      cwd: tmp.path,
      env: env(),
    });
    expect(seeded.code, seeded.stderr).to.equal(0);
    const dirs = readdirSync(join(agentDir(), "sessions"));
    const dir = join(agentDir(), "sessions", dirs[0]!);
    const file = join(dir, readdirSync(dir).find((f) => f.endsWith(".jsonl"))!);
    sessionFile(file, tmp.path);
    const { code, stdout, stderr } = await runCli(
      ["--provider", "scripted", "--script", script(), "--continue", "-p", "second question"],
      { cwd: tmp.path, env: env() },
    );
    expect(code, stderr).to.equal(0);
    expect(stdout).to.equal("second answer\n");
    expectSkipped(stderr, file);
  });

  it("RPC mode opens it with --session and through switch_session", async () => {
    const file = sessionFile(join(tmp.path, "bad.jsonl"), tmp.path);
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
    expectSkipped(stderr, file);

    const other = sessionFile(join(tmp.path, "other.jsonl"), tmp.path);
    const switched = await runCli(["--provider", "scripted", "--script", script(), "--mode", "rpc"], {
      cwd: tmp.path,
      env: env(),
      stdin: `${JSON.stringify({ id: "s", type: "switch_session", sessionPath: other })}\n`,
    });
    expect(switched.code, switched.stderr).to.equal(0);
    const response = switched.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((m) => m.type === "response" && m.id === "s");
    expect(response.success, JSON.stringify(response)).to.equal(true);
    expect(switched.stderr).to.contain(
      `${other}: line 6 (message entry dddd0004): message must be an object`,
    );
  });
});

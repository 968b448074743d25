/**
 * A session file that starts with a UTF-8 byte-order mark (an editor saved it so), resumed by the built CLI with
 * `--session <file>` and with `-c` (regression: `--session` refused it as "not a KnightCode session file", and
 * `-c` skipped it and silently started a new session). Both continue the conversation in that same file.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

describe("knightcode: a session file starting with a byte-order mark", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-session-bom-");
  const agentDir = () => join(tmp.path, "agent");

  async function run(args: string[]) {
    const script = tmp.write("script.json", JSON.stringify({ steps: [{ text: "an answer" }] }));
    const result = await runCli(["--provider", "scripted", "--script", script, ...args], {
      cwd: tmp.path,
      env: { KNIGHTCODE_AGENT_DIR: agentDir(), HOME: join(tmp.path, "home") },
    });
    expect(result.stderr).to.not.contain("not a KnightCode session file");
    expect(result.code, result.stderr).to.equal(0);
    return result;
  }

  /** A session made by one print run, then saved again with a byte-order mark in front. */
  async function bomSession(): Promise<{ file: string; lastId: string }> {
    await run(["-p", "first question"]);
    const dir = join(agentDir(), "sessions");
    const [folder] = readdirSync(dir).filter((name) => !name.startsWith("."));
    const [name] = readdirSync(join(dir, folder!)).filter((n) => n.endsWith(".jsonl"));
    const file = join(dir, folder!, name!);
    const bytes = readFileSync(file);
    writeFileSync(file, Buffer.concat([BOM, bytes]));
    const lines = bytes.toString("utf8").trim().split("\n");
    return { file, lastId: JSON.parse(lines.at(-1)!).id };
  }

  /** The entries a run appended after `lastId`: the new user message continues from it, in the same file. */
  function expectContinued(file: string, lastId: string): void {
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 3).equals(BOM)).to.equal(true);
    const entries = bytes
      .subarray(3)
      .toString("utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const user = entries.filter((e) => e.message?.role === "user").at(-1);
    expect(user.message.content).to.satisfy((c: unknown) => JSON.stringify(c).includes("second question"));
    expect(user.parentId).to.equal(lastId);
  }

  it("--session <file> resumes it", async () => {
    const { file, lastId } = await bomSession();
    await run(["--session", file, "-p", "second question"]);
    expectContinued(file, lastId);
  });

  it("-c continues it rather than starting a new session", async () => {
    const { file, lastId } = await bomSession();
    await run(["-c", "-p", "second question"]);
    expectContinued(file, lastId);
    const folder = join(file, "..");
    expect(readdirSync(folder).filter((n) => n.endsWith(".jsonl"))).to.have.length(1);
  });
});

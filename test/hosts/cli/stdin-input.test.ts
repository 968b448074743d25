/**
 * Input on stdin for print and JSON runs: a pipe's text, a redirected file's (`< notes.txt`) and nothing at all
 * (`/dev/null`, what a process spawned without input often gets) reach the model the same way: the input before the
 * prompt, or the prompt alone.
 */
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("knightcode: input on stdin", () => {
  const tmp = useTempDir("kc-stdin-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });
  /** A scripted model that answers only when the user's message is exactly `text`. */
  const expecting = (text: string) =>
    tmp.write(
      "script.json",
      JSON.stringify({ steps: [{ text: "Got it.", expect: { lastUserText: text } }] }),
    );

  for (const [how, stdin] of [
    ["a pipe", { stdin: "line one\nline two\n" }],
    ["a redirected file", { stdinFile: "notes.txt" }],
  ] as const) {
    it(`puts the text of ${how} before the prompt`, async () => {
      tmp.write("notes.txt", "line one\nline two\n");
      const script = expecting("line one\nline two\n\nSummarise");
      const stdinFile = "stdinFile" in stdin ? { stdinFile: join(tmp.path, stdin.stdinFile) } : stdin;
      const result = await runCli(
        ["-p", "--provider", "scripted", "--script", script, "--no-session", "Summarise"],
        {
          cwd: tmp.path,
          env: env(),
          ...stdinFile,
        },
      );
      expect(result.stderr).to.equal("");
      expect(result).to.include({ code: 0, stdout: "Got it.\n" });
    });
  }

  it("runs the prompt alone when stdin is /dev/null", async () => {
    const script = expecting("Summarise");
    const result = await runCli(
      ["-p", "--provider", "scripted", "--script", script, "--no-session", "Summarise"],
      {
        cwd: tmp.path,
        env: env(),
        stdinFile: "/dev/null",
      },
    );
    expect(result.stderr).to.equal("");
    expect(result).to.include({ code: 0, stdout: "Got it.\n" });
  });
});

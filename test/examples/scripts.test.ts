/** examples/scripts/: the offline scripts the docs point at, run through the built CLI as a reader would. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { runCli } from "../helpers/cli.js";
import { useTempDir } from "../helpers/temp-dir.js";

const scripts = fileURLToPath(new URL("../../examples/scripts/", import.meta.url));

describe("examples/scripts", () => {
  const tmp = useTempDir("kc-example-scripts-");

  it("tool-turn.json runs a tool that is active by default, and the tool result is not an error", async () => {
    tmp.write("project/marker-file.txt", "here\n");
    const { code, stdout, stderr } = await runCli(
      [
        "--mode",
        "json",
        "--provider",
        "scripted",
        "--script",
        join(scripts, "tool-turn.json"),
        "--no-session",
        "List",
      ],
      { cwd: join(tmp.path, "project"), env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    expect(code, stderr).to.equal(0);
    const events = stdout
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    const ends = events.filter((e) => e.type === "tool_execution_end") as unknown as {
      toolName: string;
      isError: boolean;
      result: { content: { type: string; text?: string }[] };
    }[];
    expect(ends).to.have.length(1);
    expect(ends[0]!.isError, JSON.stringify(ends[0]!.result)).to.equal(false);
    expect(ends[0]!.result.content[0]!.text).to.contain("marker-file.txt");
    // The scripted answer checks the same and would end the run with an error otherwise.
    const agentEnd = events.find((e) => e.type === "agent_end");
    expect(JSON.stringify(agentEnd)).to.contain("I listed the current folder");
  });
});

/**
 * `/tree` and `/label` in the interactive mode, line by line through a pipe (the built `knightcode` as a child
 * process; the tmux suite covers the terminal itself): the listing with ids, labels and the active entry, moving to
 * an earlier entry, and the branch that the next message starts.
 */

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("interactive /tree and /label", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-tui-tree-");
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => child?.kill("SIGKILL"));

  it("lists the tree, continues from an earlier entry, labels it, and shows the new branch", async () => {
    const script = tmp.write(
      "script.json",
      JSON.stringify({ steps: [{ text: "a" }, { text: "b" }, { text: "c" }] }),
    );
    child = spawn(
      process.execPath,
      [cliBin, "--mode", "interactive", "--provider", "scripted", "--script", script],
      {
        cwd: tmp.path,
        env: { ...process.env, NO_COLOR: "1", KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
      },
    );
    let stdout = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    /** Sends a line and returns what the mode printed until `until` appeared. */
    const say = async (line: string, until: string | RegExp): Promise<string> => {
      const from = stdout.length;
      child!.stdin.write(`${line}\n`);
      const deadline = Date.now() + 15_000;
      for (;;) {
        // The prompt is echoed without a newline, so it may start any line of output: leave it out.
        const shown = stdout.slice(from).replace(/^(› )+/gm, "");
        if (typeof until === "string" ? shown.includes(until) : until.test(shown)) return shown;
        if (Date.now() > deadline) throw new Error(`no ${until} after "${line}" in:\n${shown}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    await say("one", /^a$/m);
    await say("two", /^b$/m);
    const first = await say("/tree", "← active");
    const ids = Object.fromEntries(
      [...first.matchAll(/^([0-9a-f]{8}) (user|assistant): (\w+)/gm)].map((m) => [m[3]!, m[1]!]),
    );
    expect(Object.keys(ids)).to.deep.equal(["one", "a", "two", "b"]);
    expect(first).to.match(new RegExp(`${ids.b} assistant: b\\s+← active`));

    expect(await say("/tree zz", "No entry starts with")).to.contain('"zz"');
    expect(await say(`/tree ${ids.a!.slice(0, 6)}`, "(continuing from")).to.contain(ids.a);
    expect(await say("/label retry point", "(labelled")).to.contain(`${ids.a} "retry point"`);
    await say("three", /^c$/m);
    const tree = await say("/tree", "← active");
    const lines = tree.split("\n").filter((l) => /[0-9a-f]{8} /.test(l));
    expect(lines[1]).to.match(new RegExp(`^${ids.a} assistant: a \\[retry point\\]$`));
    expect(lines.slice(2).join("\n")).to.match(
      /^├─ [0-9a-f]{8} user: two\n│ {2}[0-9a-f]{8} assistant: b\n└─ [0-9a-f]{8} user: three\n {3}[0-9a-f]{8} assistant: c\s+← active$/,
    );

    expect(await say(`/label @${ids.a}`, "cleared")).to.contain(ids.a);
    expect(await say("/tree", "← active")).to.not.contain("[retry point]");
    child.stdin.write("/quit\n");
    const code = await new Promise<number | null>((resolve) => child!.on("close", resolve));
    expect(code).to.equal(0);
  });
});

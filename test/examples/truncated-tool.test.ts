/** examples/extensions/truncated-tool.ts: the model sees the first lines and a notice naming the rest's file. */

import { readFileSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import truncatedTool, { MAX_LINES } from "../../examples/extensions/truncated-tool.js";

describe("example: truncated-tool", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("keeps the first lines and writes the rest to the file its notice names", async () => {
    t = await createTestSession({
      extensions: [truncatedTool],
      script: [{ toolCalls: [{ name: "count_lines", arguments: { count: 50 } }] }, { text: "ok" }],
    });
    await t.prompt("count to 50");
    const [call] = t.toolCalls();
    const text = (call!.result!.content[0] as { text: string }).text;
    const lines = text.split("\n");
    expect(lines.slice(0, MAX_LINES)).to.deep.equal(
      Array.from({ length: MAX_LINES }, (_, i) => `line ${i + 1}`),
    );
    expect(text).to.not.contain(`line ${MAX_LINES + 1}\n`);
    const match = /\[Showing lines 1-20 of 50\. The other 30 lines are in (.+)\]$/.exec(text);
    expect(match, text).to.not.equal(null);
    const restPath = match![1]!;
    expect((call!.result!.details as { restPath: string }).restPath).to.equal(restPath);
    expect(readFileSync(restPath, "utf8")).to.equal(
      `${Array.from({ length: 30 }, (_, i) => `line ${i + MAX_LINES + 1}`).join("\n")}\n`,
    );
    rmSync(dirname(restPath), { recursive: true, force: true });
  });

  it("returns short output whole, with no notice", async () => {
    t = await createTestSession({
      extensions: [truncatedTool],
      script: [{ toolCalls: [{ name: "count_lines", arguments: { count: 3 } }] }, { text: "ok" }],
    });
    await t.prompt("count to 3");
    expect(t.toolCalls()[0]!.result!.content[0]).to.deep.equal({
      type: "text",
      text: "line 1\nline 2\nline 3",
    });
  });
});

/** The cap on what one tool result sends to the model (`toolResults.maxBytes`). */

import { readFileSync, rmSync, statSync } from "node:fs";
import { expect } from "chai";
import { capResult } from "../../../plugins/agent-loop/result-cap.js";

const text = (t: string) => ({ type: "text" as const, text: t });
const fullPath = (t: string) => /The full output is in (\S+)\]/.exec(t)?.[1];

describe("tool result cap", () => {
  it("leaves a result within the cap, or with the cap off, as it is", async () => {
    const result = { content: [text("x".repeat(5_000))], details: { a: 1 } };
    expect(await capResult("t", result, 10_000)).to.equal(result);
    const big = { content: [text("x".repeat(50_000))], details: undefined };
    expect(await capResult("t", big, 0)).to.equal(big);
  });

  it("joins the text parts past the cap, keeps their beginning within it, and the whole in a temp file", async () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `line ${i}`).join("\n");
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    const capped = await capResult(
      "many",
      { content: [text(lines), image, text("tail part")], details: 7 },
      4_096,
    );
    const shown = (capped.content[0] as { text: string }).text;
    expect(Buffer.byteLength(shown)).to.be.at.most(4_096);
    expect(shown.startsWith("line 0\nline 1\n")).to.equal(true);
    expect(shown).to.match(
      /\[Output truncated: the "many" result had \S+ KB of text; the first \S+ KB are shown/,
    );
    expect(capped.content.slice(1)).to.deep.equal([image]);
    expect(capped.details).to.equal(7);
    const path = fullPath(shown)!;
    try {
      expect(readFileSync(path, "utf8")).to.equal(`${lines}\ntail part`);
      expect(statSync(path).mode & 0o777).to.equal(0o600);
    } finally {
      rmSync(path, { force: true });
    }
  });

  it("shows the beginning of a single line longer than the cap, cut on a character boundary", async () => {
    const capped = await capResult(
      "one",
      { content: [text("é".repeat(100_000))], details: undefined },
      2_048,
    );
    const shown = (capped.content[0] as { text: string }).text;
    expect(Buffer.byteLength(shown)).to.be.at.most(2_048);
    expect(shown.startsWith("éé")).to.equal(true);
    expect(shown).to.not.contain("\uFFFD");
    rmSync(fullPath(shown)!, { force: true });
  });
});

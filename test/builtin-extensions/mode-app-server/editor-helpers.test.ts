/**
 * The helpers behind the editor methods that the process tests reach only in part: the walk fuzzyFileSearch falls
 * back to without git and ripgrep (its .gitignore patterns), the ranking, output deltas of tools that say nothing
 * about where their output starts, and write's one-hunk diff at the edges (no final newline, an emptied file).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { FileLists, matchPath, walkFiles } from "../../../builtin-extensions/mode-app-server/file-search.js";
import { outputDelta, unifiedDiff } from "../../../builtin-extensions/mode-app-server/tool-items.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("app-server editor helpers", () => {
  const tmp = useTempDir("kc-appserver-editor-helpers-");

  it("the fallback walk skips .git, node_modules and the root .gitignore's simple patterns", () => {
    const files = [
      "src/a.ts",
      "src/deep/b.ts",
      "dist/out.js",
      "logs/x.log",
      "keep.log.txt",
      "node_modules/m/index.js",
      ".git/HEAD",
      "docs/build/page.md",
      "build/top.md",
    ];
    for (const file of files) {
      mkdirSync(join(tmp.path, file, ".."), { recursive: true });
      writeFileSync(join(tmp.path, file), "x");
    }
    writeFileSync(join(tmp.path, ".gitignore"), "# comment\ndist/\n*.log\n/build\n");
    expect(walkFiles(tmp.path)).to.deep.equal([
      ".gitignore",
      "docs/build/page.md",
      "keep.log.txt",
      "src/a.ts",
      "src/deep/b.ts",
    ]);
  });

  it("ranks a match in the file name and at word starts above one spread over the path", () => {
    const score = (path: string) =>
      matchPath(path.toLowerCase(), path, path.lastIndexOf("/") + 1, "btn")?.score;
    expect(score("src/components/Button.tsx")).to.be.greaterThan(score("src/b/t/n/index.ts") ?? 0);
    expect(score("lib/SubmitButton.ts")).to.be.greaterThan(score("lib/abstain.ts") ?? 0);
    expect(score("src/other.ts")).to.equal(undefined);
  });

  it("searches several roots and caps the results at the limit, best first", async () => {
    const a = join(tmp.path, "a");
    const b = join(tmp.path, "b");
    for (let i = 0; i < 30; i++) {
      mkdirSync(join(a, "x"), { recursive: true });
      mkdirSync(join(b, "y"), { recursive: true });
      writeFileSync(join(a, "x", `item${i}.md`), "");
      writeFileSync(join(b, "y", `item${i}.md`), "");
    }
    const { files } = await new FileLists().search([a, b], "item1", 5);
    expect(files).to.have.length(5);
    expect(files.map((f) => f.score)).to.deep.equal([...files.map((f) => f.score)].sort((x, y) => y - x));
    expect(files.every((f) => f.file_name.startsWith("item1"))).to.equal(true);
  });

  it("sends only new output; a partial that does not continue the last one resets it", () => {
    expect(outputDelta(undefined, { text: "a" })).to.deep.equal({ delta: "a" });
    expect(outputDelta({ text: "a" }, { text: "ab" })).to.deep.equal({ delta: "b" });
    expect(outputDelta({ text: "ab" }, { text: "ab" })).to.equal(undefined);
    expect(outputDelta({ text: "ab" }, { text: "xy" })).to.deep.equal({ delta: "xy", reset: true });
    // With offsets (bash): a tail that moved on gives exactly what is new.
    expect(outputDelta({ text: "bcd", start: 1 }, { text: "defg", start: 3 })).to.deep.equal({
      delta: "efg",
    });
    expect(outputDelta({ text: "ab", start: 0 }, { text: "yz", start: 10 })).to.deep.equal({
      delta: "yz",
      reset: true,
    });
  });

  it("diffs a whole-file write as one hunk, marking a missing final newline", () => {
    expect(unifiedDiff("a\nb\n", "a\nb", "a/f", "b/f")).to.equal(
      "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file",
    );
    expect(unifiedDiff("x\n", "", "a/f", "b/f")).to.equal("--- a/f\n+++ b/f\n@@ -1 +0,0 @@\n-x");
    expect(unifiedDiff("same\n", "same\n", "a/f", "b/f")).to.equal("");
  });
});

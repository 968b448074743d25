/**
 * What the editor offers after `/` and `@`, and how `@path` words become attached files: real folders, a real git
 * work tree for `.gitignore`.
 */
import { execFileSync } from "node:child_process";
import { expect } from "chai";
import {
  attachFiles,
  listFiles,
  PromptCompletions,
} from "../../../builtin-extensions/mode-interactive/completions.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("interactive completions and @ attachments", () => {
  const tmp = useTempDir("kc-tui-files-");

  it("lists a git work tree's files without what .gitignore excludes, untracked ones included", async () => {
    execFileSync("git", ["init", "-q"], { cwd: tmp.path });
    tmp.write(".gitignore", "build/\n*.log\n");
    tmp.write("src/app.ts", "");
    tmp.write("build/out.js", "");
    tmp.write("debug.log", "");
    expect(await listFiles(tmp.path)).to.deep.equal([".gitignore", "src/app.ts"]);
  });

  it("walks a folder that is no git work tree, without dot folders and node_modules", async () => {
    tmp.write("a.txt", "");
    tmp.write("deep/b.txt", "");
    tmp.write("node_modules/x/index.js", "");
    tmp.write(".cache/c.txt", "");
    expect(await listFiles(tmp.path)).to.deep.equal(["a.txt", "deep/b.txt"]);
  });

  it("offers commands with descriptions after a leading / and files after @", async () => {
    tmp.write("docs/notes.md", "");
    tmp.write("src/index.ts", "");
    const provider = new PromptCompletions(tmp.path, () => [
      { name: "model", description: "Pick the model" },
      { name: "mcp", description: "MCP servers" },
      { name: "quit" },
    ]);
    const commands = await provider.getSuggestions(["/m"], 0, 2);
    expect(commands?.items.map((i) => [i.label, i.description])).to.deep.equal([
      ["/model", "Pick the model"],
      ["/mcp", "MCP servers"],
    ]);
    expect(await provider.getSuggestions(["say /m"], 0, 6), "only at the start").to.equal(null);
    const files = await provider.getSuggestions(["look at @notes"], 0, 14);
    expect(files?.items.map((i) => i.value)).to.deep.equal(["docs/notes.md"]);
    expect(files?.prefix).to.equal("@notes");
    const applied = provider.applyCompletion(["look at @notes please"], 0, 14, files!.items[0]!, "@notes");
    expect(applied).to.deep.equal({
      lines: ["look at @docs/notes.md please"],
      cursorLine: 0,
      cursorCol: 22,
    });
  });

  it("attaches the files @words name, leaves other @words alone and refuses files over 256 KiB", () => {
    tmp.write("notes.txt", "remember the milk");
    tmp.write("big.bin", "x".repeat(300 * 1024));
    const { text, attached, errors } = attachFiles(
      "read @notes.txt, ask @someone, then see @big.bin.",
      tmp.path,
    );
    expect(attached).to.deep.equal(["notes.txt"]);
    expect(text).to.equal(
      '<file name="notes.txt">\nremember the milk\n</file>\n\nread @notes.txt, ask @someone, then see @big.bin.',
    );
    expect(errors).to.deep.equal(["@big.bin is 300 KiB; files over 256 KiB are not attached"]);
    expect(attachFiles("nothing to attach", tmp.path).text).to.equal("nothing to attach");
  });
});

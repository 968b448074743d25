import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { discoverContextFiles } from "../../../plugins/resources/context-files.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("plugins/resources discoverContextFiles", () => {
  const tmp = useTempDir("kc-context-");
  const agentDir = () => join(tmp.path, "agent");
  /** Only the files under the temp dir: the real filesystem above it is not ours to control. */
  const ours = (files: { path: string; content: string }[]) =>
    files
      .filter((f) => f.path.startsWith(`${tmp.path}/`))
      .map((f) => [f.path.slice(tmp.path.length + 1), f.content]);

  it("puts the agent dir file first, then root to cwd, preferring AGENTS.md over CLAUDE.md", async () => {
    tmp.write("agent/CLAUDE.md", "personal claude");
    tmp.write("AGENTS.md", "top");
    tmp.write("a/CLAUDE.md", "a claude");
    tmp.write("a/b/AGENTS.md", "b agents");
    tmp.write("a/b/CLAUDE.md", "b claude");
    tmp.write("a/b/c/AGENTS.md", "c agents");
    tmp.write("a/b/c/d/sub/AGENTS.md", "below cwd: not read");
    mkdirSync(join(tmp.path, "a/b/c/d"), { recursive: true });
    const files = await discoverContextFiles({ cwd: join(tmp.path, "a/b/c/d"), agentDir: agentDir() });

    expect(files[0]).to.deep.equal({ path: join(agentDir(), "CLAUDE.md"), content: "personal claude" });
    expect(ours(files)).to.deep.equal([
      ["agent/CLAUDE.md", "personal claude"],
      ["AGENTS.md", "top"],
      ["a/CLAUDE.md", "a claude"],
      ["a/b/AGENTS.md", "b agents"],
      ["a/b/c/AGENTS.md", "c agents"],
    ]);
    tmp.write("agent/AGENTS.md", "personal agents");
    const again = await discoverContextFiles({ cwd: join(tmp.path, "a/b/c/d"), agentDir: agentDir() });
    expect(again[0]!.content).to.equal("personal agents");
  });

  it("skips unreadable files, directories and blank files, and lists a file reached twice once", async () => {
    tmp.write("p/AGENTS.md", "unreadable");
    chmodSync(join(tmp.path, "p/AGENTS.md"), 0o000);
    tmp.write("p/CLAUDE.md", "fallback");
    mkdirSync(join(tmp.path, "p/q/AGENTS.md"), { recursive: true });
    tmp.write("p/q/r/AGENTS.md", "  \n");
    tmp.write("p/q/r/s/AGENTS.md", "deepest");
    const cwd = join(tmp.path, "p/q/r/s");
    const files = await discoverContextFiles({ cwd, agentDir: cwd });
    chmodSync(join(tmp.path, "p/AGENTS.md"), 0o644);
    // Root reads a mode-000 file, so the fallback to CLAUDE.md shows only for other users.
    const p = process.getuid?.() === 0 ? ["p/AGENTS.md", "unreadable"] : ["p/CLAUDE.md", "fallback"];
    // The agent dir is the cwd here: its file comes first and is not repeated at the end.
    expect(ours(files)).to.deep.equal([["p/q/r/s/AGENTS.md", "deepest"], p]);
  });

  it("finds nothing under the temp dir when there are no context files", async () => {
    mkdirSync(join(tmp.path, "empty"));
    expect(
      ours(await discoverContextFiles({ cwd: join(tmp.path, "empty"), agentDir: agentDir() })),
    ).to.deep.equal([]);
  });
});

/** examples/extensions/protected-paths.ts: write and edit stay out of protected folders, through the core tools. */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import protectedPaths, { protectedReason } from "../../examples/extensions/protected-paths.js";

describe("example: protected-paths", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("blocks a write to .git/config and leaves the file alone, and lets other writes through", async () => {
    t = await createTestSession({
      extensions: [protectedPaths],
      script: [
        {
          toolCalls: [
            { name: "write", arguments: { path: ".git/config", content: "hacked" } },
            { name: "write", arguments: { path: "src/notes.txt", content: "fine" } },
            {
              name: "edit",
              arguments: { path: "node_modules/x/index.js", edits: [{ oldText: "a", newText: "b" }] },
            },
          ],
        },
        { text: "done" },
      ],
    });
    mkdirSync(join(t.cwd, ".git"));
    writeFileSync(join(t.cwd, ".git", "config"), "[core]\n");
    await t.prompt("go");
    const [gitWrite, okWrite, edit] = t.toolCalls();
    expect(gitWrite!.isError).to.equal(true);
    expect((gitWrite!.result!.content[0] as { text: string }).text).to.contain('inside the protected ".git"');
    expect(readFileSync(join(t.cwd, ".git", "config"), "utf8")).to.equal("[core]\n");
    expect(okWrite!.isError).to.equal(false);
    expect(readFileSync(join(t.cwd, "src", "notes.txt"), "utf8")).to.equal("fine");
    expect(edit!.isError).to.equal(true);
    expect((edit!.result!.content[0] as { text: string }).text).to.contain("node_modules");
    expect(existsSync(join(t.cwd, "node_modules"))).to.equal(false);
  });

  it("fails closed on odd paths", () => {
    const cwd = "/work/project";
    expect(protectedReason(undefined, cwd)).to.match(/missing or malformed/);
    expect(protectedReason("", cwd)).to.match(/missing or malformed/);
    expect(protectedReason("a\0b", cwd)).to.match(/missing or malformed/);
    expect(protectedReason(42, cwd)).to.match(/missing or malformed/);
    expect(protectedReason("./sub/../.env", cwd)).to.contain(".env");
    expect(protectedReason("/elsewhere/.git/hooks/pre-commit", cwd)).to.contain(".git");
    expect(protectedReason("src/.gitignore", cwd)).to.equal(undefined);
  });
});

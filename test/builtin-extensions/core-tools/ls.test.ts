/** The `ls` core tool against real temp folders, and one turn through a real session with the scripted provider. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { createLsTool, type LsToolDetails } from "../../../builtin-extensions/core-tools/ls.js";
import type { ExtensionAPI, ExtensionToolContext, ToolResult } from "../../../kernel/index.js";

type Params = Parameters<ReturnType<typeof createLsTool>["execute"]>[1];

const textOf = (result: ToolResult) => (result.content[0] as { text: string }).text;

describe("ls tool", () => {
  let dir: string;
  const ls = createLsTool();
  const run = (params: Params, cwd = dir) =>
    ls.execute("call", params, undefined, undefined, { cwd } as unknown as ExtensionToolContext);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-ls-"));
    for (const name of ["b.txt", "A.md", "a.txt", "C", ".env", "ignored.log", "_x"])
      writeFileSync(join(dir, name), "");
    for (const name of ["src", "Docs", ".git", "empty"]) mkdirSync(join(dir, name));
    writeFileSync(join(dir, ".gitignore"), "ignored.log\n");
    symlinkSync(join(dir, "src"), join(dir, "link-to-src"));
    symlinkSync(join(dir, "a.txt"), join(dir, "link-to-file"));
    symlinkSync(join(dir, "missing"), join(dir, "broken-link"));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it("lists entries case-insensitively, folders with '/', dotfiles and ignored files included", async () => {
    const result = await run({});
    expect(textOf(result).split("\n")).to.deep.equal([
      ".env",
      ".git/",
      ".gitignore",
      "_x",
      "A.md",
      "a.txt",
      "b.txt",
      "broken-link",
      "C",
      "Docs/",
      "empty/",
      "ignored.log",
      "link-to-file",
      "link-to-src/",
      "src/",
    ]);
    expect(result.details).to.deep.equal({ count: 15 });
  });

  it("lists the folder given by path", async () => {
    writeFileSync(join(dir, "src", "main.ts"), "");
    expect(textOf(await run({ path: "src" }))).to.equal("main.ts");
    expect(textOf(await run({ path: join(dir, "src") }))).to.equal("main.ts");
  });

  it("stops at the limit and says how to see more", async () => {
    const result = await run({ limit: 4 });
    expect(textOf(result)).to.equal(
      ".env\n.git/\n.gitignore\n_x\n\n[4 entries limit reached (15 in total). Use limit=8 for more, or use find to search by pattern]",
    );
    expect(result.details).to.deep.equal({ count: 4, entryLimitReached: true });
  });

  it("cuts the output at 50 KB", async () => {
    const big = mkdtempSync(join(tmpdir(), "kc-ls-big-"));
    try {
      for (let i = 0; i < 600; i++)
        writeFileSync(join(big, `${"f".repeat(100)}${String(i).padStart(3, "0")}`), "");
      const result = await run({ limit: 1000 }, big);
      const details = result.details as LsToolDetails;
      expect(details.count).to.equal(600);
      expect(details.truncation).to.include({ truncated: true, limit: "bytes" });
      expect(textOf(result)).to.match(/\[50\.0 KB output limit reached \(\d+ of 600 entries shown\)\]$/);
    } finally {
      rmSync(big, { recursive: true, force: true });
    }
  });

  it("says when a folder is empty", async () => {
    const result = await run({ path: "empty" });
    expect(textOf(result)).to.equal("(empty directory)");
    expect(result.details).to.deep.equal({ count: 0 });
  });

  it("fails on a missing path and on a file", async () => {
    const messageOf = (params: Params) =>
      run(params).then(
        () => "",
        (e: Error) => e.message,
      );
    expect(await messageOf({ path: "nope" })).to.equal("Path not found: nope");
    expect(await messageOf({ path: "a.txt" })).to.equal("Not a directory: a.txt");
  });

  it("declares itself for the model", () => {
    expect(ls.name).to.equal("ls");
    expect(ls.promptSnippet).to.be.a("string");
    expect(ls.annotations).to.deep.include({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
    });
  });

  describe("through a session", () => {
    const sessions: TestSession[] = [];
    afterEach(async () => {
      for (const t of sessions.splice(0)) await t.dispose();
    });
    const open = async (options: TestSessionOptions): Promise<TestSession> => {
      const t = await createTestSession(options);
      sessions.push(t);
      return t;
    };

    it("runs an ls call from the model", async () => {
      const h = await open({
        script: [
          { toolCalls: [{ name: "ls", arguments: { path: "proj" } }] },
          {
            text: "ok",
            expect: { lastToolResult: { toolName: "ls", isError: false, textContains: "sub/" } },
          },
        ],
        extensions: [(kc: ExtensionAPI) => kc.registerTool(createLsTool())],
        tools: ["ls"],
      });
      mkdirSync(join(h.cwd, "proj", "sub"), { recursive: true });
      writeFileSync(join(h.cwd, "proj", "Z.txt"), "");
      await h.session.prompt("what is in proj?");
      const end = h.eventsOfType("tool_execution_end")[0]!;
      expect(end).to.include({ toolName: "ls", isError: false });
      expect(textOf(end.result as ToolResult)).to.equal("sub/\nZ.txt");
      expect((end.result as ToolResult).details).to.deep.equal({ count: 2 });
    });
  });
});

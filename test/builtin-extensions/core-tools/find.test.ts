/**
 * The `find` core tool against real temp trees with each engine (fd, `rg --files`, in-process; chosen through
 * KNIGHTCODE_NO_NATIVE_SEARCH), the engines compared query by query, and one turn through a real session.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { createFindTool, type FindToolDetails } from "../../../builtin-extensions/core-tools/find.js";
import {
  chooseFindEngine,
  findExecutable,
  NO_NATIVE_SEARCH_ENV,
} from "../../../builtin-extensions/core-tools/search-exec.js";
import type { ExtensionAPI, ExtensionToolContext, ToolResult } from "../../../kernel/index.js";

type Params = Parameters<ReturnType<typeof createFindTool>["execute"]>[1];

const textOf = (result: ToolResult) => (result.content[0] as { text: string }).text;

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

async function withEngine<T>(noNative: string | undefined, run: () => Promise<T>): Promise<T> {
  const before = process.env[NO_NATIVE_SEARCH_ENV];
  if (noNative === undefined) delete process.env[NO_NATIVE_SEARCH_ENV];
  else process.env[NO_NATIVE_SEARCH_ENV] = noNative;
  try {
    return await run();
  } finally {
    if (before === undefined) delete process.env[NO_NATIVE_SEARCH_ENV];
    else process.env[NO_NATIVE_SEARCH_ENV] = before;
  }
}

const hasFd = () => findExecutable(["fd", "fdfind"]) !== undefined;
const hasRg = () => findExecutable(["rg"]) !== undefined;

/** [label, KNIGHTCODE_NO_NATIVE_SEARCH value, whether the machine can run it]. */
const engines: [string, string | undefined, () => boolean][] = [
  ["fd", undefined, hasFd],
  ["rg --files", "fd", hasRg],
  ["in-process", "1", () => true],
];

describe("find tool", () => {
  let dir: string;
  let outside: string;
  const find = createFindTool();
  const run = (params: Params, cwd = dir) =>
    find.execute("call", params, undefined, undefined, { cwd } as unknown as ExtensionToolContext);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-find-"));
    outside = mkdtempSync(join(tmpdir(), "kc-find-outside-"));
    writeTree(dir, {
      // A .git folder makes the tree a repository, so even an fd without --no-require-git applies .gitignore.
      ".git/HEAD": "ref: refs/heads/main\n",
      ".git/config.json": "{}\n",
      ".gitignore": "dist/\n*.log\n",
      "package.json": "{}\n",
      "tsconfig.json": "{}\n",
      "README.md": "# x\n",
      "src/index.ts": "",
      "src/util.ts": "",
      "src/data.json": "{}\n",
      "src/lib/deep.ts": "",
      "src/lib/deep.test.ts": "",
      "src/lib/.gitignore": "local.ts\n",
      "src/lib/local.ts": "",
      "test/a.test.ts": "",
      ".config/settings.json": "{}\n",
      "dist/out.js": "",
      "dist/out.ts": "",
      "debug.log": "",
      "a.txt": "",
      "a/x.txt": "",
    });
    writeTree(outside, { "far.ts": "" });
    symlinkSync(outside, join(dir, "src", "linked"));
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("picks fd, else rg --files, else the in-process walker", async () => {
    expect((await withEngine("1", () => chooseFindEngine(dir))).kind).to.equal("builtin");
    if (hasRg()) expect((await withEngine("fd", () => chooseFindEngine(dir))).kind).to.equal("ripgrep");
    if (hasFd()) expect((await withEngine(undefined, () => chooseFindEngine(dir))).kind).to.equal("fd");
  });

  for (const [label, env, available] of engines) {
    describe(`with ${label}`, () => {
      beforeEach(function () {
        if (!available()) this.skip();
      });
      const go = (params: Params, cwd?: string) => withEngine(env, () => run(params, cwd));

      it("matches a name glob at any depth, respecting .gitignore (nested too), skipping .git, sorted", async () => {
        const result = await go({ pattern: "*.ts" });
        expect(textOf(result).split("\n")).to.deep.equal([
          "src/index.ts",
          "src/lib/deep.test.ts",
          "src/lib/deep.ts",
          "src/util.ts",
          "test/a.test.ts",
        ]);
        expect(result.details).to.deep.equal({ count: 5 });
        const json = await go({ pattern: "*.json" });
        expect(textOf(json).split("\n")).to.deep.equal([
          ".config/settings.json",
          "package.json",
          "src/data.json",
          "tsconfig.json",
        ]);
      });

      it("matches paths when the pattern has a slash, with ** and {a,b}", async () => {
        expect(textOf(await go({ pattern: "**/*.ts" })).split("\n")).to.have.length(5);
        expect(textOf(await go({ pattern: "src/*.ts" })).split("\n")).to.deep.equal([
          "src/index.ts",
          "src/util.ts",
        ]);
        expect(textOf(await go({ pattern: "src/**/*.test.ts" }))).to.equal("src/lib/deep.test.ts");
        expect(textOf(await go({ pattern: "*.{md,txt}" })).split("\n")).to.deep.equal([
          "README.md",
          "a/x.txt",
          "a.txt",
        ]);
        expect(textOf(await go({ pattern: "./src/*.json" }))).to.equal("src/data.json");
      });

      it("searches under path, with paths relative to it", async () => {
        const result = await go({ pattern: "*.ts", path: "src/lib" });
        expect(textOf(result)).to.equal("deep.test.ts\ndeep.ts");
      });

      it("stops at the limit and says how to see more", async () => {
        const result = await go({ pattern: "*", limit: 3 });
        expect(textOf(result)).to.equal(
          ".config/settings.json\n.gitignore\nREADME.md\n\n[3 results limit reached. Use limit=6 for more, or refine the pattern or path]",
        );
        expect(result.details).to.deep.equal({ count: 3, resultLimitReached: true });
      });

      it("says when nothing matches", async () => {
        const result = await go({ pattern: "*.rs" });
        expect(textOf(result)).to.equal("No files found matching pattern");
        expect(result.details).to.deep.equal({ count: 0 });
      });

      it("does not follow symbolic links out of the root", async () => {
        expect(textOf(await go({ pattern: "far.ts" }))).to.equal("No files found matching pattern");
      });
    });
  }

  it("cuts the output at 50 KB and says so", async () => {
    const big = mkdtempSync(join(tmpdir(), "kc-find-big-"));
    try {
      const name = "n".repeat(60);
      for (let i = 0; i < 1000; i++)
        writeFileSync(join(big, `${name}-${String(i).padStart(4, "0")}.txt`), "");
      for (const [, env, available] of engines) {
        if (!available()) continue;
        const result = await withEngine(env, () => run({ pattern: "*.txt", limit: 2000 }, big));
        const details = result.details as FindToolDetails;
        expect(details.count).to.equal(1000);
        expect(details.truncation).to.include({ truncated: true, limit: "bytes", totalLines: 1000 });
        expect(textOf(result)).to.match(/\[50\.0 KB output limit reached \(\d+ of 1000 paths shown\)/);
      }
    } finally {
      rmSync(big, { recursive: true, force: true });
    }
  });

  it("gives the same output with every engine", async () => {
    const queries: Params[] = [
      { pattern: "*" },
      { pattern: "**" },
      { pattern: "*.ts" },
      { pattern: "**/*.json" },
      { pattern: "src/**" },
      { pattern: "!*.ts" },
      { pattern: "!src" },
      { pattern: "[a-c]*" },
      { pattern: "*.{json,md}", limit: 2 },
      { pattern: "*.log" },
      { pattern: "out.*", path: "dist" },
      { pattern: "*", path: "src", limit: 4 },
      { pattern: "nothing" },
    ];
    for (const query of queries) {
      const outputs: string[] = [];
      for (const [, env, available] of engines) {
        if (!available()) continue;
        const result = await withEngine(env, () => run(query));
        outputs.push(`${textOf(result)}\n${JSON.stringify(result.details)}`);
      }
      for (const output of outputs) expect(output, JSON.stringify(query)).to.equal(outputs[0]);
    }
  });

  it("fails on a missing path, a file path, and an invalid glob", async () => {
    const messageOf = (params: Params) =>
      run(params).then(
        () => "",
        (e: Error) => e.message,
      );
    expect(await messageOf({ pattern: "*", path: "nope" })).to.equal("Path not found: nope");
    expect(await messageOf({ pattern: "*", path: "a.txt" })).to.equal("Not a directory: a.txt");
    expect(await messageOf({ pattern: "[abc" })).to.equal('Invalid glob "[abc": unclosed character class');
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

    it("runs a find call from the model", async () => {
      const h = await open({
        script: [
          { toolCalls: [{ name: "find", arguments: { pattern: "*.md", path: "proj" } }] },
          {
            text: "ok",
            expect: { lastToolResult: { toolName: "find", isError: false, textContains: "docs/b.md" } },
          },
        ],
        extensions: [(kc: ExtensionAPI) => kc.registerTool(createFindTool())],
        tools: ["find"],
      });
      writeTree(h.cwd, { "proj/a.md": "", "proj/docs/b.md": "", "proj/c.txt": "" });
      await h.session.prompt("list the docs");
      const end = h.eventsOfType("tool_execution_end")[0]!;
      expect(end).to.include({ toolName: "find", isError: false });
      expect(textOf(end.result as ToolResult)).to.equal("a.md\ndocs/b.md");
      expect((end.result as ToolResult).details).to.deep.equal({ count: 2 });
    });
  });
});

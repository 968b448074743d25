/**
 * The `grep` core tool against real temp trees, with ripgrep and with the in-process search (forced through
 * KNIGHTCODE_NO_NATIVE_SEARCH), the two compared query by query, and one turn through a real session.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { createGrepTool, type GrepToolDetails } from "../../../builtin-extensions/core-tools/grep.js";
import {
  chooseGrepEngine,
  findExecutable,
  NO_NATIVE_SEARCH_ENV,
  nativeDisabled,
} from "../../../builtin-extensions/core-tools/search-exec.js";
import type { ExtensionAPI, ExtensionToolContext, ToolResult } from "../../../kernel/index.js";

type Params = Parameters<ReturnType<typeof createGrepTool>["execute"]>[1];

const textOf = (result: ToolResult) => (result.content[0] as { text: string }).text;

function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** Runs with the env variable set as given (undefined: native tools allowed), restoring it afterwards. */
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

const hasRg = () => findExecutable(["rg"]) !== undefined;

const manyLines = Array.from({ length: 300 }, (_, i) => `match line ${i + 1}`).join("\n");

describe("grep tool", () => {
  let dir: string;
  let outside: string;
  const grep = createGrepTool();
  const run = (params: Params, signal?: AbortSignal) =>
    grep.execute("call", params, signal, undefined, { cwd: dir } as unknown as ExtensionToolContext);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-grep-"));
    outside = mkdtempSync(join(tmpdir(), "kc-grep-outside-"));
    writeTree(dir, {
      ".gitignore": "ignored/\n*.log\n",
      ".ignore": "generated/\n",
      "src/app.ts":
        "// TODO: first\nconst a = 1;\nconst b = 2;\n// todo: lower\nconst c = 3;\nexport { a };\n",
      "src/util.ts": "export const x = 1;\n// TODO: util\n",
      "src/nested/.gitignore": "secret.ts\n",
      "src/nested/secret.ts": "// TODO: hidden by a nested .gitignore\n",
      "src/nested/deep.ts": "line one\n// TODO: deep\n",
      "src/a.b(c).txt": "call a.b(c) here\nand axbc there\n",
      "ignored/x.ts": "// TODO: ignored folder\n",
      "generated/gen.ts": "// TODO: ignored by .ignore\n",
      "debug.log": "TODO in a log\n",
      ".hidden/conf.ts": "// TODO: hidden files are searched\n",
      ".git/HEAD": "TODO inside .git\n",
      "bin.dat": Buffer.concat([
        Buffer.from("TODO binary\n"),
        Buffer.from([0, 1, 2, 3]),
        Buffer.from("TODO\n"),
      ]),
      "long.txt": `short TODO\n${"x".repeat(1200)} TODO ${"y".repeat(100)}\n`,
      "many.txt": `${manyLines}\n`,
      "crlf.txt": "alpha\r\nbeta TODO\r\n",
    });
    for (let f = 0; f < 30; f++) {
      const lines = Array.from({ length: 100 }, (_, i) => `bulk entry ${f * 100 + i}`);
      writeTree(dir, { [`bulk/part-${String(f).padStart(2, "0")}.txt`]: `${lines.join("\n")}\n` });
    }
    writeTree(outside, { "far.ts": "// TODO: outside the root\n" });
    symlinkSync(outside, join(dir, "src", "linked"));
    symlinkSync(join(dir, "src", "util.ts"), join(dir, "util-link.ts"));
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("says which engine runs, reading KNIGHTCODE_NO_NATIVE_SEARCH at each call", async () => {
    await withEngine("1", async () => expect(chooseGrepEngine().kind).to.equal("builtin"));
    await withEngine("fd", async () => expect(nativeDisabled("rg")).to.equal(false));
    await withEngine("rg,fd", async () => expect(nativeDisabled("rg")).to.equal(true));
    await withEngine(undefined, async () =>
      expect(chooseGrepEngine().kind).to.equal(hasRg() ? "ripgrep" : "builtin"),
    );
  });

  for (const [label, env] of [
    ["ripgrep", undefined],
    ["in-process", "1"],
  ] as const) {
    describe(`with ${label}`, () => {
      beforeEach(function () {
        if (env === undefined && !hasRg()) this.skip();
      });
      const go = (params: Params, signal?: AbortSignal) => withEngine(env, () => run(params, signal));

      it("finds matches as path:line: text, sorted, respecting .gitignore, .ignore, nested ignores, .git and binaries", async () => {
        const result = await go({ pattern: "TODO" });
        expect(textOf(result).split("\n")).to.deep.equal([
          ".hidden/conf.ts:1: // TODO: hidden files are searched",
          "crlf.txt:2: beta TODO",
          `long.txt:1: short TODO`,
          `long.txt:2: ${"x".repeat(500)}… [${1200 + 6 + 100 - 500} more characters]`,
          "src/app.ts:1: // TODO: first",
          "src/nested/deep.ts:2: // TODO: deep",
          "src/util.ts:2: // TODO: util",
          "",
          "[Some lines were cut at 500 characters; use the read tool to see them in full]",
        ]);
        expect(result.details).to.deep.equal({ matches: 7, linesTruncated: true });
      });

      it("shows context lines as path-line- text and separates groups with --", async () => {
        const result = await go({ pattern: "TODO", path: "src", context: 1 });
        expect(textOf(result)).to.equal(
          [
            "app.ts:1: // TODO: first",
            "app.ts-2- const a = 1;",
            "--",
            "nested/deep.ts-1- line one",
            "nested/deep.ts:2: // TODO: deep",
            "--",
            "util.ts-1- export const x = 1;",
            "util.ts:2: // TODO: util",
          ].join("\n"),
        );
        const merged = await go({ pattern: "const [ab]", path: "src/app.ts", context: 1 });
        expect(textOf(merged)).to.equal(
          [
            "app.ts-1- // TODO: first",
            "app.ts:2: const a = 1;",
            "app.ts:3: const b = 2;",
            "app.ts-4- // todo: lower",
          ].join("\n"),
        );
      });

      it("filters files with glob (names at any depth, paths with a slash, ! to exclude)", async () => {
        const byName = await go({ pattern: "TODO", glob: "*.txt" });
        expect(textOf(byName)).to.match(/^crlf\.txt:2: /);
        expect(textOf(byName)).to.not.contain(".ts:");
        const byPath = await go({ pattern: "TODO", glob: "src/**/*.ts" });
        // As with ripgrep's --glob, a file the glob names is searched even though src/nested/.gitignore lists it.
        expect(textOf(byPath).split("\n")).to.deep.equal([
          "src/app.ts:1: // TODO: first",
          "src/nested/deep.ts:2: // TODO: deep",
          "src/nested/secret.ts:1: // TODO: hidden by a nested .gitignore",
          "src/util.ts:2: // TODO: util",
        ]);
        const excluded = await go({ pattern: "TODO", glob: "!src" });
        expect(textOf(excluded)).to.not.contain("src/");
        expect(textOf(excluded)).to.contain("crlf.txt:2:");
      });

      it("matches case-insensitively with ignoreCase", async () => {
        const exact = await go({ pattern: "todo", path: "src/app.ts" });
        expect(textOf(exact)).to.equal("app.ts:4: // todo: lower");
        const any = await go({ pattern: "todo", path: "src", ignoreCase: true });
        expect((any.details as GrepToolDetails).matches).to.equal(4);
      });

      it("treats the pattern as a regex unless literal is set", async () => {
        const regex = await go({ pattern: "a.b(c)", path: "src" });
        expect(textOf(regex)).to.equal("a.b(c).txt:2: and axbc there");
        const literal = await go({ pattern: "a.b(c)", path: "src", literal: true });
        expect(textOf(literal)).to.equal("a.b(c).txt:1: call a.b(c) here");
      });

      it("stops at the limit and says how to see more", async () => {
        const result = await go({ pattern: "match line", limit: 10 });
        const lines = textOf(result).split("\n");
        expect(lines.slice(0, 10)).to.deep.equal(
          Array.from({ length: 10 }, (_, i) => `many.txt:${i + 1}: match line ${i + 1}`),
        );
        expect(lines.slice(10)).to.deep.equal([
          "",
          "[10 matches limit reached. Use limit=20 for more, or refine the pattern, path or glob]",
        ]);
        expect(result.details).to.deep.equal({ matches: 10, matchLimitReached: true });
        const exact = await go({ pattern: "match line", limit: 300 });
        expect(exact.details).to.deep.equal({ matches: 300 });
        const defaulted = await go({ pattern: "match line" });
        expect(defaulted.details).to.deep.equal({ matches: 100, matchLimitReached: true });
      });

      it("cuts the output at 50 KB and says so", async () => {
        const big = mkdtempSync(join(tmpdir(), "kc-grep-big-"));
        try {
          writeTree(big, {
            "wide.txt": Array.from({ length: 400 }, (_, i) => `hit ${i} ${"w".repeat(300)}`).join("\n"),
          });
          const result = await withEngine(env, () =>
            grep.execute("c", { pattern: "hit", limit: 1000 }, undefined, undefined, {
              cwd: big,
            } as unknown as ExtensionToolContext),
          );
          const details = result.details as GrepToolDetails;
          expect(details.matches).to.equal(400);
          expect(details.truncation).to.include({ truncated: true, limit: "bytes" });
          expect(details.truncation).to.not.have.property("text");
          const text = textOf(result);
          expect(text).to.match(/\n\n\[50\.0 KB output limit reached; narrow the search/);
          expect(text.split("\n")[0]).to.match(/^wide\.txt:1: hit 0 w+$/);
          expect(Buffer.byteLength(text)).to.be.lessThan(51 * 1024);
        } finally {
          rmSync(big, { recursive: true, force: true });
        }
      });

      it("does not follow symbolic links (no escape from the root)", async () => {
        const result = await go({ pattern: "outside the root" });
        expect(textOf(result)).to.equal("No matches found");
        expect(result.details).to.deep.equal({ matches: 0 });
      });

      it("reports an invalid regex clearly", async () => {
        let message = "";
        await go({ pattern: "foo(" }).catch((e: Error) => {
          message = e.message;
        });
        expect(message).to.match(/^Invalid regex "foo\(": .+set literal: true/);
      });

      it("rejects when aborted, before or during the search", async () => {
        const errorOf = (p: Promise<unknown>) =>
          p.then(
            () => undefined,
            (e: Error) => e,
          );
        const controller = new AbortController();
        controller.abort();
        expect((await errorOf(go({ pattern: "TODO" }, controller.signal)))?.name).to.equal("AbortError");
        const during = new AbortController();
        const pending = errorOf(go({ pattern: "bulk entry", limit: 5000 }, during.signal));
        setImmediate(() => during.abort());
        // The promise settles only after a ripgrep child has exited (execa waits for it).
        expect((await pending)?.name).to.equal("AbortError");
      });
    });
  }

  it("gives the same output with and without ripgrep", async function () {
    if (!hasRg()) this.skip();
    const queries: Params[] = [
      { pattern: "TODO" },
      { pattern: "todo", ignoreCase: true },
      { pattern: "TODO", context: 2 },
      { pattern: "const", path: "src", context: 3 },
      { pattern: "TODO", path: "src", context: 1_000_000 },
      { pattern: "TODO", glob: "*.ts" },
      { pattern: "TODO", glob: "!*.ts" },
      { pattern: "TODO", glob: "*.log" },
      { pattern: "TODO", glob: "{src,ignored}/**" },
      { pattern: "a.b(c)", literal: true },
      { pattern: "^[a-z]+$" },
      { pattern: "TODO$" },
      { pattern: "beta.TODO." },
      { pattern: "line [0-9]+5$", limit: 7 },
      { pattern: "match", limit: 250, context: 1 },
      { pattern: "x{100}" },
      { pattern: "nothing matches this" },
      { pattern: "TODO", path: "src/nested" },
      { pattern: "TODO", path: "ignored" },
      { pattern: "e", limit: 5 },
      { pattern: "", limit: 3 },
      // More matches than a parallel ripgrep run collects: ripgrep runs again in path order.
      { pattern: "bulk entry", limit: 150 },
      { pattern: "entry [0-9]*5$", context: 1, limit: 40 },
      { pattern: "entry", glob: "part-1*", limit: 2500 },
    ];
    for (const query of queries) {
      const native = await withEngine(undefined, () => run(query));
      const builtin = await withEngine("1", () => run(query));
      expect(textOf(builtin), JSON.stringify(query)).to.equal(textOf(native));
      expect(builtin.details, JSON.stringify(query)).to.deep.equal(native.details);
    }
  });

  it("finds matches in files named by glob even when .gitignore lists them, as ripgrep does", async () => {
    const result = await withEngine("1", () => run({ pattern: "TODO", glob: "*.log" }));
    expect(textOf(result)).to.equal("debug.log:1: TODO in a log");
  });

  it("searches one file, showing its name", async () => {
    const result = await run({ pattern: "TODO", path: "src/util.ts" });
    expect(textOf(result)).to.equal("util.ts:2: // TODO: util");
  });

  it("fails on a missing path", async () => {
    let message = "";
    await run({ pattern: "x", path: "no/such/dir" }).catch((e: Error) => {
      message = e.message;
    });
    expect(message).to.equal("Path not found: no/such/dir");
  });

  it("declares itself for the model", () => {
    expect(grep.name).to.equal("grep");
    expect(grep.description).to.contain(".gitignore");
    expect(grep.promptSnippet).to.be.a("string");
    expect(grep.annotations).to.deep.include({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: false,
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

    it("runs a grep call from the model and returns its matches", async () => {
      const h = await open({
        script: [
          { toolCalls: [{ name: "grep", arguments: { pattern: "needle", path: "proj", context: 1 } }] },
          {
            text: "found it",
            expect: {
              lastToolResult: { toolName: "grep", isError: false, textContains: "a.txt:2: the needle" },
            },
          },
        ],
        extensions: [(kc: ExtensionAPI) => kc.registerTool(createGrepTool())],
        tools: ["grep"],
      });
      writeTree(h.cwd, {
        "proj/a.txt": "hay\nthe needle\nhay\n",
        "proj/.gitignore": "b.txt\n",
        "proj/b.txt": "needle\n",
      });
      await h.session.prompt("find the needle");
      const end = h.eventsOfType("tool_execution_end")[0]!;
      expect(end).to.include({ toolName: "grep", isError: false });
      const result = end.result as ToolResult<GrepToolDetails>;
      expect(textOf(result)).to.equal("a.txt-1- hay\na.txt:2: the needle\na.txt-3- hay");
      expect(result.details).to.deep.equal({ matches: 1 });
      expect(h.eventsOfType("agent_end")).to.have.length(1);
    });

    it("refuses invalid arguments before running", async () => {
      const h = await open({
        script: [{ toolCalls: [{ name: "grep", arguments: { pattern: "x", limit: 0 } }] }, { text: "ok" }],
        extensions: [(kc: ExtensionAPI) => kc.registerTool(createGrepTool())],
        tools: ["grep"],
      });
      await h.session.prompt("go");
      const end = h.eventsOfType("tool_execution_end")[0]!;
      expect(end.isError).to.equal(true);
      expect(textOf(end.result as ToolResult)).to.contain("/limit");
    });
  });
});

/** The edit tool: exact unique matches, all-or-nothing edits, line endings and BOM, diffs, the mutation queue. */
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { unifiedDiff } from "../../../builtin-extensions/core-tools/diff.js";
import {
  createEditTool,
  createLocalEditOperations,
  type EditParams,
} from "../../../builtin-extensions/core-tools/edit.js";
import type { ExtensionAPI, ExtensionToolContext, ToolResult } from "../../../kernel/index.js";

describe("core tools: edit", () => {
  const sessions: TestSession[] = [];
  const open = async (options: TestSessionOptions): Promise<TestSession> => {
    const t = await createTestSession(options);
    sessions.push(t);
    return t;
  };
  let dir: string;
  const tool = createEditTool();
  const ctx = () => ({ cwd: dir }) as unknown as ExtensionToolContext;
  const edit = (path: string, edits: EditParams["edits"]) =>
    tool.execute("call-1", { path, edits }, undefined, undefined, ctx());
  const text = (result: ToolResult) => (result.content[0] as { text: string }).text;
  const failure = async (path: string, edits: EditParams["edits"]) => {
    try {
      await edit(path, edits);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error("edit did not fail");
  };
  const file = (name: string, content?: string | Buffer) => {
    const path = join(dir, name);
    if (content !== undefined) {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, content);
    }
    return path;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-edit-"));
  });
  afterEach(async () => {
    for (const t of sessions.splice(0)) await t.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("describes itself as a destructive tool", () => {
    expect(tool.name).to.equal("edit");
    expect(tool.annotations).to.include({ destructiveHint: true, readOnlyHint: false });
    expect(tool.promptSnippet).to.be.a("string").and.not.include("\n");
  });

  it("replaces a unique match and reports a unified diff and the first changed line", async () => {
    const path = file("src/a.ts", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n");
    const result = await edit("src/a.ts", [{ oldText: "five\n", newText: "FIVE\nFIVE AND A HALF\n" }]);
    expect(readFileSync(path, "utf8")).to.equal(
      "one\ntwo\nthree\nfour\nFIVE\nFIVE AND A HALF\nsix\nseven\neight\nnine\n",
    );
    expect(text(result)).to.equal("Applied 1 edit to src/a.ts (+2 -1 lines, first change at line 5)");
    expect(result.details).to.deep.equal({
      path,
      firstChangedLine: 5,
      diff: [
        "--- a/src/a.ts",
        "+++ b/src/a.ts",
        "@@ -2,7 +2,8 @@",
        " two",
        " three",
        " four",
        "-five",
        "+FIVE",
        "+FIVE AND A HALF",
        " six",
        " seven",
        " eight",
        "",
      ].join("\n"),
    });
  });

  it("says which edit was not found", async () => {
    file("src/a.ts", "const a = 1;\n");
    expect(await failure("src/a.ts", [{ oldText: "const b", newText: "x" }])).to.match(
      /^Edit 1: oldText was not found in src\/a\.ts; it must match the file exactly/,
    );
  });

  it("points at a block that differs only in whitespace", async () => {
    file("a.py", "def f():\n    if x:\n        return 1\n");
    const message = await failure("a.py", [
      { oldText: "if x:\n    return 1", newText: "if y:\n    return 2" },
    ]);
    expect(message).to.match(
      /^Edit 1: oldText was not found in a\.py; lines 2-3 match except for whitespace/,
    );
  });

  it("says which edit matched several times, and how often", async () => {
    const path = file("src/a.ts", "x = 1;\nx = 1;\ny = 2;\nx = 1;\n");
    const message = await failure("src/a.ts", [
      { oldText: "y = 2", newText: "y = 3" },
      { oldText: "x = 1;", newText: "x = 2;" },
    ]);
    expect(message).to.include(
      "Edit 2: oldText was found 3 times in src/a.ts; add surrounding lines so it matches exactly once (matches start at lines 1, 2, 4)",
    );
    expect(message).to.include("No edits were applied.");
    expect(message).to.not.include("Edit 1");
    expect(readFileSync(path, "utf8")).to.equal("x = 1;\nx = 1;\ny = 2;\nx = 1;\n");

    file("two.txt", "ab ab");
    expect(await failure("two.txt", [{ oldText: "ab", newText: "c" }])).to.equal(
      "Edit 1: oldText was found 2 times in two.txt; add surrounding lines so it matches exactly once (matches start at lines 1, 1)",
    );
  });

  it("applies several edits against the original content", async () => {
    const path = file("list.txt", "alpha\nbeta\ngamma\ndelta\n");
    const result = await edit("list.txt", [
      { oldText: "gamma", newText: "GAMMA" },
      { oldText: "alpha", newText: "beta gamma" }, // new text that other edits' oldText would match later
      { oldText: "delta\n", newText: "" },
    ]);
    expect(readFileSync(path, "utf8")).to.equal("beta gamma\nbeta\nGAMMA\n");
    expect(text(result)).to.equal("Applied 3 edits to list.txt (+2 -3 lines, first change at line 1)");
    expect(result.details.firstChangedLine).to.equal(1);
  });

  it("changes nothing when one of several edits fails", async () => {
    const before = "alpha\nbeta\ngamma\n";
    const path = file("list.txt", before);
    const mtime = statSync(path).mtimeMs;
    const message = await failure("list.txt", [
      { oldText: "alpha", newText: "ALPHA" },
      { oldText: "missing", newText: "x" },
      { oldText: "gamma", newText: "GAMMA" },
    ]);
    expect(message).to.equal(
      "Edit 2: oldText was not found in list.txt; it must match the file exactly, whitespace included (read the file again to copy the text)\nNo edits were applied.",
    );
    expect(readFileSync(path, "utf8")).to.equal(before);
    expect(statSync(path).mtimeMs).to.equal(mtime);
    expect(readdirSync(dir)).to.deep.equal(["list.txt"]);
  });

  it("refuses overlapping edits, an empty oldText and a no-op edit", async () => {
    file("a.txt", "one two three\n");
    expect(
      await failure("a.txt", [
        { oldText: "two three", newText: "2 3" },
        { oldText: "one two", newText: "1 2" },
      ]),
    ).to.equal("Edits 1 and 2 overlap in a.txt; combine them into one edit\nNo edits were applied.");
    expect(await failure("a.txt", [{ oldText: "", newText: "x" }])).to.match(/^Edit 1: oldText is empty/);
    expect(await failure("a.txt", [{ oldText: "one", newText: "one" }])).to.match(
      /^Edit 1: oldText and newText are the same/,
    );
    expect(readFileSync(join(dir, "a.txt"), "utf8")).to.equal("one two three\n");
  });

  it("keeps CRLF line endings, matching with LF or CRLF", async () => {
    const path = file("win.txt", "first\r\nsecond\r\nthird\r\n");
    const result = await edit("win.txt", [{ oldText: "first\nsecond", newText: "1st\n2nd\n2nd again" }]);
    expect(readFileSync(path, "utf8")).to.equal("1st\r\n2nd\r\n2nd again\r\nthird\r\n");
    expect(result.details.diff).to.not.include("\r");
    await edit("win.txt", [{ oldText: "2nd again\r\nthird", newText: "3rd" }]);
    expect(readFileSync(path, "utf8")).to.equal("1st\r\n2nd\r\n3rd\r\n");
  });

  it("keeps the bytes of lines no edit touches in a file with mixed line endings", async () => {
    const path = file("mixed.txt", "a\r\nb\nc\r\nd\n");
    await edit("mixed.txt", [{ oldText: "c", newText: "C" }]);
    expect(readFileSync(path, "utf8")).to.equal("a\r\nb\nC\r\nd\n");
  });

  it("keeps a UTF-8 BOM", async () => {
    const path = file("bom.txt", "\uFEFFname,value\r\nx,1\r\n");
    const result = await edit("bom.txt", [{ oldText: "name,value", newText: "key,value" }]);
    const bytes = readFileSync(path);
    expect([...bytes.subarray(0, 3)]).to.deep.equal([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString("utf8")).to.equal("key,value\r\nx,1\r\n");
    expect(result.details.firstChangedLine).to.equal(1);
  });

  it("keeps the file's mode", async function () {
    if (process.platform === "win32") this.skip();
    const path = file("run.sh", "#!/bin/sh\necho one\n");
    chmodSync(path, 0o700);
    await edit("run.sh", [{ oldText: "one", newText: "two" }]);
    expect(statSync(path).mode & 0o777).to.equal(0o700);
  });

  it("reports a missing file and refuses a binary one", async () => {
    expect(await failure("none.txt", [{ oldText: "a", newText: "b" }])).to.equal("File not found: none.txt");
    file("blob.bin", Buffer.from([1, 0, 2]));
    expect(await failure("blob.bin", [{ oldText: "a", newText: "b" }])).to.equal(
      "blob.bin is a binary file; edit cannot change it",
    );
  });

  it("accepts the old single-edit shape (and edits sent as a JSON string)", () => {
    expect(tool.prepareArguments!({ path: "a.txt", oldText: "x", newText: "y" })).to.deep.equal({
      path: "a.txt",
      edits: [{ oldText: "x", newText: "y" }],
    });
    expect(tool.prepareArguments!({ path: "a.txt", old_string: "x", new_string: "y" })).to.deep.equal({
      path: "a.txt",
      edits: [{ oldText: "x", newText: "y" }],
    });
    expect(tool.prepareArguments!({ path: "a.txt", edits: '[{"oldText":"x","newText":"y"}]' })).to.deep.equal(
      {
        path: "a.txt",
        edits: [{ oldText: "x", newText: "y" }],
      },
    );
    const current = { path: "a.txt", edits: [{ oldText: "x", newText: "y" }] };
    expect(tool.prepareArguments!(current)).to.deep.equal(current);
  });

  it("runs 20 parallel edits of one file through the mutation queue; readers only see whole files", async () => {
    const pad = "-".repeat(4000);
    const markers = Array.from({ length: 20 }, (_, i) => `marker-${String(i).padStart(2, "0")}`);
    const path = file("shared.txt", markers.map((m) => `${m} ${pad}\n`).join(""));
    const size = statSync(path).size;

    let editing = true;
    const seen: string[] = [];
    const reader = (async () => {
      while (editing) {
        const content = await readFile(path, "utf8");
        seen.push(content);
      }
    })();
    const results = await Promise.all(
      markers.map((m, i) =>
        tool.execute(
          `call-${i}`,
          { path: "shared.txt", edits: [{ oldText: m, newText: `CHANGE-${m.slice(-2)}` }] },
          undefined,
          undefined,
          ctx(),
        ),
      ),
    );
    editing = false;
    await reader;

    expect(results.map((r) => text(r))).to.have.length(20);
    const final = readFileSync(path, "utf8");
    for (const m of markers) {
      expect(final).to.include(`CHANGE-${m.slice(-2)} ${pad}\n`);
      expect(final).to.not.include(m);
    }
    expect(Buffer.byteLength(final)).to.equal(size);
    expect(seen.length).to.be.greaterThan(0);
    for (const content of seen) {
      // Every snapshot is a complete version: 20 whole lines, each either the old or the new form of its marker.
      expect(Buffer.byteLength(content)).to.equal(size);
      const lines = content.split("\n");
      expect(lines).to.have.length(21);
      lines.slice(0, 20).forEach((line, i) => {
        expect([`${markers[i]} ${pad}`, `CHANGE-${markers[i]!.slice(-2)} ${pad}`]).to.include(line);
      });
    }
    expect(readdirSync(dir)).to.deep.equal(["shared.txt"]);
  });

  it("edits a file in a tool turn through a session, with the old single-edit shape", async () => {
    const h = await open({
      script: [
        {
          toolCalls: [
            {
              name: "edit",
              arguments: { path: "cfg.json", oldText: '"debug": false', newText: '"debug": true' },
            },
          ],
        },
        {
          text: "done",
          expect: {
            lastToolResult: { toolName: "edit", isError: false, textContains: "Applied 1 edit to cfg.json" },
          },
        },
      ],
      extensions: [(kc: ExtensionAPI) => kc.registerTool(createEditTool())],
    });
    writeFileSync(join(h.cwd, "cfg.json"), '{\n  "debug": false\n}\n');
    await h.session.prompt("turn debugging on");
    const final = h.eventsOfType("message_end").at(-1)!.message as {
      stopReason: string;
      errorMessage?: string;
    };
    expect(final.stopReason, final.errorMessage).to.equal("stop");
    expect(readFileSync(join(h.cwd, "cfg.json"), "utf8")).to.equal('{\n  "debug": true\n}\n');
    const end = h.eventsOfType("tool_execution_end")[0]!;
    expect((end.result as { details: { diff: string } }).details.diff).to.include('+  "debug": true');
  });

  describe("a file another program writes at the same time", () => {
    const APPENDED = 1_500;

    /**
     * A real process appending APPENDED numbered lines to `path`, one open-append-close each, a little apart so it
     * spans the edits. Resolves once the first line is in; `done` when it has exited (bounded).
     */
    async function appender(path: string): Promise<{ done: Promise<void> }> {
      const code = `
        const { appendFileSync } = require("node:fs");
        const pause = new Int32Array(new SharedArrayBuffer(4));
        for (let i = 0; i < ${APPENDED}; i++) {
          appendFileSync(${JSON.stringify(path)}, "appended " + i + "\\n");
          if (i === 0) process.stdout.write("started\\n");
          if (i % 4 === 0) Atomics.wait(pause, 0, 0, 1);
        }`;
      const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error("the appender did not finish in 30 s"));
        }, 30_000);
        child.once("exit", (code) => {
          clearTimeout(timer);
          if (code === 0) resolve();
          else reject(new Error(`the appender exited with ${code}`));
        });
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout!.once("data", () => resolve());
        done.catch(reject);
      });
      return { done };
    }

    it("keeps every line another process appended while 100 edits ran", async function () {
      this.timeout(60_000);
      const path = file("log.txt", "counter: 0\n");
      const { done } = await appender(path);
      for (let i = 0; i < 100; i++) {
        await edit("log.txt", [{ oldText: `counter: ${i}\n`, newText: `counter: ${i + 1}\n` }]);
      }
      await done;
      const lines = readFileSync(path, "utf8").split("\n");
      expect(lines[0]).to.equal("counter: 100");
      const appended = lines.filter((line) => line.startsWith("appended "));
      const missing = [];
      for (let i = 0; i < APPENDED; i++) if (!appended.includes(`appended ${i}`)) missing.push(i);
      expect(missing, `lost ${missing.length} of ${APPENDED} appended lines`).to.deep.equal([]);
      expect(appended).to.have.length(APPENDED);
    });

    /** The local operations, with `change` run on the file right after edit has read it (once). */
    function changedAfterRead(change: (path: string) => void) {
      const local = createLocalEditOperations();
      let changed = false;
      return createEditTool(undefined, {
        operations: {
          ...local,
          readFile: async (path) => {
            const bytes = await local.readFile(path);
            if (!changed) {
              changed = true;
              change(path);
            }
            return bytes;
          },
        },
      });
    }

    it("redoes the edit on the new content when the file changed between read and replace", async () => {
      const path = file("a.txt", "one\ntwo\n");
      const tool = changedAfterRead((p) => writeFileSync(p, "zero\none\ntwo\nthree\n"));
      await tool.execute(
        "c",
        { path, edits: [{ oldText: "two", newText: "TWO" }] },
        undefined,
        undefined,
        ctx(),
      );
      expect(readFileSync(path, "utf8")).to.equal("zero\none\nTWO\nthree\n");
    });

    it("reports a conflict and writes nothing when the change removed what the edit replaces", async () => {
      const path = file("a.txt", "one\ntwo\n");
      const tool = changedAfterRead((p) => writeFileSync(p, "one\n2\n"));
      let message = "";
      try {
        await tool.execute(
          "c",
          { path, edits: [{ oldText: "two", newText: "TWO" }] },
          undefined,
          undefined,
          ctx(),
        );
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).to.contain(`${path} changed while the edit was applied`);
      expect(message).to.contain("oldText was not found");
      expect(readFileSync(path, "utf8")).to.equal("one\n2\n");
    });
  });

  describe("unified diff", () => {
    const names = { oldName: "a/f.txt", newName: "b/f.txt" };

    it("separates distant changes into hunks and marks a missing final newline", () => {
      const before = `${Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n")}`;
      const after = before.replace("l2\n", "L2\n").replace("l20", "l20\n");
      const { diff, firstChangedLine, added, removed } = unifiedDiff(before, after, names);
      expect(diff).to.equal(
        [
          "--- a/f.txt",
          "+++ b/f.txt",
          "@@ -1,5 +1,5 @@",
          " l1",
          "-l2",
          "+L2",
          " l3",
          " l4",
          " l5",
          "@@ -17,4 +17,4 @@",
          " l17",
          " l18",
          " l19",
          "-l20",
          "\\ No newline at end of file",
          "+l20",
          "",
        ].join("\n"),
      );
      expect({ firstChangedLine, added, removed }).to.deep.equal({
        firstChangedLine: 2,
        added: 2,
        removed: 2,
      });
    });

    it("writes empty ranges like diff -u", () => {
      expect(unifiedDiff("", "new\n", names).diff).to.equal(
        "--- a/f.txt\n+++ b/f.txt\n@@ -0,0 +1 @@\n+new\n",
      );
      expect(unifiedDiff("a\nb\n", "a\n", names).diff).to.equal(
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1 @@\n a\n-b\n",
      );
      expect(unifiedDiff("same\n", "same\n", names)).to.deep.equal({
        diff: "",
        firstChangedLine: undefined,
        added: 0,
        removed: 0,
      });
    });

    it("produces patches that patch(1) applies exactly (random texts)", function () {
      try {
        execFileSync("patch", ["--version"], { stdio: "ignore", timeout: 5000 });
      } catch {
        this.skip();
      }
      let seed = 42;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed % n;
      };
      const words = ["a", "b", "c", "{", "}", "", "return x;"];
      for (let round = 0; round < 40; round++) {
        const old = Array.from({ length: random(40) }, () => words[random(words.length)]!);
        const changed = [...old];
        for (let k = random(6); k >= 0; k--) {
          const at = random(changed.length + 1);
          const op = random(3);
          if (op === 0) changed.splice(at, 1);
          else if (op === 1) changed.splice(at, 0, words[random(words.length)]!);
          else changed.splice(at, 1, `${words[random(words.length)]}!`);
        }
        const before = old.join("\n") + (random(2) ? "\n" : "");
        const after = changed.join("\n") + (random(2) ? "\n" : "");
        const { diff } = unifiedDiff(before, after, names);
        if (before === after) {
          expect(diff).to.equal("");
          continue;
        }
        writeFileSync(join(dir, "f.txt"), before);
        writeFileSync(join(dir, "p.diff"), diff);
        execFileSync("patch", ["-s", "-p1", "-i", "p.diff", "--no-backup-if-mismatch"], {
          cwd: dir,
          timeout: 10000,
          stdio: "pipe",
        });
        expect(readFileSync(join(dir, "f.txt"), "utf8"), `round ${round}\n${diff}`).to.equal(after);
      }
    });
  });
});

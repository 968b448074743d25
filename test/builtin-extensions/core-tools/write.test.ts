/** The write tool: creation, parent folders, atomic replacement that keeps the mode, errors. */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { createWriteTool } from "../../../builtin-extensions/core-tools/write.js";
import type { ExtensionAPI, ExtensionToolContext, ToolResult } from "../../../kernel/index.js";

describe("core tools: write", () => {
  const sessions: TestSession[] = [];
  const open = async (options: TestSessionOptions): Promise<TestSession> => {
    const t = await createTestSession(options);
    sessions.push(t);
    return t;
  };
  let dir: string;
  const tool = createWriteTool();
  const ctx = () => ({ cwd: dir }) as unknown as ExtensionToolContext;
  const write = (path: string, content: string) =>
    tool.execute("call-1", { path, content }, undefined, undefined, ctx());
  const text = (result: ToolResult) => (result.content[0] as { text: string }).text;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-write-"));
  });
  afterEach(async () => {
    for (const t of sessions.splice(0)) await t.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("describes itself as a destructive, idempotent tool", () => {
    expect(tool.name).to.equal("write");
    expect(tool.annotations).to.include({ destructiveHint: true, idempotentHint: true, readOnlyHint: false });
    expect(tool.promptSnippet).to.be.a("string").and.not.include("\n");
  });

  it("creates a file and then replaces it, counting bytes", async () => {
    const created = await write("a.txt", "hello");
    expect(text(created)).to.equal("Wrote 5 bytes to a.txt");
    expect(created.details).to.deep.equal({ path: join(dir, "a.txt"), bytes: 5, created: true });
    const replaced = await write("a.txt", "héllo ✓\n");
    expect(replaced.details).to.deep.include({ bytes: 11, created: false });
    expect(readFileSync(join(dir, "a.txt"), "utf8")).to.equal("héllo ✓\n");
  });

  it("creates missing parent folders", async () => {
    const result = await write("deep/er/still/file.ts", "export {};\n");
    expect(text(result)).to.equal("Wrote 11 bytes to deep/er/still/file.ts");
    expect(readFileSync(join(dir, "deep/er/still/file.ts"), "utf8")).to.equal("export {};\n");
  });

  it("keeps an existing file's mode and leaves no temporary file behind", async function () {
    if (process.platform === "win32") this.skip();
    const path = join(dir, "run.sh");
    writeFileSync(path, "#!/bin/sh\n");
    chmodSync(path, 0o751);
    await write("run.sh", "#!/bin/sh\necho hi\n");
    expect(statSync(path).mode & 0o777).to.equal(0o751);
    expect(readdirSync(dir)).to.deep.equal(["run.sh"]);
  });

  it("writes through a symbolic link to its target", async function () {
    if (process.platform === "win32") this.skip();
    writeFileSync(join(dir, "target.txt"), "old");
    symlinkSync("target.txt", join(dir, "link.txt"));
    await write("link.txt", "new");
    expect(lstatSync(join(dir, "link.txt")).isSymbolicLink()).to.equal(true);
    expect(readFileSync(join(dir, "target.txt"), "utf8")).to.equal("new");
  });

  it("refuses to write over a directory", async () => {
    mkdirSync(join(dir, "sub"));
    let message = "";
    await write("sub", "x").catch((error: Error) => {
      message = error.message;
    });
    expect(message).to.equal("sub is a directory; write needs a file");
    expect(statSync(join(dir, "sub")).isDirectory()).to.equal(true);
  });

  it("serialises parallel writes of one file: each lands whole, none leaves a temporary file", async () => {
    const contents = Array.from({ length: 20 }, (_, i) => `${String(i).repeat(5000)}\n`);
    const results = await Promise.all(contents.map((content) => write("same.txt", content)));
    expect(results.filter((r) => r.details.created)).to.have.length(1);
    expect(contents).to.include(readFileSync(join(dir, "same.txt"), "utf8"));
    expect(readdirSync(dir)).to.deep.equal(["same.txt"]);
  });

  it("writes a file in a tool turn through a session", async () => {
    const h = await open({
      script: [
        {
          toolCalls: [{ name: "write", arguments: { path: "out/new.txt", content: "made by the model\n" } }],
        },
        {
          text: "done",
          expect: { lastToolResult: { toolName: "write", isError: false, textContains: "Wrote 18 bytes" } },
        },
      ],
      extensions: [(kc: ExtensionAPI) => kc.registerTool(createWriteTool())],
    });
    await h.session.prompt("write it");
    const final = h.eventsOfType("message_end").at(-1)!.message as {
      stopReason: string;
      errorMessage?: string;
    };
    expect(final.stopReason, final.errorMessage).to.equal("stop");
    expect(existsSync(join(h.cwd, "out/new.txt"))).to.equal(true);
    expect(readFileSync(join(h.cwd, "out/new.txt"), "utf8")).to.equal("made by the model\n");
  });
});

/** The read tool: line numbers, offset/limit, output limits and notices, images, binary files, errors. */
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import {
  createLocalReadOperations,
  createReadTool,
  type ReadDetails,
} from "../../../builtin-extensions/core-tools/read.js";
import type { ExtensionAPI, ExtensionToolContext, ToolResult } from "../../../kernel/index.js";

/** A real 1x1 PNG. */
const PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("core tools: read", () => {
  let dir: string;
  const tool = createReadTool();
  const ctx = () => ({ cwd: dir }) as unknown as ExtensionToolContext;
  const read = (params: { path: string; offset?: number; limit?: number }) =>
    tool.execute("call-1", params, undefined, undefined, ctx());
  const text = (result: ToolResult) => (result.content[0] as { text: string }).text;
  const failure = async (params: { path: string; offset?: number; limit?: number }) => {
    try {
      await read(params);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error("read did not fail");
  };
  const lines = (n: number, make = (i: number) => `line ${i}`) =>
    Array.from({ length: n }, (_, i) => make(i + 1)).join("\n");

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-read-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a small file whole in one read and streams a large one without reading it whole", async () => {
    const local = createLocalReadOperations();
    const calls: string[] = [];
    const counted = createReadTool(undefined, {
      operations: {
        ...local,
        readFile: (path) => {
          calls.push("readFile");
          return local.readFile(path);
        },
        createReadStream: (path, options) => {
          calls.push("stream");
          return local.createReadStream!(path, options);
        },
      },
    });
    writeFileSync(join(dir, "small.txt"), lines(3));
    const small = await counted.execute("call-1", { path: "small.txt" }, undefined, undefined, ctx());
    expect(text(small)).to.contain("     3\tline 3");
    expect(calls).to.deep.equal(["readFile"]);
    calls.length = 0;
    writeFileSync(
      join(dir, "large.txt"),
      lines(40_000, (i) => `line ${i} ${"x".repeat(10)}`),
    );
    const large = await counted.execute(
      "call-2",
      { path: "large.txt", limit: 2 },
      undefined,
      undefined,
      ctx(),
    );
    expect(text(large)).to.contain("     2\tline 2");
    expect(calls).to.deep.equal(["stream", "stream"]);
  });

  it("describes itself as a read-only tool", () => {
    expect(tool.name).to.equal("read");
    expect(tool.annotations).to.include({ readOnlyHint: true, destructiveHint: false });
    expect(tool.promptSnippet).to.be.a("string").and.not.include("\n");
    expect(tool.description).to.include("offset");
  });

  it("numbers lines like cat -n", async () => {
    writeFileSync(join(dir, "a.txt"), "alpha\n\tbeta\ngamma\n");
    const result = await read({ path: "a.txt" });
    expect(text(result)).to.equal("     1\talpha\n     2\t\tbeta\n     3\tgamma");
    expect(result.details).to.deep.equal({ path: join(dir, "a.txt"), totalLines: 3 });
  });

  it("counts a last line without a final newline, and drops CR and the BOM from what it shows", async () => {
    writeFileSync(join(dir, "crlf.txt"), "\uFEFFone\r\ntwo\r\nthree");
    const result = await read({ path: "@crlf.txt" });
    expect(text(result)).to.equal("     1\tone\n     2\ttwo\n     3\tthree");
    expect(result.details.totalLines).to.equal(3);
  });

  it("reads a window with offset and limit and says how to continue", async () => {
    writeFileSync(join(dir, "ten.txt"), `${lines(10)}\n`);
    const result = await read({ path: "ten.txt", offset: 4, limit: 3 });
    expect(text(result)).to.equal(
      "     4\tline 4\n     5\tline 5\n     6\tline 6\n\n[4 more lines in the file. Use offset=7 to continue.]",
    );
    expect(result.details.truncation).to.equal(undefined);
    const tail = await read({ path: "ten.txt", offset: 9 });
    expect(text(tail)).to.equal("     9\tline 9\n    10\tline 10");
    const last = await read({ path: "ten.txt", offset: 10, limit: 5 });
    expect(text(last)).to.equal("    10\tline 10");
  });

  it("refuses an offset beyond the end, naming the line count", async () => {
    writeFileSync(join(dir, "ten.txt"), lines(10));
    expect(await failure({ path: "ten.txt", offset: 11 })).to.equal(
      "Offset 11 is beyond the end of ten.txt, which has 10 lines",
    );
  });

  it("reads an empty file", async () => {
    writeFileSync(join(dir, "empty.txt"), "");
    const result = await read({ path: "empty.txt" });
    expect(text(result)).to.equal("[empty.txt is empty]");
    expect(result.details.totalLines).to.equal(0);
    expect(await failure({ path: "empty.txt", offset: 2 })).to.include("empty");
  });

  it("stops at 2,000 lines with the exact notice, and continues from the offset it names", async () => {
    writeFileSync(join(dir, "big.txt"), lines(5231));
    const first = await read({ path: "big.txt" });
    const body = text(first).split("\n\n[")[0]!.split("\n");
    expect(body).to.have.length(2000);
    expect(body[1999]).to.equal("  2000\tline 2000");
    expect(text(first)).to.match(/\n\n\[Showing lines 1-2000 of 5231\. Use offset=2001 to continue\.\]$/);
    expect(first.details.truncation).to.deep.equal({
      limit: "lines",
      firstLine: 1,
      lastLine: 2000,
      nextOffset: 2001,
    });

    const second = await read({ path: "big.txt", offset: 2001 });
    expect(text(second)).to.match(/^ {2}2001\tline 2001\n/);
    expect(text(second)).to.include("[Showing lines 2001-4000 of 5231. Use offset=4001 to continue.]");
    const third = await read({ path: "big.txt", offset: 4001 });
    expect(text(third)).to.match(/ {2}5231\tline 5231$/);
    expect(third.details.truncation).to.equal(undefined);

    // A limit larger than 2,000 is still capped.
    const capped = await read({ path: "big.txt", limit: 3000 });
    expect(text(capped)).to.include("[Showing lines 1-2000 of 5231. Use offset=2001 to continue.]");
  });

  it("stops at 50 KB with the byte-limit notice, and does not cut long lines", async () => {
    const long = "x".repeat(1000);
    writeFileSync(
      join(dir, "wide.txt"),
      lines(200, (i) => `${i}:${long}`),
    );
    const result = await read({ path: "wide.txt" });
    const out = text(result);
    expect(Buffer.byteLength(out)).to.be.at.most(50 * 1024 + 200);
    const match = out.match(
      /\[Showing lines 1-(\d+) of 200 \(50\.0 KB limit\)\. Use offset=(\d+) to continue\.\]$/,
    );
    expect(match, out.slice(-200)).to.not.equal(null);
    expect(Number(match![2])).to.equal(Number(match![1]) + 1);
    expect(result.details.truncation?.limit).to.equal("bytes");
    // Every line shown is whole: read never cuts a line.
    const shown = out.split("\n\n[")[0]!.split("\n");
    expect(shown).to.have.length(Number(match![1]));
    shown.forEach((line, i) => {
      expect(line).to.equal(`${String(i + 1).padStart(6)}\t${i + 1}:${long}`);
    });
  });

  it("reads a 10 MB text file quickly with bounded output and a notice", async () => {
    const row = `${"0123456789".repeat(10)}\n`;
    writeFileSync(join(dir, "huge.txt"), row.repeat((10 * 1024 * 1024) / row.length));
    const started = Date.now();
    const result = await read({ path: "huge.txt" });
    const elapsed = Date.now() - started;
    expect(elapsed).to.be.below(3000);
    expect(Buffer.byteLength(text(result))).to.be.at.most(50 * 1024 + 200);
    expect(text(result)).to.match(
      /\[Showing lines 1-\d+ of 103819 \(50\.0 KB limit\)\. Use offset=\d+ to continue\.\]$/,
    );
    expect(result.details.totalLines).to.equal(103819);
    const deep = await read({ path: "huge.txt", offset: 100000, limit: 2 });
    expect(text(deep)).to.match(/^100000\t0123/);
    expect(text(deep)).to.include("[3818 more lines in the file. Use offset=100002 to continue.]");
  });

  it("refuses a single line over 50 KB and suggests reading it with bash", async () => {
    writeFileSync(join(dir, "min.js"), `short\n${"y".repeat(200 * 1024)}\nafter\n`);
    const first = await read({ path: "min.js" });
    expect(text(first)).to.equal(
      "     1\tshort\n\n[Showing lines 1-1 of 3 (50.0 KB limit). Use offset=2 to continue.]",
    );
    const second = await read({ path: "min.js", offset: 2 });
    expect(text(second)).to.include("Line 2 of min.js is 200.0 KB, more than the 50.0 KB read can show");
    expect(text(second)).to.include(`head -c 51200`);
    expect(text(second)).to.include("offset=3");
    expect(Buffer.byteLength(text(second))).to.be.below(1000);
  });

  it("refuses a binary file", async () => {
    writeFileSync(join(dir, "blob.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02, 0x03]));
    expect(await failure({ path: "blob.bin" })).to.equal(
      "blob.bin is a binary file (8 B); read cannot show it",
    );
  });

  it("returns a PNG as image content, detected by its bytes", async () => {
    const png = Buffer.from(PIXEL_PNG, "base64");
    writeFileSync(join(dir, "pixel.png"), png);
    writeFileSync(join(dir, "pixel.dat"), png);
    for (const name of ["pixel.png", "pixel.dat"]) {
      const result = await read({ path: name });
      expect(result.content).to.have.length(2);
      expect(text(result)).to.equal(`Read image file ${name} [image/png, ${png.length} B]`);
      expect(result.content[1]).to.deep.equal({ type: "image", data: PIXEL_PNG, mimeType: "image/png" });
      expect((result.details as ReadDetails).image).to.deep.equal({
        mimeType: "image/png",
        bytes: png.length,
      });
    }
    // A file named .png whose bytes are text is read as text.
    writeFileSync(join(dir, "fake.png"), "not an image\n");
    expect(text(await read({ path: "fake.png" }))).to.equal("     1\tnot an image");
  });

  it("recognises JPEG, GIF and WebP by their bytes", async () => {
    const samples: [string, Buffer, string][] = [
      ["j", Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), "image/jpeg"],
      ["g", Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00", "latin1"), "image/gif"],
      [
        "w",
        Buffer.concat([Buffer.from("RIFF"), Buffer.from([4, 0, 0, 0]), Buffer.from("WEBPVP8 ")]),
        "image/webp",
      ],
    ];
    for (const [name, bytes, mimeType] of samples) {
      writeFileSync(join(dir, name), bytes);
      const result = await read({ path: name });
      expect(result.content[1]).to.include({ type: "image", mimeType });
    }
  });

  it("refuses an image over 20 MB", async () => {
    const path = join(dir, "huge.png");
    writeFileSync(path, Buffer.from(PIXEL_PNG, "base64"));
    truncateSync(path, 21 * 1024 * 1024);
    expect(await failure({ path: "huge.png" })).to.match(
      /^huge\.png is an image of 21\.0 MB; read returns images up to 20\.0 MB/,
    );
  });

  it("says a missing file is not found and a directory needs ls", async () => {
    expect(await failure({ path: "nope.txt" })).to.equal("File not found: nope.txt");
    mkdirSync(join(dir, "sub"));
    expect(await failure({ path: "sub" })).to.match(/^sub is a directory.*use ls/);
  });

  it("accepts an absolute path", async () => {
    writeFileSync(join(dir, "abs.txt"), "absolute\n");
    expect(text(await read({ path: join(dir, "abs.txt") }))).to.equal("     1\tabsolute");
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
    const withRead = (kc: ExtensionAPI) => {
      kc.registerTool(createReadTool());
    };

    it("reads a file in a tool turn and the result reaches the next request", async () => {
      const h = await open({
        script: [
          { toolCalls: [{ name: "read", arguments: { path: "notes.txt", offset: "2" } }] },
          {
            text: "done",
            expect: { lastToolResult: { toolName: "read", isError: false, textContains: "2\tsecond" } },
          },
        ],
        extensions: [withRead],
      });
      writeFileSync(join(h.cwd, "notes.txt"), "first\nsecond\nthird\n");
      await h.session.prompt("read notes.txt");
      const end = h.eventsOfType("tool_execution_end")[0]!;
      expect(end).to.include({ toolName: "read", isError: false });
      const final = h.eventsOfType("message_end").at(-1)!.message as {
        stopReason: string;
        errorMessage?: string;
      };
      expect(final.stopReason, final.errorMessage).to.equal("stop");
    });

    it("turns a failure into an error result the model sees", async () => {
      const h = await open({
        script: [
          { toolCalls: [{ name: "read", arguments: { path: "missing.txt" } }] },
          {
            text: "ok",
            expect: {
              lastToolResult: {
                toolName: "read",
                isError: true,
                textContains: "File not found: missing.txt",
              },
            },
          },
        ],
        extensions: [withRead],
      });
      await h.session.prompt("read it");
      const final = h.eventsOfType("message_end").at(-1)!.message as {
        stopReason: string;
        errorMessage?: string;
      };
      expect(final.stopReason, final.errorMessage).to.equal("stop");
    });
  });
});

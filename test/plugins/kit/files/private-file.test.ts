/**
 * Files that may hold tool output are private and created exclusively: mode 0600 whatever the umask allows, and a
 * file or link already at the path is never written through.
 */
import { existsSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  createPrivateWriteStream,
  privateTempPath,
  writePrivateFile,
  writePrivateFileSync,
} from "../../../../plugins/kit/files/private-file.js";
import { useTempDir } from "../../../helpers/temp-dir.js";

describe("private files for tool output", () => {
  const tmp = useTempDir("kc-private-file-");

  it("writes with mode 0600, sync, async and as a stream", async () => {
    const sync = join(tmp.path, "sync.log");
    const async = join(tmp.path, "async.log");
    const stream = join(tmp.path, "stream.log");
    writePrivateFileSync(sync, "one");
    await writePrivateFile(async, "two");
    await new Promise<void>((resolve, reject) => {
      const out = createPrivateWriteStream(stream);
      out.on("error", reject);
      out.end("three", resolve);
    });
    for (const [path, text] of [
      [sync, "one"],
      [async, "two"],
      [stream, "three"],
    ] as const) {
      expect(statSync(path).mode & 0o777, path).to.equal(0o600);
      expect(readFileSync(path, "utf8")).to.equal(text);
    }
  });

  it("refuses a path that exists, and does not write through a planted link", async () => {
    const existing = tmp.write("existing.log", "theirs");
    expect(() => writePrivateFileSync(existing, "ours")).to.throw(/EEXIST/);
    let error: unknown;
    try {
      await writePrivateFile(existing, "ours");
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/EEXIST/);
    const target = join(tmp.path, "target");
    const link = join(tmp.path, "link.log");
    symlinkSync(target, link);
    expect(() => writePrivateFileSync(link, "ours")).to.throw(/EEXIST/);
    expect(existsSync(target)).to.equal(false);
    expect(readFileSync(existing, "utf8")).to.equal("theirs");
  });

  it("names temp paths knightcode-<name>-<hex>.<extension>", () => {
    expect(privateTempPath("codemode", "log")).to.match(/knightcode-codemode-[0-9a-f]{16}\.log$/);
    expect(privateTempPath("codemode", "log")).to.not.equal(privateTempPath("codemode", "log"));
  });
});

/**
 * Images in a message: which paths attach (by their bytes, in the forms terminals paste), and the clipboard read
 * through the system's tool, here a stand-in `xclip` script on PATH that answers as the real one does.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  attachImages,
  readClipboardImage,
  saveClipboardImage,
} from "../../../builtin-extensions/mode-interactive/images.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { fakeXclip, PNG } from "./clipboard-fixture.js";

describe("images in a message", () => {
  const tmp = useTempDir("kc-images-");

  it("attaches image files named by an absolute path, @path, in quotes or with escaped spaces, by their bytes", () => {
    writeFileSync(join(tmp.path, "shot.png"), PNG);
    writeFileSync(join(tmp.path, "my shot.png"), PNG);
    tmp.write("fake.png", "not an image");
    tmp.write("notes.txt", "text");
    const abs = join(tmp.path, "shot.png");
    const spaced = join(tmp.path, "my shot.png").replace(/ /g, "\\ ");
    const { images, errors } = attachImages(
      `look at ${abs}, and @shot.png again, '${join(tmp.path, "my shot.png")}' and ${spaced} and @fake.png @notes.txt shot.png`,
      tmp.path,
    );
    expect(errors).to.deep.equal([]);
    // shot.png once (named twice), "my shot.png" once (quoted and escaped); fake.png is text; bare shot.png is a word.
    expect(images).to.have.length(2);
    expect(images[0]).to.deep.equal({ type: "image", data: PNG.toString("base64"), mimeType: "image/png" });
  });

  it("says which image is too large to attach", () => {
    const big = Buffer.alloc(6 * 1024 * 1024);
    PNG.copy(big);
    writeFileSync(join(tmp.path, "big.png"), big);
    const { images, errors } = attachImages("@big.png", tmp.path);
    expect(images).to.deep.equal([]);
    expect(errors).to.deep.equal(["big.png is 6.0 MB; images over 5 MB are not attached"]);
  });

  describe("the clipboard (xclip)", () => {
    const saved = { path: process.env.PATH, wayland: process.env.WAYLAND_DISPLAY };
    afterEach(() => {
      process.env.PATH = saved.path;
      if (saved.wayland === undefined) delete process.env.WAYLAND_DISPLAY;
      else process.env.WAYLAND_DISPLAY = saved.wayland;
    });

    it("reads an image, which is saved as a file", async () => {
      const png = join(tmp.path, "clip.png");
      writeFileSync(png, PNG);
      fakeXclip(join(tmp.path, "bin"), png);
      process.env.PATH = `${join(tmp.path, "bin")}:${saved.path}`;
      delete process.env.WAYLAND_DISPLAY;
      const read = await readClipboardImage("linux");
      if (!("bytes" in read)) throw new Error(read.missing);
      expect(read.bytes.equals(PNG)).to.equal(true);
      const file = saveClipboardImage(read.bytes);
      if (!("path" in file)) throw new Error(file.error);
      expect(file.path).to.match(/knightcode-clipboard-[0-9a-f-]+\.png$/);
      expect(readFileSync(file.path).equals(PNG)).to.equal(true);
      expect(statSync(file.path).mode & 0o777).to.equal(0o600);
      rmSync(file.path);
    });

    it("tells an empty clipboard from a missing tool, and refuses bytes that are no image", async () => {
      fakeXclip(join(tmp.path, "bin"));
      process.env.PATH = `${join(tmp.path, "bin")}:${saved.path}`;
      delete process.env.WAYLAND_DISPLAY;
      expect(await readClipboardImage("linux")).to.deep.equal({ missing: "no image on the clipboard" });
      process.env.PATH = join(tmp.path, "empty");
      expect(await readClipboardImage("linux")).to.deep.equal({
        missing: "reading it needs wl-paste (Wayland) or xclip (X11)",
      });
      expect(saveClipboardImage(Buffer.from("plain text"))).to.deep.equal({
        error: "the clipboard's data is not a PNG, JPEG, GIF or WebP image",
      });
    });
  });
});

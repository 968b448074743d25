/**
 * Images in a message: which paths attach (by their bytes, in the forms terminals paste), and the clipboard read
 * through the system's tool, here a stand-in `xclip` script on PATH that answers as the real one does.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import jpeg from "jpeg-js";
import { PNG as PNGImage } from "pngjs";
import {
  attachImages,
  ImageResizeError,
  readClipboardImage,
  saveClipboardImage,
} from "../../../builtin-extensions/mode-interactive/images.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { fakeXclip, PNG } from "./clipboard-fixture.js";

describe("images in a message", () => {
  const tmp = useTempDir("kc-images-");

  it("attaches image files named by an absolute path, @path, in quotes or with escaped spaces, by their bytes", async () => {
    writeFileSync(join(tmp.path, "shot.png"), PNG);
    writeFileSync(join(tmp.path, "my shot.png"), PNG);
    tmp.write("fake.png", "not an image");
    tmp.write("notes.txt", "text");
    const abs = join(tmp.path, "shot.png");
    const spaced = join(tmp.path, "my shot.png").replace(/ /g, "\\ ");
    const { images, errors } = await attachImages(
      `look at ${abs}, and @shot.png again, '${join(tmp.path, "my shot.png")}' and ${spaced} and @fake.png @notes.txt shot.png`,
      tmp.path,
    );
    expect(errors).to.deep.equal([]);
    // shot.png once (named twice), "my shot.png" once (quoted and escaped); fake.png is text; bare shot.png is a word.
    expect(images).to.have.length(2);
    expect(images[0]).to.deep.equal({ type: "image", data: PNG.toString("base64"), mimeType: "image/png" });
  });

  describe("images.autoResize", () => {
    /** A real PNG: left half red, right half blue. */
    function halves(width: number, height: number): Buffer {
      const png = new PNGImage({ width, height });
      for (let y = 0; y < height; y++)
        for (let x = 0; x < width; x++) {
          const i = (y * width + x) * 4;
          png.data.set(x < width / 2 ? [255, 0, 0, 255] : [0, 0, 255, 255], i);
        }
      return PNGImage.sync.write(png);
    }

    it("scales a PNG over 2000 pixels down to fit in 2000x2000, proportions and colours kept, and says so", async () => {
      writeFileSync(join(tmp.path, "wide.png"), halves(3000, 1500));
      const { images, errors, notes } = await attachImages("@wide.png", tmp.path, { autoResize: true });
      expect(errors).to.deep.equal([]);
      expect(notes).to.deep.equal(["wide.png: resized from 3000x1500 to 2000x1000 pixels"]);
      const sent = PNGImage.sync.read(Buffer.from(images[0]!.data, "base64"));
      expect([sent.width, sent.height]).to.deep.equal([2000, 1000]);
      expect([...sent.data.subarray(0, 4)]).to.deep.equal([255, 0, 0, 255]);
      expect([...sent.data.subarray((1000 * 2000 - 1) * 4)]).to.deep.equal([0, 0, 255, 255]);
    });

    it("scales a JPEG, leaves an image within the limit as it is, and sends all as they are when off", async () => {
      const photo = jpeg.encode(
        { width: 2400, height: 600, data: Buffer.alloc(2400 * 600 * 4, 128) },
        90,
      ).data;
      writeFileSync(join(tmp.path, "photo.jpg"), photo);
      const small = halves(2000, 10);
      writeFileSync(join(tmp.path, "small.png"), small);
      const on = await attachImages("@photo.jpg @small.png", tmp.path, { autoResize: true });
      expect(on.errors).to.deep.equal([]);
      const decoded = jpeg.decode(Buffer.from(on.images[0]!.data, "base64"));
      expect([decoded.width, decoded.height, on.images[0]!.mimeType]).to.deep.equal([
        2000,
        500,
        "image/jpeg",
      ]);
      expect(on.images[1]!.data).to.equal(small.toString("base64"));
      const off = await attachImages("@photo.jpg @small.png", tmp.path);
      expect(off.notes).to.deep.equal([]);
      expect(off.images.map((i) => i.data)).to.deep.equal([
        photo.toString("base64"),
        small.toString("base64"),
      ]);
    });

    it("says which image it resizes, and rejects with the reason when one does not decode (the message should wait)", async () => {
      writeFileSync(join(tmp.path, "wide.png"), halves(3000, 4));
      // A PNG header for 4000x3000, then bytes that are no image data.
      const corrupt = Buffer.concat([halves(4000, 3).subarray(0, 33), Buffer.alloc(300, 1)]);
      corrupt.writeUInt32BE(3000, 20);
      writeFileSync(join(tmp.path, "broken.png"), corrupt);
      const resizing: string[] = [];
      const onResize = (written: string, size: { width: number; height: number }) =>
        resizing.push(`${written} ${size.width}x${size.height}`);
      const { notes } = await attachImages("@wide.png", tmp.path, { autoResize: true, onResize });
      expect(notes).to.deep.equal(["wide.png: resized from 3000x4 to 2000x3 pixels"]);
      let failure: unknown;
      await attachImages("@wide.png and @broken.png", tmp.path, { autoResize: true, onResize }).catch(
        (error) => {
          failure = error;
        },
      );
      expect(resizing).to.deep.equal(["wide.png 3000x4", "wide.png 3000x4", "broken.png 4000x3000"]);
      expect(failure).to.be.instanceOf(ImageResizeError);
      expect((failure as ImageResizeError).stopped).to.equal(false);
      expect((failure as Error).message).to.match(
        /^broken\.png is 4000x3000 pixels, over 2000x2000, and resizing it failed: the file is not a readable PNG image \(.+\) \(turn Auto-resize images off in \/settings to send it as it is\)$/,
      );
    });

    it("rejects as stopped when the signal aborts a resize", async () => {
      writeFileSync(join(tmp.path, "wide.png"), halves(3000, 1500));
      const abort = new AbortController();
      let failure: unknown;
      await attachImages("@wide.png", tmp.path, {
        autoResize: true,
        signal: abort.signal,
        onResize: () => setImmediate(() => abort.abort()),
      }).catch((error) => {
        failure = error;
      });
      expect(failure).to.be.instanceOf(ImageResizeError);
      expect((failure as ImageResizeError).stopped).to.equal(true);
      expect((failure as Error).message).to.equal("Resizing wide.png was stopped");
    });

    it("does not attach a GIF over the limit (nothing here decodes GIF), saying why", async () => {
      // GIF89a, 3000x10 in its header.
      const gif = Buffer.from([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0xb8, 0x0b, 0x0a, 0x00, 0, 0, 0, 0x3b]);
      writeFileSync(join(tmp.path, "anim.gif"), gif);
      const { images, errors } = await attachImages("@anim.gif", tmp.path, { autoResize: true });
      expect(images).to.deep.equal([]);
      expect(errors).to.deep.equal([
        "anim.gif is 3000x10 pixels, over 2000x2000, and was not attached: KnightCode cannot resize GIF images " +
          "(turn Auto-resize images off in /settings to send it as it is)",
      ]);
      expect((await attachImages("@anim.gif", tmp.path)).images).to.have.length(1);
    });
  });

  it("says which image is too large to attach", async () => {
    const big = Buffer.alloc(6 * 1024 * 1024);
    PNG.copy(big);
    writeFileSync(join(tmp.path, "big.png"), big);
    const { images, errors } = await attachImages("@big.png", tmp.path);
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

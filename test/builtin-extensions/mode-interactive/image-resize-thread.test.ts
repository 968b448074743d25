/**
 * `images.autoResize` in a worker thread: the worker's result is the one the resize code gives on the main thread,
 * bad input and a failing worker reject with messages that say what went wrong, the deadline and the caller's
 * signal end the worker, and the main thread's event loop keeps running while a 4000x3000 photo is resized.
 */
import { expect } from "chai";
import jpeg from "jpeg-js";
import { PNG } from "pngjs";
import { resizeToFit } from "../../../builtin-extensions/mode-interactive/image-resize.js";
import {
  MAX_IMAGE_SIDE,
  ResizeStoppedError,
  resizeOffThread,
} from "../../../builtin-extensions/mode-interactive/image-resize-thread.js";

/** A real PNG with a pattern that does not compress to nothing. */
function patternPng(width: number, height: number): Buffer {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      png.data[i] = x & 255;
      png.data[i + 1] = y & 255;
      png.data[i + 2] = (x ^ y) & 255;
      png.data[i + 3] = 255;
    }
  return PNG.sync.write(png);
}

/** The same bytes as a new buffer: the worker gets a copy of what it is given, but the tests keep theirs apart. */
const copy = (bytes: Buffer) => Buffer.from(bytes);

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

describe("image resize in a worker thread", function () {
  this.timeout(60_000);

  it("gives the PNG and the JPEG the main thread's resize gives: same bytes, size and format", async () => {
    const png = patternPng(3000, 1500);
    const fromWorker = await resizeOffThread(copy(png), "image/png");
    const onMain = resizeToFit(png, "image/png", MAX_IMAGE_SIDE)!;
    expect(fromWorker!.from).to.deep.equal({ width: 3000, height: 1500 });
    expect(fromWorker!.to).to.deep.equal({ width: 2000, height: 1000 });
    expect(fromWorker!.bytes.equals(onMain.bytes)).to.equal(true);
    const decoded = PNG.sync.read(fromWorker!.bytes);
    expect([decoded.width, decoded.height]).to.deep.equal([2000, 1000]);

    const photo = jpeg.encode({ width: 2400, height: 600, data: Buffer.alloc(2400 * 600 * 4, 90) }, 90).data;
    const jpegFromWorker = await resizeOffThread(copy(photo), "image/jpeg");
    expect(jpegFromWorker!.bytes.equals(resizeToFit(photo, "image/jpeg", MAX_IMAGE_SIDE)!.bytes)).to.equal(
      true,
    );
    // Still a JPEG (its SOI marker), 2000x500.
    expect([...jpegFromWorker!.bytes.subarray(0, 3)]).to.deep.equal([0xff, 0xd8, 0xff]);
    const small = jpeg.decode(jpegFromWorker!.bytes);
    expect([small.width, small.height]).to.deep.equal([2000, 500]);
  });

  it("answers undefined for an image within the limit (its header said otherwise)", async () => {
    expect(await resizeOffThread(patternPng(40, 30), "image/png")).to.equal(undefined);
  });

  it("rejects an image that does not decode, naming the format", async () => {
    // A PNG signature and header for 4000x3000, then bytes that are no image data.
    const png = patternPng(4000, 3);
    const corrupt = Buffer.concat([png.subarray(0, 33), Buffer.alloc(500, 7)]);
    corrupt.writeUInt32BE(3000, 20);
    const error = await rejection(resizeOffThread(corrupt, "image/png"));
    expect(error.message).to.match(/^the file is not a readable PNG image \(.+\)$/);
    const notJpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(200, 3)]);
    expect((await rejection(resizeOffThread(notJpeg, "image/jpeg"))).message).to.match(
      /^the file is not a readable JPEG image \(.+\)$/,
    );
  });

  it("says so when the worker dies (here, out of its heap)", async () => {
    const error = await rejection(resizeOffThread(patternPng(3000, 10), "image/png", { heapLimitMb: 1 }));
    expect(error.message).to.equal("the resize worker ran out of memory");
  });

  describe("a 4000x3000 photo", () => {
    let photo: Buffer;
    before(function () {
      this.timeout(60_000);
      photo = patternPng(4000, 3000);
    });

    it("is resized while the main thread's timers keep firing; the same resize on the main thread lets none fire", async () => {
      let ticks = 0;
      let settled = false;
      const timer = setInterval(() => {
        if (!settled) ticks++;
      }, 5);
      try {
        const resized = await resizeOffThread(copy(photo), "image/png");
        settled = true;
        expect(resized!.to).to.deep.equal({ width: 2000, height: 1500 });
        // The event loop ran the timer again and again while the worker decoded, scaled and encoded.
        expect(ticks).to.be.at.least(5);
        // The control: the same code on the main thread holds the event loop for all of it.
        ticks = 0;
        settled = false;
        resizeToFit(photo, "image/png", MAX_IMAGE_SIDE);
        settled = true;
        expect(ticks).to.equal(0);
      } finally {
        clearInterval(timer);
      }
    });

    it("is stopped at the deadline, and when the caller's signal aborts", async () => {
      const late = await rejection(resizeOffThread(copy(photo), "image/png", { timeoutMs: 1 }));
      expect(late.message).to.equal("it took longer than 1 ms and was stopped");
      const abort = new AbortController();
      const stopping = resizeOffThread(copy(photo), "image/png", { signal: abort.signal });
      setImmediate(() => abort.abort());
      const stopped = await rejection(stopping);
      expect(stopped).to.be.instanceOf(ResizeStoppedError);
      expect(stopped.message).to.equal("the resize was stopped");
      // A signal aborted before the call starts no worker.
      expect(await rejection(resizeOffThread(photo, "image/png", { signal: abort.signal }))).to.be.instanceOf(
        ResizeStoppedError,
      );
    });
  });
});

/**
 * `images.autoResize`, as in pi: an image wider or taller than 2000 pixels is scaled down to fit in 2000x2000
 * (its proportions kept) before it goes to the model. PNG is decoded and encoded with pngjs, JPEG with jpeg-js
 * (both plain JavaScript); GIF and WebP have no decoder here, so such an image over the limit is not attached, and a
 * message says so.
 *
 * This code runs in a worker thread (image-resize-worker.ts, started by image-resize-thread.ts): decoding a 12
 * megapixel photo, averaging it down and encoding it again takes seconds of CPU, which on the main thread would
 * stop the terminal UI (no keys, no redraw) for as long. Nothing on the main thread imports this module.
 */
import jpeg from "jpeg-js";
import { PNG } from "pngjs";

const JPEG_QUALITY = 85;

interface Pixels {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  data: Uint8Array;
}

/** The size that fits in `max`x`max` with the same proportions (each side at least 1). */
export function fittedSize(width: number, height: number, max: number): { width: number; height: number } {
  const scale = Math.min(1, max / width, max / height);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/**
 * Scales down by averaging each target pixel's box of source pixels (sharp text stays readable, unlike picking
 * one pixel in many).
 */
function shrink(source: Pixels, width: number, height: number): Pixels {
  const data = new Uint8Array(width * height * 4);
  const sx = source.width / width;
  const sy = source.height / height;
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor(y * sy);
    const y1 = Math.max(y0 + 1, Math.min(source.height, Math.floor((y + 1) * sy)));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor(x * sx);
      const x1 = Math.max(x0 + 1, Math.min(source.width, Math.floor((x + 1) * sx)));
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let yy = y0; yy < y1; yy++) {
        let i = (yy * source.width + x0) * 4;
        for (let xx = x0; xx < x1; xx++, i += 4) {
          r += source.data[i]!;
          g += source.data[i + 1]!;
          b += source.data[i + 2]!;
          a += source.data[i + 3]!;
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = (y * width + x) * 4;
      data[o] = Math.round(r / n);
      data[o + 1] = Math.round(g / n);
      data[o + 2] = Math.round(b / n);
      data[o + 3] = Math.round(a / n);
    }
  }
  return { width, height, data };
}

/**
 * The image scaled to fit in `max`x`max` pixels, in its own format; `undefined` when it fits already. Throws, saying
 * why, for a format it cannot decode (GIF, WebP) or a file that does not decode.
 */
export function resizeToFit(
  bytes: Buffer,
  mimeType: string,
  max: number,
):
  | { bytes: Buffer; from: { width: number; height: number }; to: { width: number; height: number } }
  | undefined {
  const source = decode(bytes, mimeType);
  if (source.width <= max && source.height <= max) return undefined;
  const size = fittedSize(source.width, source.height, max);
  const small = shrink(source, size.width, size.height);
  let out: Buffer;
  if (mimeType === "image/png") {
    const png = new PNG({ width: small.width, height: small.height });
    png.data = Buffer.from(small.data.buffer, small.data.byteOffset, small.data.byteLength);
    out = PNG.sync.write(png);
  } else {
    out = jpeg.encode({ width: small.width, height: small.height, data: small.data }, JPEG_QUALITY).data;
  }
  return { bytes: out, from: { width: source.width, height: source.height }, to: size };
}

/** The image's pixels; throws, naming the format and the decoder's complaint, when the bytes do not decode. */
function decode(bytes: Buffer, mimeType: string): Pixels {
  const format = mimeType.replace("image/", "").toUpperCase();
  if (mimeType !== "image/png" && mimeType !== "image/jpeg")
    throw new Error(`KnightCode cannot resize ${format} images`);
  try {
    if (mimeType === "image/png") {
      const png = PNG.sync.read(bytes);
      return { width: png.width, height: png.height, data: png.data };
    }
    const decoded = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 1024 });
    return { width: decoded.width, height: decoded.height, data: decoded.data };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`the file is not a readable ${format} image (${why})`);
  }
}

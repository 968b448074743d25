/**
 * Images in a message. A terminal cannot paste an image itself: dragging a file onto it, or pasting a copied file,
 * types the file's path, and an image copied as pixels stays on the clipboard. So, as pi does, ctrl+v (alt+v on
 * Windows) reads an image from the clipboard with the system's own tool (wl-paste or xclip on Linux, osascript on
 * macOS, PowerShell on Windows), saves it in the temporary folder and types its path. On submit, every path in the
 * message that names an image file (PNG, JPEG, GIF, WebP by their first bytes; `@path`, an absolute or `~/` path,
 * quoted or with escaped spaces as terminals paste them) is attached as an image; the path stays in the text, so
 * the model knows which file it sees. With `images.autoResize` an image over 2000x2000 pixels is scaled down first,
 * in a worker thread (image-resize-thread.ts).
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { errorMessage, type ImageContent, writePrivateFileSync } from "@knightcodeai/cli/kit";
import { getImageDimensions } from "@knightcodeai/cli/tui";
import { MAX_IMAGE_SIDE, ResizeStoppedError, resizeOffThread } from "./image-resize-thread.js";

/** Providers refuse larger images (Anthropic's limit is 5 MB); a clear message beats a failed request. */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** A PNG or JPEG up to this size is read to be resized (`images.autoResize`); the result must be under 5 MB. */
const MAX_RESIZE_INPUT_BYTES = 64 * 1024 * 1024;
const CLIPBOARD_TIMEOUT_MS = 3000;

type ImageType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** The image type from the first bytes, whatever the file is called. */
export function imageType(head: Uint8Array): ImageType | undefined {
  const at = (bytes: number[], offset = 0) => bytes.every((b, i) => head[offset + i] === b);
  if (at([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (at([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (at([0x47, 0x49, 0x46, 0x38])) return "image/gif";
  if (at([0x52, 0x49, 0x46, 0x46]) && at([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp";
  return undefined;
}

const IMAGE_NAME = /\.(png|jpe?g|gif|webp)$/i;

/**
 * The paths a message names: `@path`, absolute and `~/` paths, each bare, in quotes, or with `\ ` for spaces (how
 * terminals paste a dragged file). Only names that end like an image are looked at.
 */
function candidatePaths(text: string): string[] {
  const found: string[] = [];
  const pattern = /(?:^|\s)(?:@?'([^']+)'|@?"([^"]+)"|(@?(?:\\ |\S)+))/g;
  for (const match of text.matchAll(pattern)) {
    let path = match[1] ?? match[2] ?? match[3]!;
    const quoted = match[3] === undefined;
    if (!quoted) path = path.replace(/\\ /g, " ");
    const at = path.startsWith("@");
    if (at) path = path.slice(1);
    // A sentence may end right after the path.
    path = path.replace(/[.,;:!?)\]]+$/, "");
    if (!IMAGE_NAME.test(path)) continue;
    if (!at && !quoted && !isAbsolute(path) && !path.startsWith("~/")) continue;
    found.push(path);
  }
  return found;
}

/** An image file a message names. */
interface NamedImage {
  /** The path as the message spells it. */
  written: string;
  path: string;
  size: number;
  mimeType: ImageType;
}

/** The image files the message's paths name, in order and each once (cheap: a stat and 16 bytes of each). */
function namedImages(text: string, cwd: string): NamedImage[] {
  const found: NamedImage[] = [];
  const seen = new Set<string>();
  for (const written of candidatePaths(text)) {
    const path = written.startsWith("~/") ? join(homedir(), written.slice(2)) : resolve(cwd, written);
    if (seen.has(path)) continue;
    seen.add(path);
    try {
      const stat = statSync(path);
      if (!stat.isFile()) continue;
      const mimeType = imageType(readHead(path));
      if (mimeType) found.push({ written, path, size: stat.size, mimeType });
    } catch {
      // gone, or not readable: not an image to attach
    }
  }
  return found;
}

/** Whether the message names an image file (a queued message, which carries no images, says so). */
export function namesImages(text: string, cwd: string): boolean {
  return namedImages(text, cwd).length > 0;
}

/** A resize that failed or was stopped: the message should not go without the image the user meant to send. */
export class ImageResizeError extends Error {
  constructor(
    message: string,
    /** The user stopped it (esc). */
    readonly stopped: boolean,
  ) {
    super(message);
    this.name = "ImageResizeError";
  }
}

export interface AttachImageOptions {
  /** The `images.autoResize` setting: an image over 2000x2000 pixels is scaled down to fit. */
  autoResize?: boolean;
  /** Called as a resize starts, with the image's path as written and its size in pixels. */
  onResize?: (written: string, size: { width: number; height: number }) => void;
  /** Passed to the resize (image-resize-thread.ts): stops it, and the deadline of each image. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * The images the message's paths name, in order and each once; `errors` says which could not be attached, `notes`
 * which were resized. With `autoResize` an image over 2000x2000 pixels is scaled down to fit, in a worker thread
 * (PNG and JPEG; GIF and WebP over the limit are not attached, as nothing here decodes them). Rejects with an
 * `ImageResizeError` when a resize fails or is stopped: the image the user meant to send cannot go as asked.
 */
export async function attachImages(
  text: string,
  cwd: string,
  options: AttachImageOptions = {},
): Promise<{ images: ImageContent[]; errors: string[]; notes: string[] }> {
  const { autoResize = false } = options;
  const images: ImageContent[] = [];
  const errors: string[] = [];
  const notes: string[] = [];
  const tooBig = (written: string, bytes: number) =>
    `${written} is ${(bytes / 1024 / 1024).toFixed(1)} MB; images over 5 MB are not attached`;
  for (const { written, path, size, mimeType } of namedImages(text, cwd)) {
    const resizable = mimeType === "image/png" || mimeType === "image/jpeg";
    // A large PNG or JPEG may fit once resized; it is read whole only then (at most 64 MB).
    if (size > (autoResize && resizable ? MAX_RESIZE_INPUT_BYTES : MAX_IMAGE_BYTES)) {
      errors.push(tooBig(written, size));
      continue;
    }
    let bytes: Buffer = readFileSync(path);
    const pixels = autoResize ? getImageDimensions(bytes.toString("base64"), mimeType) : undefined;
    if (pixels && (pixels.widthPx > MAX_IMAGE_SIDE || pixels.heightPx > MAX_IMAGE_SIDE)) {
      const over = `${written} is ${pixels.widthPx}x${pixels.heightPx} pixels, over ${MAX_IMAGE_SIDE}x${MAX_IMAGE_SIDE}`;
      if (!resizable) {
        errors.push(
          `${over}, and was not attached: KnightCode cannot resize ${mimeType.replace("image/", "").toUpperCase()} ` +
            "images (turn Auto-resize images off in /settings to send it as it is)",
        );
        continue;
      }
      options.onResize?.(written, { width: pixels.widthPx, height: pixels.heightPx });
      let fitted: Awaited<ReturnType<typeof resizeOffThread>>;
      try {
        fitted = await resizeOffThread(bytes, mimeType, {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        });
      } catch (error) {
        if (error instanceof ResizeStoppedError)
          throw new ImageResizeError(`Resizing ${written} was stopped`, true);
        throw new ImageResizeError(
          `${over}, and resizing it failed: ${errorMessage(error)} (turn Auto-resize images off in /settings to ` +
            "send it as it is)",
          false,
        );
      }
      if (fitted) {
        bytes = fitted.bytes;
        notes.push(
          `${written}: resized from ${fitted.from.width}x${fitted.from.height} to ${fitted.to.width}x${fitted.to.height} pixels`,
        );
      }
    }
    if (bytes.length > MAX_IMAGE_BYTES) {
      errors.push(tooBig(written, bytes.length));
      continue;
    }
    images.push({ type: "image", data: bytes.toString("base64"), mimeType });
  }
  return { images, errors, notes };
}

function readHead(path: string): Uint8Array {
  const head = new Uint8Array(16);
  const fd = openSync(path, "r");
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  return head;
}

/** Whether a path names an image file (for `@` attach, which leaves images to `attachImages`). */
export function isImageFile(path: string): boolean {
  try {
    return IMAGE_NAME.test(path) && imageType(readHead(path)) !== undefined;
  } catch {
    return false;
  }
}

/** What a clipboard tool printed; undefined when it failed (an empty clipboard, say), "absent" when not installed. */
function run(command: string, args: string[]): Promise<Buffer | undefined | "absent"> {
  return new Promise((done) => {
    execFile(
      command,
      args,
      { encoding: "buffer", timeout: CLIPBOARD_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) =>
        done(
          (error as NodeJS.ErrnoException | null)?.code === "ENOENT" ? "absent" : error ? undefined : stdout,
        ),
    );
  });
}

const text = (out: Buffer | undefined | "absent"): string =>
  out === undefined || out === "absent" ? "" : out.toString("latin1");

/** An image on the clipboard, or why there is none (no image, or no tool to read it). */
export async function readClipboardImage(
  platform: NodeJS.Platform = process.platform,
): Promise<{ bytes: Buffer } | { missing: string }> {
  if (platform === "darwin") {
    // «data PNGf89504E47…»: the clipboard as PNG, in hex.
    const out = await run("osascript", ["-e", "the clipboard as «class PNGf»"]);
    const hex = /«data PNGf([0-9A-Fa-f]+)»/.exec(text(out))?.[1];
    return hex ? { bytes: Buffer.from(hex, "hex") } : { missing: "no image on the clipboard" };
  }
  if (platform === "win32") {
    const script =
      "Add-Type -AssemblyName System.Windows.Forms; Add-Type -AssemblyName System.Drawing; " +
      "$i = [System.Windows.Forms.Clipboard]::GetImage(); if ($i) { $m = New-Object IO.MemoryStream; " +
      "$i.Save($m, [System.Drawing.Imaging.ImageFormat]::Png); [Convert]::ToBase64String($m.ToArray()) }";
    const base64 = text(await run("powershell.exe", ["-NoProfile", "-Command", script])).trim();
    return base64 ? { bytes: Buffer.from(base64, "base64") } : { missing: "no image on the clipboard" };
  }
  const tools = process.env.WAYLAND_DISPLAY
    ? [waylandClipboard, xclipClipboard]
    : [xclipClipboard, waylandClipboard];
  let tried = 0;
  for (const read of tools) {
    const result = await read();
    if (result === "absent") continue;
    tried++;
    if (result) return { bytes: result };
  }
  return {
    missing: tried ? "no image on the clipboard" : "reading it needs wl-paste (Wayland) or xclip (X11)",
  };
}

const TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/** The first image type the clipboard offers, read with `wl-paste`; "absent" when the tool is not there. */
async function waylandClipboard(): Promise<Buffer | undefined | "absent"> {
  const list = await run("wl-paste", ["--list-types"]);
  if (list === "absent") return list;
  const type = TYPES.find((t) => text(list).split(/\r?\n/).includes(t));
  return type ? bytesOf(await run("wl-paste", ["--type", type, "--no-newline"])) : undefined;
}

async function xclipClipboard(): Promise<Buffer | undefined | "absent"> {
  const list = await run("xclip", ["-selection", "clipboard", "-t", "TARGETS", "-o"]);
  if (list === "absent") return list;
  const type = TYPES.find((t) => text(list).split(/\r?\n/).includes(t));
  return type ? bytesOf(await run("xclip", ["-selection", "clipboard", "-t", type, "-o"])) : undefined;
}

const bytesOf = (out: Buffer | undefined | "absent"): Buffer | undefined =>
  out === "absent" || out?.length === 0 ? undefined : out;

/** Saves clipboard bytes that are an image in the temporary folder, private (0600); the path, or why not. */
export function saveClipboardImage(bytes: Buffer): { path: string } | { error: string } {
  const type = imageType(bytes.subarray(0, 16));
  if (!type) return { error: "the clipboard's data is not a PNG, JPEG, GIF or WebP image" };
  const path = join(tmpdir(), `knightcode-clipboard-${randomUUID()}.${type.slice("image/".length)}`);
  writePrivateFileSync(path, bytes);
  return { path };
}

/**
 * Reading files as lines for grep, the same way for both engines: the in-process search matches these lines, and
 * the output (match text and context) is always taken from them, whichever engine found the line numbers.
 *
 * Text is UTF-8 (a UTF-8 BOM is dropped; a UTF-16 BOM selects UTF-16), split on `\n`; a trailing `\r` stays on
 * the line for matching (as in ripgrep) and is dropped for display. Binary files follow ripgrep's rule for files
 * found while walking: reading stops at the first NUL byte, and only lines that ripgrep's 64 KiB line buffer
 * searched before it met that byte count, so a file with a NUL near the start has no matches at all.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { open } from "node:fs/promises";

/** Files up to this size are read whole; larger ones are streamed in chunks. */
export const WHOLE_FILE_BYTES = 32 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

/**
 * How many leading bytes ripgrep searches in a file containing NUL bytes: it reads into a 64 KiB buffer (the
 * first read takes 3 bytes, to look for a BOM), searches the complete lines of each fill, grows the buffer to
 * three times its size when one line does not fit, and stops without searching the fill in which it sees a NUL.
 */
export function searchableBytes(data: Buffer): number {
  const n = data.length;
  if (data.indexOf(0) < 0) return n;
  let cap = 64 * 1024;
  let start = 0;
  let end = 0;
  let first = true;
  for (;;) {
    let lastNl = -1;
    while (lastNl < 0) {
      if (end - start >= cap) cap *= 3;
      let len = Math.min(cap - (end - start), n - end);
      if (first) {
        len = Math.min(3, n);
        first = false;
      }
      if (len === 0) return n;
      const chunk = data.subarray(end, end + len);
      if (chunk.indexOf(0) >= 0) return start;
      const nl = chunk.lastIndexOf(10);
      end += len;
      if (nl >= 0) lastNl = end - len + nl;
    }
    start = lastNl + 1;
  }
}

/** Decodes file bytes the way the search sees them; undefined when nothing of it is searchable (binary). */
export function decodeSearchText(data: Buffer): string | undefined {
  if (data.length >= 2 && data[0] === 0xff && data[1] === 0xfe) {
    const text = new TextDecoder("utf-16le").decode(data.subarray(2));
    return text.includes("\0") ? undefined : text;
  }
  if (data.length >= 2 && data[0] === 0xfe && data[1] === 0xff) {
    const text = new TextDecoder("utf-16be").decode(data.subarray(2));
    return text.includes("\0") ? undefined : text;
  }
  const bom = data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
  const end = searchableBytes(data);
  if (end === 0 && data.length > 0) return undefined;
  return data.toString("utf8", bom, Math.max(bom, end));
}

/** `readSearchTextSync` found a file too large to read whole: stream it with `forEachLine`. */
export const LARGE_FILE = Symbol("large file");

const scratch = Buffer.alloc(64 * 1024);

/**
 * Reads a small file synchronously and decodes it (`decodeSearchText`). Synchronous reads of small files are several
 * times faster than promise-based ones when thousands of files are searched; callers yield to the event loop
 * between files. Returns undefined for unreadable and binary files, LARGE_FILE above WHOLE_FILE_BYTES.
 */
export function readSearchTextSync(path: string): string | undefined | typeof LARGE_FILE {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const first = readSync(fd, scratch, 0, scratch.length, 0);
    if (first < scratch.length) return decodeSearchText(scratch.subarray(0, first));
    const size = fstatSync(fd).size;
    if (size > WHOLE_FILE_BYTES) return LARGE_FILE;
    let data = Buffer.allocUnsafe(Math.max(size, first) + 1);
    scratch.copy(data, 0, 0, first);
    let length = first;
    for (;;) {
      if (length === data.length) {
        const grown = Buffer.allocUnsafe(data.length * 2);
        data.copy(grown, 0, 0, length);
        data = grown;
      }
      const n = readSync(fd, data, length, data.length - length, length);
      if (n === 0) break;
      length += n;
    }
    return decodeSearchText(data.subarray(0, length));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Splits searchable text into lines (no empty last line for a trailing newline). */
export function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * Calls `onLine` with each line (1-based numbers) of a file until it returns false. Small files are decoded whole
 * (`readSearchTextSync`); large ones are streamed, stopping at the first chunk holding a NUL byte. Unreadable files
 * and binary files have no lines.
 */
export async function forEachLine(
  path: string,
  onLine: (line: string, lineNumber: number) => boolean,
  signal?: AbortSignal,
): Promise<void> {
  const text = readSearchTextSync(path);
  if (text === undefined) return;
  if (text !== LARGE_FILE) {
    const lines = splitLines(text);
    for (let i = 0; i < lines.length; i++) if (!onLine(lines[i]!, i + 1)) return;
    return;
  }
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch {
    return;
  }
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let carry = Buffer.alloc(0);
    let lineNumber = 0;
    let position = 0;
    for (;;) {
      if (signal?.aborted) return;
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const chunk = buffer.subarray(0, bytesRead);
      if (chunk.indexOf(0) >= 0) return;
      const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      let from = 0;
      for (let nl = data.indexOf(10, from); nl >= 0; nl = data.indexOf(10, from)) {
        if (!onLine(data.toString("utf8", from, nl), ++lineNumber)) return;
        from = nl + 1;
      }
      carry = Buffer.from(data.subarray(from));
    }
    if (carry.length > 0) onLine(carry.toString("utf8"), ++lineNumber);
  } catch {
    return;
  } finally {
    await handle.close();
  }
}

/** The text of the lines in the given ranges (1-based, inclusive, sorted, not overlapping) of a file. */
export async function readLineRanges(
  path: string,
  ranges: readonly (readonly [number, number])[],
): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  if (ranges.length === 0) return found;
  let r = 0;
  await forEachLine(path, (line, n) => {
    while (r < ranges.length && n > ranges[r]![1]) r++;
    if (r === ranges.length) return false;
    if (n >= ranges[r]![0]) found.set(n, line);
    return true;
  });
  return found;
}

/** Line-by-line reading of JSONL files in bounded chunks, so a large session never sits in memory twice. */
import { fstatSync, readSync } from "node:fs";

const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;

/**
 * Called once per line, without its `\n`. `bytes` may be a view of a reused buffer: read it before returning.
 * `start` is the byte offset of the line in the file, `terminated` is false only for a last line without `\n`.
 * Return `false` to stop early.
 */
export type LineVisitor = (bytes: Buffer, start: number, terminated: boolean) => boolean | void;

/** Visits the lines of `fd` between byte offsets `from` (a line start) and `to` (default: end of file). */
export function scanLines(fd: number, visit: LineVisitor, from = 0, to = fstatSync(fd).size): void {
  if (to <= from) return;
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, to - from));
  // Bytes of a line that started in an earlier chunk; copied because `buffer` is reused.
  let carry: Buffer | undefined;
  let carryStart = from;
  let position = from;
  while (position < to) {
    const read = readSync(fd, buffer, 0, Math.min(buffer.length, to - position), position);
    if (read === 0) break; // the file shrank under us; treat what we have as the end
    const chunk = buffer.subarray(0, read);
    let lineStart = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, lineStart)) {
      let line = chunk.subarray(lineStart, nl);
      let start = position + lineStart;
      if (carry) {
        line = Buffer.concat([carry, line]);
        start = carryStart;
        carry = undefined;
      }
      if (visit(line, start, true) === false) return;
      lineStart = nl + 1;
    }
    if (lineStart < read) {
      const rest = chunk.subarray(lineStart);
      if (carry) carry = Buffer.concat([carry, rest]);
      else {
        carry = Buffer.from(rest);
        carryStart = position + lineStart;
      }
    }
    position += read;
  }
  if (carry) visit(carry, carryStart, false);
}

/** Splits an in-memory buffer into lines, with the same contract as `scanLines`. */
export function splitLines(buffer: Buffer, visit: LineVisitor, offset = 0): void {
  let lineStart = 0;
  for (let nl = buffer.indexOf(NEWLINE); nl !== -1; nl = buffer.indexOf(NEWLINE, lineStart)) {
    if (visit(buffer.subarray(lineStart, nl), offset + lineStart, true) === false) return;
    lineStart = nl + 1;
  }
  if (lineStart < buffer.length) visit(buffer.subarray(lineStart), offset + lineStart, false);
}

/** A line of only spaces/tabs/CR (or empty): such lines carry nothing and are skipped silently. */
export function isBlank(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  return true;
}

/**
 * The first line of a file without a leading UTF-8 byte-order mark (`EF BB BF`), which some editors write: the
 * header after it is still the header. Only a line at offset 0 can carry one; later lines are returned as they are.
 */
export function withoutBom(bytes: Buffer, start = 0): Buffer {
  return start === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
    ? bytes.subarray(3)
    : bytes;
}

/**
 * Atomic file replacement: the new content goes to a temp file in the same folder, which is then renamed over the
 * target, so a reader sees either the old file or the new one, never half of it.
 */
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomHex } from "../util/random.js";

export interface AtomicWriteOptions {
  /**
   * Permission bits of the written file. Without it an existing file keeps its mode and a new file gets the
   * process default (0o666 less the umask).
   */
  mode?: number;
}

/**
 * Writes `content` to `file` atomically (temp file + rename). Parent folders are created. A symlinked target is
 * followed, so the link stays a link and its target is replaced. Synchronous: callers are start-up code and
 * read-modify-write sequences that must not interleave.
 */
export function writeFileAtomic(file: string, content: string, options: AtomicWriteOptions = {}): void {
  const target = followLink(file);
  const dir = dirname(target);
  mkdirSync(dir, { recursive: true });
  let mode = options.mode;
  if (mode === undefined) {
    try {
      mode = statSync(target).mode & 0o7777;
    } catch {
      // a new file: the process default (0o666 less the umask) applies
    }
  }
  const temp = join(dir, `.${basename(target)}.${process.pid}.${randomHex(6)}.tmp`);
  // With a known mode the temp file starts private and gets its final mode before the rename.
  const fd = openSync(temp, "wx", mode === undefined ? 0o666 : 0o600);
  try {
    try {
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (mode !== undefined) chmodSync(temp, mode);
    renameSync(temp, target);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // already gone
    }
    throw error;
  }
}

function followLink(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

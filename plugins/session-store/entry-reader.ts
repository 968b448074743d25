/**
 * Reads entries back from a session file by the byte range of their line. A session keeps only the entries that
 * shape its tree and context in memory; message entries are read back here when something asks for them. Reads
 * go through a window of the file, so walking entries in file order (a branch, `getEntries()`) costs one read per
 * window rather than one per entry.
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { SessionEntry } from "../../kernel/index.js";
import { entryShapeProblem } from "./entry-schema.js";
import { reason, SessionStoreError } from "./errors.js";
import { entryProblem } from "./file-format.js";

const WINDOW_BYTES = 1 << 20;

export class EntryReader {
  private fd: number | undefined;
  private window = Buffer.alloc(0);
  private windowStart = 0;
  private closed = false;

  constructor(private readonly path: string) {}

  /** The entry whose line is `length` bytes at `offset`; `id` is checked, so a file changed under us is an error. */
  read(offset: number, length: number, id: string): SessionEntry {
    const bytes = this.bytes(offset, length);
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString("utf8"));
    } catch {
      value = undefined;
    }
    if (
      entryProblem(value) !== undefined ||
      (value as SessionEntry).id !== id ||
      entryShapeProblem(value as Record<string, unknown>) !== undefined
    ) {
      throw new SessionStoreError(
        "KC_ERR_SESSION_IO",
        `Cannot read entry ${id} back from session file ${this.path}: bytes ${offset}-${offset + length} do not hold it as a valid entry (the line is damaged, or the file changed after it was opened)`,
        { path: this.path },
      );
    }
    return value as SessionEntry;
  }

  /** Forgets the window (the next read reads the file again): for when a batch of reads is over. */
  forgetWindow(): void {
    this.window = Buffer.alloc(0);
    this.windowStart = 0;
  }

  /** Drops the file descriptor and the window. Later reads still work, opening the file for each read. */
  close(): void {
    this.closed = true;
    this.release();
  }

  private bytes(offset: number, length: number): Buffer {
    const end = offset + length;
    if (offset >= this.windowStart && end <= this.windowStart + this.window.length) {
      return this.window.subarray(offset - this.windowStart, end - this.windowStart);
    }
    try {
      this.fd ??= openSync(this.path, "r");
      const buffer = Buffer.allocUnsafe(Math.max(length, this.closed ? 0 : WINDOW_BYTES));
      let filled = 0;
      while (filled < buffer.length) {
        const read = readSync(this.fd, buffer, filled, buffer.length - filled, offset + filled);
        if (read === 0) break;
        filled += read;
      }
      if (filled < length) {
        throw new Error(`the file ends at byte ${offset + filled}, before the entry's end at byte ${end}`);
      }
      if (this.closed) return buffer.subarray(0, filled);
      this.window = buffer.subarray(0, filled);
      this.windowStart = offset;
      return this.window.subarray(0, length);
    } catch (error) {
      throw new SessionStoreError(
        "KC_ERR_SESSION_IO",
        `Cannot read session file ${this.path}: ${reason(error)}`,
        { path: this.path, cause: error },
      );
    } finally {
      if (this.closed) this.release();
    }
  }

  private release(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.forgetWindow();
  }
}

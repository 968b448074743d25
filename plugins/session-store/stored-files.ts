/**
 * What a host reads and changes of session files it has not opened: the header, the active branch (to show or
 * fork a session without loading its extensions), a fork written from a branch, and a session pointed at another
 * working folder. Reading takes no lock; a change of an existing file takes the file's lock for its duration, so
 * a file another process (or another session of this one) has open is refused with `KC_ERR_SESSION_LOCKED`.
 */
import { closeSync, openSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { BranchTail, SessionEntry, SessionHeader } from "../../kernel/index.js";
import { writeFileAtomic } from "../kit/files/atomic-write.js";
import { PRIVATE_FILE_MODE } from "../kit/files/private-file.js";
import { randomUuid } from "../kit/util/random.js";
import { EntryColumns } from "./entry-columns.js";
import { EntryReader } from "./entry-reader.js";
import { reason, SessionStoreError } from "./errors.js";
import { type EntryStub, headerProblem, readSessionFile } from "./file-format.js";
import { withoutBom } from "./lines.js";
import { SessionLock } from "./lock.js";
import { SESSION_VERSION, sessionFileName } from "./paths.js";

/** A header line longer than this is not read (a real one is a few hundred bytes). */
const HEADER_MAX_BYTES = 64 * 1024;

/** A session file's header (its first line), or undefined when the file cannot be read or is not a session. */
export function readHeader(file: string): SessionHeader | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const buffer = Buffer.alloc(HEADER_MAX_BYTES);
    const head = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
    const end = head.indexOf(0x0a);
    const value: unknown = JSON.parse(withoutBom(end < 0 ? head : head.subarray(0, end)).toString("utf8"));
    return headerProblem(value) === undefined ? (value as SessionHeader) : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The header and the active branch of a session file (from its last entry back to the root), read as the store
 * reads a file it opens: torn and malformed lines are skipped. Throws `SessionStoreError` when it is not a session.
 */
export function readBranch(file: string): { header: SessionHeader; entries: SessionEntry[] } {
  const byId = new Map<string, SessionEntry>();
  let last: SessionEntry | undefined;
  const parsed = readSessionFile(resolve(file), {
    header: () => {},
    has: (id) => byId.has(id),
    add: (entry) => {
      byId.set(entry.id, entry);
      last = entry;
    },
  });
  const entries: SessionEntry[] = [];
  for (let entry = last; entry; entry = entry.parentId ? byId.get(entry.parentId) : undefined)
    entries.push(entry);
  return { header: parsed.header, entries: entries.reverse() };
}

/**
 * The last `count` entries of a session file's active branch, without parsing the rest: the file is indexed as
 * `SessionManager.open` indexes it (type, id, parent and byte range of each line), then only the tail's lines are
 * read back. A 100,000-entry file's newest turns cost the index and a few thousand entries, not the whole history.
 * Falls back to `readBranch` when a line in the writer's layout turns out not to be a valid entry.
 */
export function readBranchTail(file: string, count: number): BranchTail {
  const path = resolve(file);
  const columns = new EntryColumns();
  const add = (stub: EntryStub, start: number, length: number) => {
    const parent = stub.parentId === null ? -1 : columns.indexOf(stub.parentId);
    columns.add(stub.id, parent, stub.type, start, length);
  };
  const parsed = readSessionFile(path, {
    header: () => {},
    has: (id) => columns.has(id),
    add: (entry, start, length) => add(entry, start, length),
    unparsedTypes: "all",
    addUnparsed: add,
  });
  let depth = 0;
  for (let at = columns.size - 1; at >= 0; at = columns.parentAt(at)) depth++;
  const slots = new Int32Array(Math.min(count, depth));
  let filled = slots.length;
  for (let at = columns.size - 1; at >= 0 && filled > 0; at = columns.parentAt(at)) slots[--filled] = at;
  const reader = new EntryReader(path);
  try {
    const entries = Array.from(slots, (at) => {
      const entry = reader.read(columns.offsetAt(at), columns.lengthAt(at), columns.idAt(at));
      const parent = columns.parentAt(at);
      entry.parentId = parent < 0 ? null : columns.idAt(parent);
      return entry;
    });
    return { header: parsed.header, entries, start: depth - slots.length, length: depth };
  } catch (error) {
    if (!(error instanceof SessionStoreError)) throw error;
    const branch = readBranch(path);
    const start = Math.max(0, branch.entries.length - count);
    return {
      header: branch.header,
      entries: branch.entries.slice(start),
      start,
      length: branch.entries.length,
    };
  } finally {
    reader.close();
  }
}

/**
 * Writes a new session next to `source` holding `entries` (by default the source's active branch), with the
 * source as its `parentSession`; returns its path and id. Nobody owns the new file yet.
 */
export function forkFile(source: string, entries?: readonly SessionEntry[]): { path: string; id: string } {
  const from = resolve(source);
  const branch = entries ? { header: readHeader(from), entries } : readBranch(from);
  if (!branch.header)
    throw new SessionStoreError("KC_ERR_SESSION_INVALID", `${from} is not a session file`, { path: from });
  const id = randomUuid();
  const timestamp = new Date().toISOString();
  const path = join(dirname(from), sessionFileName(timestamp, id));
  const header: SessionHeader = {
    type: "session",
    version: SESSION_VERSION,
    id,
    timestamp,
    cwd: branch.header.cwd,
    parentSession: from,
  };
  const text = [header, ...branch.entries].map((record) => JSON.stringify(record)).join("\n");
  try {
    writeFileSync(path, `${text}\n`, { flag: "wx", mode: PRIVATE_FILE_MODE });
  } catch (error) {
    throw new SessionStoreError("KC_ERR_SESSION_IO", `Cannot write the fork ${path}: ${reason(error)}`, {
      path,
      cause: error,
    });
  }
  return { path, id };
}

/** Runs `fn` holding the file's lock: refused with `KC_ERR_SESSION_LOCKED` while anyone has the file open. */
export function withSessionLock<T>(file: string, fn: () => T): T {
  const lock = SessionLock.acquire(resolve(file), {});
  try {
    return fn();
  } finally {
    lock.release();
  }
}

/**
 * Points a session that nobody has open at another working folder: its header's `cwd` (where it runs and is
 * listed), rewritten atomically in place; the entries are left as they are.
 */
export function setSessionCwd(file: string, cwd: string): void {
  const path = resolve(file);
  withSessionLock(path, () => {
    // A leading byte-order mark is dropped with the old header line.
    const text = readFileSync(path, "utf8").replace(/^\uFEFF/, "");
    const end = text.indexOf("\n");
    const header: unknown = JSON.parse(end < 0 ? text : text.slice(0, end));
    const problem = headerProblem(header);
    if (problem) throw new SessionStoreError("KC_ERR_SESSION_INVALID", `${path}: ${problem}`, { path });
    const next = { ...(header as SessionHeader), cwd: resolve(cwd) };
    writeFileAtomic(path, `${JSON.stringify(next)}${end < 0 ? "\n" : text.slice(end)}`);
  });
}

/**
 * Session listing that stays fast with thousands of files.
 *
 * Every listing does a readdir and one stat per file. A file whose size and mtime match the summary cache
 * (`<sessionDir>/.session-index.json`) is not read at all. Any other file is summarised with bounded reads:
 * the header and the first user message from the first 64 KiB, the last activity (and usually the name) from
 * the last 64 KiB, and the message count from one chunked pass that looks only at each line's `{"type":"..."`
 * prefix instead of parsing it. A file that only grew since it was counted (session files are append-only) is
 * counted from where the last count stopped, so resuming a large session does not re-read all of it. The cache is then rewritten atomically (temp file + rename), so a crash or a
 * concurrent lister never leaves a half-written cache; a cache that does not parse is ignored and rebuilt.
 */
import {
  closeSync,
  type Dirent,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { SessionHeader } from "../../kernel/index.js";
import { PRIVATE_FILE_MODE } from "../kit/files/private-file.js";
import { randomHex } from "../kit/util/random.js";
import { errnoCode } from "./errors.js";
import { headerProblem, isObject } from "./file-format.js";
import { isBlank, scanLines, splitLines, withoutBom } from "./lines.js";
import { cwdSessionDir, SESSION_INDEX_FILE } from "./paths.js";

export interface SessionInfo {
  path: string;
  id: string;
  /** The latest `session_info` name, if any. */
  name?: string;
  cwd: string;
  /** The header's timestamp. */
  created: Date;
  /** Last activity: the time of the last message entry (the header time for a session without messages). */
  modified: Date;
  /** Message entries in the file, on every branch. */
  messageCount: number;
  /** Text of the first user message, or "(no messages)". */
  firstMessage: string;
  /** The labels set on entries of the session (on any branch) and not cleared, oldest first; at most 10. */
  labels?: string[];
  parentSession?: string;
}

/** How much a listing read, for tests and diagnostics. Cumulative; reset freely. */
export const sessionIndexStats = { filesScanned: 0, indexWrites: 0 };

const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 64 * 1024;
/** First messages are for display; a pasted 50 KB prompt should not bloat the cache file. */
const FIRST_MESSAGE_MAX_CHARS = 2_000;
const NO_MESSAGES = "(no messages)";
/** Bump when `Summary` changes shape, so old caches are rebuilt rather than misread. */
const INDEX_VERSION = 3;
/** Labels are for telling sessions apart in a picker; a session labelling every step should not bloat the cache. */
const MAX_LABELS = 10;

interface Summary {
  id: string;
  cwd: string;
  created: string;
  /** Epoch ms. */
  modified: number;
  messageCount: number;
  firstMessage: string;
  name?: string;
  labels?: string[];
  parentSession?: string;
  /** The file ended with `\n` when counted, so a later count can start at that size on a line boundary. */
  endsWithNewline: boolean;
}

interface IndexRecord {
  size: number;
  mtimeMs: number;
  /** Absent when the file is not a readable session; it is skipped until it changes. */
  summary?: Summary;
}

interface IndexFile {
  version: number;
  files: Record<string, IndexRecord>;
}

/** Sessions whose header cwd is `cwd`, newest first. */
export function listSessionsForCwd(sessionRoot: string, cwd: string): SessionInfo[] {
  const dir = cwdSessionDir(sessionRoot, cwd);
  const absoluteCwd = resolve(cwd);
  // The directory encoding is lossy (`/a-b` and `/a/b` share a dir), so the header decides.
  return listSessions(sessionRoot, [dir]).filter((info) => info.cwd === absoluteCwd);
}

/** Sessions of every cwd under `sessionRoot`, newest first. */
export function listAllSessions(sessionRoot: string): SessionInfo[] {
  return listSessions(sessionRoot, sessionDirsIn(sessionRoot), true);
}

/**
 * One file's summary, read now without the summary cache: for a caller that shows a page of a long listing and
 * summarises only the files on it (the app-server's `thread/list`). Undefined when it is not a readable session.
 */
export function sessionInfoOf(path: string): SessionInfo | undefined {
  try {
    const { size, mtimeMs } = statSync(path);
    return toInfo(path, summarize(path, size, mtimeMs));
  } catch {
    return undefined;
  }
}

/** The per-cwd directories under `sessionRoot` (dot-named entries such as the cache are not cwd dirs). */
export function sessionDirsIn(sessionRoot: string): string[] {
  return readDir(sessionRoot)
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => join(sessionRoot, entry.name));
}

/** Paths of the `*.jsonl` files directly in `dir` (none if it does not exist). */
export function sessionFilesIn(dir: string): string[] {
  return readDir(dir)
    .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith(".jsonl"))
    .map((entry) => join(dir, entry.name));
}

function readDir(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (errnoCode(error) === "ENOENT" || errnoCode(error) === "ENOTDIR") return [];
    throw error;
  }
}

function listSessions(sessionRoot: string, dirs: string[], everything = false): SessionInfo[] {
  const index = loadIndex(sessionRoot);
  let changed = false;
  const seen = new Set<string>();
  const infos: SessionInfo[] = [];

  for (const dir of dirs) {
    for (const path of sessionFilesIn(dir)) {
      let size: number;
      let mtimeMs: number;
      try {
        ({ size, mtimeMs } = statSync(path));
      } catch {
        continue; // deleted between readdir and stat
      }
      seen.add(path);
      let record = index.files[path];
      if (!isFreshRecord(record, size, mtimeMs)) {
        const previous = record;
        record = { size, mtimeMs };
        try {
          record.summary = summarize(path, size, mtimeMs, grownFrom(previous, size));
        } catch {
          // Not a readable session (bad header, unreadable): skipped, and remembered so it is not re-read.
        }
        sessionIndexStats.filesScanned++;
        index.files[path] = record;
        changed = true;
      }
      if (record.summary) infos.push(toInfo(path, record.summary));
    }
  }

  // Forget files that are gone, but only inside what this listing looked at.
  const scanned = new Set(dirs);
  for (const path of Object.keys(index.files)) {
    if (!seen.has(path) && (everything || scanned.has(dirname(path)))) {
      delete index.files[path];
      changed = true;
    }
  }
  if (changed) saveIndex(sessionRoot, index);

  return infos.sort((a, b) => b.modified.getTime() - a.modified.getTime() || (a.path < b.path ? 1 : -1));
}

function isFreshRecord(
  record: IndexRecord | undefined,
  size: number,
  mtimeMs: number,
): record is IndexRecord {
  return (
    isObject(record) &&
    record.size === size &&
    record.mtimeMs === mtimeMs &&
    (record.summary === undefined || isObject(record.summary))
  );
}

/** The previous count of a file that has only grown since (on a line boundary), to continue from. */
function grownFrom(
  record: IndexRecord | undefined,
  size: number,
): { size: number; summary: Summary } | undefined {
  if (!isObject(record) || !isObject(record.summary) || typeof record.size !== "number") return undefined;
  if (record.size >= size || record.summary.endsWithNewline !== true) return undefined;
  return { size: record.size, summary: record.summary };
}

function toInfo(path: string, summary: Summary): SessionInfo {
  const info: SessionInfo = {
    path,
    id: summary.id,
    cwd: summary.cwd,
    created: new Date(summary.created),
    modified: new Date(summary.modified),
    messageCount: summary.messageCount,
    firstMessage: summary.firstMessage,
  };
  if (summary.name !== undefined) info.name = summary.name;
  if (summary.labels !== undefined) info.labels = summary.labels;
  if (summary.parentSession !== undefined) info.parentSession = summary.parentSession;
  return info;
}

// ---- the cache file ----

function loadIndex(sessionRoot: string): IndexFile {
  try {
    const value: unknown = JSON.parse(readFileSync(join(sessionRoot, SESSION_INDEX_FILE), "utf8"));
    if (isObject(value) && value.version === INDEX_VERSION && isObject(value.files))
      return value as unknown as IndexFile;
  } catch {
    // Missing or corrupt: start over; the cache only saves work.
  }
  return { version: INDEX_VERSION, files: {} };
}

function saveIndex(sessionRoot: string, index: IndexFile): void {
  const target = join(sessionRoot, SESSION_INDEX_FILE);
  const temp = `${target}.${process.pid}.${randomHex(4)}.tmp`;
  try {
    // Private like the sessions it lists (it keeps their first messages).
    writeFileSync(temp, JSON.stringify(index), { mode: PRIVATE_FILE_MODE });
    renameSync(temp, target);
    sessionIndexStats.indexWrites++;
  } catch {
    // A read-only session dir still lists; it just cannot remember. Do not leave the temp file behind.
    try {
      unlinkSync(temp);
    } catch {}
  }
}

// ---- summarising one file ----

const TYPE_PREFIX = Buffer.from('{"type":"');
const QUOTE = 0x22;

/** The `type` of an entry line: read from the prefix our writer (and the peer's) produces, parsed otherwise. */
function lineType(bytes: Buffer): string | undefined {
  if (bytes.length > TYPE_PREFIX.length && bytes.subarray(0, TYPE_PREFIX.length).equals(TYPE_PREFIX)) {
    const end = bytes.indexOf(QUOTE, TYPE_PREFIX.length);
    return end === -1 ? undefined : bytes.toString("latin1", TYPE_PREFIX.length, end);
  }
  const value = parseLine(bytes);
  return isObject(value) && typeof value.type === "string" ? value.type : undefined;
}

function parseLine(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const read = readSync(fd, buffer, filled, length - filled, position + filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}

/**
 * Throws when the file is not a session (the caller skips it). With `previous` (the same session, counted when
 * it was `previous.size` bytes), only the bytes appended since are counted.
 */
function summarize(
  path: string,
  size: number,
  mtimeMs: number,
  previous?: { size: number; summary: Summary },
): Summary {
  const fd = openSync(path, "r");
  try {
    const head = readAt(fd, 0, Math.min(size, HEAD_BYTES));
    const wholeFile = head.length >= size;

    const headerEnd = head.indexOf(0x0a);
    if (headerEnd === -1 && !wholeFile)
      throw new Error(`${path}: the header line is longer than ${HEAD_BYTES} bytes`);
    const headerValue = parseLine(withoutBom(headerEnd === -1 ? head : head.subarray(0, headerEnd)));
    const problem = headerProblem(headerValue);
    if (problem) throw new Error(`${path}: ${problem}`);
    const header = headerValue as SessionHeader;
    const body = headerEnd === -1 ? Buffer.alloc(0) : head.subarray(headerEnd + 1);
    const bodyOffset = headerEnd + 1;

    let firstMessage: string | undefined;
    let lastActivity: number | undefined;
    let name: string | undefined;
    let nameFound = false;
    let messageCount = 0;
    const labels = new Labels();
    let endsWithNewline = head.at(-1) === 0x0a;
    // Same header, only grown: what was counted stays counted (the file is append-only).
    const resume = previous?.summary.id === header.id && !wholeFile ? previous : undefined;
    // A resumed count keeps the labels counted before; one of them cleared in the new part stays listed until the
    // file is counted whole again (it shrank or its header changed).
    if (resume) labels.seed(resume.summary.labels ?? []);

    if (wholeFile) {
      // Small file (the common case): one read gives everything.
      splitLines(body, (bytes) => {
        if (isBlank(bytes)) return;
        const value = parseLine(bytes);
        if (!isObject(value)) return;
        if (value.type === "message") {
          messageCount++;
          firstMessage ??= userText(value);
          lastActivity = entryTime(value) ?? lastActivity;
        } else if (value.type === "session_info") {
          nameFound = true;
          name = typeof value.name === "string" ? value.name : undefined;
        } else if (value.type === "label") {
          labels.add(value);
        }
      });
    } else {
      // The first user message is expected near the start; only complete lines of the head are looked at.
      if (resume && resume.summary.firstMessage !== NO_MESSAGES) firstMessage = resume.summary.firstMessage;
      else {
        splitLines(body, (bytes, _start, terminated) => {
          if (!terminated) return false;
          if (lineType(bytes) !== "message") return;
          firstMessage = userText(parseLine(bytes));
          return firstMessage === undefined;
        });
      }

      // Last activity and the latest name from the tail, newest line first. The tail's first line is cut off.
      const tailStart = Math.max(bodyOffset, size - TAIL_BYTES);
      const tail = readAt(fd, tailStart, size - tailStart);
      endsWithNewline = tail.at(-1) === 0x0a;
      const lines: Buffer[] = [];
      splitLines(tail, (bytes, start) => {
        if (start > 0 || tailStart === bodyOffset) lines.push(bytes);
      });
      for (let i = lines.length - 1; i >= 0 && (lastActivity === undefined || !nameFound); i--) {
        const type = lineType(lines[i]!);
        if (type !== "message" && type !== "session_info") continue;
        const value = parseLine(lines[i]!);
        if (!isObject(value)) continue;
        if (type === "message") lastActivity ??= entryTime(value);
        else if (!nameFound) {
          nameFound = true;
          name = typeof value.name === "string" ? value.name : undefined;
        }
      }

      // The exact count needs every line, but only its type prefix; session_info lines are parsed only if the
      // tail had none (a name set long ago). A resumed count starts where the last one stopped.
      if (resume) {
        messageCount = resume.summary.messageCount;
        if (!nameFound && resume.summary.name !== undefined) name = resume.summary.name;
      }
      scanLines(
        fd,
        (bytes, _start, terminated) => {
          const type = lineType(bytes);
          if (type === "message") {
            // A torn last line still starts with the prefix; count it only if it is complete JSON.
            if (terminated || parseLine(bytes) !== undefined) messageCount++;
          } else if (type === "session_info" && !nameFound) {
            const value = parseLine(bytes);
            if (isObject(value)) name = typeof value.name === "string" ? value.name : undefined;
          } else if (type === "label") {
            // Label lines are few and short: parsing them costs nothing next to the scan.
            const value = parseLine(bytes);
            if (isObject(value)) labels.add(value);
          }
        },
        resume ? resume.size : bodyOffset,
        size,
      );
    }

    const created = Date.parse(header.timestamp);
    const summary: Summary = {
      id: header.id,
      cwd: header.cwd,
      created: header.timestamp,
      // A big file whose tail holds no message line (one huge last line) falls back to the file's mtime.
      modified: lastActivity ?? (messageCount === 0 && !Number.isNaN(created) ? created : mtimeMs),
      messageCount,
      firstMessage: firstMessage ?? NO_MESSAGES,
      endsWithNewline,
    };
    if (name !== undefined) summary.name = name;
    const labelled = labels.list();
    if (labelled.length > 0) summary.labels = labelled;
    if (header.parentSession !== undefined) summary.parentSession = header.parentSession;
    return summary;
  } finally {
    closeSync(fd);
  }
}

/** The labels of a file's `label` entries as they stand after the last one: a later entry replaces or clears. */
class Labels {
  private readonly byTarget = new Map<string, string>();

  add(entry: Record<string, unknown>): void {
    if (typeof entry.targetId !== "string") return;
    // Set again, a label moves to the end: the list is in the order labels were last set.
    this.byTarget.delete(entry.targetId);
    if (typeof entry.label === "string" && entry.label.trim() !== "")
      this.byTarget.set(entry.targetId, entry.label);
  }

  /** Labels listed by an earlier count, whose targets it did not keep. */
  seed(labels: readonly string[]): void {
    for (const [i, label] of labels.entries()) this.byTarget.set(`\0earlier:${i}`, label);
  }

  list(): string[] {
    return [...new Set(this.byTarget.values())].slice(-MAX_LABELS);
  }
}

/** The text of a message entry's user message, or undefined for other entries. */
function userText(entry: unknown): string | undefined {
  if (!isObject(entry) || !isObject(entry.message) || entry.message.role !== "user") return undefined;
  const content = entry.message.content;
  let text: string;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content)) {
    text = content
      .filter((part): part is { type: "text"; text: string } => isObject(part) && part.type === "text")
      .map((part) => part.text)
      .join(" ");
  } else return undefined;
  return text.length > FIRST_MESSAGE_MAX_CHARS ? `${text.slice(0, FIRST_MESSAGE_MAX_CHARS)}…` : text;
}

function entryTime(entry: Record<string, unknown>): number | undefined {
  const time = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
  return Number.isNaN(time) ? undefined : time;
}

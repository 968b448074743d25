/**
 * Reading a session file: the header, then every entry, tolerating what a crash or a bad edit leaves behind.
 *
 * - A torn last line (not valid JSON, no trailing `\n`: the process died mid-write) is skipped with a warning
 *   naming the file and line. Its bytes stay where they are (they may be all that is left of something someone
 *   wants back); `needsNewline` makes the next append end that line first, so the new entry starts a line of its
 *   own and the torn bytes become a malformed line in the middle.
 * - A malformed line anywhere else is skipped with a warning naming its line number; the lines around it are kept
 *   and so is the line itself.
 * - So is a line that is JSON but not an entry of its type's shape (`"message": null`, see entry-schema.ts): using
 *   it would break the context or a renderer later, far from here.
 * - An entry whose parent is missing (its parent's line was the malformed one) is attached to the previous entry,
 *   with a warning, so the active branch still reaches the root and nothing earlier drops out of context.
 * - A missing or invalid header is an error: without it we do not know the file is a session at all.
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import type { SessionEntry, SessionHeader } from "../../kernel/index.js";
import { entryShapeProblem } from "./entry-schema.js";
import { errnoCode, reason, SessionStoreError } from "./errors.js";
import { isBlank, scanLines, withoutBom } from "./lines.js";
import { SESSION_VERSION } from "./paths.js";

/**
 * Receives the valid entries in file order (unknown entry types included, for forward compatibility), each with
 * the byte range of its line, so the caller decides what to keep: the file is never held in memory whole.
 */
export interface EntrySink {
  /** Called with the header before any entry. */
  header(header: SessionHeader): void;
  /** Whether an earlier entry had this id. */
  has(id: string): boolean;
  /** `parentId` is already re-attached when the line's parent was missing. */
  add(entry: SessionEntry, start: number, length: number): void;
  /**
   * Entry types the sink will take unparsed (see `addUnparsed`), or "all"; without it every line is parsed. Only a complete
   * line in the writer's layout (`{"type":"…","id":"…","parentId":…`, closed by `}`) is passed on this way.
   */
  unparsedTypes?: ReadonlySet<string> | "all";
  /** An entry known by its line's prefix only: its type, id and (re-attached) parent, and its line's byte range. */
  addUnparsed?(stub: EntryStub, start: number, length: number): void;
}

/** What the start of an entry line tells without parsing the rest. */
export interface EntryStub {
  type: string;
  id: string;
  parentId: string | null;
}

export interface ParsedSessionFile {
  header: SessionHeader;
  warnings: string[];
  /** File size in bytes when it was read. */
  size: number;
  /** The file does not end with `\n` (a torn line, or a complete one), so the next append must start with one. */
  needsNewline: boolean;
}

/** Why a parsed JSON value is not a header, or undefined if it is one. */
export function headerProblem(value: unknown): string | undefined {
  if (!isObject(value) || value.type !== "session")
    return 'it is not a session header ({"type":"session",...})';
  if (value.version !== SESSION_VERSION) {
    return `its version ${JSON.stringify(value.version)} is not supported (this store reads version ${SESSION_VERSION})`;
  }
  if (typeof value.id !== "string" || value.id === "") return "the header has no id";
  if (typeof value.cwd !== "string") return "the header has no cwd";
  if (typeof value.timestamp !== "string") return "the header has no timestamp";
  return undefined;
}

/** Why a parsed JSON value is not an entry, or undefined if it is one. */
export function entryProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "is not a JSON object";
  if (typeof value.type !== "string") return "has no type";
  if (typeof value.id !== "string" || value.id === "") return "has no id";
  if (value.parentId !== null && typeof value.parentId !== "string") return "has no parentId";
  return undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Reads and validates a session file line by line, in bounded chunks, handing each entry to `sink`. Throws
 * SessionStoreError naming the file when it is not a session.
 */
export function readSessionFile(path: string, sink: EntrySink): ParsedSessionFile {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT") {
      throw new SessionStoreError("KC_ERR_SESSION_NOT_FOUND", `Session file ${path} does not exist`, {
        path,
      });
    }
    throw new SessionStoreError("KC_ERR_SESSION_IO", `Cannot read session file ${path}: ${reason(error)}`, {
      path,
      cause: error,
    });
  }
  try {
    return parse(fd, path, sink);
  } catch (error) {
    if (error instanceof SessionStoreError) throw error;
    throw new SessionStoreError("KC_ERR_SESSION_IO", `Cannot read session file ${path}: ${reason(error)}`, {
      path,
      cause: error,
    });
  } finally {
    closeSync(fd);
  }
}

const NOT_JSON = Symbol("not JSON");

const TYPE_PART = Buffer.from('{"type":"');
const ID_PART = Buffer.from('","id":"');
const PARENT_PART = Buffer.from('","parentId":');
const NULL_PART = Buffer.from("null,");
const QUOTE = 0x22;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;

/** Whether `bytes` holds `part` at `at`. */
function holds(bytes: Buffer, at: number, part: Buffer): boolean {
  if (at + part.length > bytes.length) return false;
  // A loop, not Buffer.compare: the parts are a few bytes, and this runs for every line of the file.
  for (let i = 0; i < part.length; i++) if (bytes[at + i] !== part[i]) return false;
  return true;
}

/** The end of a plain string value starting at `from` (printable ASCII up to its quote, no escapes), or -1. */
function plainEnd(bytes: Buffer, from: number): number {
  const end = bytes.indexOf(QUOTE, from);
  if (end === -1) return -1;
  for (let i = from; i < end; i++) {
    const byte = bytes[i]!;
    if (byte < 0x20 || byte > 0x7e || byte === 0x5c) return -1;
  }
  return end;
}

/**
 * The type, id and parent of an entry line written in the store's own layout,
 * `{"type":"T","id":"I","parentId":null|"P",` (more fields follow) and a last `}` (trailing spaces and CR aside),
 * or undefined for any other line. Values must be printable ASCII without escapes; anything else is left to
 * JSON.parse. Only bytes are compared: a line in this layout costs no string but its type, id and parent.
 */
export function entryStub(bytes: Buffer): EntryStub | undefined {
  let last = bytes.length - 1;
  while (last > 0 && (bytes[last] === 0x20 || bytes[last] === 0x09 || bytes[last] === 0x0d)) last--;
  if (bytes[last] !== CLOSE_BRACE || !holds(bytes, 0, TYPE_PART)) return undefined;
  const typeEnd = plainEnd(bytes, TYPE_PART.length);
  if (typeEnd <= TYPE_PART.length || !holds(bytes, typeEnd, ID_PART)) return undefined;
  const idStart = typeEnd + ID_PART.length;
  const idEnd = plainEnd(bytes, idStart);
  if (idEnd <= idStart || !holds(bytes, idEnd, PARENT_PART)) return undefined;
  const parentAt = idEnd + PARENT_PART.length;
  let parentId: string | null = null;
  if (!holds(bytes, parentAt, NULL_PART)) {
    if (bytes[parentAt] !== QUOTE) return undefined;
    const parentEnd = plainEnd(bytes, parentAt + 1);
    if (parentEnd === -1 || bytes[parentEnd + 1] !== COMMA) return undefined;
    parentId = bytes.toString("latin1", parentAt + 1, parentEnd);
  }
  return {
    type: bytes.toString("latin1", TYPE_PART.length, typeEnd),
    id: bytes.toString("latin1", idStart, idEnd),
    parentId,
  };
}

function parse(fd: number, path: string, sink: EntrySink): ParsedSessionFile {
  const size = fstatSync(fd).size;
  let header: SessionHeader | undefined;
  const warnings: string[] = [];
  let previousId: string | undefined;
  let lineNumber = 0;
  // An unparseable line is only known to be the torn tail once nothing but blank lines follows it.
  let pendingBad: { line: number; terminated: boolean } | undefined;
  let lastTerminated = true;

  const flushBad = () => {
    if (!pendingBad) return;
    warnings.push(`${path}: line ${pendingBad.line} is not valid JSON and was skipped`);
    pendingBad = undefined;
  };

  scanLines(fd, (line, start, terminated) => {
    lineNumber++;
    lastTerminated = terminated;
    const bytes = withoutBom(line, start);
    if (isBlank(bytes)) return;
    // A complete line of a type the sink takes unparsed: its prefix is all that is read now (the entry is parsed
    // and checked when it is read back), so opening a long session does not parse its whole history.
    if (header && terminated && sink.unparsedTypes) {
      const stub = entryStub(bytes);
      if (stub && (sink.unparsedTypes === "all" || sink.unparsedTypes.has(stub.type))) {
        flushBad();
        if (sink.has(stub.id)) {
          warnings.push(`${path}: line ${lineNumber} repeats entry id ${stub.id} and was skipped`);
          return;
        }
        // The parent is nearly always the line before: no lookup for that.
        if (stub.parentId !== null && stub.parentId !== previousId && !sink.has(stub.parentId)) {
          warnings.push(missingParent(path, lineNumber, stub.id, stub.parentId, previousId));
          stub.parentId = previousId ?? null;
        }
        previousId = stub.id;
        sink.addUnparsed!(stub, start, bytes.length);
        return;
      }
    }
    const text = bytes.toString("utf8");
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = NOT_JSON;
    }

    if (!header) {
      const problem = value === NOT_JSON ? "it is not valid JSON" : headerProblem(value);
      if (problem) {
        throw new SessionStoreError(
          "KC_ERR_SESSION_INVALID",
          `${path} is not a KnightCode session file: line ${lineNumber} should be the session header, but ${problem}`,
          { path },
        );
      }
      header = value as SessionHeader;
      sink.header(header);
      return;
    }

    if (value === NOT_JSON) {
      flushBad();
      pendingBad = { line: lineNumber, terminated };
      return;
    }
    flushBad();
    const problem = entryProblem(value);
    if (problem) {
      warnings.push(`${path}: line ${lineNumber} ${problem}, so it is not a session entry and was skipped`);
      return;
    }
    const shape = entryShapeProblem(value as Record<string, unknown>);
    if (shape) {
      const { type, id } = value as SessionEntry;
      warnings.push(`${path}: line ${lineNumber} (${type} entry ${id}): ${shape}, so it was skipped`);
      return;
    }
    const entry = value as SessionEntry;
    if (sink.has(entry.id)) {
      warnings.push(`${path}: line ${lineNumber} repeats entry id ${entry.id} and was skipped`);
      return;
    }
    // Parents always precede children in an append-only file; a parent that is not among the earlier entries
    // was lost (malformed line) or never existed. Re-attaching keeps the branch connected and rules out cycles.
    if (entry.parentId !== null && !sink.has(entry.parentId)) {
      warnings.push(missingParent(path, lineNumber, entry.id, entry.parentId, previousId));
      entry.parentId = previousId ?? null;
    }
    previousId = entry.id;
    sink.add(entry, start, bytes.length);
  });

  if (!header) {
    throw new SessionStoreError(
      "KC_ERR_SESSION_INVALID",
      `${path} is not a KnightCode session file: it is empty (no session header)`,
      { path },
    );
  }

  if (pendingBad) {
    const bad: { line: number; terminated: boolean } = pendingBad;
    if (bad.terminated) {
      // Written completely (it has its newline) but not JSON: a bad edit, not a crash.
      flushBad();
    } else {
      warnings.push(
        `${path}: line ${bad.line} is incomplete (torn write?) and was skipped; it stays in the file, and the next entry starts on a new line`,
      );
    }
  }
  return { header, warnings, size, needsNewline: !lastTerminated };
}

function missingParent(
  path: string,
  line: number,
  id: string,
  parentId: string,
  previousId: string | undefined,
): string {
  return (
    `${path}: line ${line} (entry ${id}) refers to a missing parent ${parentId}; ` +
    (previousId ? `attached it to the previous entry ${previousId}` : "made it a root")
  );
}

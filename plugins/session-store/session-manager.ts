/**
 * The session store: one JSONL file per session (header line, then one entry per line), entries forming a tree.
 *
 * Writes are append-only and synchronous: each append is one `writeSync` of one complete line on a file
 * descriptor opened with O_APPEND, done before the method returns. Nothing is buffered in user space, so an entry
 * whose append has returned is in the kernel's page cache and survives the process being killed. See
 * `SessionDurability` for power loss.
 */
import {
  closeSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type {
  AgentMessage,
  BranchSummaryEntry,
  CompactionEntry,
  ContextEditEntry,
  CustomEntry,
  CustomMessageEntry,
  ImageContent,
  LabelEntry,
  MessageEntry,
  ModelChangeEntry,
  ReadonlySessionManager,
  SessionEntry,
  SessionHeader,
  SessionInfoEntry,
  SessionTreeNode,
  TextContent,
  ThinkingLevel,
  ThinkingLevelChangeEntry,
  Usage,
  ViewNode,
} from "../../kernel/index.js";
import { PRIVATE_FILE_MODE } from "../kit/files/private-file.js";
import { randomHex, randomUuid } from "../kit/util/random.js";
import { stringifySafely } from "../kit/util/safe-json.js";
import {
  type BranchView,
  buildSessionContext,
  type ContextItem,
  contextEntries,
  type SessionContext,
} from "./context.js";
import { EntryColumns } from "./entry-columns.js";
import { EntryReader } from "./entry-reader.js";
import { errnoCode, reason, SessionStoreError } from "./errors.js";
import { type EntryStub, readSessionFile } from "./file-format.js";
import {
  listAllSessions,
  listSessionsForCwd,
  type SessionInfo,
  sessionDirsIn,
  sessionFilesIn,
} from "./list.js";
import { SessionLock } from "./lock.js";
import {
  cwdSessionDir,
  idFromFileName,
  resolveSessionRoot,
  SESSION_VERSION,
  sessionFileName,
  sessionRootOf,
} from "./paths.js";

/**
 * `"write"` (default): every append is written to the OS before it returns; it survives a crash or kill of this
 * process but not a power loss or kernel panic. `"fsync"` also fsyncs each append, which survives those too but
 * costs a disk flush (often milliseconds) per entry, and a streaming agent appends many entries per turn; losing
 * the last turn on power loss is the usual trade for a CLI, so it is opt-in.
 */
export type SessionDurability = "write" | "fsync";

export interface SessionLocation {
  agentDir: string;
  /** Overrides `<agentDir>/sessions`. */
  sessionDir?: string;
}

export interface CreateSessionOptions extends SessionLocation {
  cwd: string;
  durability?: SessionDurability;
  /** Written into the header (`parentSession`): the session this one continues. */
  parentSession?: string;
  /** The new session's id (`--session-id`; see `assertValidSessionId`); a random UUID when unset. */
  id?: string;
}

/**
 * pi's rule for a chosen session id: letters, digits, `.`, `_` and `-`, starting and ending with a letter or digit
 * (it becomes part of the file name).
 */
export function assertValidSessionId(id: string): void {
  if (typeof id !== "string" || !/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(id)) {
    throw new TypeError(
      `Session id ${JSON.stringify(id)} is invalid: use letters, digits, '.', '_' and '-', starting and ending with a letter or digit`,
    );
  }
}

export interface OpenSessionOptions {
  agentDir?: string;
  /** The session root that forks to another cwd go under; by default the parent of the file's cwd dir. */
  sessionDir?: string;
  durability?: SessionDurability;
}

export { buildSessionContext, type SessionContext } from "./context.js";
export { type SessionErrorCode, SessionLockedError, SessionStoreError } from "./errors.js";
export { type SessionInfo, sessionIndexStats } from "./list.js";
export { encodeCwd } from "./paths.js";

/** Entry fields a caller provides; the store adds `id`, `parentId` and `timestamp`. */
type EntryFields<T extends SessionEntry> = T extends SessionEntry
  ? Omit<T, "id" | "parentId" | "timestamp">
  : never;

/** Entries per write when a fork copies a branch. */
const FORK_BATCH = 1_000;

/** Entry types whose entries can be large and matter only as context: not held once they are in the file. */
const READ_BACK_TYPES: ReadonlySet<string> = new Set(["message", "custom_message"]);

/** Where the file stands: not yet created (new session), or existing with what the next append must repair. */
interface FileState {
  path: string;
  /** The directory forks to another cwd go under (undefined: next to this file). */
  sessionRoot: string | undefined;
  exists: boolean;
  fd: number | undefined;
  /** Bytes in the file as far as we know (we hold the lock, so only we change it). */
  size: number;
  needsNewline: boolean;
  durability: SessionDurability;
  lock: SessionLock | undefined;
}

export class SessionManager implements ReadonlySessionManager {
  /** Problems found when the file was read (torn or malformed lines, re-attached entries). */
  readonly warnings: string[] = [];
  /** Where a warning about a value written with replacements goes (the host's warning channel); stderr if unset. */
  onWriteWarning: ((message: string) => void) | undefined;

  private readonly header: SessionHeader;
  /** Undefined for an in-memory session. */
  private readonly file: FileState | undefined;
  /**
   * What the session keeps of every entry, numbered in file order: id, parent (as the tree has it: a line whose
   * parent was lost is re-attached to the entry before it), type, and the byte range of its line (offset -1 for an
   * entry that is only in memory). Columns of typed arrays, not an object per entry (see entry-columns.ts).
   */
  private readonly columns = new EntryColumns();
  /**
   * The entries held in memory, by number: all but the messages read from the file and not (or no longer) part of
   * the context, which are read back from their line.
   */
  private readonly held = new Map<number, SessionEntry>();
  /** Children by parent number (-1: roots), built on first use (getChildren), then kept up to date. */
  private childrenIndex: Map<number, number[]> | undefined;
  /** Reads entries that are not held back from the file (undefined for an in-memory session). */
  private readonly reader: EntryReader | undefined;
  private readonly labels = new Map<string, string>();
  private sessionName: string | undefined;
  private leafId: string | null = null;
  private closed = false;

  private constructor(header: SessionHeader, file: FileState | undefined) {
    this.header = header;
    this.file = file;
    this.reader = file ? new EntryReader(file.path) : undefined;
  }

  // ---- constructors ----

  /** A new session of `cwd`. Nothing touches disk until the first append writes the header and the entry. */
  static create(options: CreateSessionOptions): SessionManager {
    const root = resolveSessionRoot(options);
    return SessionManager.newFileSession(root, cwdSessionDir(root, options.cwd), options.cwd, {
      durability: options.durability ?? "write",
      ...(options.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
      ...(options.id !== undefined ? { id: options.id } : {}),
    });
  }

  /**
   * pi's `--fork`: a new session of `options.cwd` (in its session folder) holding every entry of the session file
   * `source` (all its branches, same ids), its header naming `source` as `parentSession`. The source is only read
   * (not locked). Written right away, then opened as any file.
   */
  static forkFrom(source: string, options: CreateSessionOptions): SessionManager {
    const from = resolve(source);
    let text: string;
    try {
      text = readFileSync(from, "utf8");
    } catch (error) {
      const code = errnoCode(error) === "ENOENT" ? "KC_ERR_SESSION_NOT_FOUND" : "KC_ERR_SESSION_IO";
      throw new SessionStoreError(code, `Cannot fork ${from}: ${reason(error)}`, { path: from });
    }
    const lines = text.split("\n");
    const first = lines.findIndex((line) => line.trim() !== "");
    let header: { type?: unknown } | undefined;
    try {
      header = first >= 0 ? JSON.parse(lines[first]!) : undefined;
    } catch {
      header = undefined;
    }
    if (header?.type !== "session") {
      throw new SessionStoreError(
        "KC_ERR_SESSION_INVALID",
        `Cannot fork ${from}: it does not start with a session header`,
        { path: from },
      );
    }
    if (options.id !== undefined) assertValidSessionId(options.id);
    const root = resolveSessionRoot(options);
    const dir = cwdSessionDir(root, options.cwd);
    const fresh = newHeader(options.cwd, from, options.id);
    // The entries are copied as they are, so the header keeps their format's version (opening migrates older ones).
    const version = (header as { version?: unknown }).version;
    if (version === undefined) delete (fresh as { version?: unknown }).version;
    else (fresh as { version: unknown }).version = version;
    const target = join(dir, sessionFileName(fresh.timestamp, fresh.id));
    const body = lines.slice(first + 1).filter((line) => line.trim() !== "");
    try {
      mkdirSync(dir, { recursive: true });
      const fd = openSync(target, "wx", PRIVATE_FILE_MODE);
      try {
        writeSync(fd, `${[JSON.stringify(fresh), ...body].join("\n")}\n`);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      throw new SessionStoreError("KC_ERR_SESSION_IO", `Cannot write the fork ${target}: ${reason(error)}`, {
        path: target,
        cause: error,
      });
    }
    return SessionManager.open(target, {
      agentDir: options.agentDir,
      ...(options.sessionDir !== undefined ? { sessionDir: options.sessionDir } : {}),
      ...(options.durability ? { durability: options.durability } : {}),
    });
  }

  /** Opens an existing session file and takes its lock. The leaf is the file's last entry. */
  static open(path: string, options: OpenSessionOptions = {}): SessionManager {
    const file = resolve(path);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(file);
    } catch (error) {
      if (errnoCode(error) === "ENOENT") {
        throw new SessionStoreError("KC_ERR_SESSION_NOT_FOUND", `Session file ${file} does not exist`, {
          path: file,
        });
      }
      throw new SessionStoreError("KC_ERR_SESSION_IO", `Cannot open session file ${file}: ${reason(error)}`, {
        path: file,
        cause: error,
      });
    }
    if (!stat.isFile()) {
      throw new SessionStoreError("KC_ERR_SESSION_INVALID", `Session file ${file} is not a regular file`, {
        path: file,
      });
    }

    const owner = {};
    // Lock before reading, so nobody appends between our read and our first write.
    const lock = SessionLock.acquire(file, owner);
    try {
      // Forks to another cwd go under the explicit session dir, else the root this file sits in, else the
      // agent dir's; with none of those (a file kept elsewhere) they are written next to this file.
      const sessionRoot =
        options.sessionDir !== undefined
          ? resolve(options.sessionDir)
          : (sessionRootOf(file) ??
            (options.agentDir !== undefined
              ? resolveSessionRoot({ agentDir: options.agentDir })
              : undefined));
      const state: FileState = {
        path: file,
        sessionRoot,
        exists: true,
        fd: undefined,
        size: 0,
        needsNewline: false,
        durability: options.durability ?? "write",
        lock,
      };
      // Quick: messages are indexed from their line's prefix and only the context's are parsed. Should one of those
      // not parse (a line in the writer's layout that is not a valid entry after all), the file is read again the
      // thorough way, which checks every line and reports and skips the bad ones exactly.
      return SessionManager.load(file, state, true) ?? SessionManager.load(file, state, false)!;
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /**
   * Reads the file into a new manager. `quick`: message lines in the writer's layout are not parsed, only indexed
   * (type, id, parent, byte range); the context's messages are then read back and checked, and if one fails the
   * result is undefined (the caller reads the file again without `quick`).
   */
  private static load(file: string, state: FileState, quick: boolean): SessionManager | undefined {
    let manager: SessionManager | undefined;
    // Entries are held as they are read, and a compaction lets go of what it cut off: what stays is about what
    // the context will need, so a file whose context is all of it is parsed once, a long one never held whole.
    const held: number[] = [];
    let released = 0;
    const parsed = readSessionFile(file, {
      header: (header) => {
        manager = new SessionManager(header, state);
      },
      has: (id) => manager!.columns.has(id),
      add: (entry, start, length) => {
        const at = manager!.index(entry, start, length, true);
        if (READ_BACK_TYPES.has(entry.type)) held.push(at);
        else if (entry.type === "compaction") {
          const columns = manager!.columns;
          const kept = columns.indexOf(entry.firstKeptEntryId);
          const cut = kept >= 0 ? columns.offsetAt(kept) : start;
          while (released < held.length && columns.offsetAt(held[released]!) < cut) {
            manager!.release(held[released++]!);
          }
        }
      },
      ...(quick
        ? {
            unparsedTypes: READ_BACK_TYPES,
            addUnparsed: (stub: EntryStub, start: number, length: number) => {
              manager!.addSlot(stub.id, stub.parentId, stub.type, start, length, undefined);
            },
          }
        : {}),
    });
    // readSessionFile throws for a file without a header, so the manager exists here.
    const opened = manager!;
    const count = opened.columns.size;
    opened.leafId = count > 0 ? opened.columns.idAt(count - 1) : null;
    const context = opened.contextSlots();
    if (quick) {
      try {
        for (const at of context) opened.hold(at);
      } catch (error) {
        if (!(error instanceof SessionStoreError)) throw error;
        opened.reader?.close();
        return undefined;
      }
      // What is read back later is read from the file as it is then, not from bytes kept from the open.
      opened.reader?.forgetWindow();
    }
    state.size = parsed.size;
    state.needsNewline = parsed.needsNewline;
    opened.warnings.push(...parsed.warnings);
    for (const at of opened.held.keys()) if (!context.has(at)) opened.release(at);
    return opened;
  }

  /** A session that never touches disk (`--no-session`): no file, no lock. */
  static inMemory(cwd: string, id?: string): SessionManager {
    if (id !== undefined) assertValidSessionId(id);
    return new SessionManager(newHeader(cwd, undefined, id), undefined);
  }

  /** The most recently active session of `cwd`, or a new one if it has none. */
  static continueRecent(options: CreateSessionOptions): SessionManager {
    const recent = SessionManager.list(options)[0];
    if (!recent) return SessionManager.create(options);
    return SessionManager.open(recent.path, options);
  }

  /** Sessions of `cwd`, most recently active first. */
  static list(options: SessionLocation & { cwd: string }): SessionInfo[] {
    return listSessionsForCwd(resolveSessionRoot(options), options.cwd);
  }

  /** Sessions of every cwd, most recently active first. */
  static listAll(options: SessionLocation): SessionInfo[] {
    return listAllSessions(resolveSessionRoot(options));
  }

  /**
   * The file of the session whose id is `idOrPrefix` or starts with it (`--session <id>`). Matches file names
   * first (no reads), then headers through the listing cache (files renamed by hand).
   */
  static findById(idOrPrefix: string, options: SessionLocation): string {
    const prefix = idOrPrefix.trim();
    const root = resolveSessionRoot(options);
    if (prefix === "") {
      throw new SessionStoreError("KC_ERR_SESSION_NOT_FOUND", `No session id given (searching ${root})`);
    }
    const byName: string[] = [];
    for (const dir of sessionDirsIn(root)) {
      for (const path of sessionFilesIn(dir)) {
        if (idFromFileName(basename(path))?.startsWith(prefix)) byName.push(path);
      }
    }
    const matches =
      byName.length > 0
        ? byName
        : listAllSessions(root)
            .filter((s) => s.id.startsWith(prefix))
            .map((s) => s.path);
    if (matches.length === 1) return matches[0]!;
    if (matches.length === 0) {
      throw new SessionStoreError("KC_ERR_SESSION_NOT_FOUND", `No session with id ${prefix} in ${root}`, {
        path: root,
      });
    }
    throw new SessionStoreError(
      "KC_ERR_SESSION_AMBIGUOUS",
      `Session id ${prefix} matches ${matches.length} sessions in ${root}: ${matches.map((p) => basename(p)).join(", ")}. Give more of the id.`,
      { path: root },
    );
  }

  private static newFileSession(
    sessionRoot: string | undefined,
    dir: string,
    cwd: string,
    options: { durability: SessionDurability; parentSession?: string; id?: string },
  ): SessionManager {
    if (options.id !== undefined) assertValidSessionId(options.id);
    const header = newHeader(cwd, options.parentSession, options.id);
    return new SessionManager(header, {
      path: join(dir, sessionFileName(header.timestamp, header.id)),
      sessionRoot,
      exists: false,
      fd: undefined,
      size: 0,
      needsNewline: false,
      durability: options.durability,
      lock: undefined,
    });
  }

  // ---- ReadonlySessionManager ----

  getHeader(): SessionHeader {
    return { ...this.header };
  }

  getSessionId(): string {
    return this.header.id;
  }

  getSessionFile(): string | undefined {
    return this.file?.path;
  }

  getCwd(): string {
    return this.header.cwd;
  }

  getLeafId(): string | null {
    return this.leafId;
  }

  /** A message entry read from the file is read back from its line on each call: treat entries as read-only. */
  getEntry(id: string): SessionEntry | undefined {
    const at = this.columns.indexOf(id);
    return at < 0 ? undefined : this.entryOf(at);
  }

  /** Every entry in file order (all branches). Entries are shared or read back: treat them as read-only. */
  getEntries(): SessionEntry[] {
    const entries: SessionEntry[] = [];
    for (let at = 0; at < this.columns.size; at++) entries.push(this.entryOf(at));
    return entries;
  }

  /** The path root → `fromId` (default: the leaf). Throws for an unknown id. */
  getBranch(fromId?: string): SessionEntry[] {
    return Array.from(this.branchSlots(fromId, "get the branch of"), (at) => this.entryOf(at));
  }

  /**
   * The active branch from the leaf back to the root, only entries of `types`, each read as it is reached: a
   * caller looking for the latest entry of some type stops early and reads nothing it does not look at.
   */
  *branchBackwards<T extends SessionEntry["type"]>(
    types: readonly T[],
  ): Generator<Extract<SessionEntry, { type: T }>, void, undefined> {
    const wanted: ReadonlySet<string> = new Set(types);
    for (let at = this.leafSlot(); at >= 0; at = this.columns.parentAt(at)) {
      if (wanted.has(this.columns.typeAt(at))) yield this.entryOf(at) as Extract<SessionEntry, { type: T }>;
    }
  }

  /** Visits every entry in file order, reading back one at a time: for a pass over a large session. */
  forEachEntry(visit: (entry: SessionEntry) => void): void {
    for (let at = 0; at < this.columns.size; at++) visit(this.entryOf(at));
  }

  getTree(): SessionTreeNode[] {
    const nodes: SessionTreeNode[] = [];
    const roots: SessionTreeNode[] = [];
    // Parents precede children in the file, so one pass in file order links every node.
    for (let at = 0; at < this.columns.size; at++) {
      const entry = this.entryOf(at);
      const node: SessionTreeNode = { entry, children: [] };
      const label = this.labels.get(entry.id);
      if (label !== undefined) node.label = label;
      nodes.push(node);
      const parent = this.columns.parentAt(at);
      if (parent >= 0) nodes[parent]!.children.push(node);
      else roots.push(node);
    }
    return roots;
  }

  getChildren(id: string): SessionEntry[] {
    const at = this.columns.indexOf(id);
    if (at < 0) return [];
    return (this.children().get(at) ?? []).map((child) => this.entryOf(child));
  }

  getLabel(id: string): string | undefined {
    return this.labels.get(id);
  }

  getSessionName(): string | undefined {
    return this.sessionName;
  }

  // ---- context ----

  /** Messages, model and thinking level for the next request, from the active branch. */
  buildContext(): SessionContext {
    return buildSessionContext(this.contextView());
  }

  /** The context's messages with their entries (what compaction measures), read as buildContext() reads them. */
  contextEntries(): ContextItem[] {
    return contextEntries(this.contextView());
  }

  /**
   * The active branch as a view whose messages are read back only when asked for. The ones read for the context
   * are held: the next request asks for the same ones again. A compaction lets them go (`releaseBefore`).
   */
  private contextView(): BranchView {
    const branch = this.branchSlots(undefined, "build the context of");
    return {
      length: branch.length,
      type: (i) => this.columns.typeAt(branch[i]!),
      id: (i) => this.columns.idAt(branch[i]!),
      entry: (i) => this.hold(branch[i]!),
    };
  }

  // ---- tree navigation ----

  /** Moves the leaf to an earlier entry: the next append becomes a sibling branch in the same file. */
  branch(entryId: string): void {
    if (!this.columns.has(entryId)) throw this.unknownEntry(entryId, "branch from");
    this.leafId = entryId;
  }

  /** Leaf = none: the next append is a new root. */
  resetLeaf(): void {
    this.leafId = null;
  }

  // ---- appends ----

  appendMessage(message: AgentMessage): MessageEntry {
    if (typeof (message as { role?: unknown } | null)?.role !== "string") {
      throw new SessionStoreError(
        "KC_ERR_SESSION_ENTRY",
        `Cannot append to ${this.where()}: the message has no role`,
        { path: this.file?.path },
      );
    }
    return this.append<MessageEntry>({ type: "message", message });
  }

  appendModelChange(provider: string, modelId: string): ModelChangeEntry {
    return this.append<ModelChangeEntry>({ type: "model_change", provider, modelId });
  }

  appendThinkingLevelChange(thinkingLevel: ThinkingLevel): ThinkingLevelChangeEntry {
    return this.append<ThinkingLevelChangeEntry>({ type: "thinking_level_change", thinkingLevel });
  }

  /** `firstKeptEntryId` must be on the active branch: it is where the kept history starts. */
  appendCompaction(
    summary: string,
    firstKeptEntryId: string,
    tokensBefore: number,
    details?: unknown,
    usage?: Usage,
  ): CompactionEntry {
    const branch = this.branchSlots(undefined, "compact");
    const target = this.columns.indexOf(firstKeptEntryId);
    const firstKept = target < 0 ? -1 : branch.indexOf(target);
    if (firstKept < 0) throw this.unknownEntry(firstKeptEntryId, "compact from", "on the active branch");
    // What the summary replaces leaves the context, so it need not stay in memory either.
    for (let i = 0; i < firstKept; i++) this.release(branch[i]!);
    return this.append<CompactionEntry>({
      type: "compaction",
      summary,
      firstKeptEntryId,
      tokensBefore,
      details,
      usage,
    });
  }

  /**
   * `fromId` is the entry the summarised branch started from (or "root"); call `branch()` first to move there.
   * `fromHook` marks a summary an extension wrote rather than the default summariser.
   */
  appendBranchSummary(
    fromId: string,
    summary: string,
    details?: unknown,
    fromHook?: boolean,
  ): BranchSummaryEntry {
    if (fromId !== "root" && !this.columns.has(fromId))
      throw this.unknownEntry(fromId, "summarise a branch from");
    return this.append<BranchSummaryEntry>({
      type: "branch_summary",
      fromId,
      summary,
      details,
      ...(fromHook ? { fromHook } : {}),
    });
  }

  /** Extension state that is not sent to the model. */
  appendCustomEntry(customType: string, data?: unknown): CustomEntry {
    return this.append<CustomEntry>({ type: "custom", customType, data });
  }

  /** Extension content sent to the model as a user-role message. */
  appendCustomMessageEntry(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display: boolean,
    details?: unknown,
    view?: ViewNode,
  ): CustomMessageEntry {
    return this.append<CustomMessageEntry>({
      type: "custom_message",
      customType,
      content,
      display,
      details,
      ...(view !== undefined ? { view } : {}),
    });
  }

  /** Labels `targetId`; without a label, clears it. */
  appendLabel(targetId: string, label?: string): LabelEntry {
    if (!this.columns.has(targetId)) throw this.unknownEntry(targetId, "label");
    return this.append<LabelEntry>({ type: "label", targetId, label });
  }

  /** Names the session; without a name, clears it. */
  appendSessionInfo(name?: string): SessionInfoEntry {
    return this.append<SessionInfoEntry>({ type: "session_info", name });
  }

  /** Replaces (or with `null` drops) `targetId`'s message in future context on this branch; history is kept. */
  appendContextEdit(targetId: string, replacement: AgentMessage | null): ContextEditEntry {
    if (!this.columns.has(targetId)) throw this.unknownEntry(targetId, "edit the context of");
    return this.append<ContextEditEntry>({ type: "context_edit", targetId, replacement });
  }

  // ---- fork and clone ----

  /**
   * A new session holding the path root → `leafId` (same entries, same ids), with `parentSession` pointing at
   * this file. It is written (and locked) right away. From an in-memory session, the result is in memory too.
   */
  createBranchedSession(leafId: string, options: { cwd?: string } = {}): SessionManager {
    const path = this.getBranch(leafId);
    return this.forkWith(path, options.cwd);
  }

  /** A copy of the active branch as a new session (see createBranchedSession). */
  clone(): SessionManager {
    return this.forkWith(this.leafId === null ? [] : this.getBranch(), undefined);
  }

  private forkWith(path: SessionEntry[], cwdOption: string | undefined): SessionManager {
    const cwd = resolve(cwdOption ?? this.header.cwd);
    let fork: SessionManager;
    if (!this.file) {
      fork = new SessionManager(newHeader(cwd), undefined);
    } else {
      const root = this.file.sessionRoot;
      const dir = root === undefined ? dirname(this.file.path) : cwdSessionDir(root, cwd);
      fork = SessionManager.newFileSession(root, dir, cwd, {
        durability: this.file.durability,
        parentSession: this.file.path,
      });
    }
    // Copies, so the two sessions never share mutable entry objects; written in batches, so a long path is never
    // one string, and held like entries read from a file.
    for (let start = 0; start < path.length; start += FORK_BATCH) {
      const lines = path.slice(start, start + FORK_BATCH).map((entry) => `${fork.serialise(entry)}\n`);
      const offsets = fork.writeLines(lines);
      lines.forEach((line, i) => {
        const entry = JSON.parse(line) as SessionEntry;
        fork.index(entry, offsets[i] ?? -1, Buffer.byteLength(line) - 1, !READ_BACK_TYPES.has(entry.type));
      });
    }
    fork.leafId = path.at(-1)?.id ?? null;
    return fork;
  }

  // ---- lifecycle ----

  /** Closes the file and releases the lock. Idempotent. Reads keep working; appends throw. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.reader?.close();
    const file = this.file;
    if (!file) return;
    try {
      if (file.fd !== undefined) closeSync(file.fd);
    } finally {
      file.fd = undefined;
      file.lock?.release();
      file.lock = undefined;
    }
  }

  // ---- internals ----

  private append<T extends SessionEntry>(fields: EntryFields<T>): T {
    // `type`, `id`, `parentId`, `timestamp` first: readers (and our listing) find the type at the line start.
    const draft = Object.assign(
      { type: fields.type, id: this.newId(), parentId: this.leafId, timestamp: new Date().toISOString() },
      fields,
    );
    const line = `${this.serialise(draft)}\n`;
    const [offset] = this.writeLines([line]);
    // The in-memory entry is parsed back from the written line, so it is exactly what a reopen will see
    // (no `undefined` fields, no shared references to the caller's objects). A new entry is held: it is part of
    // the context until a compaction cuts it off.
    const entry = JSON.parse(line) as T;
    this.index(entry, offset ?? -1, Buffer.byteLength(line) - 1, true);
    this.leafId = entry.id;
    return entry;
  }

  /**
   * One entry as one JSON line. Entries carry what extensions produced (tool details, custom data), which JSON may
   * not be able to write: such a part is replaced (see plugins/kit/util/safe-json.ts) and reported, so an append
   * never fails on it and the file stays valid JSONL.
   */
  private serialise(entry: SessionEntry | Record<string, unknown>): string {
    const { text, replaced } = stringifySafely(entry);
    if (replaced.length > 0) {
      const what = describeEntry(entry as Record<string, unknown>);
      const message = `${what} could not be written as it was: ${replaced.join("; ")}`;
      if (this.onWriteWarning) this.onWriteWarning(message);
      else process.stderr.write(`knightcode: ${message}\n`);
    }
    return text;
  }

  /**
   * Appends complete lines to the file (creating it, with its header, on the first write). Returns each line's
   * byte offset; none for an in-memory session.
   */
  private writeLines(lines: string[]): number[] {
    if (this.closed) {
      throw new SessionStoreError(
        "KC_ERR_SESSION_CLOSED",
        `Cannot append to ${this.where()}: the session was closed`,
        { path: this.file?.path },
      );
    }
    const file = this.file;
    if (!file || lines.length === 0) return [];
    if (file.fd === undefined) this.openForAppend(file);
    // A file we created holds nothing until its first write succeeds; the header goes out in that same write,
    // so a new file is never just a header, and a failed first write is retried with its header.
    let prefix = file.size === 0 ? `${JSON.stringify(this.header)}\n` : "";
    if (file.needsNewline) prefix += "\n";
    const bytes = Buffer.from(prefix + lines.join(""), "utf8");
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(file.fd!, bytes, written, bytes.length - written);
      if (file.durability === "fsync") fsyncSync(file.fd!);
    } catch (error) {
      // Cut off whatever part of the write landed, so the file still ends on a complete line.
      try {
        ftruncateSync(file.fd!, file.size);
      } catch {}
      throw new SessionStoreError(
        "KC_ERR_SESSION_IO",
        `Cannot write to session file ${file.path}: ${reason(error)}`,
        { path: file.path, cause: error },
      );
    }
    const offsets: number[] = [];
    let offset = file.size + Buffer.byteLength(prefix);
    for (const line of lines) {
      offsets.push(offset);
      offset += Buffer.byteLength(line);
    }
    file.size += bytes.length;
    file.needsNewline = false;
    return offsets;
  }

  /** Opens the fd on the first write, creating the file when it is new. */
  private openForAppend(file: FileState): void {
    if (!file.exists) {
      const dir = dirname(file.path);
      try {
        mkdirSync(dir, { recursive: true });
      } catch (error) {
        throw new SessionStoreError(
          "KC_ERR_SESSION_IO",
          `Cannot create session directory ${dir}: ${reason(error)}`,
          { path: dir, cause: error },
        );
      }
      file.lock ??= SessionLock.acquire(file.path, this);
      try {
        // "ax": append, and fail rather than clobber if the file somehow exists. Private: it holds the conversation
        // and every tool's output.
        file.fd = openSync(file.path, "ax", PRIVATE_FILE_MODE);
      } catch (error) {
        file.lock.release();
        file.lock = undefined;
        throw new SessionStoreError(
          "KC_ERR_SESSION_IO",
          `Cannot create session file ${file.path}: ${reason(error)}`,
          { path: file.path, cause: error },
        );
      }
      try {
        // Only now has the file an inode to lock; until the first write returns it holds nothing to keep.
        file.lock.lockIdentity();
      } catch (error) {
        closeSync(file.fd);
        file.fd = undefined;
        try {
          unlinkSync(file.path);
        } catch {}
        file.lock.release();
        file.lock = undefined;
        throw error;
      }
      file.exists = true;
      return;
    }
    try {
      file.fd = openSync(file.path, "a");
    } catch (error) {
      throw new SessionStoreError(
        "KC_ERR_SESSION_IO",
        `Cannot open session file ${file.path} for writing: ${reason(error)}`,
        { path: file.path, cause: error },
      );
    }
  }

  /** Adds an entry at the end; `held` keeps it in memory, otherwise it is read back from `offset` when asked for. */
  private index(entry: SessionEntry, offset: number, length: number, held: boolean): number {
    const at = this.addSlot(
      entry.id,
      entry.parentId,
      entry.type,
      offset,
      length,
      held || offset < 0 ? entry : undefined,
    );
    if (entry.type === "label") {
      if (entry.label === undefined) this.labels.delete(entry.targetId);
      else this.labels.set(entry.targetId, entry.label);
    } else if (entry.type === "session_info") {
      this.sessionName = entry.name;
    }
    return at;
  }

  /**
   * Adds an entry to the tree at the end and returns its number; `entry` undefined: read back from its line when
   * asked for. A parent that is not in the tree makes it a root (the file reader re-attaches those beforehand).
   */
  private addSlot(
    id: string,
    parentId: string | null,
    type: string,
    offset: number,
    length: number,
    entry: SessionEntry | undefined,
  ): number {
    const parent = parentId === null ? -1 : this.columns.indexOf(parentId);
    const at = this.columns.add(id, parent, type, offset, length);
    if (entry) this.held.set(at, entry);
    if (this.childrenIndex) pushChild(this.childrenIndex, parent, at);
    return at;
  }

  /** Entry `at`: held, or read back from its line (the tree's parent wins over the line's own). */
  private entryOf(at: number): SessionEntry {
    const held = this.held.get(at);
    if (held) return held;
    const columns = this.columns;
    const entry = this.reader!.read(columns.offsetAt(at), columns.lengthAt(at), columns.idAt(at));
    const parent = columns.parentAt(at);
    entry.parentId = parent < 0 ? null : columns.idAt(parent);
    return entry;
  }

  private hold(at: number): SessionEntry {
    let entry = this.held.get(at);
    if (!entry) {
      entry = this.entryOf(at);
      this.held.set(at, entry);
    }
    return entry;
  }

  /** Lets a held entry go when it can be read back (it is in the file) and is of a type read back on demand. */
  private release(at: number): void {
    if (this.columns.offsetAt(at) >= 0 && READ_BACK_TYPES.has(this.columns.typeAt(at))) this.held.delete(at);
  }

  /**
   * The active branch's entries the context uses: from the `firstKeptEntryId` of the branch's last compaction (or
   * the compaction itself when that entry is not before it), or the whole branch when it has none.
   */
  private contextSlots(): Set<number> {
    const branch = this.branchSlots(undefined, "build the context of");
    let start = 0;
    for (let i = branch.length - 1; i >= 0; i--) {
      const at = branch[i]!;
      if (this.columns.typeAt(at) !== "compaction") continue;
      const firstKept = this.columns.indexOf((this.entryOf(at) as CompactionEntry).firstKeptEntryId);
      const kept = firstKept < 0 ? -1 : branch.indexOf(firstKept);
      start = kept >= 0 && kept < i ? kept : i;
      break;
    }
    return new Set(branch.slice(start));
  }

  /** The leaf's number, or -1 when there is none. */
  private leafSlot(): number {
    return this.leafId === null ? -1 : this.columns.indexOf(this.leafId);
  }

  /** Root → `fromId` (default: the leaf) as entry numbers, without reading any entry. */
  private branchSlots(fromId: string | undefined, action: string): Int32Array {
    const start = fromId ?? this.leafId;
    if (start === null) return new Int32Array(0);
    const leaf = this.columns.indexOf(start);
    if (leaf < 0) throw this.unknownEntry(start, action);
    // Two walks up the tree, counting then filling a typed array: a branch of 300,000 entries costs 1.2 MB outside
    // the garbage-collected heap, not a growing array of numbers reversed in place.
    let depth = 0;
    for (let at = leaf; at >= 0; at = this.columns.parentAt(at)) depth++;
    const path = new Int32Array(depth);
    for (let at = leaf; at >= 0; at = this.columns.parentAt(at)) path[--depth] = at;
    return path;
  }

  private children(): Map<number, number[]> {
    if (!this.childrenIndex) {
      const index = new Map<number, number[]>();
      for (let at = 0; at < this.columns.size; at++) pushChild(index, this.columns.parentAt(at), at);
      this.childrenIndex = index;
    }
    return this.childrenIndex;
  }

  /** 8 hex characters, unique in this session (retrying on the rare collision). */
  private newId(): string {
    for (;;) {
      const id = randomHex(4);
      if (!this.columns.has(id)) return id;
    }
  }

  private where(): string {
    return this.file ? `session file ${this.file.path}` : `in-memory session ${this.header.id}`;
  }

  private unknownEntry(id: string, action: string, scope = "in"): SessionStoreError {
    return new SessionStoreError(
      "KC_ERR_SESSION_ENTRY",
      `Cannot ${action} entry ${id}: no such entry ${scope} ${this.where()}`,
      { path: this.file?.path },
    );
  }
}

function newHeader(cwd: string, parentSession?: string, id?: string): SessionHeader {
  const header: SessionHeader = {
    type: "session",
    version: SESSION_VERSION,
    id: id ?? randomUuid(),
    timestamp: new Date().toISOString(),
    cwd: resolve(cwd),
  };
  if (parentSession !== undefined) header.parentSession = parentSession;
  return header;
}

function pushChild(index: Map<number, number[]>, parent: number, child: number): void {
  const siblings = index.get(parent);
  if (siblings) siblings.push(child);
  else index.set(parent, [child]);
}

/** Names an entry in a warning: its type, and the custom type or the tool it carries. */
function describeEntry(entry: Record<string, unknown>): string {
  const message = entry.message as { role?: unknown; toolName?: unknown } | undefined;
  if (typeof entry.customType === "string") return `The ${String(entry.type)} entry "${entry.customType}"`;
  if (message?.role === "toolResult") return `The result of tool "${String(message.toolName)}"`;
  return `A ${String(entry.type)} entry`;
}

/**
 * The session files of one root, kept in memory between listings, and read only as far as a page needs (the host
 * face's `sessions.page()`, which the app-server's `thread/list` calls). The listing is every file with its
 * modification time, newest first; a file's summary (header, first message, message count) is read when a page
 * shows it, and kept until the file changes.
 * So the first page of 10,000 files costs a stat per file and 50 summaries, not 10,000.
 *
 * `warm()` does the stat'ing ahead, off the event loop (asynchronous reads, a folder at a time), when the server
 * starts: the first listing then finds it done, and no request waits behind it meanwhile.
 *
 * What changed is known from a watcher per folder (inotify and its kin): only the folders it reported, and new
 * folders, are stat'ed again, so a listing of unchanged files costs one readdir of the root. Where a folder cannot
 * be watched, it is stat'ed on every call. A change another process makes is seen once the OS has reported it, a
 * matter of milliseconds.
 */
import { type FSWatcher, statSync, watch } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { SessionStoreError } from "./errors.js";
import { type SessionInfo, sessionDirsIn, sessionFilesIn, sessionInfoOf } from "./list.js";
import { cwdSessionDir } from "./paths.js";

export interface CatalogEntry {
  path: string;
  mtimeMs: number;
}

/** A listed session: its summary and its file's modification time. */
export interface CatalogSession {
  info: SessionInfo;
  mtimeMs: number;
}

export interface CatalogPageOptions {
  /** Only the sessions whose header's cwd is this folder. */
  cwd?: string;
  /** The `nextCursor` of the page before. */
  cursor?: string;
  limit: number;
  /** Folders to look at again whatever the watchers said (those this process is writing to right now). */
  busy?: Iterable<string>;
}

/** `<time>_<uuid>.jsonl`, as the session store and forks name files: the id is in the name. */
const NAMED = /_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** What a session store keeps of one location's listing (the standard store: `FileCatalog`). */
export interface SessionCatalog {
  /**
   * One page, newest modification first; only the sessions on it are read. A cursor no page gave out is
   * `KC_ERR_SESSION_CURSOR`.
   */
  page(options: CatalogPageOptions): { sessions: CatalogSession[]; nextCursor?: string };
  /** The session with this header id. */
  find(id: string, busy?: Iterable<string>): CatalogSession | undefined;
  /** Reads the listing ahead, off the event loop. */
  warm(): Promise<void>;
  /** This process changed the session file `path` (wrote, moved, removed it): look again on the next call. */
  touched(path: string): void;
  /** Ends the folder watchers. */
  close(): void;
}

export class FileCatalog implements SessionCatalog {
  /** `size:mtime` per file, by folder. */
  private readonly stamps = new Map<string, Map<string, string>>();
  private readonly watchers = new Map<string, FSWatcher | null>();
  private readonly dirty = new Set<string>();
  /** Summaries by path, with the stamp they were read at (null: not a readable session). */
  private readonly summaries = new Map<string, { stamp: string; info: SessionInfo | null }>();
  private sorted: CatalogEntry[] | undefined;
  private closed = false;
  private warming: Promise<void> | undefined;

  constructor(private readonly root: string) {}

  /**
   * Every session file of the root, newest first. `busy` names folders to look at whatever the watchers said
   * (those this process is writing to right now).
   */
  files(busy: Iterable<string> = []): CatalogEntry[] {
    for (const dir of busy) this.dirty.add(dir);
    const dirs = new Set(sessionDirsIn(this.root));
    for (const dir of [...this.stamps.keys()]) {
      if (dirs.has(dir)) continue;
      this.forget(dir);
      this.sorted = undefined;
    }
    for (const dir of dirs) {
      if (!this.watchers.has(dir)) this.watchers.set(dir, this.watch(dir));
      if (this.watchers.get(dir) !== null && !this.dirty.has(dir) && this.stamps.has(dir)) continue;
      if (this.restamp(dir)) this.sorted = undefined;
    }
    // Everything reported so far has been looked at (a folder of another root included).
    this.dirty.clear();
    if (!this.sorted) {
      const entries: CatalogEntry[] = [];
      for (const files of this.stamps.values())
        for (const [path, stamp] of files) entries.push({ path, mtimeMs: mtimeOf(stamp) });
      this.sorted = entries.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? 1 : -1));
    }
    return this.sorted;
  }

  /** A listed file's summary, read once per change; undefined when it is not a readable session. */
  info(path: string): SessionInfo | undefined {
    const stamp = this.stamps.get(dirname(path))?.get(path);
    if (stamp === undefined) return undefined;
    const known = this.summaries.get(path);
    if (known?.stamp === stamp) return known.info ?? undefined;
    const info = sessionInfoOf(path) ?? null;
    this.summaries.set(path, { stamp, info });
    return info ?? undefined;
  }

  /** The session with this header id: a file named after it, else (a file renamed by hand) any other. */
  find(id: string, busy: Iterable<string> = []): CatalogSession | undefined {
    const entries = this.files(busy);
    const suffix = `_${id.toLowerCase()}.jsonl`;
    for (const { path, mtimeMs } of entries) {
      if (!basename(path).toLowerCase().endsWith(suffix)) continue;
      const info = this.info(path);
      if (info?.id === id) return { info, mtimeMs };
    }
    for (const { path, mtimeMs } of entries) {
      if (NAMED.test(basename(path))) continue;
      const info = this.info(path);
      if (info?.id === id) return { info, mtimeMs };
    }
    return undefined;
  }

  page(options: CatalogPageOptions): { sessions: CatalogSession[]; nextCursor?: string } {
    const files = this.files(options.busy);
    const wanted = options.cwd !== undefined ? resolve(options.cwd) : undefined;
    // A cwd's files live in its folder (the folder name is lossy, so the header decides).
    const folder = wanted !== undefined ? cwdSessionDir(this.root, wanted) : undefined;
    // A cursor names the last file of the page before; a file gone since is placed by its time.
    let start = 0;
    if (options.cursor !== undefined) {
      const after = decodeCursor(options.cursor);
      const at = files.findIndex((f) => f.path === after.p);
      start =
        at >= 0
          ? at + 1
          : files.findIndex((f) => f.mtimeMs < after.t || (f.mtimeMs === after.t && f.path < after.p));
      if (start < 0) start = files.length;
    }
    const sessions: CatalogSession[] = [];
    let last: CatalogEntry | undefined;
    for (let i = start; i < files.length; i++) {
      const file = files[i]!;
      if (folder !== undefined && dirname(file.path) !== folder) continue;
      const info = this.info(file.path);
      if (!info || (wanted !== undefined && info.cwd !== wanted)) continue;
      if (sessions.length === options.limit)
        return { sessions, ...(last ? { nextCursor: encodeCursor(last.mtimeMs, last.path) } : {}) };
      sessions.push({ info, mtimeMs: file.mtimeMs });
      last = file;
    }
    return { sessions };
  }

  /**
   * Stats every folder ahead of the first listing, without blocking the event loop. A folder a listing reached
   * first is left alone; one that changes meanwhile is marked by its watcher (set before its files are stat'ed).
   */
  async warm(): Promise<void> {
    this.warming ??= this.statAll();
    return this.warming;
  }

  private async statAll(): Promise<void> {
    let dirs: string[];
    try {
      dirs = (await readdir(this.root, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
        .map((entry) => join(this.root, entry.name));
    } catch {
      return;
    }
    // A few folders at a time: their stats run on libuv's thread pool while the event loop stays free (all at
    // once would queue thousands of callbacks that then run back to back).
    let next = 0;
    const worker = async () => {
      while (next < dirs.length) await this.statFolder(dirs[next++]!);
    };
    await Promise.all([worker(), worker()]);
  }

  private async statFolder(dir: string): Promise<void> {
    if (this.closed || this.stamps.has(dir)) return;
    if (!this.watchers.has(dir)) this.watchers.set(dir, this.watch(dir));
    let names: string[];
    try {
      names = (await readdir(dir, { withFileTypes: true }))
        .filter((entry) => (entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith(".jsonl"))
        .map((entry) => entry.name);
    } catch {
      return;
    }
    const stamps = await Promise.all(
      names.map((name) =>
        stat(join(dir, name)).then(
          (s) => [join(dir, name), `${s.size}:${s.mtimeMs}`] as const,
          () => undefined,
        ),
      ),
    );
    if (this.closed || this.stamps.has(dir)) return;
    this.stamps.set(dir, new Map(stamps.filter((s) => s !== undefined)));
    this.sorted = undefined;
  }

  /** This process changed `path`: its folder is looked at again on the next call, without waiting for the watcher. */
  touched(path: string): void {
    this.dirty.add(dirname(resolve(path)));
  }

  close(): void {
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher?.close();
    this.watchers.clear();
  }

  private watch(dir: string): FSWatcher | null {
    try {
      const watcher = watch(dir, { persistent: false }, () => this.dirty.add(dir));
      watcher.on("error", () => {
        watcher.close();
        this.watchers.set(dir, null);
      });
      return watcher;
    } catch {
      return null;
    }
  }

  private forget(dir: string): void {
    this.watchers.get(dir)?.close();
    this.watchers.delete(dir);
    for (const path of this.stamps.get(dir)?.keys() ?? []) this.summaries.delete(path);
    this.stamps.delete(dir);
    this.dirty.delete(dir);
  }

  /** Stats the folder's files; true when anything differs from what was known. */
  private restamp(dir: string): boolean {
    const next = new Map<string, string>();
    for (const path of sessionFilesIn(dir)) {
      try {
        const { size, mtimeMs } = statSync(path);
        next.set(path, `${size}:${mtimeMs}`);
      } catch {
        // Removed between readdir and stat.
      }
    }
    const previous = this.stamps.get(dir);
    this.stamps.set(dir, next);
    for (const path of previous?.keys() ?? []) if (!next.has(path)) this.summaries.delete(path);
    if (!previous || previous.size !== next.size) return true;
    for (const [path, stamp] of next) if (previous.get(path) !== stamp) return true;
    return false;
  }
}

function encodeCursor(t: number, p: string): string {
  return Buffer.from(JSON.stringify({ t, p })).toString("base64url");
}

function decodeCursor(cursor: string): { t: number; p: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as {
      t?: unknown;
      p?: unknown;
    };
    if (typeof value.t === "number" && typeof value.p === "string") return { t: value.t, p: value.p };
  } catch {
    // answered below
  }
  throw new SessionStoreError("KC_ERR_SESSION_CURSOR", `Invalid cursor "${cursor}"`);
}

function mtimeOf(stamp: string): number {
  return Number(stamp.slice(stamp.indexOf(":") + 1));
}

/**
 * The session files of one root, kept in memory between `thread/list` calls, and read only as far as a page
 * needs. The listing is every file with its modification time, newest first (what `updatedAt` reports); a file's
 * summary (header, first message, message count) is read when a page shows it, and kept until the file changes.
 * So the first page of 10,000 files costs a stat per file and 50 summaries, not 10,000.
 *
 * `warm()` does the stat'ing ahead, off the event loop (asynchronous reads, a folder at a time), when the server
 * starts: the first `thread/list` then finds it done, and no request waits behind it meanwhile.
 *
 * What changed is known from a watcher per folder (inotify and its kin): only the folders it reported, and new
 * folders, are stat'ed again, so a listing of unchanged files costs one readdir of the root. Where a folder cannot
 * be watched, it is stat'ed on every call. A change another process makes is seen once the OS has reported it, a
 * matter of milliseconds.
 */
import { type FSWatcher, statSync, watch } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type SessionInfo, sessionDirsIn, sessionFilesIn, sessionInfoOf } from "@knightcodeai/cli/kit";

export interface CatalogEntry {
  path: string;
  mtimeMs: number;
}

/** `<time>_<uuid>.jsonl`, as the session store and forks name files: the id is in the name. */
const NAMED = /_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

export class SessionCatalog {
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
  find(id: string, busy: Iterable<string> = []): SessionInfo | undefined {
    const entries = this.files(busy);
    const suffix = `_${id.toLowerCase()}.jsonl`;
    for (const { path } of entries) {
      if (!basename(path).toLowerCase().endsWith(suffix)) continue;
      const info = this.info(path);
      if (info?.id === id) return info;
    }
    for (const { path } of entries) {
      if (NAMED.test(basename(path))) continue;
      const info = this.info(path);
      if (info?.id === id) return info;
    }
    return undefined;
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

  /** This process changed files in `dir`: look again on the next call, without waiting for the watcher. */
  touched(dir: string): void {
    this.dirty.add(dir);
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

function mtimeOf(stamp: string): number {
  return Number(stamp.slice(stamp.indexOf(":") + 1));
}

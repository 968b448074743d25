/**
 * The session files of one root, kept in memory between `thread/list` calls. The store's listing (which parses
 * its summary cache and stats every file) runs only when a file was added, removed or written since the last
 * call. What changed is known from a watcher per folder (inotify and its kin): only the folders it reported, and
 * new folders, are looked at again, so a listing of 10,000 unchanged files costs one readdir of the root. Where a
 * folder cannot be watched, it is looked at (a stat per file) on every call. A change another process makes is
 * seen once the OS has reported it, a matter of milliseconds.
 */
import { type FSWatcher, statSync, watch } from "node:fs";
import { listAllSessions, type SessionInfo, sessionDirsIn, sessionFilesIn } from "@knightcodeai/cli/kit";

export class SessionCatalog {
  /** `size:mtime` per file, by folder. */
  private readonly stamps = new Map<string, Map<string, string>>();
  private readonly watchers = new Map<string, FSWatcher | null>();
  private readonly dirty = new Set<string>();
  private infos: SessionInfo[] = [];
  private byId = new Map<string, SessionInfo>();
  private mtimes = new Map<string, number>();
  private stale = true;

  constructor(private readonly root: string) {}

  /**
   * Every session of the root, newest first, and each file's modification time. `busy` names folders to look at
   * whatever the watchers said (those this process is writing to right now).
   */
  list(busy: Iterable<string> = []): { infos: SessionInfo[]; mtimes: ReadonlyMap<string, number> } {
    for (const dir of busy) this.dirty.add(dir);
    const dirs = new Set(sessionDirsIn(this.root));
    for (const dir of [...this.stamps.keys()]) {
      if (dirs.has(dir)) continue;
      this.forget(dir);
      this.stale = true;
    }
    for (const dir of dirs) {
      if (!this.watchers.has(dir)) this.watchers.set(dir, this.watch(dir));
      if (this.watchers.get(dir) !== null && !this.dirty.has(dir) && this.stamps.has(dir)) continue;
      if (this.restamp(dir)) this.stale = true;
    }
    // Everything reported so far has been looked at (a folder of another root included).
    this.dirty.clear();
    if (this.stale) {
      this.infos = listAllSessions(this.root);
      this.byId = new Map(this.infos.map((info) => [info.id, info]));
      this.mtimes = new Map();
      for (const files of this.stamps.values())
        for (const [path, stamp] of files) this.mtimes.set(path, Number(stamp.slice(stamp.indexOf(":") + 1)));
      this.stale = false;
    }
    return { infos: this.infos, mtimes: this.mtimes };
  }

  find(id: string, busy: Iterable<string> = []): SessionInfo | undefined {
    this.list(busy);
    return this.byId.get(id);
  }

  /** This process changed files in `dir`: look again on the next call, without waiting for the watcher. */
  touched(dir: string): void {
    this.dirty.add(dir);
  }

  close(): void {
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
    if (!previous || previous.size !== next.size) return true;
    for (const [path, stamp] of next) if (previous.get(path) !== stamp) return true;
    return false;
  }
}

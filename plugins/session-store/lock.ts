/**
 * One owner per session file: `<file>.lock`, created with `wx` (fails if it exists) and holding the owner's pid.
 * The file is its real identity, not the name it was opened by: the lock sits next to the real path (symlinks
 * resolved), and a second lock file named by device and inode (see identityLockDir) catches hard links, which
 * share nothing else. Both are taken, so two processes never append to one file whatever they call it.
 *
 * A lock whose pid no longer exists was left by a crashed process and is taken over. Inside one process a
 * registry (shared through `globalThis`, so two copies of this module agree) refuses a second manager for the
 * same file, because the pid alone cannot tell two managers of this process apart.
 *
 * Known limits, accepted for a CLI: a pid reused by an unrelated process makes a stale lock look alive (the error
 * says to delete the lock file), and two processes taking over the same stale lock in the same instant could both
 * succeed (the window is one unlink + one create).
 */
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { errnoCode, reason, SessionLockedError, SessionStoreError } from "./errors.js";

/** A lock file without a readable pid younger than this is assumed to be mid-creation by its owner. */
const UNREADABLE_LOCK_GRACE_MS = 2_000;

interface HeldLock {
  owner: object;
  lockPath: string;
}

const REGISTRY_KEY = Symbol.for("knightcode.session-store.locks");

function registry(): Map<string, HeldLock> {
  const store = globalThis as { [REGISTRY_KEY]?: Map<string, HeldLock> };
  if (!store[REGISTRY_KEY]) {
    store[REGISTRY_KEY] = new Map();
    // Locks are released on a normal exit (including process.exit() and an uncaught exception), so only a
    // killed or crashed process leaves one behind.
    process.once("exit", () => {
      for (const held of store[REGISTRY_KEY]!.values()) removeIfOurs(held.lockPath);
    });
  }
  return store[REGISTRY_KEY];
}

export function lockPathOf(file: string): string {
  return `${file}.lock`;
}

/** True if a process with that pid exists (EPERM means it exists but belongs to someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === "EPERM";
  }
}

export class SessionLock {
  private released = false;

  private constructor(
    readonly file: string,
    /** The lock files held: the path lock, then (once the file exists) the identity lock. */
    private readonly lockPaths: string[],
    private readonly owner: object,
  ) {}

  /**
   * Takes the lock of `file` for `owner`, or throws SessionLockedError naming the file and the holder's pid. Two
   * locks stand for one file: one by its real path (symlinks resolved) and, when the file exists, one by its
   * device and inode, which every hard link shares.
   */
  static acquire(file: string, owner: object): SessionLock {
    const lock = new SessionLock(file, [], owner);
    try {
      lock.take(canonical(file), "");
      lock.lockIdentity();
    } catch (error) {
      lock.release();
      throw error;
    }
    return lock;
  }

  /**
   * Adds the identity lock once the file exists (a new session locks its path before it creates the file). Does
   * nothing when it is already held or the file is missing.
   */
  lockIdentity(): void {
    if (this.lockPaths.length > 1 || this.released) return;
    const lockPath = identityLockPath(this.file);
    if (lockPath) this.take(lockPath, " (the same file under another name)");
  }

  /** Removes the locks. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    const locks = registry();
    for (const lockPath of this.lockPaths) {
      if (locks.get(lockPath)?.owner !== this.owner) continue;
      locks.delete(lockPath);
      removeIfOurs(lockPath);
    }
  }

  private take(lockPath: string, sameFile: string): void {
    const file = this.file;
    const locks = registry();
    const held = locks.get(lockPath);
    if (held) {
      if (held.owner === this.owner) return;
      throw new SessionLockedError(
        `Session file ${file} is already open in this process (pid ${process.pid})${sameFile}; ` +
          "close the other SessionManager before opening it again",
        { path: file, pid: process.pid },
      );
    }

    // A few rounds: each failed create either finds a live owner (throw) or removes a stale lock and retries.
    for (let attempt = 0; attempt < 5; attempt++) {
      if (tryCreate(lockPath)) {
        locks.set(lockPath, { owner: this.owner, lockPath });
        this.lockPaths.push(lockPath);
        return;
      }
      const holder = readHolder(lockPath);
      if (holder === "gone") continue; // released between our create and our read
      if (holder === "unreadable") {
        if (lockAgeMs(lockPath) < UNREADABLE_LOCK_GRACE_MS) {
          throw new SessionLockedError(
            `Session file ${file} is being opened by another process${sameFile} (lock ${lockPath} has no pid yet)`,
            { path: file, pid: undefined },
          );
        }
      } else if (holder !== process.pid && isProcessAlive(holder)) {
        throw new SessionLockedError(
          `Session file ${file} is in use by process ${holder}${sameFile} (lock ${lockPath}). Close that ` +
            "KnightCode instance, or delete the lock file if no such process is running.",
          { path: file, pid: holder },
        );
      }
      // Stale: the holder is dead, or it is our own pid but not in the registry (left by an earlier process
      // that had this pid). Remove it and try again.
      try {
        unlinkSync(lockPath);
      } catch (error) {
        if (errnoCode(error) !== "ENOENT") {
          throw new SessionStoreError(
            "KC_ERR_SESSION_IO",
            `Cannot remove stale lock ${lockPath}: ${reason(error)}`,
            { path: lockPath, cause: error },
          );
        }
      }
    }
    throw new SessionLockedError(`Could not take the lock ${lockPath} for ${file}: it keeps changing hands`, {
      path: file,
      pid: undefined,
    });
  }
}

/**
 * The path lock of `file`: `<file>.lock` next to its real path. Symlinks are resolved, the file's own included,
 * so every name that reaches the file through links to it or to its folders agrees on one lock file.
 */
function canonical(file: string): string {
  const absolute = resolve(file);
  try {
    return lockPathOf(realpathSync(absolute));
  } catch {
    // Not created yet: the folder may still be reached through a symlink.
  }
  try {
    return lockPathOf(join(realpathSync(dirname(absolute)), basename(absolute)));
  } catch {
    return lockPathOf(absolute);
  }
}

/**
 * Where identity locks live: one folder per user in the temp dir, since hard links to one file can sit in any
 * folders of its file system and nothing but the inode is common to them.
 */
export function identityLockDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : "user";
  return join(tmpdir(), `knightcode-session-locks-${uid}`);
}

/** `<identityLockDir>/<device>-<inode>.lock` for an existing file, undefined while it does not exist. */
function identityLockPath(file: string): string | undefined {
  let info: ReturnType<typeof statSync>;
  try {
    info = statSync(file, { bigint: true });
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw new SessionStoreError("KC_ERR_SESSION_IO", `Cannot read session file ${file}: ${reason(error)}`, {
      path: file,
      cause: error,
    });
  }
  const dir = identityLockDir();
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new SessionStoreError(
      "KC_ERR_SESSION_IO",
      `Cannot create the session lock folder ${dir}: ${reason(error)}`,
      { path: dir, cause: error },
    );
  }
  return join(dir, `${info.dev}-${info.ino}.lock`);
}

/** Creates the lock file with our pid; false if it already exists. */
function tryCreate(lockPath: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, "wx");
  } catch (error) {
    if (errnoCode(error) === "EEXIST") return false;
    throw new SessionStoreError("KC_ERR_SESSION_IO", `Cannot create lock ${lockPath}: ${reason(error)}`, {
      path: lockPath,
      cause: error,
    });
  }
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

function readHolder(lockPath: string): number | "gone" | "unreadable" {
  let text: string;
  try {
    text = readFileSync(lockPath, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return "gone";
    throw new SessionStoreError("KC_ERR_SESSION_IO", `Cannot read lock ${lockPath}: ${reason(error)}`, {
      path: lockPath,
      cause: error,
    });
  }
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 && String(pid) === text.trim() ? pid : "unreadable";
}

function lockAgeMs(lockPath: string): number {
  try {
    return Date.now() - statSync(lockPath).mtimeMs;
  } catch {
    return 0;
  }
}

/** Deletes the lock file only if it still holds our pid, so we never remove a lock someone else took over. */
function removeIfOurs(lockPath: string): void {
  try {
    if (readFileSync(lockPath, "utf8").trim() === String(process.pid)) unlinkSync(lockPath);
  } catch {
    // Already gone, or unreadable: nothing of ours to remove.
  }
}

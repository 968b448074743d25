/**
 * The archive: sessions taken out of the lists (the app-server's `thread/archive`) live under
 * `<sessionRoot>/.archived/<cwd folder>/<file>`, so an archived session keeps its file name and folder and is listed
 * by pointing a listing at the archive root. Moves are renames within one file system, so a crash leaves the file in
 * one place or the other. A move or a removal takes the file's lock while it runs: a session another process (or
 * another session of this one) has open is refused with `KC_ERR_SESSION_LOCKED` and stays where it is.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { SessionStoreError } from "./errors.js";
import { withSessionLock } from "./stored-files.js";

/** The folder under the session root that holds archived sessions. */
export const ARCHIVE_DIR = ".archived";

/** Where archived sessions of a session root live (a session root of its own). */
export function archiveRoot(sessionRoot: string): string {
  return join(sessionRoot, ARCHIVE_DIR);
}

/** Where a file of `sessionRoot` goes when archived. */
export function archivedPath(sessionRoot: string, file: string): string {
  return join(archiveRoot(sessionRoot), basename(dirname(file)), basename(file));
}

/** Where an archived file goes back to. */
export function unarchivedPath(sessionRoot: string, file: string): string {
  return join(sessionRoot, basename(dirname(file)), basename(file));
}

function inside(root: string, file: string): boolean {
  const rel = relative(resolve(root), resolve(file));
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith("/");
}

function move(from: string, to: string): string {
  if (!existsSync(from)) throw new SessionStoreError("KC_ERR_SESSION_NOT_FOUND", `No session file ${from}`);
  if (existsSync(to))
    throw new SessionStoreError("KC_ERR_SESSION_IO", `${to} exists already; not overwritten`);
  return withSessionLock(from, () => {
    mkdirSync(dirname(to), { recursive: true });
    try {
      renameSync(from, to);
    } catch (error) {
      throw new SessionStoreError(
        "KC_ERR_SESSION_IO",
        `Moving ${from} to ${to} failed: ${(error as Error).message}`,
      );
    }
    return to;
  });
}

/** Moves a session of `sessionRoot` into its archive; returns the new path. */
export function archiveSession(sessionRoot: string, file: string): string {
  if (!inside(sessionRoot, file) || inside(archiveRoot(sessionRoot), file))
    throw new SessionStoreError(
      "KC_ERR_SESSION_NOT_FOUND",
      `${file} is not an active session of ${sessionRoot}`,
    );
  return move(file, archivedPath(sessionRoot, file));
}

/** Moves an archived session back; returns its path. */
export function unarchiveSession(sessionRoot: string, file: string): string {
  if (!inside(archiveRoot(sessionRoot), file))
    throw new SessionStoreError(
      "KC_ERR_SESSION_NOT_FOUND",
      `${file} is not an archived session of ${sessionRoot}`,
    );
  return move(file, unarchivedPath(sessionRoot, file));
}

/** Deletes an archived session's file. */
export function removeArchivedSession(sessionRoot: string, file: string): void {
  if (!inside(archiveRoot(sessionRoot), file))
    throw new SessionStoreError(
      "KC_ERR_SESSION_NOT_FOUND",
      `${file} is not an archived session of ${sessionRoot}; archive it first`,
    );
  if (!existsSync(file)) return;
  withSessionLock(file, () => rmSync(file, { force: true }));
}

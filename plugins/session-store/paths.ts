/** Where session files live and how they are named (the peer's layout, so tools can read both). */
import { basename, dirname, join, resolve } from "node:path";

/** The header `version` this store writes and reads. */
export const SESSION_VERSION = 3;

/** The listing's summary cache, directly under the session dir (dot-named so it is never mistaken for a cwd dir). */
export const SESSION_INDEX_FILE = ".session-index.json";

/**
 * `/home/me/project` → `--home-me-project--`. Like the peer, the leading separator is dropped and every `/`, `\`
 * and `:` becomes `-`, so a Windows path `C:\src` becomes `--C--src--`. The encoding is lossy (`a-b` and `a/b`
 * collide); the header's `cwd` stays the source of truth.
 */
export function encodeCwd(cwd: string): string {
  return `--${resolve(cwd)
    .replace(/^[/\\]/, "")
    .replace(/[/\\:]/g, "-")}--`;
}

/** True for a directory name produced by `encodeCwd`. */
export function isEncodedCwdDir(name: string): boolean {
  return name.length >= 4 && name.startsWith("--") && name.endsWith("--");
}

/** `sessionDir` if given, else `<agentDir>/sessions`. */
export function resolveSessionRoot(options: { agentDir: string; sessionDir?: string | undefined }): string {
  return resolve(options.sessionDir ?? join(options.agentDir, "sessions"));
}

/** The directory holding the sessions of one cwd. */
export function cwdSessionDir(sessionRoot: string, cwd: string): string {
  return join(sessionRoot, encodeCwd(cwd));
}

/** `2026-01-02T03-04-05-678Z_<uuid>.jsonl`: sorts by creation time and carries the id for `findById`. */
export function sessionFileName(timestamp: string, id: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`;
}

/** The session id in a file name made by `sessionFileName`, or undefined for other names. */
export function idFromFileName(name: string): string | undefined {
  if (!name.endsWith(".jsonl")) return undefined;
  // The timestamp has no underscore; an id chosen with --session-id may.
  const underscore = name.indexOf("_");
  return underscore < 0 ? undefined : name.slice(underscore + 1, -".jsonl".length);
}

/**
 * The session root of a file opened by path: the parent of its encoded-cwd dir. A file kept somewhere else has
 * no root, and forks of it are written next to it.
 */
export function sessionRootOf(file: string): string | undefined {
  const dir = dirname(file);
  return isEncodedCwdDir(basename(dir)) ? dirname(dir) : undefined;
}

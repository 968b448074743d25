/**
 * What the server reads of session files it has not loaded: the header and the active branch (for `thread/read`
 * and `thread/fork` without loading the thread's extensions), and where archived files go. Reading takes no lock;
 * writing a fork creates a new file that nobody owns yet. Archived sessions live under `<sessionRoot>/.archived/`,
 * in the same per-folder layout, which the normal listing skips (dot-named folders are not session folders).
 */
import { randomUUID } from "node:crypto";
import { closeSync, openSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { SessionEntry, SessionHeader } from "@knightcodeai/cli/kit";

export const ARCHIVE_DIR = ".archived";

/** The header's id of a session file, or undefined when it cannot be read. */
export function headerIdOf(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const buffer = Buffer.alloc(4096);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const line = buffer.toString("utf8", 0, read).split("\n", 1)[0] ?? "";
    const header = JSON.parse(line) as { type?: unknown; id?: unknown };
    return header.type === "session" && typeof header.id === "string" ? header.id : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The header and the active branch (from the last entry back to the root) of a session file. */
export function readBranch(file: string): { header: SessionHeader; branch: SessionEntry[] } {
  const lines = readFileSync(file, "utf8").split("\n");
  const header = JSON.parse(lines[0] ?? "") as SessionHeader;
  const byId = new Map<string, SessionEntry>();
  let last: SessionEntry | undefined;
  for (const line of lines.slice(1)) {
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line) as SessionEntry;
      if (typeof entry?.id !== "string") continue;
      byId.set(entry.id, entry);
      last = entry;
    } catch {
      // A torn line is skipped, as the store does.
    }
  }
  const branch: SessionEntry[] = [];
  for (let entry = last; entry; entry = entry.parentId ? byId.get(entry.parentId) : undefined)
    branch.push(entry);
  return { header, branch: branch.reverse() };
}

/** Writes a new session file next to `source` holding `branch`; returns its path and id. */
export function writeFork(
  source: string,
  header: SessionHeader,
  branch: readonly SessionEntry[],
): { file: string; id: string } {
  const id = randomUUID();
  const timestamp = new Date().toISOString();
  const file = join(dirname(source), `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`);
  const forked: SessionHeader = {
    type: "session",
    version: 3,
    id,
    timestamp,
    cwd: header.cwd,
    parentSession: source,
  };
  const text = [forked, ...branch].map((record) => JSON.stringify(record)).join("\n");
  writeFileSync(file, `${text}\n`, { flag: "wx" });
  return { file, id };
}

/** Where a file of `sessionRoot` goes when archived (and back). */
export function archivedPath(sessionRoot: string, file: string): string {
  return join(sessionRoot, ARCHIVE_DIR, basename(dirname(file)), basename(file));
}

export function unarchivedPath(sessionRoot: string, file: string): string {
  return join(sessionRoot, basename(dirname(file)), basename(file));
}

/**
 * File helpers shared by read, write and edit: how a path is shown, image and binary sniffing, atomic writes.
 */
import { constants } from "node:fs";
import {
  appendFile,
  chmod,
  type FileHandle,
  mkdir,
  open,
  realpath,
  rename,
  stat,
  unlink,
} from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative } from "node:path";

// node:crypto (some thirty modules) loads with the first write that needs a temp name, not with every session.
const tempSuffix = () => process.getBuiltinModule("node:crypto").randomBytes(6).toString("hex");

/** How many leading bytes decide whether a file is binary. */
export const SNIFF_BYTES = 8 * 1024;
/** Largest image `read` returns. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** The path as the model wrote it (what messages show): trimmed, a leading `@` dropped. */
export function displayPath(input: string): string {
  const path = input.trim();
  return path.startsWith("@") ? path.slice(1) : path;
}

/** The name a diff header uses: `a/<path relative to cwd>` inside the working folder, the absolute path outside. */
export function diffNames(cwd: string, absolute: string): { oldName: string; newName: string } {
  const rel = relative(cwd, absolute);
  if (rel !== "" && !rel.startsWith("..") && !isAbsolute(rel)) {
    const posix = rel.split("\\").join("/");
    return { oldName: `a/${posix}`, newName: `b/${posix}` };
  }
  return { oldName: absolute, newName: absolute };
}

export type ImageMimeType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** The image type from the magic bytes, whatever the file is called. */
export function detectImage(head: Uint8Array): ImageMimeType | undefined {
  const starts = (bytes: number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (starts([0x47, 0x49, 0x46, 0x38]) && (head[4] === 0x37 || head[4] === 0x39) && head[5] === 0x61) {
    return "image/gif";
  }
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp";
  return undefined;
}

/** A NUL byte among the first bytes: the rule git and grep use. */
export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, SNIFF_BYTES).includes(0);
}

/** A readable message for a failed file system call, or undefined for errors that should pass unchanged. */
export function fileErrorMessage(error: unknown, shown: string, action: string): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return `File not found: ${shown}`;
    case "EACCES":
    case "EPERM":
      return `Permission denied: cannot ${action} ${shown}`;
    case "EISDIR":
      return `${shown} is a directory; ${action} needs a file`;
    case "ENOTDIR":
      return `A parent of ${shown} is not a directory`;
    case "EROFS":
      return `${shown} is on a read-only file system`;
    case "ENOSPC":
      return `No space left on the device to ${action} ${shown}`;
    default:
      return undefined;
  }
}

/**
 * Writes a file so that readers see either the old or the new content, never a part: the data goes to a temporary
 * file in the same folder, which is then renamed over the target. Parent folders are created; an existing file
 * keeps its permission bits; a symbolic link keeps pointing at its (rewritten) target.
 *
 * Returns whether the file was created.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
): Promise<{ created: boolean }> {
  let target = path;
  let mode: number | undefined;
  try {
    target = await realpath(path);
    const info = await stat(target);
    if (info.isDirectory()) {
      throw Object.assign(new Error(`EISDIR: ${path} is a directory`), { code: "EISDIR" });
    }
    mode = info.mode & 0o7777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const dir = dirname(target);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(target)}.${process.pid}.${tempSuffix()}.tmp`);
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o666);
  let renamed = false;
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // open() honours the umask; an existing file's exact bits are restored explicitly.
    if (mode !== undefined) await chmod(temp, mode);
    await rename(temp, target);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => {});
  }
  return { created: mode === undefined };
}

/** How long, at most, `replaceFileIfUnchanged` watches the replaced file for a writer still appending to it. */
const LATE_APPEND_WATCH_MS = 100;

/** Why a replacement did not happen: the file is no longer what the caller read. */
export type ReplaceOutcome = { replaced: true } | { replaced: false };

/**
 * Replaces an existing file with `data` if it still holds `expected` (the bytes the caller read and computed
 * `data` from), atomically as `writeFileAtomic` does. Another program may write the file meanwhile:
 * - bytes it appended after `expected` are kept: they go after `data` in the new file, including those that
 *   reach the old file in the instant between the last check and the rename, so an appender (a log, a build)
 *   loses nothing;
 * - any other change (a byte of `expected` differs, the file shrank, or another file was renamed over it) leaves
 *   the file alone and returns `{replaced: false}`, so the caller can redo its work on the new content.
 * A program that keeps the file open and writes to it after the rename writes to the replaced file; when the file
 * is being appended to, the replaced file is watched until it has been quiet for 15 ms (up to 100 ms) and what
 * arrives is carried over, but a writer holding the file open longer than that is the limit of every
 * replace-by-rename.
 */
export async function replaceFileIfUnchanged(
  path: string,
  expected: Uint8Array,
  data: string | Uint8Array,
): Promise<ReplaceOutcome> {
  const target = await realpath(path);
  const handle = await open(target, "r");
  try {
    const before = await handle.stat();
    if (before.isDirectory()) {
      throw Object.assign(new Error(`EISDIR: ${path} is a directory`), { code: "EISDIR" });
    }
    if (before.size < expected.length) return { replaced: false };
    const mode = before.mode & 0o7777;
    const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${tempSuffix()}.tmp`);
    let seen: number;
    const out = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
    let renamed = false;
    try {
      try {
        await out.writeFile(data);
        // The last check, as close to the rename as it can be: the name still leads to the file we read (nobody
        // renamed another file over it) and it starts with the very bytes we read. Size and time alone would
        // miss a same-size rewrite within the clock's resolution.
        const now = await stat(target);
        if (now.ino !== before.ino || now.dev !== before.dev) return { replaced: false };
        const current = await readFrom(handle, 0);
        if (current.length < expected.length || !current.subarray(0, expected.length).equals(expected)) {
          return { replaced: false };
        }
        await out.write(current.subarray(expected.length));
        seen = current.length;
        await out.sync();
      } finally {
        await out.close();
      }
      // open() honours the umask; the file's exact bits are restored explicitly.
      await chmod(temp, mode);
      await rename(temp, target);
      renamed = true;
    } finally {
      if (!renamed) await unlink(temp).catch(() => {});
    }
    // Appends that reached the old file after the check; through `handle` it is still readable. A writer that
    // opened the old file just before the rename may still write to it: when the file is being appended to (it
    // grew after it was read, or appends reach it after the rename), the old file is watched a little longer
    // (bounded) until it stays quiet, and what lands there is carried over too. A file nobody was appending to is
    // not watched, so an ordinary edit does not wait.
    const appending = seen > expected.length;
    for (let quiet = 0, waited = 0; ; ) {
      const late = await readFrom(handle, seen);
      if (late.length > 0) {
        await appendFile(target, late);
        seen += late.length;
        quiet = 0;
      } else if ((waited === 0 && !appending) || ++quiet >= 3) break;
      if (waited >= LATE_APPEND_WATCH_MS) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
      waited += 5;
    }
    return { replaced: true };
  } finally {
    await handle.close();
  }
}

/** The bytes of the file behind `handle` from `position` to its end (positional reads: no shared offset). */
async function readFrom(handle: FileHandle, position: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for (let at = position; ; ) {
    const chunk = Buffer.allocUnsafe(1 << 20);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, at);
    if (bytesRead === 0) return Buffer.concat(chunks);
    chunks.push(chunk.subarray(0, bytesRead));
    at += bytesRead;
  }
}

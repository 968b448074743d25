/** Where an export goes and how it gets there: never onto a folder, and never half-written. */
import { randomBytes } from "node:crypto";
import { rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";

/** `<session name>.html`, or `<session id>.html` for an unnamed session; only characters safe in any file system. */
export function defaultFileName(name: string | undefined, id: string): string {
  const safe = (name ?? "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[-.]+|-+$/g, "")
    .slice(0, 80);
  return `${safe || id}.html`;
}

/**
 * The path `/export` was given (quotes around it and a leading `~/` allowed), absolute; undefined when none. A
 * path ending in a separator names a folder and is refused.
 */
export function parsePathArgument(args: string, cwd: string): string | undefined {
  let path = args.trim();
  const quoted = /^(["'])(.*)\1$/s.exec(path);
  if (quoted) path = quoted[2]!;
  if (path === "") return undefined;
  if (/[\\/]$/.test(path)) {
    throw new Error(`${path} names a folder; give a file path such as ${join(path, "session.html")}`);
  }
  if (path === "~" || path.startsWith("~/")) path = join(homedir(), path.slice(1));
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/**
 * Writes `text` to `path` through a temporary file in the same folder and a rename, so a reader sees the old file
 * or the new one, never a partial one. Refuses a folder and a missing parent folder with a message naming it.
 */
export async function writeExport(path: string, text: string): Promise<void> {
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) {
    throw new Error(`${path} is a folder; give a file path such as ${join(path, "session.html")}`);
  }
  const folder = dirname(path);
  const parent = await stat(folder).catch(() => undefined);
  if (!parent?.isDirectory()) throw new Error(`Cannot write ${path}: the folder ${folder} does not exist`);
  const temp = join(folder, `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    await writeFile(temp, text, "utf8");
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw new Error(`Cannot write ${path}: ${(error as Error).message}`);
  }
}

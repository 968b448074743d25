/**
 * Files that may hold tool output: a command's full output, a cut tool result, a script's console. Such output can
 * carry secrets (environment dumps, keys read from files), and the temp folder is shared with every other user of
 * the machine, so these files are created private (mode 0600) and exclusively (`wx`): an existing file or a link
 * planted at the path makes the write fail instead of writing through it.
 */
import { createWriteStream, type WriteStream, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomHex } from "../util/random.js";

/** Owner read and write only. */
export const PRIVATE_FILE_MODE = 0o600;

/** A new path in the temp folder: `knightcode-<name>-<random hex>.<extension>`. */
export function privateTempPath(name: string, extension: string): string {
  return join(tmpdir(), `knightcode-${name}-${randomHex(8)}.${extension}`);
}

/** Creates `path` with mode 0600 and writes `data`; fails if `path` exists. */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  await writeFile(path, data, { mode: PRIVATE_FILE_MODE, flag: "wx" });
}

/** {@link writePrivateFile}, synchronously. */
export function writePrivateFileSync(path: string, data: string | Uint8Array): void {
  writeFileSync(path, data, { mode: PRIVATE_FILE_MODE, flag: "wx" });
}

/** A stream into a new file at `path` with mode 0600; it errs (rather than opening) if `path` exists. */
export function createPrivateWriteStream(path: string): WriteStream {
  return createWriteStream(path, { mode: PRIVATE_FILE_MODE, flags: "wx" });
}

/**
 * Serialises read-modify-write operations per real file path, so tools that run in parallel cannot interleave
 * their edits of one file. Different files proceed concurrently.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

const tails = new Map<string, Promise<unknown>>();

function realPath(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    // The file may not exist yet: resolve its directory instead, so two spellings of a new file still agree.
    try {
      return join(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return absolute;
    }
  }
}

export async function withFileMutationQueue<T>(path: string, operation: () => Promise<T>): Promise<T> {
  const key = realPath(path);
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(operation, operation);
  const tail = run.catch(() => {});
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}

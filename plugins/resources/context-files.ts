/**
 * Context files: the instructions in `AGENTS.md` (or `CLAUDE.md`) that go into the system prompt.
 *
 * Order: the personal file in the agent dir first, then one file per directory from the filesystem root down to the
 * cwd, so the most specific instructions come last. In each directory `AGENTS.md` is preferred; `CLAUDE.md` is read
 * only when there is no readable `AGENTS.md`.
 *
 * Context files load whether or not the project is trusted, as in pi (the closest peer): they are instructions to
 * the model, not code, and they live in ordinary directories rather than in `.knightcode/`. Project trust guards
 * what can run code or reconfigure KnightCode (see plugins/settings/trust.ts).
 */
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

export const CONTEXT_FILE_NAMES: readonly string[] = Object.freeze(["AGENTS.md", "CLAUDE.md"]);

export interface ContextFile {
  /** Absolute path of the file. */
  path: string;
  content: string;
}

export interface DiscoverContextFilesOptions {
  cwd: string;
  agentDir: string;
}

/**
 * The context files that apply in `cwd`, personal file first, then root to cwd. Missing or unreadable files are
 * skipped, and so are files holding only whitespace; a file reached twice (an agent dir inside the cwd's ancestry)
 * appears once, at its first place.
 */
export async function discoverContextFiles(options: DiscoverContextFilesOptions): Promise<ContextFile[]> {
  const dirs = [resolve(options.agentDir), ...ancestorsFromRoot(resolve(options.cwd))];
  const found = await Promise.all(dirs.map((dir) => readContextFileIn(dir)));
  const seen = new Set<string>();
  const files: ContextFile[] = [];
  for (const file of found) {
    if (!file || seen.has(file.path)) continue;
    seen.add(file.path);
    if (file.content.trim() !== "") files.push(file);
  }
  return files;
}

/** `/a/b/c` → `["/", "/a", "/a/b", "/a/b/c"]`. */
function ancestorsFromRoot(dir: string): string[] {
  const chain: string[] = [];
  let current = dir;
  for (;;) {
    chain.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return chain.reverse();
}

async function readContextFileIn(dir: string): Promise<ContextFile | undefined> {
  for (const name of CONTEXT_FILE_NAMES) {
    const path = join(dir, name);
    try {
      return { path, content: await readFile(path, "utf8") };
    } catch {
      // missing, unreadable or a directory: try the next name
    }
  }
  return undefined;
}

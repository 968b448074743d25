/**
 * The in-process file walker behind grep and find when ripgrep/fd are not used. It lists regular files under a
 * root in the order `rg --sort path` does (depth first, each folder's names in byte order), skips `.git`, never
 * follows symbolic links (so it cannot leave the root or loop), and applies ignore files with the precedence of
 * the `ignore` crate: a `.ignore` rule from any level beats a `.gitignore` rule, which beats `.git/info/exclude`,
 * which beats the global git excludes file; within one kind the deepest folder wins; `.gitignore`/exclude rules of
 * folders above a git repository's root do not apply inside it; ignore files of the root's parent folders apply.
 * It is bounded: it stops after `maxEntries` directory entries and says so.
 */
import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { Gitignore, type GlobOverride, type IgnoreMatch, loadGlobalGitignore } from "./search-ignore.js";

/** Directory entries the walker looks at before it gives up (a guard against walking a whole disk). */
export const MAX_WALK_ENTRIES = 1_000_000;

interface Level {
  /** Turns a root-relative path into one relative to this level's folder. */
  rel(path: string): string;
  ignore?: Gitignore;
  gitignore?: Gitignore;
  exclude?: Gitignore;
  hasGit: boolean;
  parent?: Level;
}

export interface WalkOptions {
  root: string;
  /** grep's `glob` (ripgrep `--glob` semantics: decides before the ignore files). */
  override?: GlobOverride;
  signal?: AbortSignal;
  maxEntries?: number;
}

export interface WalkStats {
  entries: number;
  /** The walk stopped at `maxEntries`. */
  limited: boolean;
}

/** Compares two `/`-separated relative paths component by component, bytewise: the order of `rg --sort path`. */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // A folder's name ends before any longer name that shares it: "a/x" sorts before "a.txt" and "a-b".
    if (ca === 47) return -1;
    if (cb === 47) return 1;
    if (ca < 128 && cb < 128) return ca - cb;
    return compareComponents(a.slice(i).split("/"), b.slice(i).split("/"));
  }
  return a.length - b.length;
}

function compareComponents(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = Buffer.compare(Buffer.from(a[i]!), Buffer.from(b[i]!));
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

export class AbortedError extends Error {
  constructor() {
    super("The search was aborted.");
    this.name = "AbortError";
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError();
}

const readOptional = async (path: string): Promise<Gitignore | undefined> => {
  try {
    const rules = Gitignore.parse(await readFile(path, "utf8"));
    return rules.empty ? undefined : rules;
  } catch {
    return undefined;
  }
};

const exists = async (path: string) => {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
};

async function levelFor(
  dir: string,
  rel: (path: string) => string,
  names: { gitignore: boolean; ignore: boolean; git: boolean },
  parent: Level | undefined,
): Promise<Level> {
  const [gitignore, ignore, exclude] = await Promise.all([
    names.gitignore ? readOptional(join(dir, ".gitignore")) : undefined,
    names.ignore ? readOptional(join(dir, ".ignore")) : undefined,
    names.git ? readOptional(join(dir, ".git", "info", "exclude")) : undefined,
  ]);
  return {
    rel,
    hasGit: names.git,
    ...(gitignore ? { gitignore } : {}),
    ...(ignore ? { ignore } : {}),
    ...(exclude ? { exclude } : {}),
    ...(parent ? { parent } : {}),
  };
}

/** The levels of the root's parent folders (nearest last in the chain), so their ignore files apply too. */
async function ancestorLevels(root: string): Promise<Level | undefined> {
  const dirs: string[] = [];
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    dirs.push(dir);
    if (dirname(dir) === dir) break;
  }
  if (root === dirname(root)) return undefined;
  let chain: Level | undefined;
  for (const dir of dirs.reverse()) {
    const prefix = relative(dir, root).split(sep).join("/");
    const [gitignore, ignore, git] = await Promise.all([
      exists(join(dir, ".gitignore")),
      exists(join(dir, ".ignore")),
      exists(join(dir, ".git")),
    ]);
    chain = await levelFor(dir, (p) => `${prefix}/${p}`, { gitignore, ignore, git }, chain);
  }
  return chain;
}

/** The decision of the ignore files for one root-relative path, as the `ignore` crate's `matched_ignore`. */
function matchIgnore(level: Level | undefined, global: Gitignore | undefined, path: string, isDir: boolean) {
  let mIgnore: IgnoreMatch;
  let mGit: IgnoreMatch;
  let mExclude: IgnoreMatch;
  let sawGit = false;
  for (let l = level; l; l = l.parent) {
    if (!l.ignore && !l.gitignore && !l.exclude) {
      sawGit ||= l.hasGit;
      continue;
    }
    const rel = l.rel(path);
    if (mIgnore === undefined && l.ignore) mIgnore = l.ignore.match(rel, isDir);
    if (!sawGit) {
      if (mGit === undefined && l.gitignore) mGit = l.gitignore.match(rel, isDir);
      if (mExclude === undefined && l.exclude) mExclude = l.exclude.match(rel, isDir);
    }
    sawGit ||= l.hasGit;
  }
  return mIgnore ?? mGit ?? mExclude ?? global?.match(path, isDir);
}

/**
 * Yields the root-relative paths (`/`-separated) of the regular files under `root` that the ignore files (and the
 * override) let through, in `rg --sort path` order.
 */
export async function* walkFiles(options: WalkOptions, stats: WalkStats): AsyncGenerator<string> {
  const { root, override, signal } = options;
  const maxEntries = options.maxEntries ?? MAX_WALK_ENTRIES;
  const global = loadGlobalGitignore();
  const ancestors = await ancestorLevels(root);

  const skip = (level: Level | undefined, path: string, isDir: boolean): boolean => {
    const o = override?.match(path, isDir);
    if (o === "ignore") return true;
    if (o === "whitelist") return false;
    return matchIgnore(level, global, path, isDir) === "ignore";
  };

  async function* walk(dir: string, relDir: string, parent: Level | undefined): AsyncGenerator<string> {
    throwIfAborted(signal);
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const names = new Set(entries.map((e) => e.name));
    const offset = relDir.length + 1;
    const level =
      names.has(".gitignore") || names.has(".ignore") || names.has(".git")
        ? await levelFor(
            dir,
            relDir === "" ? (p) => p : (p) => p.slice(offset),
            { gitignore: names.has(".gitignore"), ignore: names.has(".ignore"), git: names.has(".git") },
            parent,
          )
        : parent;
    entries.sort((a, b) => comparePaths(a.name, b.name));
    for (const entry of entries) {
      if (stats.entries >= maxEntries) {
        stats.limited = true;
        return;
      }
      stats.entries++;
      if (entry.name === ".git") continue;
      const path = relDir === "" ? entry.name : `${relDir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skip(level, path, true)) yield* walk(join(dir, entry.name), path, level);
      } else if (entry.isFile()) {
        if (!skip(level, path, false)) yield path;
      }
    }
  }

  yield* walk(root, "", ancestors);
}

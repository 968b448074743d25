/**
 * `fuzzyFileSearch`: the files of a folder matched against what the user typed after `@`, best first.
 *
 * The file list of each folder is listed once and kept: `git ls-files` inside a repository (tracked and untracked
 * files, `.gitignore` and the other exclude files applied, deleted ones left out), else `rg --files` (which reads
 * `.gitignore`, `.ignore` and `.rgignore` without a repository too), else a walk of the folder that skips `.git`,
 * `node_modules` and what the folder's own `.gitignore` names by a simple pattern. A list older than two seconds is
 * listed again before a search; when listing the folder took longer than 200 ms (a large tree), the search uses
 * the old list and the new one is made meanwhile. At most 8 folders' lists are kept, each of at most 500,000 files.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const FRESH_MS = 2_000;
const RELIST_INLINE_MS = 200;
const MAX_ROOTS = 8;
export const MAX_FILES = 500_000;

export interface FoundFile {
  root: string;
  path: string;
  match_type: "file";
  file_name: string;
  score: number;
  indices: number[];
}

interface Listing {
  files: string[];
  lower: string[];
  /** Where each path's file name starts. */
  nameAt: Int32Array;
  truncated: boolean;
  listedAt: number;
  listMs: number;
}

interface Entry {
  listing?: Listing;
  pending?: Promise<Listing>;
}

function run(command: string, args: string[], cwd: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd,
        encoding: "utf8",
        maxBuffer: 512 * 1024 * 1024,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
      },
      (error, stdout) => resolve(error ? undefined : stdout),
    );
  });
}

/** Tracked and untracked files of a repository, ignored and deleted ones left out; undefined outside one. */
async function gitFiles(root: string): Promise<string[] | undefined> {
  const base = ["-c", "core.quotePath=false", "ls-files", "-z"];
  const [listed, deleted] = await Promise.all([
    run("git", [...base, "--cached", "--others", "--exclude-standard"], root),
    run("git", [...base, "--deleted"], root),
  ]);
  if (listed === undefined) return undefined;
  const gone = new Set(deleted ? deleted.split("\0") : []);
  const seen = new Set<string>();
  const files: string[] = [];
  for (const path of listed.split("\0")) {
    // A file with merge conflicts is listed once per stage.
    if (path === "" || gone.has(path) || seen.has(path)) continue;
    seen.add(path);
    files.push(path);
  }
  return files;
}

async function ripgrepFiles(root: string): Promise<string[] | undefined> {
  const out = await run("rg", ["--files", "--hidden", "--no-require-git", "-g", "!.git", "--null"], root);
  if (out === undefined) return undefined;
  return out.split("\0").filter((p) => p !== "");
}

/** The simple patterns of a `.gitignore` as tests on a relative path (no negations, no `**` in the middle). */
function ignoreTests(root: string): ((path: string, name: string) => boolean)[] {
  const file = join(root, ".gitignore");
  if (!existsSync(file)) return [];
  const tests: ((path: string, name: string) => boolean)[] = [];
  for (const raw of readFileSync(file, "utf8").split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith("!")) continue;
    const pattern = line.replace(/\/$/, "");
    const anchored = pattern.startsWith("/") || pattern.includes("/");
    const glob = pattern.replace(/^\//, "");
    const regex = new RegExp(
      `^${glob
        .split("")
        .map((c) => (c === "*" ? "[^/]*" : c === "?" ? "[^/]" : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
        .join("")}$`,
    );
    tests.push(anchored ? (path) => regex.test(path) : (_path, name) => regex.test(name));
  }
  return tests;
}

/** The walk used without git and ripgrep. */
export function walkFiles(root: string, limit = MAX_FILES): string[] {
  const tests = ignoreTests(root);
  const files: string[] = [];
  const stack = [""];
  while (stack.length > 0 && files.length <= limit) {
    const dir = stack.pop()!;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(join(root, dir), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = dir === "" ? entry.name : `${dir}/${entry.name}`;
      if (entry.name === ".git" || entry.name === "node_modules") continue;
      if (tests.some((test) => test(path, entry.name))) continue;
      if (entry.isDirectory()) stack.push(path);
      else if (entry.isFile() || entry.isSymbolicLink()) files.push(path);
    }
  }
  return files.sort();
}

async function list(root: string): Promise<Listing> {
  const started = performance.now();
  let files = (await gitFiles(root)) ?? (await ripgrepFiles(root)) ?? walkFiles(root);
  const truncated = files.length > MAX_FILES;
  if (truncated) files = files.slice(0, MAX_FILES);
  const lower = files.map((f) => f.toLowerCase());
  const nameAt = new Int32Array(files.length);
  for (let i = 0; i < files.length; i++) nameAt[i] = files[i]!.lastIndexOf("/") + 1;
  return { files, lower, nameAt, truncated, listedAt: Date.now(), listMs: performance.now() - started };
}

/** The file lists of the folders searched, kept per folder (most recently used last). */
export class FileLists {
  private readonly entries = new Map<string, Entry>();

  /** The folder's list: the kept one while fresh (or while a slow folder is listed again), else a new one. */
  async get(root: string): Promise<Listing> {
    let entry = this.entries.get(root);
    if (entry) this.entries.delete(root);
    entry ??= {};
    this.entries.set(root, entry);
    while (this.entries.size > MAX_ROOTS) this.entries.delete(this.entries.keys().next().value as string);
    const held = entry.listing;
    if (held && Date.now() - held.listedAt < FRESH_MS) return held;
    const relist = () => {
      const current = entry;
      current.pending ??= list(root).then(
        (listing) => {
          current.listing = listing;
          current.pending = undefined;
          return listing;
        },
        (error: unknown) => {
          current.pending = undefined;
          throw error;
        },
      );
      return current.pending;
    };
    if (held && held.listMs > RELIST_INLINE_MS) {
      void relist().catch(() => undefined);
      return held;
    }
    return relist();
  }

  async search(
    roots: readonly string[],
    query: string,
    limit: number,
  ): Promise<{ files: FoundFile[]; truncated: boolean }> {
    const listings = await Promise.all(roots.map((root) => this.get(root)));
    const needle = query.toLowerCase().replace(/\s+/g, "");
    const best = new TopK(limit);
    listings.forEach((listing, r) => {
      const root = roots[r]!;
      for (let i = 0; i < listing.files.length; i++) {
        if (needle === "") {
          if (best.full()) break;
          best.add(-listing.files[i]!.length, () => found(root, listing, i, 0, []));
          continue;
        }
        const match = matchPath(listing.lower[i]!, listing.files[i]!, listing.nameAt[i]!, needle);
        if (match && best.accepts(match.score))
          best.add(match.score, () => found(root, listing, i, match.score, match.indices));
      }
    });
    return { files: best.sorted(), truncated: listings.some((l) => l.truncated) };
  }
}

function found(root: string, listing: Listing, i: number, score: number, indices: number[]): FoundFile {
  const path = listing.files[i]!;
  return { root, path, match_type: "file", file_name: path.slice(listing.nameAt[i]!), score, indices };
}

/** The `limit` best, kept in a small array that is sorted and cut when it doubles. */
class TopK {
  private items: { score: number; make: () => FoundFile }[] = [];
  private floor = Number.NEGATIVE_INFINITY;
  constructor(private readonly limit: number) {}
  full(): boolean {
    return this.items.length >= this.limit;
  }
  accepts(score: number): boolean {
    return score > this.floor;
  }
  add(score: number, make: () => FoundFile): void {
    this.items.push({ score, make });
    if (this.items.length >= this.limit * 2) this.cut();
  }
  private cut(): void {
    this.items.sort((a, b) => b.score - a.score);
    this.items.length = Math.min(this.items.length, this.limit);
    if (this.items.length === this.limit) this.floor = this.items.at(-1)!.score;
  }
  sorted(): FoundFile[] {
    this.cut();
    return this.items.map((item) => item.make());
  }
}

const BOUNDARY = new Set(["/", "_", "-", ".", " "]);

function isBoundary(path: string, at: number): boolean {
  if (at === 0) return true;
  const before = path[at - 1]!;
  if (BOUNDARY.has(before)) return true;
  const c = path[at]!;
  // A camelCase hump: a capital after a lower-case letter.
  return c >= "A" && c <= "Z" && before >= "a" && before <= "z";
}

/** Matches `needle` (lower case) as a subsequence; undefined when it is not one. */
export function matchPath(
  lower: string,
  path: string,
  nameAt: number,
  needle: string,
): { score: number; indices: number[] } | undefined {
  // Cheap rejection first: most paths do not hold the characters in order.
  let at = -1;
  for (let q = 0; q < needle.length; q++) {
    at = lower.indexOf(needle[q]!, at + 1);
    if (at < 0) return undefined;
  }
  // Within the file name when it can be, else across the path; from the start (of the first few tried) that
  // scores best, so "btn" takes the B of "SubmitButton", not its b.
  let best: { score: number; indices: number[] } | undefined;
  for (const from of [nameAt, 0]) {
    let start = lower.indexOf(needle[0]!, from);
    for (let tries = 0; start >= 0 && tries < 8; tries++) {
      const indices = subsequence(lower, needle, start);
      if (!indices) break;
      const score = scoreOf(path, indices, nameAt, from === nameAt);
      if (!best || score > best.score) best = { score, indices };
      start = lower.indexOf(needle[0]!, start + 1);
    }
    if (best) break;
  }
  return best;
}

function scoreOf(path: string, indices: number[], nameAt: number, inName: boolean): number {
  let score = 0;
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k]!;
    score += 1;
    if (k > 0 && indices[k - 1] === i - 1) score += 5;
    if (isBoundary(path, i)) score += 8;
  }
  if (inName) score += 20;
  if (inName && indices[0] === nameAt) score += 10;
  // Shorter paths first among equals.
  return score - path.length / 100;
}

/** Positions of `needle` in `lower` from `from`, each character at its first occurrence after the previous one. */
function subsequence(lower: string, needle: string, from: number): number[] | undefined {
  const indices: number[] = [];
  let at = from - 1;
  for (let q = 0; q < needle.length; q++) {
    const next = lower.indexOf(needle[q]!, at + 1);
    if (next < 0) return undefined;
    indices.push(next);
    at = next;
  }
  return indices;
}

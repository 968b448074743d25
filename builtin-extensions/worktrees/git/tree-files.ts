/**
 * Writing working files from a tree without going through the index: a revert or an undo puts a file back as a
 * tree holds it (content, executable bit, symlink) or removes it when the tree has none, and leaves the user's
 * index alone. The blob is written as stored, with no smudge filter (no user code runs).
 */
import { chmodSync, lstatSync, mkdirSync, rmSync, type Stats, symlinkSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";
import { invalidParams } from "./errors.js";
import type { RepoInfo } from "./repo.js";
import { runGit, splitNul } from "./runner.js";

export interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
}

/** The entries of `paths` in `tree`; a path the tree lacks is absent from the map. */
export async function readTreeEntries(
  repo: RepoInfo,
  tree: string,
  paths: readonly string[],
): Promise<Map<string, TreeEntry>> {
  const found = new Map<string, TreeEntry>();
  if (paths.length === 0) return found;
  const out = await runGit(
    ["ls-tree", "-z", "--full-tree", tree, "--", ...paths.map((p) => `:(literal)${p}`)],
    {
      cwd: repo.root,
      read: true,
    },
  );
  for (const record of splitNul(out.stdout)) {
    const tab = record.indexOf("\t");
    const [mode = "", type = "", oid = ""] = record.slice(0, tab).split(" ");
    found.set(record.slice(tab + 1), { mode, type, oid });
  }
  return found;
}

/** `rel` as an absolute path inside the checkout; a path that leaves it is refused. */
export function insideRoot(repo: RepoInfo, rel: string): string {
  const full = resolve(repo.root, rel);
  const back = relative(repo.root, full);
  if (!back || back.startsWith(`..${sep}`) || back === ".." || back.split(sep).includes(".git")) {
    throw invalidParams(`${rel} is not a path inside ${repo.root}`);
  }
  return full;
}

function statOf(full: string): Stats | undefined {
  try {
    return lstatSync(full);
  } catch {
    return undefined;
  }
}

/** Makes each of `paths` in the working tree what `tree` holds, deleting those it lacks. */
export async function writePathsFromTree(
  repo: RepoInfo,
  tree: string,
  paths: readonly string[],
): Promise<void> {
  const entries = await readTreeEntries(repo, tree, paths);
  const blobs = await readBlobs(
    repo,
    [...entries.values()].filter((e) => e.type === "blob").map((e) => e.oid),
  );
  for (const rel of paths) {
    const full = insideRoot(repo, rel);
    const entry = entries.get(rel);
    let stat = statOf(full);
    if (!entry) {
      if (stat) rmSync(full, { recursive: true, force: true });
      continue;
    }
    // A submodule's checkout is its own repository; nothing of it is written from here.
    if (entry.type === "commit") continue;
    const blob = blobs.get(entry.oid);
    if (!blob) throw new Error(`git cat-file did not return the blob ${entry.oid}`);
    const link = entry.mode === "120000";
    // A regular file is written over in place (one call, not a removal and a new file); anything else goes first.
    if (stat && (link || !stat.isFile())) {
      rmSync(full, { recursive: true, force: true });
      stat = undefined;
    }
    if (!stat) mkdirSync(dirname(full), { recursive: true });
    if (link) {
      symlinkSync(blob.toString("utf8"), full);
      continue;
    }
    writeFileSync(full, blob);
    const mode = entry.mode === "100755" ? 0o755 : 0o644;
    if (!stat || (stat.mode & 0o777) !== mode) chmodSync(full, mode);
  }
}

/** The contents of `oids`, read in one `git cat-file --batch` call. */
export async function readBlobs(repo: RepoInfo, oids: readonly string[]): Promise<Map<string, Buffer>> {
  const blobs = new Map<string, Buffer>();
  const wanted = [...new Set(oids)];
  if (wanted.length === 0) return blobs;
  const out = (
    await runGit(["cat-file", "--batch"], { cwd: repo.root, read: true, input: `${wanted.join("\n")}\n` })
  ).stdout;
  // Each answer: "<oid> <type> <size>\n", the content, "\n".
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(0x0a, at);
    if (eol < 0) break;
    const [oid = "", type = "", size = ""] = out.subarray(at, eol).toString("utf8").split(" ");
    if (type === "missing" || size === "") {
      at = eol + 1;
      continue;
    }
    const length = Number(size);
    blobs.set(oid, out.subarray(eol + 1, eol + 1 + length));
    at = eol + 1 + length + 1;
  }
  return blobs;
}

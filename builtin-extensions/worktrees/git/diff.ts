/**
 * Diffs between two trees in the app-server's wire shape: files with their status and line totals, hunks whose
 * lines keep their `" "`, `"+"`, `"-"` or `"\"` prefix, and a stable id per hunk. Every diff here compares trees
 * (see state.ts), so a read takes no lock and writes nothing but objects.
 */
import { createHash } from "node:crypto";
import type { DiffFile, DiffFileStatus, DiffHunk, FileTotals } from "@knightcodeai/cli/kit";
import type { RepoInfo } from "./repo.js";
import { GitOutputTooLargeError, runGit, splitNul } from "./runner.js";

export type { DiffFile, DiffFileStatus, DiffHunk, FileTotals };

export interface DiffOptions {
  /** Lines of context around each change (default 3). */
  context?: number;
  ignoreWhitespace?: boolean;
  /** Limit the diff to these paths (literal, relative to the root). */
  paths?: readonly string[];
  /** Hunk text the whole response may carry; files past it come without hunks (`tooLarge`). */
  budgetBytes?: number;
  /** Files the response may list; the rest are only counted (`filesOmitted`). */
  maxFiles?: number;
  /** `false`: the files only, without hunks or totals (what a whole-file revert needs); the patch is not read. */
  patch?: boolean;
}

/** The parts of a file's diff an action needs besides the wire shape. */
export interface ParsedFileDiff {
  file: DiffFile;
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
  /** The `diff --git`, mode, `index`, `---` and `+++` lines: the header a one-hunk patch is built from. */
  headerLines: string[];
}

export interface TreeDiff {
  files: ParsedFileDiff[];
  filesOmitted: number;
}

export const DEFAULT_CONTEXT = 3;
/** The `a/` and `b/` prefixes `git apply` expects, whatever `diff.noprefix` or `diff.mnemonicPrefix` say. */
export const PATCH_PREFIXES = ["--src-prefix=a/", "--dst-prefix=b/"] as const;
/** About 4 MB of hunk text per response; the app-server's frames stay far below any client's limit. */
export const DIFF_BUDGET_BYTES = 4 * 1024 * 1024;
export const DIFF_MAX_FILES = 3000;
/** A single file's patch past this is reported `tooLarge` whatever the budget left. */
const FILE_MAX_BYTES = 1024 * 1024;

const STATUS: Record<string, DiffFileStatus> = {
  A: "added",
  D: "deleted",
  M: "modified",
  R: "renamed",
  C: "copied",
  T: "typeChanged",
};

interface RawEntry {
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
  status: DiffFileStatus;
  path: string;
  oldPath?: string;
}

function literalPaths(paths: readonly string[] | undefined): string[] {
  return paths ? ["--", ...paths.map((p) => `:(literal)${p}`)] : [];
}

function parseRaw(out: Buffer): RawEntry[] {
  const parts = splitNul(out);
  const entries: RawEntry[] = [];
  for (let i = 0; i < parts.length; ) {
    const meta = (parts[i++] ?? "").replace(/^:/, "").split(" ");
    const [oldMode = "", newMode = "", oldBlob = "", newBlob = "", code = ""] = meta;
    const letter = code.charAt(0);
    const status = STATUS[letter] ?? "modified";
    if (letter === "R" || letter === "C") {
      const oldPath = parts[i++] ?? "";
      const path = parts[i++] ?? "";
      entries.push({ oldMode, newMode, oldBlob, newBlob, status, path, oldPath });
    } else {
      entries.push({ oldMode, newMode, oldBlob, newBlob, status, path: parts[i++] ?? "" });
    }
  }
  return entries;
}

/** `--numstat -z`: `adds\tdels\tpath\0`, or `adds\tdels\t\0old\0new\0` for a rename; `-` counts for binary. */
function parseNumstat(
  out: Buffer,
): { additions: number; deletions: number; binary: boolean; path: string }[] {
  const parts = splitNul(out);
  const rows = [];
  for (let i = 0; i < parts.length; ) {
    const [adds = "0", dels = "0", path = ""] = (parts[i++] ?? "").split("\t");
    let finalPath = path;
    if (path === "") {
      i++;
      finalPath = parts[i++] ?? "";
    }
    const binary = adds === "-";
    rows.push({
      additions: binary ? 0 : Number(adds),
      deletions: binary ? 0 : Number(dels),
      binary,
      path: finalPath,
    });
  }
  return rows;
}

function diffArgs(options: DiffOptions): string[] {
  return ["-M", "--no-ext-diff", "--no-textconv", "--no-color", ...(options.ignoreWhitespace ? ["-w"] : [])];
}

/** The net line totals per file between two trees (`turn/diff/updated`'s `files`). */
export async function diffTotals(
  repo: RepoInfo,
  from: string,
  to: string,
  paths?: readonly string[],
): Promise<FileTotals[]> {
  const out = await runGit(["diff-tree", "-r", "--numstat", "-z", "-M", from, to, ...literalPaths(paths)], {
    cwd: repo.root,
    read: true,
  });
  return parseNumstat(out.stdout).map(({ path, additions, deletions }) => ({ path, additions, deletions }));
}

/** Whether two trees differ at all (in `paths` when given). */
export async function treesDiffer(
  repo: RepoInfo,
  from: string,
  to: string,
  paths?: readonly string[],
): Promise<boolean> {
  if (paths && paths.length === 0) return false;
  const out = await runGit(["diff-tree", "-r", "--quiet", from, to, ...literalPaths(paths)], {
    cwd: repo.root,
    read: true,
    okCodes: [1],
  });
  return out.code === 1;
}

function hunkId(
  entry: RawEntry,
  context: number,
  ignoreWhitespace: boolean,
  header: string,
  lines: string[],
): string {
  const hash = createHash("sha256");
  hash.update(
    [
      ignoreWhitespace ? "w" : "",
      context,
      entry.oldPath ?? entry.path,
      entry.path,
      entry.oldBlob,
      entry.newBlob,
      entry.oldMode,
      entry.newMode,
    ].join("\0"),
  );
  hash.update("\n");
  hash.update(header);
  for (const line of lines) hash.update(`\n${line}`);
  return hash.digest("hex").slice(0, 24);
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

interface Section {
  /** The `index <old>..<new>` blob ids, when the header has that line. */
  blobs?: string;
  headerLines: string[];
  binary: boolean;
  hunks: { header: string; lines: string[] }[];
  bytes: number;
  additions: number;
  deletions: number;
}

function parsePatch(text: string): Section[] {
  const sections: Section[] = [];
  let current: Section | undefined;
  let hunk: { header: string; lines: string[] } | undefined;
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) {
    if (line.startsWith("diff --git ")) {
      current = { headerLines: [line], binary: false, hunks: [], bytes: 0, additions: 0, deletions: 0 };
      hunk = undefined;
      sections.push(current);
      continue;
    }
    if (!current) continue;
    current.bytes += line.length + 1;
    if (line.startsWith("@@ ")) {
      hunk = { header: line, lines: [] };
      current.hunks.push(hunk);
    } else if (hunk) {
      hunk.lines.push(line);
      if (line.startsWith("+")) current.additions++;
      else if (line.startsWith("-")) current.deletions++;
    } else {
      if (line.startsWith("Binary files ") || line === "GIT binary patch") current.binary = true;
      if (line.startsWith("index ")) current.blobs = line.slice(6).split(" ")[0];
      current.headerLines.push(line);
    }
  }
  return sections;
}

/**
 * The diff between trees `from` and `to`. Files are listed in git's order; past `maxFiles` they are only counted,
 * and once the hunk text reaches `budgetBytes` the remaining files come without hunks (`tooLarge`).
 */
export async function diffTrees(
  repo: RepoInfo,
  from: string,
  to: string,
  options: DiffOptions = {},
): Promise<TreeDiff> {
  const context = options.context ?? DEFAULT_CONTEXT;
  const ignoreWhitespace = options.ignoreWhitespace ?? false;
  const run = { cwd: repo.root, read: true };
  const pathArgs = literalPaths(options.paths);
  const common = diffArgs(options);
  // The list and the patch are read side by side: neither needs the other's answer.
  const withPatch = options.patch !== false;
  const [raw, patch] = await Promise.all([
    runGit(["diff-tree", "-r", "-z", "--no-abbrev", ...common, from, to, ...pathArgs], run),
    !withPatch
      ? undefined
      : runGit(
          [
            "diff-tree",
            "-r",
            "-p",
            `-U${context}`,
            "--full-index",
            ...PATCH_PREFIXES,
            ...common,
            from,
            to,
            ...pathArgs,
          ],
          { ...run, maxBytes: 64 * 1024 * 1024 },
        ).catch((error: unknown) => {
          // A patch too big to hold: every file is listed with its totals and no hunks.
          if (error instanceof GitOutputTooLargeError) return undefined;
          throw error;
        }),
  ]);
  const entries = parseRaw(raw.stdout);
  const maxFiles = options.maxFiles ?? DIFF_MAX_FILES;
  const listed = entries.slice(0, maxFiles);
  let sections: Section[] | undefined;
  // The totals are counted from the patch: a separate `--numstat` would read every blob a second time.
  let totals: ReturnType<typeof parseNumstat> | undefined;
  if (patch) sections = parsePatch(patch.stdout.toString("utf8"));
  else if (withPatch)
    totals = parseNumstat(
      (await runGit(["diff-tree", "-r", "-z", "--numstat", ...common, from, to, ...pathArgs], run)).stdout,
    );
  let budget = options.budgetBytes ?? DIFF_BUDGET_BYTES;
  // git leaves out the patch of a file whose change `-w` hides; walk both lists in step, matching blob ids.
  let next = 0;
  const files: ParsedFileDiff[] = listed.map((entry, index) => {
    let section = sections?.[next];
    if (section?.blobs !== undefined && section.blobs !== `${entry.oldBlob}..${entry.newBlob}`)
      section = undefined;
    else next++;
    const total = totals?.[index] ?? section ?? { additions: 0, deletions: 0, binary: false };
    const binary = total.binary;
    const file: DiffFile = {
      path: entry.path,
      ...(entry.oldPath !== undefined ? { oldPath: entry.oldPath } : {}),
      status: entry.status,
      binary,
      additions: total.additions,
      deletions: total.deletions,
      hunks: [],
    };
    if (!section) {
      // Nothing to show: a whitespace-only change under `-w`, or a patch too big to hold.
      if (!sections) file.tooLarge = true;
    } else if (!binary && (section.bytes > FILE_MAX_BYTES || section.bytes > budget)) {
      file.tooLarge = true;
      // Once the budget is spent, the later files come without hunks too, so what is shown is a prefix.
      if (section.bytes <= FILE_MAX_BYTES) budget = 0;
    } else {
      budget -= section.bytes;
      file.hunks = section.hunks.map(({ header, lines }) => {
        const match = HUNK_HEADER.exec(header);
        return {
          id: hunkId(entry, context, ignoreWhitespace, header, lines),
          header,
          oldStart: Number(match?.[1] ?? 0),
          oldLines: match?.[2] === undefined ? 1 : Number(match[2]),
          newStart: Number(match?.[3] ?? 0),
          newLines: match?.[4] === undefined ? 1 : Number(match[4]),
          lines,
        };
      });
    }
    return {
      file,
      oldMode: entry.oldMode,
      newMode: entry.newMode,
      oldBlob: entry.oldBlob,
      newBlob: entry.newBlob,
      headerLines: section?.headerLines ?? [],
    };
  });
  return { files, filesOmitted: entries.length - listed.length };
}

/** The patch text of one hunk of `file`, for `git apply`. */
export function hunkPatch(file: ParsedFileDiff, hunk: DiffHunk): string {
  return `${[...file.headerLines, hunk.header, ...hunk.lines].join("\n")}\n`;
}

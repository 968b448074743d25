/**
 * grep: searches file contents under a file or folder. ripgrep runs it when `rg` is on PATH, else an in-process
 * search with the same results (search-exec.ts decides, per call). Either engine only finds matching line numbers
 * in `rg --sort path` order; the text of matches and context is then read here, so both outputs are identical.
 */
import { stat } from "node:fs/promises";
import { basename, isAbsolute, join, relative } from "node:path";
import {
  formatSize,
  DEFAULT_MAX_BYTES as MAX_BYTES,
  DEFAULT_MAX_LINE_CHARS as MAX_LINE_CHARS,
  truncateLine,
} from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import type { CoreTool } from "./core-tool.js";
import { resolveToolPath, toolCwd } from "./paths.js";
import { chooseGrepEngine, streamLines } from "./search-exec.js";
import { limitBytes, type TruncationInfo, withNotices } from "./search-format.js";
import { GlobOverride, GlobSyntaxError } from "./search-ignore.js";
import { forEachLine, LARGE_FILE, readLineRanges, readSearchTextSync, splitLines } from "./search-text.js";
import { comparePaths, throwIfAborted, type WalkStats, walkFiles } from "./search-walk.js";

export const DEFAULT_GREP_LIMIT = 100;

const grepSchema = Type.Object({
  pattern: Type.String({
    description: "Regular expression to search for (Rust/ripgrep syntax), or plain text when literal is true",
  }),
  path: Type.Optional(
    Type.String({
      description: "File or folder to search, relative to the working folder (default: the working folder)",
    }),
  ),
  glob: Type.Optional(
    Type.String({
      description:
        "Only search files matching this glob, e.g. '*.ts', '*.{js,jsx}' or 'src/**/*.test.ts' (a glob without '/' matches file names at any depth); '!glob' excludes. As with ripgrep's --glob, a file it names is searched even if an ignore file lists it",
    }),
  ),
  ignoreCase: Type.Optional(Type.Boolean({ description: "Match case-insensitively (default false)" })),
  literal: Type.Optional(
    Type.Boolean({
      description: "Treat pattern as plain text instead of a regular expression (default false)",
    }),
  ),
  context: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: "Lines of context to show before and after each match (default 0)",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `Maximum number of matches to return (default ${DEFAULT_GREP_LIMIT})`,
    }),
  ),
});

export type GrepToolInput = Static<typeof grepSchema>;

export interface GrepToolDetails {
  /** Matching lines shown (at most `limit`). */
  matches: number;
  /** There were more matches than `limit`. */
  matchLimitReached?: boolean;
  /** The output was cut at 50 KB. */
  truncation?: TruncationInfo;
  /** Some lines were cut at 500 characters. */
  linesTruncated?: boolean;
}

/**
 * What `grep` needs from a sandbox or a remote machine: pi's `GrepOperations` (`isDirectory`, `readFile`) plus
 * `listFiles` to search a folder. Given, they replace the local search entirely (ripgrep is not run); without
 * them, grep uses ripgrep or its own search on the local file system.
 */
export interface GrepOperations {
  /** Rejects when the path does not exist. */
  isDirectory(absolutePath: string): Promise<boolean> | boolean;
  readFile(absolutePath: string): Promise<string> | string;
  /**
   * The files to search under a folder (paths relative to it, or absolute), after whatever ignore rules the
   * machine applies. Without it, grep searches single files only.
   */
  listFiles?(absolutePath: string): Promise<string[]> | string[];
}

export interface GrepToolOptions {
  operations?: GrepOperations;
}

interface FileMatches {
  /** Path shown in the output: relative to the searched folder, or the file's name. */
  path: string;
  abs: string;
  lines: number[];
}

interface Found {
  files: FileMatches[];
  limitReached: boolean;
  walkLimited: boolean;
}

/** Collects matches in order, keeping at most `limit` and noting when there were more. */
class Collector {
  readonly files: FileMatches[] = [];
  total = 0;
  limitReached = false;
  constructor(
    private readonly absolute: (path: string) => string,
    private readonly limit: number,
  ) {}

  /** Adds one match; false once the limit is passed. */
  add(path: string, line: number): boolean {
    if (this.total >= this.limit) {
      this.limitReached = true;
      return false;
    }
    const last = this.files[this.files.length - 1];
    if (last?.path === path) last.lines.push(line);
    else this.files.push({ path, abs: this.absolute(path), lines: [line] });
    this.total++;
    return true;
  }
}

function invalidRegex(pattern: string, reason: string): Error {
  return new Error(
    `Invalid regex "${pattern}": ${reason}. Fix the pattern, or set literal: true to search for the text as written.`,
  );
}

const escapeRegExp = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");

/** The JavaScript RegExp of the in-process search: one line at a time, `.` matching `\r` as in ripgrep. */
export function buildRegExp(pattern: string, options: { literal?: boolean; ignoreCase?: boolean }): RegExp {
  let source = options.literal ? escapeRegExp(pattern) : pattern;
  let ignoreCase = options.ignoreCase === true;
  if (!options.literal) {
    while (source.startsWith("(?i)")) {
      source = source.slice(4);
      ignoreCase = true;
    }
  }
  try {
    return new RegExp(source, ignoreCase ? "si" : "s");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw invalidRegex(pattern, message.slice(message.lastIndexOf(": ") + 2) || message);
  }
}

/** Matching line numbers of one file, at most `cap`. */
async function searchFile(abs: string, regex: RegExp, cap: number, signal?: AbortSignal): Promise<number[]> {
  const lines: number[] = [];
  const text = readSearchTextSync(abs);
  if (text === undefined) return lines;
  if (text !== LARGE_FILE) {
    let n = 0;
    for (let from = 0; from < text.length && lines.length < cap; ) {
      let nl = text.indexOf("\n", from);
      if (nl < 0) nl = text.length;
      n++;
      if (regex.test(text.slice(from, nl))) lines.push(n);
      from = nl + 1;
    }
    return lines;
  }
  await forEachLine(
    abs,
    (line, n) => {
      if (regex.test(line)) lines.push(n);
      return lines.length < cap;
    },
    signal,
  );
  return lines;
}

/** Lets other work run (and an abort arrive) during a long in-process search. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

async function searchInProcess(
  root: string,
  params: GrepToolInput,
  override: GlobOverride | undefined,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<Found> {
  const regex = buildRegExp(params.pattern, params);
  const collector = new Collector((path) => join(root, path), limit);
  const stats: WalkStats = { entries: 0, limited: false };
  let slice = performance.now();
  walk: for await (const path of walkFiles({ root, ...(override ? { override } : {}), signal }, stats)) {
    for (const line of await searchFile(join(root, path), regex, limit + 1, signal)) {
      if (!collector.add(path, line)) break walk;
    }
    if (performance.now() - slice > 10) {
      await yieldToEventLoop();
      throwIfAborted(signal);
      slice = performance.now();
    }
  }
  throwIfAborted(signal);
  return { files: collector.files, limitReached: collector.limitReached, walkLimited: stats.limited };
}

/** Matches a parallel ripgrep run may collect before the search starts over in path order (and stops early). */
const PARALLEL_MATCH_BUDGET = 2000;

/**
 * ripgrep in two tries: first in parallel (fast when matches are few), collecting every match, sorting and keeping
 * the first `limit`; when more matches than the budget arrive, it is killed and run again with `--sort=path`
 * (one thread, but it stops as soon as `limit` is passed). Either way the result is the first `limit` matches in
 * path order, the same set the in-process search finds.
 */
async function searchWithRipgrep(
  bin: string,
  root: string,
  params: GrepToolInput,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<Found | undefined> {
  const run = async (sorted: boolean, onMatch: (path: string, line: number) => boolean) => {
    const args = [
      "--no-config",
      "--line-number",
      "--with-filename",
      "--no-heading",
      "--null",
      "--color=never",
      "--max-columns=1",
      "--hidden",
      "--no-require-git",
      "--no-messages",
      ...(sorted ? ["--sort=path"] : [`--max-count=${limit + 1}`]),
      params.ignoreCase ? "--ignore-case" : "--case-sensitive",
      ...(params.literal ? ["--fixed-strings"] : []),
      ...(params.glob !== undefined ? ["--glob", params.glob] : []),
      "--glob=!.git",
      "--regexp",
      params.pattern,
      ".",
    ];
    const result = await streamLines(bin, args, {
      cwd: root,
      signal,
      onLine: (line) => {
        const nul = line.indexOf(0);
        if (nul < 0) return true; // a warning such as "stopped searching binary file"
        const colon = line.indexOf(58, nul + 1);
        const lineNumber = Number(line.toString("latin1", nul + 1, colon));
        if (colon < 0 || !Number.isInteger(lineNumber)) return true;
        let path = line.toString("utf8", 0, nul);
        if (process.platform === "win32") path = path.replaceAll("\\", "/");
        if (path.startsWith("./")) path = path.slice(2);
        return onMatch(path, lineNumber);
      },
    });
    if (!result.failedToStart && !result.stopped && result.exitCode === 2 && result.stderr.trim() !== "") {
      const stderr = result.stderr.trim();
      if (/regex parse error|error parsing regex|not allowed in a regex/i.test(stderr)) {
        const lines = stderr.split("\n").filter((l) => l.trim() !== "");
        const reason = lines[lines.length - 1]!.replace(/^error:\s*/, "").trim();
        throw invalidRegex(params.pattern, reason);
      }
      throw new Error(`grep failed: ${stderr}`);
    }
    return result;
  };

  const collector = new Collector((path) => join(root, path), limit);
  const budget = Math.max(PARALLEL_MATCH_BUDGET, 2 * (limit + 1));
  const all: { path: string; line: number }[] = [];
  const parallel = await run(false, (path, line) => {
    all.push({ path, line });
    return all.length <= budget;
  });
  if (parallel.failedToStart) return undefined;
  if (!parallel.stopped) {
    all.sort((a, b) => comparePaths(a.path, b.path) || a.line - b.line);
    for (const m of all) if (!collector.add(m.path, m.line)) break;
  } else {
    const ordered = await run(true, (path, line) => collector.add(path, line));
    if (ordered.failedToStart) return undefined;
  }
  return { files: collector.files, limitReached: collector.limitReached, walkLimited: false };
}

/**
 * Renders matches with their context: `path:line: text`, `path-line- text`, `--` between separate groups. Stops
 * once the output passes 50 KB (the rest would be cut anyway).
 */
async function render(
  found: Found,
  context: number,
  signal: AbortSignal | undefined,
  readRanges: (abs: string, ranges: [number, number][]) => Promise<Map<number, string>>,
): Promise<{ text: string; linesTruncated: boolean }> {
  const out: string[] = [];
  let bytes = 0;
  let linesTruncated = false;
  let previous: { path: string; line: number } | undefined;
  for (const file of found.files) {
    throwIfAborted(signal);
    const matchLines = [...new Set(file.lines)].sort((a, b) => a - b);
    const isMatch = new Set(matchLines);
    const ranges: [number, number][] = [];
    for (const m of matchLines) {
      const start = Math.max(1, m - context);
      const last = ranges[ranges.length - 1];
      if (last && start <= last[1] + 1) last[1] = Math.max(last[1], m + context);
      else ranges.push([start, m + context]);
    }
    const texts = await readRanges(file.abs, ranges);
    const shown = [...new Set([...matchLines, ...texts.keys()])].sort((a, b) => a - b);
    for (const n of shown) {
      if (context > 0 && previous && !(previous.path === file.path && previous.line === n - 1))
        out.push("--");
      let text = texts.get(n) ?? "";
      if (text.endsWith("\r")) text = text.slice(0, -1);
      const cut = truncateLine(text, MAX_LINE_CHARS);
      linesTruncated ||= cut.wasTruncated;
      const line = isMatch.has(n) ? `${file.path}:${n}: ${cut.text}` : `${file.path}-${n}- ${cut.text}`;
      out.push(line);
      previous = { path: file.path, line: n };
      bytes += Buffer.byteLength(line) + 1;
      if (bytes > MAX_BYTES) return { text: out.join("\n"), linesTruncated };
    }
  }
  return { text: out.join("\n"), linesTruncated };
}

/**
 * Searches through operations, in process: every file's text comes from `readFile`, and is kept for rendering.
 * Files are searched in path order, so the result is the first `limit` matches as with the local engines.
 */
async function searchThrough(
  ops: GrepOperations,
  target: string,
  shown: string,
  params: GrepToolInput,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<{ found: Found; texts: Map<string, string[]> }> {
  let isDirectory: boolean;
  try {
    isDirectory = await ops.isDirectory(target);
  } catch {
    throw new Error(`Path not found: ${shown}`);
  }
  const regex = buildRegExp(params.pattern, params);
  const texts = new Map<string, string[]>();
  let files: { path: string; abs: string }[];
  if (!isDirectory) {
    files = [{ path: basename(target), abs: target }];
  } else {
    if (!ops.listFiles) {
      throw new Error(
        `grep cannot search the folder ${shown}: its operations have no listFiles. Search one file, or give the operations a listFiles.`,
      );
    }
    let override: GlobOverride | undefined;
    try {
      override = params.glob !== undefined ? new GlobOverride([params.glob]) : undefined;
    } catch (error) {
      if (error instanceof GlobSyntaxError) throw new Error(error.message);
      throw error;
    }
    files = (await ops.listFiles(target))
      .map((path) => {
        const rel = isAbsolute(path) ? relative(target, path).split("\\").join("/") : path;
        const clean = rel.startsWith("./") ? rel.slice(2) : rel;
        return { path: clean, abs: join(target, clean) };
      })
      .filter((file) => !override || override.keeps(file.path))
      .sort((a, b) => comparePaths(a.path, b.path));
  }
  const absolute = new Map(files.map((file) => [file.path, file.abs]));
  const collector = new Collector((path) => absolute.get(path) ?? join(target, path), limit);
  search: for (const file of files) {
    throwIfAborted(signal);
    const text = await ops.readFile(file.abs);
    if (text.includes("\0")) continue; // binary, as the local engines skip it
    const lines = splitLines(text);
    texts.set(file.abs, lines);
    for (let i = 0; i < lines.length; i++) {
      if (regex.test(lines[i]!) && !collector.add(file.path, i + 1)) break search;
    }
  }
  return {
    found: { files: collector.files, limitReached: collector.limitReached, walkLimited: false },
    texts,
  };
}

/**
 * The `grep` tool. `cwd` is the folder relative paths resolve against; without it, the session's working folder
 * at each call.
 */
export function createGrepTool(
  cwd?: string,
  options: GrepToolOptions = {},
): CoreTool<typeof grepSchema, GrepToolDetails> {
  const ops = options.operations;
  return {
    name: "grep",
    label: "grep",
    description: [
      "Search the contents of files for a regular expression (ripgrep syntax), or for plain text with literal: true.",
      "Searches the given file, or every file under the given folder (default: the working folder), including hidden files; respects .gitignore and .ignore files (nested ones too), and skips .git and binary files.",
      "Each match is a line `path:line: text`, with paths relative to the searched folder; with context, the lines around it appear as `path-line- text` and `--` separates groups.",
      `Returns at most \`limit\` matches (default ${DEFAULT_GREP_LIMIT}) and ${formatSize(MAX_BYTES)} of output, in path order; lines longer than ${MAX_LINE_CHARS} characters are cut.`,
      "Narrow a search with path, glob (e.g. '*.ts' or 'src/**/*.ts') or a more specific pattern rather than raising the limit.",
    ].join(" "),
    promptSnippet: "grep: search file contents for a regex or text (respects .gitignore, bounded output)",
    promptGuidelines: [
      "Use grep rather than running grep/rg through bash: its output is bounded and its paths are relative.",
      "Narrow grep with glob (e.g. '*.ts') or path; use literal: true for text containing regex characters such as ( [ . *.",
    ],
    annotations: {
      title: "Search file contents",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    parameters: grepSchema,
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      throwIfAborted(signal);
      const target = resolveToolPath(toolCwd(cwd, ctx), params.path ?? ".");
      const limit = params.limit ?? DEFAULT_GREP_LIMIT;
      const context = params.context ?? 0;

      let found: Found | undefined;
      let readRanges = (abs: string, ranges: [number, number][]) => readLineRanges(abs, ranges);
      const info = ops ? undefined : await stat(target).catch(() => undefined);
      if (ops) {
        const through = await searchThrough(ops, target, params.path ?? target, params, limit, signal);
        found = through.found;
        readRanges = async (abs, ranges) => {
          const lines = through.texts.get(abs) ?? [];
          const picked = new Map<number, string>();
          for (const [from, to] of ranges) {
            for (let n = from; n <= Math.min(to, lines.length); n++) picked.set(n, lines[n - 1]!);
          }
          return picked;
        };
      } else if (!info) {
        throw new Error(`Path not found: ${params.path ?? target}`);
      } else if (info.isFile()) {
        // One named file: searched in process by both engines (ripgrep treats named files differently).
        const regex = buildRegExp(params.pattern, params);
        const collector = new Collector(() => target, limit);
        const name = basename(target);
        for (const line of await searchFile(target, regex, limit + 1, signal))
          if (!collector.add(name, line)) break;
        found = { files: collector.files, limitReached: collector.limitReached, walkLimited: false };
      } else if (info.isDirectory()) {
        let override: GlobOverride | undefined;
        try {
          override = params.glob !== undefined ? new GlobOverride([params.glob]) : undefined;
        } catch (error) {
          if (error instanceof GlobSyntaxError) throw new Error(error.message);
          throw error;
        }
        const engine = chooseGrepEngine();
        if (engine.kind === "ripgrep")
          found = await searchWithRipgrep(engine.bin, target, params, limit, signal);
        found ??= await searchInProcess(target, params, override, limit, signal);
      } else {
        throw new Error(`Not a file or folder: ${params.path ?? target}`);
      }

      const matches = found.files.reduce((n, f) => n + f.lines.length, 0);
      if (matches === 0) {
        const text = found.walkLimited
          ? withNotices("No matches found", [
              "The search stopped early in a very large folder; search a subfolder",
            ])
          : "No matches found";
        return { content: [{ type: "text", text }], details: { matches: 0 } };
      }
      const rendered = await render(found, context, signal, readRanges);
      const { text, truncation } = limitBytes(rendered.text);
      const notices: string[] = [];
      if (found.limitReached) {
        notices.push(
          `${limit} matches limit reached. Use limit=${limit * 2} for more, or refine the pattern, path or glob`,
        );
      }
      if (truncation) {
        notices.push(
          `${formatSize(MAX_BYTES)} output limit reached; narrow the search with path or glob, or use a more specific pattern`,
        );
      }
      if (rendered.linesTruncated) {
        notices.push(
          `Some lines were cut at ${MAX_LINE_CHARS} characters; use the read tool to see them in full`,
        );
      }
      if (found.walkLimited)
        notices.push("The search stopped early in a very large folder; search a subfolder");
      const details: GrepToolDetails = {
        matches,
        ...(found.limitReached ? { matchLimitReached: true } : {}),
        ...(truncation ? { truncation } : {}),
        ...(rendered.linesTruncated ? { linesTruncated: true } : {}),
      };
      return { content: [{ type: "text", text: withNotices(text, notices) }], details };
    },
  };
}

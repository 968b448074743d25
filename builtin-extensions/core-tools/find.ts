/**
 * find: files under a folder whose path matches a glob. The listing of files the ignore files let through comes
 * from fd, `rg --files` or the in-process walker (search-exec.ts decides, per call); the glob is always applied
 * here, so every engine gives the same answer. Results are sorted in `rg --sort path` order.
 */
import { stat } from "node:fs/promises";
import { isAbsolute, relative } from "node:path";
import { formatSize, DEFAULT_MAX_BYTES as MAX_BYTES } from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import type { CoreTool } from "./core-tool.js";
import { resolveToolPath, toolCwd } from "./paths.js";
import { chooseFindEngine, streamLines } from "./search-exec.js";
import { limitBytes, type TruncationInfo, withNotices } from "./search-format.js";
import { GlobOverride, GlobSyntaxError } from "./search-ignore.js";
import { comparePaths, throwIfAborted, type WalkStats, walkFiles } from "./search-walk.js";

export const DEFAULT_FIND_LIMIT = 1000;

const findSchema = Type.Object({
  pattern: Type.String({
    description:
      "Glob to match, e.g. '*.ts' (a name at any depth), '**/*.json', 'src/**/*.test.ts' (a path from the searched folder), '*.{js,jsx}'",
  }),
  path: Type.Optional(
    Type.String({
      description: "Folder to search, relative to the working folder (default: the working folder)",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, description: `Maximum number of results (default ${DEFAULT_FIND_LIMIT})` }),
  ),
});

export type FindToolInput = Static<typeof findSchema>;

export interface FindToolDetails {
  /** Paths returned (at most `limit`). */
  count: number;
  /** More files matched than `limit`. */
  resultLimitReached?: boolean;
  /** The output was cut at 50 KB. */
  truncation?: TruncationInfo;
}

/**
 * What `find` needs from a sandbox or a remote machine (pi's `FindOperations`). Given, they replace the local
 * search entirely; without them, find uses fd, ripgrep or its own walker on the local file system.
 */
export interface FindOperations {
  exists(absolutePath: string): Promise<boolean> | boolean;
  /**
   * Files under `cwd` matching `pattern` (relative to `cwd`, or absolute), skipping what `ignore` names and
   * returning at most `limit`.
   */
  glob(
    pattern: string,
    cwd: string,
    options: { ignore: string[]; limit: number },
  ): Promise<string[]> | string[];
}

export interface FindToolOptions {
  operations?: FindOperations;
}

/** Lists through the operations: a result past `limit` says that the limit was reached. */
async function listThrough(
  ops: FindOperations,
  root: string,
  shown: string,
  pattern: string,
  limit: number,
): Promise<Listing> {
  if (!(await ops.exists(root))) throw new Error(`Path not found: ${shown}`);
  const found = await ops.glob(pattern, root, { ignore: ["**/.git/**"], limit: limit + 1 });
  const paths = found.map((path) => {
    const rel = isAbsolute(path) ? relative(root, path).split("\\").join("/") : path;
    return rel.startsWith("./") ? rel.slice(2) : rel;
  });
  paths.sort(comparePaths);
  return { paths: paths.slice(0, limit), limitReached: paths.length > limit, walkLimited: false };
}

/** The glob as a filter over root-relative file paths (ripgrep --glob matching, without un-ignoring anything). */
function compileFilter(pattern: string): GlobOverride {
  let glob = pattern.trim();
  while (glob.startsWith("./")) glob = glob.slice(2);
  try {
    return new GlobOverride([glob]);
  } catch (error) {
    if (error instanceof GlobSyntaxError) throw new Error(error.message);
    throw error;
  }
}

interface Listing {
  paths: string[];
  limitReached: boolean;
  walkLimited: boolean;
}

async function listFiles(
  root: string,
  filter: GlobOverride,
  limit: number,
  signal?: AbortSignal,
): Promise<Listing> {
  const engine = await chooseFindEngine(root);
  const normalize = (line: Buffer) => {
    let path = line.toString("utf8");
    if (process.platform === "win32") path = path.replaceAll("\\", "/");
    return path.startsWith("./") ? path.slice(2) : path;
  };
  if (engine.kind === "fd") {
    // fd walks in parallel, in no fixed order: take every match, then sort.
    const paths: string[] = [];
    const args = ["--type", "f", "--hidden", "--exclude", ".git", "--color", "never"];
    if (engine.noRequireGit) args.push("--no-require-git");
    const result = await streamLines(engine.bin, args, {
      cwd: root,
      signal,
      onLine: (line) => {
        const path = normalize(line);
        if (path !== "" && filter.keeps(path)) paths.push(path);
        return true;
      },
    });
    if (!result.failedToStart) {
      paths.sort(comparePaths);
      return { paths: paths.slice(0, limit), limitReached: paths.length > limit, walkLimited: false };
    }
  }
  if (engine.kind === "ripgrep") {
    const paths: string[] = [];
    const args = ["--files", "--no-config", "--hidden", "--no-require-git", "--no-messages", "--sort=path"];
    args.push("--glob=!.git", ".");
    const result = await streamLines(engine.bin, args, {
      cwd: root,
      signal,
      onLine: (line) => {
        const path = normalize(line);
        if (path !== "" && filter.keeps(path)) paths.push(path);
        return paths.length <= limit;
      },
    });
    if (!result.failedToStart) {
      paths.sort(comparePaths);
      return { paths: paths.slice(0, limit), limitReached: paths.length > limit, walkLimited: false };
    }
  }
  const paths: string[] = [];
  const stats: WalkStats = { entries: 0, limited: false };
  for await (const path of walkFiles({ root, signal }, stats)) {
    if (!filter.keeps(path)) continue;
    paths.push(path);
    if (paths.length > limit) break;
  }
  throwIfAborted(signal);
  paths.sort(comparePaths);
  return { paths: paths.slice(0, limit), limitReached: paths.length > limit, walkLimited: stats.limited };
}

/**
 * The `find` tool. `cwd` is the folder relative paths resolve against; without it, the session's working folder
 * at each call.
 */
export function createFindTool(
  cwd?: string,
  options: FindToolOptions = {},
): CoreTool<typeof findSchema, FindToolDetails> {
  const ops = options.operations;
  return {
    name: "find",
    label: "find",
    description: [
      "Find files by glob pattern under a folder (default: the working folder), including hidden files; respects .gitignore and .ignore files and skips .git.",
      "A pattern without '/' matches file names at any depth ('*.ts', 'package.json'); a pattern with '/' matches the path from the searched folder ('src/**/*.ts', '**/test/*.js'); '**' spans folders, '{a,b}' gives alternatives; '!pattern' lists the files that do not match.",
      `Returns paths relative to the searched folder, sorted, at most \`limit\` (default ${DEFAULT_FIND_LIMIT}) and ${formatSize(MAX_BYTES)}.`,
    ].join(" "),
    promptSnippet: "find: find files by glob pattern (respects .gitignore)",
    promptGuidelines: [
      "Use find to locate files by name or extension instead of listing folders one by one.",
    ],
    annotations: {
      title: "Find files",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    parameters: findSchema,
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      throwIfAborted(signal);
      const root = resolveToolPath(toolCwd(cwd, ctx), params.path ?? ".");
      const limit = params.limit ?? DEFAULT_FIND_LIMIT;
      let listing: Listing;
      if (ops) {
        listing = await listThrough(ops, root, params.path ?? root, params.pattern, limit);
      } else {
        const info = await stat(root).catch(() => undefined);
        if (!info) throw new Error(`Path not found: ${params.path ?? root}`);
        if (!info.isDirectory()) throw new Error(`Not a directory: ${params.path ?? root}`);
        listing = await listFiles(root, compileFilter(params.pattern), limit, signal);
      }

      if (listing.paths.length === 0) {
        const notices = listing.walkLimited
          ? ["The search stopped early in a very large folder; search a subfolder"]
          : [];
        return {
          content: [{ type: "text", text: withNotices("No files found matching pattern", notices) }],
          details: { count: 0 },
        };
      }
      const { text, truncation } = limitBytes(listing.paths.join("\n"));
      const notices: string[] = [];
      if (listing.limitReached) {
        notices.push(
          `${limit} results limit reached. Use limit=${limit * 2} for more, or refine the pattern or path`,
        );
      }
      if (truncation) {
        notices.push(
          `${formatSize(MAX_BYTES)} output limit reached (${truncation.keptLines} of ${truncation.totalLines} paths shown); refine the pattern or path`,
        );
      }
      if (listing.walkLimited)
        notices.push("The search stopped early in a very large folder; search a subfolder");
      const details: FindToolDetails = {
        count: listing.paths.length,
        ...(listing.limitReached ? { resultLimitReached: true } : {}),
        ...(truncation ? { truncation } : {}),
      };
      return { content: [{ type: "text", text: withNotices(text, notices) }], details };
    },
  };
}

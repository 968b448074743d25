/**
 * grep and find over a 20,000-file tree (200 folders × 100 small files; 40 files hold the word "needle"; a
 * .gitignore ignores one folder of 100 files), each with ripgrep/fd and with the in-process search (forced through
 * KNIGHTCODE_NO_NATIVE_SEARCH). Reports the median wall time of 3 runs and the number of results.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFindTool } from "../builtin-extensions/core-tools/find.js";
import { createGrepTool } from "../builtin-extensions/core-tools/grep.js";
import { findExecutable, NO_NATIVE_SEARCH_ENV } from "../builtin-extensions/core-tools/search-exec.js";
import type { ExtensionToolContext, ToolResult } from "../kernel/index.js";

const ROUNDS = 3;
const DIRS = 200;
const FILES_PER_DIR = 100;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function buildTree(root: string): void {
  writeFileSync(join(root, ".gitignore"), "dir-007/\n");
  for (let d = 0; d < DIRS; d++) {
    const dir = join(root, `dir-${String(d).padStart(3, "0")}`);
    mkdirSync(dir);
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const needle = (d * FILES_PER_DIR + f) % 500 === 3;
      const body = `export const value${f} = ${d * f};\n// helper ${f} in folder ${d}\n${needle ? "// the needle is here\n" : ""}export function f${f}() { return value${f}; }\n`;
      writeFileSync(join(dir, `file-${f}.${f % 4 === 0 ? "md" : "ts"}`), body);
    }
  }
}

interface Case {
  tool: "grep" | "find";
  label: string;
  params: Record<string, unknown>;
}

const cases: Case[] = [
  { tool: "grep", label: "grep needle", params: { pattern: "needle", limit: 1000 } },
  { tool: "grep", label: "grep common (limit 100)", params: { pattern: "export const" } },
  { tool: "find", label: "find **/*.ts (all)", params: { pattern: "**/*.ts", limit: 100_000 } },
  { tool: "find", label: "find file-42.*", params: { pattern: "file-42.*" } },
];

async function withEnv<T>(value: string | undefined, run: () => Promise<T>): Promise<T> {
  const before = process.env[NO_NATIVE_SEARCH_ENV];
  if (value === undefined) delete process.env[NO_NATIVE_SEARCH_ENV];
  else process.env[NO_NATIVE_SEARCH_ENV] = value;
  try {
    return await run();
  } finally {
    if (before === undefined) delete process.env[NO_NATIVE_SEARCH_ENV];
    else process.env[NO_NATIVE_SEARCH_ENV] = before;
  }
}

export async function searchBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "kc-search-bench-"));
  try {
    const built = performance.now();
    buildTree(root);
    console.log(
      `\nsearch: ${DIRS * FILES_PER_DIR} files built in ${(performance.now() - built).toFixed(0)} ms (median of ${ROUNDS} runs)`,
    );
    const ctx = { cwd: root } as unknown as ExtensionToolContext;
    const grep = createGrepTool();
    const find = createFindTool();
    const hasRg = findExecutable(["rg"]) !== undefined;
    const hasFd = findExecutable(["fd", "fdfind"]) !== undefined;
    const engines: Record<Case["tool"], [string, string | undefined, boolean][]> = {
      grep: [
        ["ripgrep", undefined, hasRg],
        ["in-process", "1", true],
      ],
      // The tree is not a git repository: an fd without --no-require-git is skipped for `rg --files` then.
      find: [
        ["fd", undefined, hasFd],
        ["rg --files", "fd", hasRg],
        ["in-process", "1", true],
      ],
    };
    const rows: string[][] = [["tool", "engine", "ms", "results"]];
    for (const c of cases) {
      for (const [engine, env, available] of engines[c.tool]) {
        if (!available) {
          rows.push([c.label, engine, "n/a", "not installed"]);
          continue;
        }
        const times: number[] = [];
        let results = 0;
        for (let i = 0; i < ROUNDS; i++) {
          const start = performance.now();
          const result = await withEnv(
            env,
            (): Promise<ToolResult<{ matches?: number; count?: number }>> =>
              c.tool === "grep"
                ? grep.execute("bench", c.params as never, undefined, undefined, ctx)
                : find.execute("bench", c.params as never, undefined, undefined, ctx),
          );
          times.push(performance.now() - start);
          results = result.details.matches ?? result.details.count ?? 0;
        }
        rows.push([c.label, engine, median(times).toFixed(1), String(results)]);
      }
    }
    const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
    for (const row of rows) {
      console.log(
        row
          .map((cell, col) => (col >= 2 ? cell.padStart(widths[col]!) : cell.padEnd(widths[col]!)))
          .join("  "),
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

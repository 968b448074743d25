/**
 * Checks docs/spec-coverage.md, the row-by-row list of the spec in ../shared/spec/ against the tests, so the list
 * cannot rot silently when a test is renamed or a row changes status:
 *
 * - every cited test file (`test/….test.ts`, or a `test/….types.ts` file the type check holds) exists, and every
 *   cited title (“…” after the file and `›`) is the title of an `it(…)` or `describe(…)` in that file, read with the
 *   TypeScript parser (a title ending in `…` is a prefix);
 * - every row's status is one of the known ones, a `tested` row cites at least one test, and a row that cites a test
 *   says `tested`;
 * - the counts at the top of the page (between the `spec-coverage:counts` markers) are the counts of the rows.
 *
 *   npx tsx scripts/check-spec-coverage.ts [page]                 exits 1 and names each problem (npm run docs:check)
 *   npx tsx scripts/check-spec-coverage.ts --write-counts [page]  rewrites the counts block from the rows, then checks
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const STATUSES = ["tested", "built-untested", "not built", "in progress"] as const;
export type Status = (typeof STATUSES)[number];

export interface Citation {
  file: string;
  title?: string;
}

export interface Row {
  id: string;
  line: number;
  status: string;
  citations: Citation[];
}

/** The titles of every `it`, `describe` and `context` call (with `.only`/`.skip`) whose title is a literal string. */
export function testTitles(source: string, fileName = "test.ts"): Set<string> {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const titles = new Set<string>();
  const calleeName = (expr: ts.Expression): string | undefined => {
    if (ts.isIdentifier(expr)) return expr.text;
    if (ts.isPropertyAccessExpression(expr) && ts.isIdentifier(expr.expression)) return expr.expression.text;
    return undefined;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const name = calleeName(node.expression);
      const first = node.arguments[0];
      if (
        (name === "it" || name === "describe" || name === "context") &&
        first &&
        (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))
      ) {
        titles.add(first.text);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return titles;
}

/** The rows of the page's tables: a row is a table line whose first cell is an id such as `E-12`. */
export function parseRows(page: string): Row[] {
  const rows: Row[] = [];
  page.split("\n").forEach((text, index) => {
    const cells = splitCells(text);
    if (!cells || !/^[A-Z]+-\d+$/.test(cells[0] ?? "")) return;
    const status = (cells[2] ?? "").replace(/\*/g, "").trim();
    const citations: Citation[] = [];
    const cite = /`(test\/[^`]+?\.(?:test|types)\.ts)`(?:\s*›\s*“([^”]+)”)?/g;
    for (const match of (cells[3] ?? "").matchAll(cite)) {
      citations.push({ file: match[1]!, ...(match[2] ? { title: match[2] } : {}) });
    }
    rows.push({ id: cells[0]!, line: index + 1, status, citations });
  });
  return rows;
}

function splitCells(line: string): string[] | undefined {
  if (!line.startsWith("|")) return undefined;
  return line
    .slice(1, line.endsWith("|") ? -1 : undefined)
    .split(/(?<!\\)\|/)
    .map((cell) => cell.replace(/\\\|/g, "|").trim());
}

/** Reads a status cell down to its keyword: `in progress (issue 29)` is `in progress`. */
function statusKeyword(status: string): string {
  for (const known of STATUSES) {
    if (status === known || [" ", ":", "("].some((next) => status.startsWith(`${known}${next}`)))
      return known;
  }
  return status;
}

export function countRows(rows: Row[]): Record<Status | "rows", number> {
  const counts = { rows: rows.length, tested: 0, "built-untested": 0, "not built": 0, "in progress": 0 };
  for (const row of rows) {
    const keyword = statusKeyword(row.status) as Status;
    if (keyword in counts) counts[keyword]++;
  }
  return counts;
}

export function countsBlock(rows: Row[]): string {
  const c = countRows(rows);
  return [
    `- Rows: **${c.rows}**`,
    `- Tested (a cited test asserts the row): **${c.tested}**`,
    `- Built, no test yet: **${c["built-untested"]}**`,
    `- Not built: **${c["not built"]}**`,
    `- In progress in another issue: **${c["in progress"]}**`,
  ].join("\n");
}

export const COUNTS_START = "<!-- spec-coverage:counts -->";
export const COUNTS_END = "<!-- spec-coverage:counts:end -->";

/** The page with its counts block rewritten from its rows. */
export function withCounts(page: string): string {
  const start = page.indexOf(COUNTS_START);
  const end = page.indexOf(COUNTS_END);
  if (start < 0 || end < start)
    throw new Error(`the counts block (${COUNTS_START} … ${COUNTS_END}) is missing`);
  const block = `${COUNTS_START}\n${countsBlock(parseRows(page))}\n`;
  return page.slice(0, start) + block + page.slice(end);
}

/** Every problem with the page, as `line N: …` messages; empty when it is sound. */
export function checkPage(page: string, root: string): string[] {
  const problems: string[] = [];
  const rows = parseRows(page);
  if (rows.length === 0)
    problems.push("no rows found (a row is a table line whose first cell is an id like E-1)");
  const seen = new Set<string>();
  const titlesByFile = new Map<string, Set<string> | null>();
  const titlesOf = (file: string): Set<string> | null => {
    if (!titlesByFile.has(file)) {
      const path = join(root, file);
      titlesByFile.set(file, existsSync(path) ? testTitles(readFileSync(path, "utf8"), file) : null);
    }
    return titlesByFile.get(file)!;
  };
  for (const row of rows) {
    const where = `line ${row.line} (${row.id})`;
    if (seen.has(row.id)) problems.push(`${where}: the id ${row.id} is used twice`);
    seen.add(row.id);
    const keyword = statusKeyword(row.status);
    if (!(STATUSES as readonly string[]).includes(keyword)) {
      problems.push(`${where}: unknown status "${row.status}" (one of ${STATUSES.join(", ")})`);
    }
    if (keyword === "tested" && row.citations.length === 0)
      problems.push(`${where}: tested but cites no test`);
    if (keyword !== "tested" && row.citations.length > 0) {
      problems.push(`${where}: cites a test but its status is "${row.status}", not tested`);
    }
    for (const citation of row.citations) {
      const titles = titlesOf(citation.file);
      if (!titles) {
        problems.push(`${where}: ${citation.file} does not exist`);
        continue;
      }
      if (!citation.title) continue;
      const wanted = citation.title;
      const found = wanted.endsWith("…")
        ? [...titles].some((t) => t.startsWith(wanted.slice(0, -1)))
        : titles.has(wanted);
      if (!found) problems.push(`${where}: ${citation.file} has no it/describe titled “${wanted}”`);
    }
  }
  const start = page.indexOf(COUNTS_START);
  const end = page.indexOf(COUNTS_END);
  if (start < 0 || end < start) {
    problems.push(`the counts block (${COUNTS_START} … ${COUNTS_END}) is missing`);
  } else {
    const written = page.slice(start + COUNTS_START.length, end).trim();
    const expected = countsBlock(rows);
    if (written !== expected)
      problems.push(`the counts at the top are stale; they should read:\n${expected}`);
  }
  return problems;
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const args = process.argv.slice(2);
  const writeCounts = args.includes("--write-counts");
  const pagePath = args.find((a) => !a.startsWith("--")) ?? join(root, "docs/spec-coverage.md");
  if (writeCounts) writeFileSync(pagePath, withCounts(readFileSync(pagePath, "utf8")));
  const problems = checkPage(readFileSync(pagePath, "utf8"), root);
  if (problems.length > 0) {
    console.error(`${pagePath}: ${problems.length} problem(s)`);
    for (const problem of problems) console.error(`  ${problem}`);
    process.exit(1);
  }
  const c = countRows(parseRows(readFileSync(pagePath, "utf8")));
  console.log(`${pagePath}: ${c.rows} rows, ${c.tested} tested; every cited test exists`);
}

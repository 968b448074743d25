/**
 * scripts/check-spec-coverage.ts, which `npm run docs:check` runs over docs/spec-coverage.md: it passes the page as
 * committed, and fails, naming the line, when a cited test file or title does not exist, when a row's status and
 * citations disagree, and when the counts at the top are stale.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import {
  COUNTS_END,
  COUNTS_START,
  checkPage,
  testTitles,
  withCounts,
} from "../../scripts/check-spec-coverage.js";
import { useTempDir } from "../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const script = join(root, "scripts", "check-spec-coverage.ts");
const tsx = join(root, "node_modules", ".bin", "tsx");

const SAMPLE_TEST = `describe("outer group", () => {
  it(
    "a title written on its own line",
    async () => {},
  );
  it.skip(\`a template title\`, () => {});
  it(\`not \${"static"}\`, () => {});
});
`;

function page(rows: string[]): string {
  const body = [
    "# Sample",
    "",
    COUNTS_START,
    COUNTS_END,
    "",
    "| Id | Row | Status | Tests |",
    "|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
  return withCounts(body);
}

describe("scripts/check-spec-coverage.ts", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-spec-check-");

  it("reads it/describe titles with the TypeScript parser, multi-line and template ones included", () => {
    expect([...testTitles(SAMPLE_TEST)]).to.deep.equal([
      "outer group",
      "a title written on its own line",
      "a template title",
    ]);
  });

  it("passes a sound page and names each problem of a broken one with its line", () => {
    tmp.write("test/sample.test.ts", SAMPLE_TEST);
    const good = page([
      "| X-1 | a row | tested | `test/sample.test.ts` › “a title written on its own line” |",
      "| X-2 | by prefix | tested | `test/sample.test.ts` › “a template…” |",
      "| X-3 | not yet | built-untested | |",
      "| X-4 | missing | not built: nobody asked | |",
    ]);
    expect(checkPage(good, tmp.path)).to.deep.equal([]);

    const broken = page([
      "| X-1 | renamed | tested | `test/sample.test.ts` › “a title that was renamed” |",
      "| X-2 | gone | tested | `test/gone.test.ts` › “anything” |",
      "| X-3 | bare | tested | |",
      "| X-4 | confused | built-untested | `test/sample.test.ts` › “outer group” |",
      "| X-4 | twice | maybe | |",
    ]);
    const problems = checkPage(broken, tmp.path);
    expect(problems).to.deep.equal([
      "line 13 (X-1): test/sample.test.ts has no it/describe titled “a title that was renamed”",
      "line 14 (X-2): test/gone.test.ts does not exist",
      "line 15 (X-3): tested but cites no test",
      'line 16 (X-4): cites a test but its status is "built-untested", not tested',
      "line 17 (X-4): the id X-4 is used twice",
      'line 17 (X-4): unknown status "maybe" (one of tested, built-untested, not built, in progress)',
    ]);
  });

  it("reports stale counts", () => {
    tmp.write("test/sample.test.ts", SAMPLE_TEST);
    const stale = page(["| X-1 | a row | built-untested | |"]).replace(
      "| built-untested |",
      "| not built: why |",
    );
    const problems = checkPage(stale, tmp.path);
    expect(problems).to.have.length(1);
    expect(problems[0]).to.contain("the counts at the top are stale").and.contain("- Not built: **1**");
  });

  it("passes docs/spec-coverage.md as committed, and exits 1 naming a renamed test", () => {
    const ok = spawnSync(tsx, [script], { cwd: root, encoding: "utf8" });
    expect(ok.status, ok.stderr).to.equal(0);
    expect(ok.stdout).to.match(/\d+ rows, \d+ tested; every cited test exists/);

    const text = readFileSync(join(root, "docs", "spec-coverage.md"), "utf8");
    const cited = "“holds each promise through one process”";
    expect(text).to.contain(cited);
    const copy = join(tmp.path, "spec-coverage.md");
    writeFileSync(copy, text.replace(cited, "“holds each promise through one process, renamed”"));
    const bad = spawnSync(tsx, [script, copy], { cwd: root, encoding: "utf8" });
    expect(bad.status).to.equal(1);
    expect(bad.stderr).to.contain(
      "test/hosts/rpc/api-contracts.test.ts has no it/describe titled “holds each promise through one process, renamed”",
    );
  });
});

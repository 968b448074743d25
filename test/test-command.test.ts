/**
 * The test commands: `npx mocha <file>` runs that file and nothing else (`.mocharc.json` names no files), and
 * `npm run mocha`, the suite `npm test` runs, reaches every test file under test/, and the reporter `npm test` uses
 * ends its output with what failed (CI keeps a log's tail).
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { useTempDir } from "./helpers/temp-dir.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const mochaBin = join(root, "node_modules", "mocha", "bin", "mocha.js");

interface JsonReport {
  stats: { tests: number; passes: number; failures: number };
  tests: { title: string; fullTitle: string; file: string }[];
  pending: { file: string }[];
}

/** Runs mocha from the repository root with the JSON reporter and returns its report. */
async function mocha(args: string[], out: string): Promise<JsonReport> {
  const report = join(out, "report.json");
  await promisify(execFile)(
    process.execPath,
    [mochaBin, ...args, "--reporter", "json", "--reporter-option", `output=${report}`],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(readFileSync(report, "utf8")) as JsonReport;
}

const rel = (file: string) => relative(root, file).split("\\").join("/");

describe("test commands", () => {
  const temp = useTempDir("kc-test-command-");

  it("npx mocha <file> runs the tests of that one file", async function () {
    this.timeout(60_000);
    expect(JSON.parse(readFileSync(join(root, ".mocharc.json"), "utf8"))).to.not.have.property("spec");
    const report = await mocha(["test/examples/hello.test.ts"], temp.path);
    expect(report.tests.map((t) => rel(t.file))).to.deep.equal(["test/examples/hello.test.ts"]);
    expect(report.tests.map((t) => t.fullTitle)).to.deep.equal([
      "examples/extensions/hello.ts greets the name given to /hello, or the world",
    ]);
    expect(report.stats).to.include({ tests: 1, passes: 1, failures: 0 });
  });

  it("npm run mocha lists every test file under test/", async function () {
    this.timeout(180_000);
    const script = (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }
    ).scripts.mocha!;
    const [command, ...args] = script.split(/\s+/).map((word) => word.replace(/^(["'])(.*)\1$/, "$2"));
    expect(command).to.equal("mocha");
    // A dry run loads every file and lists its tests without running them.
    const report = await mocha([...args, "--dry-run"], temp.path);
    const listed = new Set([...report.tests, ...report.pending].map((t) => rel(t.file)));
    const files = readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" })
      .filter((path) => path.endsWith(".test.ts"))
      .map((path) => `test/${path.split("\\").join("/")}`)
      .sort();
    expect(files.length).to.be.greaterThan(150);
    expect([...listed].sort()).to.deep.equal(files);
  });

  it("npm test's reporter ends with one line per failure, hooks included, after the slowest files", async function () {
    this.timeout(60_000);
    const spec = join(temp.path, "failing.test.mjs");
    writeFileSync(
      spec,
      [
        'import assert from "node:assert";',
        'describe("group", () => {',
        '  it("passes", () => {});',
        '  it("fails", () => assert.strictEqual(1, 2, "one is not two\\nsecond line"));',
        "});",
        'describe("hooked", () => {',
        '  before(() => { throw new Error("the hook broke"); });',
        '  it("never runs", () => {});',
        "});",
      ].join("\n"),
    );
    const reporter = join(root, "test", "slowest-reporter.ts");
    const args = ["--no-config", "--node-option", "import=tsx", "--reporter", reporter, spec];
    for (const mode of [[], ["--parallel", "--jobs", "2"]]) {
      const failed = await promisify(execFile)(process.execPath, [mochaBin, ...mode, ...args], {
        cwd: root,
      }).then(
        () => undefined,
        (error: { code?: number; stdout?: string }) => error,
      );
      expect(failed?.code, `mocha ${mode.join(" ")}`).to.equal(2);
      const tail = failed!
        .stdout!.trimEnd()
        .split("\n")
        .slice(-5)
        .map((line) => line.trim());
      expect(tail, `mocha ${mode.join(" ")}`).to.deep.equal([
        "2 failed (details above):",
        `${spec}: group fails`,
        "one is not two",
        `${spec}: hooked "before all" hook for "never runs"`,
        "the hook broke",
      ]);
    }
  });
});

/**
 * `npm test`: the whole check, as fast as two cores allow.
 *
 * The build, the type check, the linter, the dependency rules and the generated-docs check do not depend on one
 * another, so they start together, the checks at a lower priority (`nice`) so that the build gets the cores first;
 * each one's output is kept and printed when it fails. The mocha suite needs the built `dist/` (the CLI tests run
 * the `knightcode` command), so it starts as soon as the build is done, in parallel mode (`npm run mocha`, which
 * holds the glob of the whole suite), while the checks finish. Most test files spend their time waiting on the
 * processes they start, so mocha runs more workers than there are cores. At the end a table gives each step's
 * time; the run fails when any step failed.
 *
 *   npm test                  everything
 *   npm test -- --jobs 4      the number of mocha workers (default 6)
 *   npm test -- --slowest 20  how many of the slowest test files to list after the suite (default 10)
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

interface Step {
  name: string;
  ms: number;
  code: number | null;
  output: string;
}

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && process.argv[index + 1] ? process.argv[index + 1]! : fallback;
}

/** Runs `npm run <script>`; its output is kept unless `live`, which shows it as it comes. */
function run(script: string, args: string[] = [], options: { live?: boolean; nice?: boolean } = {}) {
  const started = Date.now();
  const extra = args.length > 0 ? ["--", ...args] : [];
  const command = ["npm", "run", "--silent", script, ...extra];
  // A lower priority: the step uses what the build and the tests leave of the cores.
  if (options.nice && process.platform !== "win32") command.unshift("nice", "-n", "10");
  const child = spawn(command[0]!, command.slice(1), {
    cwd: root,
    stdio: options.live ? "inherit" : ["ignore", "pipe", "pipe"],
    env: { ...process.env, FORCE_COLOR: process.stdout.isTTY ? "1" : "0" },
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise<Step>((resolve) => {
    child.on("error", (error) =>
      resolve({ name: script, ms: Date.now() - started, code: 1, output: String(error) }),
    );
    child.on("close", (code, signal) =>
      resolve({ name: script, ms: Date.now() - started, code: signal ? 1 : code, output }),
    );
  });
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

async function main(): Promise<number> {
  const started = Date.now();
  const jobs = option("jobs", "6");
  const slowest = option("slowest", "10");
  const reported = new Set<string>();
  const report = (step: Step) => {
    if (reported.has(step.name)) return;
    reported.add(step.name);
    if (step.code !== 0 && step.output) process.stdout.write(`\n--- ${step.name} failed:\n${step.output}\n`);
  };
  {
    const checks = ["typecheck", "lint", "boundaries", "docs:check"].map((name) =>
      run(name, [], { nice: true }),
    );
    const build = await run("build");
    report(build);
    let mocha: Step | undefined;
    if (build.code === 0) {
      const reporter = ["--reporter", "test/slowest-reporter.ts", "--reporter-option", `slowest=${slowest}`];
      mocha = await run("mocha", ["--parallel", "--jobs", jobs, ...reporter], { live: true });
    }
    const steps = [build, ...(await Promise.all(checks)), ...(mocha ? [mocha] : [])];
    for (const step of steps) report(step);
    process.stdout.write("\nnpm test:\n");
    for (const step of steps) {
      process.stdout.write(
        `  ${step.code === 0 ? "ok  " : "FAIL"}  ${step.name.padEnd(11)} ${seconds(step.ms)}\n`,
      );
    }
    if (!mocha) process.stdout.write("  skip  mocha       (the build failed)\n");
    process.stdout.write(`  total             ${seconds(Date.now() - started)}\n`);
    return steps.every((step) => step.code === 0) && mocha ? 0 : 1;
  }
}

process.exitCode = await main();

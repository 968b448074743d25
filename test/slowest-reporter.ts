/**
 * The spec reporter, followed by the test files that took longest (the time of their tests, hooks not counted), to
 * help keep the suite fast, and then, when anything failed, one line per failure (its file, its full title and the
 * first line of its error). The spec reporter's own failure list comes before the slowest files; a log read from its
 * end (CI keeps the tail) still names what failed. `npm test` uses it; by hand:
 *
 *   npx mocha --reporter test/slowest-reporter.ts --reporter-option slowest=15 "test/**\/*.test.ts"
 */
import Mocha from "mocha";

const { EVENT_RUN_END, EVENT_TEST_FAIL, EVENT_TEST_PASS } = Mocha.Runner.constants;

interface Failure {
  file: string;
  title: string;
  message: string;
}

/** The first line of an error's message, cut to a line's width (in parallel mode errors arrive as plain objects). */
export function firstLine(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  const text = typeof message === "string" ? message : String(error);
  const line = text.split("\n").find((part) => part.trim() !== "") ?? "";
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

export default class SlowestFiles extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const count = Number((options.reporterOptions as { slowest?: string } | undefined)?.slowest ?? 10);
    const files = new Map<string, { ms: number; tests: number }>();
    const failures: Failure[] = [];
    const cwd = `${process.cwd()}/`;
    const relative = (file: string | undefined) => (file ?? "(no file)").replace(cwd, "");
    const add = (test: Mocha.Test) => {
      const file = test.file ?? "(no file)";
      const entry = files.get(file) ?? { ms: 0, tests: 0 };
      entry.ms += test.duration ?? 0;
      entry.tests += 1;
      files.set(file, entry);
    };
    runner.on(EVENT_TEST_PASS, add);
    // Hooks fail through the same event; they are listed with the failures but not counted as tests.
    runner.on(EVENT_TEST_FAIL, (test: Mocha.Runnable & { type?: string }, error: unknown) => {
      if (test.type === "test") add(test as Mocha.Test);
      failures.push({ file: relative(test.file), title: test.fullTitle(), message: firstLine(error) });
    });
    runner.once(EVENT_RUN_END, () => {
      const log = Mocha.reporters.Base.consoleLog;
      const slowest = [...files].sort((a, b) => b[1].ms - a[1].ms).slice(0, count);
      if (slowest.length > 0) {
        log(`  The ${slowest.length} slowest test files (time in their tests):`);
        for (const [file, { ms, tests }] of slowest) {
          const seconds = `${(ms / 1000).toFixed(1)}s`.padStart(7);
          log(`  ${seconds}  ${relative(file)} (${tests} tests)`);
        }
        log();
      }
      if (failures.length > 0) {
        log(`  ${failures.length} failed (details above):`);
        for (const failure of failures) {
          log(`    ${failure.file}: ${failure.title}`);
          log(`      ${failure.message}`);
        }
        log();
      }
    });
  }
}

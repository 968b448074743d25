/**
 * The spec reporter, followed by the test files that took longest (the time of their tests, hooks not counted), to
 * help keep the suite fast. `npm test` uses it; by hand:
 *
 *   npx mocha --reporter test/slowest-reporter.ts --reporter-option slowest=15 "test/**\/*.test.ts"
 */
import Mocha from "mocha";

const { EVENT_RUN_END, EVENT_TEST_FAIL, EVENT_TEST_PASS } = Mocha.Runner.constants;

export default class SlowestFiles extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const count = Number((options.reporterOptions as { slowest?: string } | undefined)?.slowest ?? 10);
    const files = new Map<string, { ms: number; tests: number }>();
    const add = (test: Mocha.Test) => {
      const file = test.file ?? "(no file)";
      const entry = files.get(file) ?? { ms: 0, tests: 0 };
      entry.ms += test.duration ?? 0;
      entry.tests += 1;
      files.set(file, entry);
    };
    runner.on(EVENT_TEST_PASS, add);
    runner.on(EVENT_TEST_FAIL, add);
    runner.once(EVENT_RUN_END, () => {
      const slowest = [...files].sort((a, b) => b[1].ms - a[1].ms).slice(0, count);
      if (slowest.length === 0) return;
      const cwd = `${process.cwd()}/`;
      Mocha.reporters.Base.consoleLog(`  The ${slowest.length} slowest test files (time in their tests):`);
      for (const [file, { ms, tests }] of slowest) {
        const seconds = `${(ms / 1000).toFixed(1)}s`.padStart(7);
        Mocha.reporters.Base.consoleLog(`  ${seconds}  ${file.replace(cwd, "")} (${tests} tests)`);
      }
      Mocha.reporters.Base.consoleLog();
    });
  }
}

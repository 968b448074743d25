#!/usr/bin/env node
/**
 * The `knightcode` command. `--version` answers from package.json before anything else is imported, so it costs
 * only Node's own start; everything else loads the CLI (run.ts), which loads the SDK only when it opens a session.
 */
import { packageVersion } from "./version.js";

const argv = process.argv.slice(2);

if (argv.includes("--version") || argv.includes("-v")) {
  process.stdout.write(`${packageVersion()}\n`);
} else {
  const { main } = await import("./run.js");
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `knightcode: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}

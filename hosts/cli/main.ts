#!/usr/bin/env node
/**
 * The `knightcode` command. `--version` answers from package.json before anything else is imported, so it costs
 * only Node's own start; everything else loads the CLI (run.ts) and, through it, the SDK.
 */
import { readFileSync } from "node:fs";

const argv = process.argv.slice(2);

if (argv.includes("--version") || argv.includes("-v")) {
  process.stdout.write(`${readVersion()}\n`);
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

function readVersion(): string {
  for (const candidate of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(candidate, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "@knightcodeai/cli" && pkg.version) return pkg.version;
    } catch {
      // the next place
    }
  }
  return "unknown";
}

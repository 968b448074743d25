#!/usr/bin/env node
/**
 * The `knightcode` command. `--version` answers from package.json before anything else is imported, so it costs
 * only Node's own start; everything else loads the CLI (run.ts, from the bundle with its code cache once built),
 * which loads the SDK only when it opens a session.
 *
 * Once the run is over (the session shut down in order), the process exits explicitly with the run's code: a
 * handle an extension left open (a file watcher, an interval) must not keep a finished print run or an RPC
 * process whose input ended alive.
 *
 * The build makes this file a CommonJS script (`dist/hosts/cli/main.js`, beside a package.json that says so), with
 * the bundle loader inside: an ES module entry would start Node's ES module loader, and reading `node:fs` through
 * it, before a line of KnightCode runs. No top-level `await` for that reason.
 */
import { writeSync } from "node:fs";
import { packageVersion } from "./version.js";

const argv = process.argv.slice(2);

/**
 * A run that fails says why on stderr. Every failure KnightCode itself handles does; what could still end the
 * process with a non-zero code and nothing on stderr is someone else's `process.exit(n)` (an extension, a
 * dependency) or a code set without a message. Such an exit is named at the end, with where `process.exit` was
 * called from, so a failing run is never silent.
 */
let saidSomething = false;
let foreignExit: string | undefined;
let exitingOurselves = false;
// `process.stderr` is made on first use (a pipe's stream costs milliseconds), so it is watched from then on, not
// touched here: a run that never made it wrote nothing to it.
const stderrGetter = Object.getOwnPropertyDescriptor(process, "stderr");
if (stderrGetter?.get) {
  let watched: NodeJS.WriteStream | undefined;
  Object.defineProperty(process, "stderr", {
    configurable: true,
    enumerable: stderrGetter.enumerable ?? false,
    get() {
      if (watched) return watched;
      const stream = stderrGetter.get!.call(process) as NodeJS.WriteStream;
      const write = stream.write;
      stream.write = function (this: NodeJS.WriteStream, ...args: unknown[]) {
        if ((args[0] as { length?: number } | undefined)?.length) saidSomething = true;
        return (write as (...a: unknown[]) => boolean).apply(this, args);
      } as typeof stream.write;
      watched = stream;
      return stream;
    },
  });
}
const processExit = process.exit;
process.exit = ((code?: number | string | null) => {
  if (!exitingOurselves && foreignExit === undefined) {
    foreignExit = (new Error().stack ?? "").split("\n").slice(2).join("\n");
  }
  return processExit.call(process, code as number);
}) as typeof process.exit;
process.on("exit", (code) => {
  if (code === 0 || saidSomething) return;
  const where = foreignExit ? `: process.exit(${code}) was called\n${foreignExit}` : "";
  try {
    writeSync(2, `knightcode: exiting with code ${code} without a message${where}\n`);
  } catch {
    // stderr is gone; there is nowhere left to say it
  }
});

/** How long the exit waits for stdout and stderr to take what was written (a slow reader on a pipe). */
const FLUSH_MS = 2_000;

function exitAfterFlush(code: number): void {
  exitingOurselves = true;
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  setTimeout(() => process.exit(code), FLUSH_MS).unref();
  // The callback runs once everything written before has been handed over (or the stream failed).
  process.stdout.write("", done);
  process.stderr.write("", done);
}

async function start(): Promise<void> {
  // The built CLI runs from its bundle with a code cache (bundle-loader.ts); from source, run.ts loads directly.
  // So does --help, which needs only a few small modules: compiling them costs less than reading the whole bundle.
  const help = argv.includes("--help") || argv.includes("-h");
  const bundled = help ? undefined : (await import("./bundle-loader.js")).loadBundledCli();
  const { main } = bundled ?? (await import("./run.js"));
  const code = await main(argv);
  exitAfterFlush(code);
}

if (argv.includes("--version") || argv.includes("-v")) {
  process.stdout.write(`${packageVersion()}\n`);
} else {
  start().catch((error: unknown) => {
    process.stderr.write(
      `knightcode: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    exitAfterFlush(1);
  });
}

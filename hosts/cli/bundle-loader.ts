/**
 * Starts the built CLI from its single-file bundle with a V8 code cache. Most of a start-up over Node's own is
 * spent parsing and compiling JavaScript; Node 20 keeps no compiled code between runs for ES modules, but a script
 * compiled through `vm.Script` can be given the code V8 produced for it last time. So `npm run build` also writes
 * the CLI (everything `run.ts` reaches, built-in extensions included) as one CommonJS bundle,
 * `dist/chunks/knightcode-cli-<content hash>.cjs`, and `knightcode` runs it from here:
 *
 * - the cache is `<agentDir>/cache/v8/<bundle name>-<node version>-<arch>.bin`; the bundle's content hash in the
 *   name means a rebuilt or upgraded CLI never reads code compiled from other source (V8 itself only checks the
 *   source's length). The file starts with a SHA-256 of the rest: V8 in a release build does not check its cache
 *   data and may crash on damaged bytes, so a file whose digest does not match is never handed to it. V8 rejects
 *   a cache from other V8 flags itself; either way the cache is written anew;
 * - it is written (to a temporary file, then renamed) when the process exits, if there was none, V8 rejected it, or
 *   it came from a run that opened no session (`--help`) while this one did, so it holds the functions a real run
 *   compiles;
 * - `KNIGHTCODE_CODE_CACHE=0` turns it off (read and write); the bundle still runs. `KNIGHTCODE_CLI_BUNDLE=0` runs
 *   the CLI from the ES module chunks instead, as `import("@knightcodeai/cli")` loads them (a way around a fault in
 *   the bundle, and how the tests watch which modules a run loads).
 *
 * In the bundle every module's text is present, but a module's code runs only when first required (esbuild keeps
 * the lazy `import()` boundaries as lazy initialisers), and V8 compiles a function only when it is called: a print
 * run still does not evaluate the RPC or interactive mode.
 *
 * The bundle reaches external packages (execa, the provider SDKs, the MCP SDK) with `import()`; a `vm.Script`
 * restored from a code cache on Node 20 loses its dynamic-import callback, so the build rewrites those calls to
 * `__kcImport()`, which this loader passes in. Running from source (no bundle built), `main.ts` imports `run.ts`.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { cliAgentDir } from "./agent-dir.js";

/** The bundle's file name, put in by the build (`scripts/build.ts`); undefined when running from source. */
declare const __KNIGHTCODE_CLI_BUNDLE__: string | undefined;

export interface BundledCli {
  main(argv: string[]): Promise<number>;
  /** Whether this run opened a session (its compiled code is then worth keeping). */
  openedSession(): boolean;
}

type CacheState = "off" | "hit" | "miss" | "rejected";

/** The bundle, compiled with its code cache when there is one; undefined when there is no bundle to load. */
export function loadBundledCli(env: NodeJS.ProcessEnv = process.env): BundledCli | undefined {
  const name = typeof __KNIGHTCODE_CLI_BUNDLE__ === "string" ? __KNIGHTCODE_CLI_BUNDLE__ : undefined;
  if (!name || env.KNIGHTCODE_CLI_BUNDLE === "0") return undefined;
  // This module is a chunk of dist/chunks itself, beside the bundle (or inlined in dist/hosts/cli/main.js).
  let file = "";
  let source: string | undefined;
  for (const candidate of [`./${name}`, `../../chunks/${name}`]) {
    file = fileURLToPath(new URL(candidate, import.meta.url));
    try {
      source = readFileSync(file, "utf8");
      break;
    } catch {
      // the next place
    }
  }
  if (source === undefined) return undefined;
  const enabled = env.KNIGHTCODE_CODE_CACHE !== "0";
  const dir = join(cliAgentDir(env), "cache", "v8");
  const stem = `${name.replace(/\.cjs$/, "")}-${process.version}-${process.arch}`;
  const sessionFile = join(dir, `${stem}.bin`);
  const partialFile = join(dir, `${stem}.partial.bin`);
  let cachedData: Buffer | undefined;
  let fromSession = false;
  let damaged = false;
  if (enabled) {
    const session = readCache(sessionFile);
    const found = session ?? readCache(partialFile);
    fromSession = session !== undefined;
    damaged = found === "damaged";
    cachedData = found === "damaged" ? undefined : found;
  }
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname, __kcImport) {"use strict";${source}\n})`,
    { filename: file, ...(cachedData ? { cachedData } : {}) },
  );
  const state: CacheState = !enabled
    ? "off"
    : damaged || script.cachedDataRejected
      ? "rejected"
      : cachedData
        ? "hit"
        : "miss";
  if (env.KNIGHTCODE_DEBUG_CODE_CACHE === "1") process.stderr.write(`knightcode: code cache ${state}\n`);
  const module = { exports: {} as BundledCli };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run(
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
    (specifier: string) => import(specifier),
  );
  const cli = module.exports;
  if (enabled) {
    process.once("exit", () => {
      const worth = state !== "hit" || (!fromSession && cli.openedSession());
      if (worth) writeCache(script, dir, cli.openedSession() ? sessionFile : partialFile, stem);
    });
  }
  return cli;
}

const DIGEST_BYTES = 32;

const digest = (data: Uint8Array) => createHash("sha256").update(data).digest();

/** The cache data in `path`, "damaged" when its digest does not match, undefined when there is no file. */
function readCache(path: string): Buffer | "damaged" | undefined {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return undefined;
  }
  const data = file.subarray(DIGEST_BYTES);
  return file.length > DIGEST_BYTES && digest(data).equals(file.subarray(0, DIGEST_BYTES)) ? data : "damaged";
}

/** Best effort: a cache that cannot be written costs the next start its speed, nothing else. */
function writeCache(script: vm.Script, dir: string, path: string, stem: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    const data = script.createCachedData();
    writeFileSync(temporary, Buffer.concat([digest(data), data]));
    renameSync(temporary, path);
    // Caches of earlier builds for this Node would only take space (other Node versions keep theirs), and a
    // session run's cache replaces the partial one.
    const ours = `-${process.version}-${process.arch}`;
    for (const entry of readdirSync(dir)) {
      const stale =
        (!entry.startsWith(stem) &&
          (entry.endsWith(`${ours}.bin`) || entry.endsWith(`${ours}.partial.bin`))) ||
        (path.endsWith(`${stem}.bin`) && entry === `${stem}.partial.bin`);
      if (stale) rmSync(join(dir, entry), { force: true });
    }
  } catch {
    // a read-only or full disk: the next run compiles again
  }
}

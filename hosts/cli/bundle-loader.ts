/**
 * Starts the built CLI from its single-file bundle with a V8 code cache. Most of a start-up over Node's own is
 * spent parsing and compiling JavaScript; Node 20 keeps no compiled code between runs for ES modules, but a script
 * compiled through `vm.Script` can be given the code V8 produced for it last time. So `npm run build` also writes
 * the CLI (everything `run.ts` reaches, built-in extensions included) as one CommonJS bundle,
 * `dist/chunks/knightcode-cli-<content hash>.cjs`, and `knightcode` runs it from here:
 *
 * - the cache is `<agentDir>/cache/v8/<bundle name>-<node version>-<arch>.bin` (`$KNIGHTCODE_CODE_CACHE_DIR/v8/`
 *   when that is set); the bundle's content hash in the
 *   name means a rebuilt or upgraded CLI never reads code compiled from other source (V8 itself only checks the
 *   source's length). The file starts with the length and a CRC-32 of the rest: V8 in a release build does not
 *   check its cache data and may crash on damaged bytes, so a file whose check does not match is never handed to
 *   it. (CRC-32 finds damage, which is all this check is for: whoever can write the cache can write the bundle
 *   too; node:zlib has it, and loads in less time than node:crypto, which a run otherwise does not need.) V8
 *   rejects a cache from other V8 flags itself; either way the cache is written anew;
 * - it is written (to a temporary file, then renamed) when the process exits, if there was none, V8 rejected it, or
 *   it came from a run that opened no session (`--help`) while this one did, so it holds the functions a real run
 *   compiles;
 * - `KNIGHTCODE_CODE_CACHE=0` turns it off (read and write); the bundle still runs. `KNIGHTCODE_CLI_BUNDLE=0` runs
 *   the CLI from the ES module chunks instead, as `import("@knightcodeai/cli")` loads them (a way around a fault in
 *   the bundle, and how the tests watch which modules a run loads).
 *
 * The bundle files are written as the function expression compiled here, in ASCII (bundle-format.ts): they are
 * read as Latin-1 and compiled as read.
 *
 * In the bundle every module's text is present, but a module's code runs only when first required (esbuild keeps
 * the lazy `import()` boundaries as lazy initialisers), and V8 compiles a function only when it is called: a print
 * run still does not evaluate the RPC or interactive mode.
 *
 * The bundle reaches external packages (execa, the provider SDKs, the MCP SDK) with `import()`; a `vm.Script`
 * restored from a code cache on Node 20 loses its dynamic-import callback, so the build rewrites those calls to
 * `__kcImport()`, which this loader passes in. Running from source (no bundle built), `main.ts` imports `run.ts`.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { crc32 } from "node:zlib";
import { cliCodeCacheDir } from "./agent-dir.js";

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
  // This module is part of dist/hosts/cli/main.js; the bundle is in dist/chunks.
  const file = fileURLToPath(new URL(`../../chunks/${name}`, import.meta.url));
  let found: { file: string; source: string };
  try {
    found = { file, source: readFileSync(file, "latin1") };
  } catch {
    return undefined;
  }
  const cache = new CodeCache(join(cliCodeCacheDir(env), "v8"), env.KNIGHTCODE_CODE_CACHE !== "0");
  const debug = env.KNIGHTCODE_DEBUG_CODE_CACHE === "1";
  const chunks = dirname(found.file);
  const nodeRequire = createRequire(found.file);
  // Node's own modules come through require(): their named exports are the same properties, and an import() would
  // start Node's ES module loader for them (which also reads every export of node:fs, loading its stream classes).
  const dynamicImport = (specifier: string): Promise<unknown> =>
    specifier.startsWith("node:") ? Promise.resolve(nodeRequire(specifier)) : import(specifier);
  // A side bundle (scripts/build.ts) is a part only some runs use; it gets the package's public modules from this
  // bundle (`shared`), anything else from Node.
  const loadSide = (sideName: string, shared: Record<string, unknown>): unknown => {
    const file = join(chunks, sideName);
    let source: string;
    try {
      source = readFileSync(file, "latin1");
    } catch (error) {
      throw new Error(
        `${file} is missing (${(error as NodeJS.ErrnoException).code}); reinstall, or run with KNIGHTCODE_CLI_BUNDLE=0`,
      );
    }
    const side = cache.compile(file, source, false);
    if (debug)
      process.stderr.write(
        `knightcode: code cache ${side.state} (${sideName.replace(/^knightcode-side-|-[0-9a-f]{16}\.cjs$/g, "")})\n`,
      );
    const sideRequire = (id: string) => (id in shared ? shared[id] : nodeRequire(id));
    return side.run(sideRequire, dynamicImport, undefined).exports;
  };
  const main = cache.compile(found.file, found.source, true);
  if (debug) process.stderr.write(`knightcode: code cache ${main.state}\n`);
  const cli = main.run(nodeRequire, dynamicImport, loadSide).exports as BundledCli;
  cache.whenSession(() => cli.openedSession());
  return cli;
}

interface CompiledBundle {
  state: CacheState;
  /** Runs the bundle's top level; returns its `module`. */
  run(
    require: (id: string) => unknown,
    dynamicImport: (specifier: string) => Promise<unknown>,
    loadSide: ((name: string, shared: Record<string, unknown>) => unknown) | undefined,
  ): { exports: unknown };
}

/**
 * The code caches of one run's bundles, written when the process exits. The main bundle keeps two: one from a run
 * that opened a session (`<stem>.bin`) and one from a run that did not (`<stem>.partial.bin`, `--help`-like runs
 * compile a fraction of what a session needs); a session's cache is preferred and replaces the partial one.
 */
class CodeCache {
  private openedSession: () => boolean = () => false;

  constructor(
    private readonly dir: string,
    private readonly enabled: boolean,
  ) {}

  whenSession(openedSession: () => boolean): void {
    this.openedSession = openedSession;
  }

  compile(file: string, source: string, main: boolean): CompiledBundle {
    const bundle = basename(file).replace(/\.cjs$/, "");
    const stem = `${bundle}-${process.version}-${process.arch}`;
    const sessionFile = join(this.dir, `${stem}.bin`);
    const partialFile = join(this.dir, `${stem}.partial.bin`);
    let cachedData: Buffer | undefined;
    let fromSession = false;
    let damaged = false;
    if (this.enabled) {
      const session = readCache(sessionFile);
      const found = session ?? (main ? readCache(partialFile) : undefined);
      fromSession = session !== undefined;
      damaged = found === "damaged";
      cachedData = found === "damaged" ? undefined : found;
    }
    // The file is the wrapped function expression already (bundle-format.ts).
    const script = new vm.Script(source, { filename: file, ...(cachedData ? { cachedData } : {}) });
    const state: CacheState = !this.enabled
      ? "off"
      : damaged || script.cachedDataRejected
        ? "rejected"
        : cachedData
          ? "hit"
          : "miss";
    if (this.enabled) {
      process.once("exit", () => {
        const session = !main || this.openedSession();
        if (state !== "hit" || (main && !fromSession && session)) {
          writeCache(script, this.dir, session ? sessionFile : partialFile, bundle, stem);
        }
      });
    }
    return {
      state,
      run: (require, dynamicImport, loadSide) => {
        const module = { exports: {} };
        const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
        wrapper(module.exports, require, module, file, dirname(file), dynamicImport, loadSide);
        return module;
      },
    };
  }
}

const DIGEST_BYTES = 8;

/** The data's length and CRC-32, as the cache file's first 8 bytes. */
function digest(data: Uint8Array): Buffer {
  const head = Buffer.alloc(DIGEST_BYTES);
  head.writeUInt32LE(data.length, 0);
  head.writeUInt32LE(crc32(data), 4);
  return head;
}

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
function writeCache(script: vm.Script, dir: string, path: string, bundle: string, stem: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    const data = script.createCachedData();
    writeFileSync(temporary, Buffer.concat([digest(data), data]));
    renameSync(temporary, path);
    // Caches of earlier builds of this bundle for this Node would only take space (other Node versions keep
    // theirs), and a session run's cache replaces the partial one.
    const family = bundle.replace(/-[0-9a-f]{16}$/, "");
    const ours = `-${process.version}-${process.arch}`;
    for (const entry of readdirSync(dir)) {
      const earlierBuild =
        entry.startsWith(`${family}-`) &&
        /^[0-9a-f]{16}-/.test(entry.slice(family.length + 1)) &&
        !entry.startsWith(stem) &&
        (entry.endsWith(`${ours}.bin`) || entry.endsWith(`${ours}.partial.bin`));
      const replaced = path.endsWith(`${stem}.bin`) && entry === `${stem}.partial.bin`;
      if (earlierBuild || replaced) rmSync(join(dir, entry), { force: true });
    }
  } catch {
    // a read-only or full disk: the next run compiles again
  }
}

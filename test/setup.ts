/**
 * Loaded before the test files by every mocha process (the one process of a serial run, each worker of a parallel
 * run).
 *
 * The package entry publishes the modules extension files import by name (`@knightcodeai/cli` and its subpaths), as
 * it does for any host. Tests that reach the SDK through an internal path rely on it.
 *
 * Each process keeps its temp files in a folder of its own: `TMPDIR` points there, so `os.tmpdir()` in the tests and
 * in the processes they start names it, and the temp folders of one worker never meet another's. After the tests of
 * a file (a parallel run runs the root hooks once per file; a serial run once at the end) the folder must be empty
 * again (but for the folders below that are meant to stay): whatever a test left behind fails the run, by name.
 */
import "@knightcodeai/cli";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { ANTHROPIC_NAMED_PROVIDERS } from "../builtin-extensions/providers/anthropic/catalogue.generated.js";
import { NAMED_PROVIDERS } from "../builtin-extensions/providers/openai-compatible/catalogue.generated.js";

// A worker's folder sits in the folder of the mocha process that started it (which removes it all when it exits,
// however the worker ended), with a short name: paths show in terminal screens the tests read.
const inherited = process.env.KC_MOCHA_TMPDIR !== undefined && process.env.KC_MOCHA_TMPDIR === tmpdir();
const own = mkdtempSync(join(tmpdir(), inherited ? "w" : "kc-mocha-"));
// The folder of the whole run: the mocha process's own (a worker's parent folder), removed when that process exits.
const runDir = inherited ? tmpdir() : own;
const shared = process.env.KC_MOCHA_SHARED_TMPDIR ?? tmpdir();
process.env.KC_MOCHA_SHARED_TMPDIR = shared;
process.env.KC_MOCHA_TMPDIR = own;
process.env.TMPDIR = own;
process.on("exit", () => rmSync(own, { recursive: true, force: true }));

// The named providers of builtin:openai-compatible (groq, openrouter, ...) become usable when their key's variable is
// set: a developer's HF_TOKEN or GROQ_API_KEY would otherwise change what "no model configured" and --list-models
// tests see. Tests that want one set it themselves.
for (const { apiKey } of [...NAMED_PROVIDERS, ...ANTHROPIC_NAMED_PROVIDERS]) delete process.env[apiKey];
// Cloudflare's base URLs name these; a test that wants them sets them.
delete process.env.CLOUDFLARE_ACCOUNT_ID;
delete process.env.CLOUDFLARE_GATEWAY_ID;

// tsx keeps its compile cache in `<tmpdir>/tsx-<uid>`; the processes the tests start with `--import tsx` share the
// usual one rather than filling a cold one per worker.
const tsxCache = `tsx-${userInfo().uid}`;
if (existsSync(join(shared, tsxCache))) symlinkSync(join(shared, tsxCache), join(own, tsxCache));

// The compiled-code caches (the command's V8 cache, compiled TypeScript extensions) are shared by every process of
// the run, as a user's are by every run: each test's fresh agent folder would otherwise compile the whole CLI bundle
// in each process it starts. Tests of the caches themselves set the variable to "" and use the agent folder's.
const codeCache = "kc-code-cache";
process.env.KNIGHTCODE_CODE_CACHE_DIR ??= join(runDir, codeCache);

// Session stores keep their identity locks in one folder per user in the temp dir, which stays. A lock whose process
// is gone is stale (the crash tests kill writers on purpose; the store takes such locks over); a lock held by a live
// process means a test left a session open.
const lockDir = `knightcode-session-locks-${userInfo().uid}`;
const heldLocks = (): string[] => {
  const dir = join(own, lockDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => {
    const pid = Number.parseInt(readFileSync(join(dir, name), "utf8"), 10);
    if (!Number.isInteger(pid) || pid <= 0) return true;
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") return true;
      rmSync(join(dir, name), { force: true });
      return false;
    }
  });
};

export const mochaHooks = {
  afterAll(this: Mocha.Context): void {
    const left = readdirSync(own).filter(
      (name) => name !== tsxCache && name !== lockDir && name !== codeCache,
    );
    const locks = heldLocks();
    if (left.length === 0 && locks.length === 0) return;
    for (const name of left) rmSync(join(own, name), { recursive: true, force: true });
    // A parallel run runs one file per root suite; a serial run all of them.
    const files = [...new Set(this.test?.parent?.suites.map((suite) => suite.file))];
    const what = [...left, ...locks.map((name) => `${lockDir}/${name} (held by a live process)`)];
    throw new Error(
      `temp files left behind in ${own} (after ${files.length === 1 ? files[0] : "the suite"}): ${what.join(", ")}`,
    );
  },
};

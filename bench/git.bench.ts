/**
 * The git services on real repositories in a temp dir (removed afterwards):
 * - a turn snapshot (`snapshotTurnStart`: temporary index, `git add -A`, two trees, two commits, one ref) on a
 *   committed 10,000-file repository with 20 files edited, and whether the user's index file changed (it must not:
 *   bytes and modification time are compared);
 * - `thread/diff/read` (`readChanges`, the `uncommitted` scope, context 3) on a repository with 1,000 changed
 *   files, with the size of the JSON result;
 * - the same read as a client sees it: the request to the built `knightcode app-server` on stdio and its
 *   response (built first when dist/ is missing), on that repository and on one with 3 changed files (where the
 *   server's own overhead shows), the first call (which loads the git engine) reported apart.
 * Median of 5 rounds each, after one warm-up, in wall time and in CPU time (this process and its git children).
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readChanges } from "../builtin-extensions/worktrees/git/changes.js";
import { snapshotTurnStart } from "../builtin-extensions/worktrees/git/turns.js";
import { spawnAppServer } from "../hosts/sdk/app-server-client.js";

const ROUNDS = 5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "Bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
};

function git(cwd: string, args: string[]): void {
  execFileSync("git", args, { cwd, env: ENV, stdio: "ignore" });
}

/** A repository of `count` small files in folders of 100, committed. */
function makeRepo(dir: string, count: number): void {
  mkdirSync(dir, { recursive: true });
  git(dir, ["init", "-q", "-b", "main"]);
  for (let i = 0; i < count; i++) {
    const folder = join(dir, `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(folder);
    writeFileSync(join(folder, `f${i}.txt`), `file ${i}\nline two\nline three\nline four\nline five\n`);
  }
  // Files older than the index, as in a checkout in use (a file as new as the index is hashed again on each read).
  const hourAgo = Date.now() / 1000 - 3600;
  for (let i = 0; i < count; i++)
    utimesSync(join(dir, `d${Math.floor(i / 100)}`, `f${i}.txt`), hourAgo, hourAgo);
  git(dir, ["add", "-A"]);
  git(dir, ["commit", "-q", "-m", "files"]);
}

function edit(dir: string, count: number): void {
  for (let i = 0; i < count; i++) {
    writeFileSync(
      join(dir, `d${Math.floor(i / 100)}`, `f${i}.txt`),
      `file ${i}\nline 2 changed\nline three\nline four\nline five\n`,
    );
  }
}

/**
 * CPU time in ms used so far by this process and its finished children (Linux: /proc/self/stat's cutime and
 * cstime, in clock ticks of 10 ms). On a busy machine wall time mostly measures waiting for a core; CPU time
 * shows the work itself.
 */
function cpuMs(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? [];
    children = (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    // Not Linux: children's time is not counted.
  }
  return (own.user + own.system) / 1000 + children;
}

async function timed(
  fn: () => Promise<unknown>,
): Promise<{ ms: number; cpu: number; last: unknown; firstMs: number }> {
  const first = performance.now();
  await fn();
  const firstMs = performance.now() - first;
  const times: number[] = [];
  const cpus: number[] = [];
  let last: unknown;
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    const cpu = cpuMs();
    last = await fn();
    times.push(performance.now() - start);
    cpus.push(cpuMs() - cpu);
  }
  return { ms: median(times), cpu: median(cpus), last, firstMs };
}

/** `thread/diff/read` through `knightcode app-server`: the round trip a client waits for. */
async function protocolDiffRead(dir: string, repos: { repo: string; label: string }[]): Promise<void> {
  const home = fileURLToPath(new URL("..", import.meta.url));
  const cli = join(home, "dist", "hosts", "cli", "main.js");
  if (!existsSync(cli)) execFileSync("npx", ["tsx", "scripts/build.ts"], { cwd: home, stdio: "inherit" });
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  // A model is configured (a thread needs one) but never called.
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        local: {
          api: "openai-completions",
          baseUrl: "http://127.0.0.1:9/v1",
          apiKey: "BENCH_KEY",
          models: [{ id: "m", contextWindow: 32000, maxTokens: 1024 }],
        },
      },
    }),
  );
  writeFileSync(
    join(agentDir, "settings.json"),
    JSON.stringify({ defaultProvider: "local", defaultModel: "m" }),
  );
  const server = spawnAppServer({
    command: process.execPath,
    args: [cli, "app-server"],
    cwd: dir,
    env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir, BENCH_KEY: "k" },
    timeoutMs: 120_000,
  });
  try {
    await server.client.initialize();
    for (const { repo, label } of repos) {
      const { thread } = await server.client.request("thread/start", { cwd: repo });
      const read = await timed(() =>
        server.client.request("thread/diff/read", { threadId: thread.id, scope: "uncommitted", context: 3 }),
      );
      const result = read.last as { files: unknown[] };
      console.log(
        `git thread/diff/read over the app-server, ${label}: ${read.ms.toFixed(1)} ms round trip ` +
          `(median of ${ROUNDS}; the server's first read ${read.firstMs.toFixed(1)} ms), ${result.files.length} files`,
      );
    }
  } finally {
    await server.stop(5_000);
  }
}

export async function gitBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "kc-bench-git-"));
  try {
    const big = join(root, "big");
    makeRepo(big, 10_000);
    edit(big, 20);
    const indexFile = join(big, ".git", "index");
    const before = { bytes: readFileSync(indexFile), mtime: statSync(indexFile).mtimeMs };
    const snap = await timed(() => snapshotTurnStart(big, "bench"));
    const unchanged =
      readFileSync(indexFile).equals(before.bytes) && statSync(indexFile).mtimeMs === before.mtime;
    console.log(
      `git turn snapshot, 10,000 files (20 edited): ${snap.ms.toFixed(1)} ms wall, ${snap.cpu.toFixed(0)} ms CPU (medians of ${ROUNDS})`,
    );
    console.log(`git turn snapshot: user's index file unchanged: ${unchanged ? "yes" : "NO"}`);

    const changed = join(root, "changed");
    makeRepo(changed, 1_000);
    edit(changed, 1_000);
    const read = await timed(() => readChanges(changed, { scope: "uncommitted", context: 3 }));
    const result = read.last as Awaited<ReturnType<typeof readChanges>>;
    const bytes = Buffer.byteLength(JSON.stringify(result));
    console.log(
      `git thread/diff/read, 1,000 changed files: ${read.ms.toFixed(1)} ms wall, ${read.cpu.toFixed(0)} ms CPU ` +
        `(medians of ${ROUNDS}), ` +
        `${result.files.length} files, ${(bytes / 1024).toFixed(0)} KB of JSON`,
    );
    const small = join(root, "small");
    makeRepo(small, 3);
    edit(small, 3);
    await protocolDiffRead(root, [
      { repo: small, label: "3 changed files" },
      { repo: changed, label: "1,000 changed files" },
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The editor side of `npm run bench -- app-server`, as a client sees it (the built `knightcode app-server` on
 * stdio, the round trip of each request), on real repositories in a temp dir:
 * - `thread/diff/read` (uncommitted, context 3) and `thread/diff/revert` (one file, then the whole scope) on a
 *   repository with 3 and with 1,000 changed files; median of 5 rounds after one warm-up (the first read, which
 *   loads the git engine, is printed apart); target ≤ 100 ms on 3 files;
 * - `fuzzyFileSearch` over a repository of 100,000 files: the first call (which lists the files) and then the
 *   median of queries served from the kept list.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SpawnedAppServer } from "../hosts/sdk/app-server-client.js";

const ROUNDS = 5;
const SEARCH_FILES = 100_000;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "Bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
};

function git(cwd: string, args: string[], input?: string): string {
  return execFileSync("git", args, { cwd, env: ENV, encoding: "utf8", input, maxBuffer: 1 << 28 });
}

const pathOf = (i: number) => `d${Math.floor(i / 100)}/f${i}.txt`;

/** A committed repository of `count` small files in folders of 100. */
function makeRepo(dir: string, count: number): void {
  mkdirSync(dir, { recursive: true });
  git(dir, ["init", "-q", "-b", "main"]);
  for (let i = 0; i < count; i++) {
    if (i % 100 === 0) mkdirSync(join(dir, `d${Math.floor(i / 100)}`));
    writeFileSync(join(dir, pathOf(i)), `file ${i}\nline two\nline three\nline four\nline five\n`);
  }
  git(dir, ["add", "-A"]);
  git(dir, ["commit", "-q", "-m", "files"]);
}

function edit(dir: string, count: number, round: number): void {
  for (let i = 0; i < count; i++)
    writeFileSync(
      join(dir, pathOf(i)),
      `file ${i}\nline 2 changed in round ${round}\nline three\nline four\nline five\n`,
    );
}

/**
 * CPU time in ms the server process and its finished children (the git calls) used so far: /proc/<pid>/stat's
 * utime, stime, cutime and cstime, in ticks of 10 ms. On a busy machine the round trip mostly measures waiting for
 * a core; this is the work itself.
 */
function serverCpuMs(server: SpawnedAppServer): number {
  try {
    const fields = readFileSync(`/proc/${server.child.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return Number.NaN;
  }
}

async function timedMs(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** Diff read and revert round trips on a repository of `count` changed files. */
async function diffs(server: SpawnedAppServer, dir: string, count: number, label: string): Promise<void> {
  const { client } = server;
  const repo = join(dir, `repo-${count}`);
  makeRepo(repo, count);
  const { thread } = await client.request("thread/start", { cwd: repo });
  const threadId = thread.id;
  const read = () => client.request("thread/diff/read", { threadId, scope: "uncommitted", context: 3 });
  edit(repo, count, 0);
  const first = await timedMs(read);
  const reads: number[] = [];
  const fileReverts: number[] = [];
  const scopeReverts: number[] = [];
  let files = 0;
  let cpuStart = 0;
  for (let round = 1; round <= ROUNDS + 1; round++) {
    edit(repo, count, round);
    const start = performance.now();
    files = (await read()).files.length;
    const readMs = performance.now() - start;
    const fileMs = await timedMs(() => client.request("thread/diff/revert", { threadId, path: pathOf(0) }));
    const scopeMs = await timedMs(() => client.request("thread/diff/revert", { threadId }));
    // The first round warms up.
    if (round === 1) {
      cpuStart = serverCpuMs(server);
      continue;
    }
    reads.push(readMs);
    fileReverts.push(fileMs);
    scopeReverts.push(scopeMs);
  }
  const cpuPerRound = (serverCpuMs(server) - cpuStart) / ROUNDS;
  const left = (await read()).files.length;
  console.log(
    `app-server: thread/diff/read, ${label}: ${median(reads).toFixed(1)} ms round trip (median of ${ROUNDS}; the server's first read ${first.toFixed(1)} ms), ${files} files`,
  );
  console.log(
    `app-server: thread/diff/revert, ${label}: one file ${median(fileReverts).toFixed(1)} ms, the whole scope ${median(scopeReverts).toFixed(1)} ms (medians of ${ROUNDS}; ${left} files left changed after the last)`,
  );
  console.log(
    `app-server: CPU of the server and its git calls, ${label}: ${cpuPerRound.toFixed(0)} ms per read + file revert + scope revert (mean of ${ROUNDS} rounds, 10 ms ticks)`,
  );
}

/** A repository of 100,000 empty files, indexed without hashing each (one blob id for all). */
function makeSearchRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, ["init", "-q", "-b", "main"]);
  const blob = git(dir, ["hash-object", "-w", "--stdin"], "").trim();
  const words = ["api", "server", "client", "button", "table", "model", "view", "store", "util", "test"];
  const lines: string[] = [];
  for (let i = 0; i < SEARCH_FILES; i++) {
    const folder = `src/${words[Math.floor(i / 1000) % 10]}/${words[Math.floor(i / 100) % 10]}/m${Math.floor(i / 100)}`;
    if (i % 100 === 0) mkdirSync(join(dir, folder), { recursive: true });
    const path = `${folder}/${words[Math.floor(i / 7) % 10]}_${i}.ts`;
    writeFileSync(join(dir, path), "");
    lines.push(`100644 ${blob}\t${path}`);
  }
  git(dir, ["update-index", "--add", "--index-info"], `${lines.join("\n")}\n`);
}

async function search(server: SpawnedAppServer, dir: string): Promise<void> {
  const { client } = server;
  const repo = join(dir, "search");
  makeSearchRepo(repo);
  const { thread } = await client.request("thread/start", { cwd: repo });
  let found = 0;
  const first = await timedMs(async () => {
    found = (await client.request("fuzzyFileSearch", { threadId: thread.id, query: "btnview" })).files.length;
  });
  const queries = ["srvmod", "tableutil_9", "apiclient", "storetest_4242", "vw"];
  const times: number[] = [];
  for (const query of queries)
    times.push(await timedMs(() => client.request("fuzzyFileSearch", { threadId: thread.id, query })));
  console.log(
    `app-server: fuzzyFileSearch over ${SEARCH_FILES.toLocaleString("en")} files: first call (lists them) ${first.toFixed(0)} ms (${found} results), then median ${median(times).toFixed(1)} ms per query over ${queries.length} queries`,
  );
}

export async function editorBench(server: SpawnedAppServer, dir: string): Promise<void> {
  await server.client.initialize("bench", "1");
  await diffs(server, dir, 3, "3 changed files");
  await diffs(server, dir, 1_000, "1,000 changed files");
  await search(server, dir);
}

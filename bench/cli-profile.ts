/**
 * Where the time of the two-turn JSON run (the `cli` bench's local-server row) goes, to find what a run loads or
 * does that it does not need. Needs `npm run build` first. `npx tsx bench/cli-profile.ts [options]`:
 *
 * - phases (always): median wall time of `node -e ""` and of the run, split by when the local server saw the
 *   run's two requests: start-up to the first request, first to second (the tool call and the next request),
 *   second request to exit (the answer, the shutdown, the code cache), and the median peak RSS;
 * - `--modules`: Node's built-in modules the run loads beyond the floor (`process.moduleLoadList`, written at exit
 *   by a `--require` hook), and the bundle's modules whose initialiser ran (V8 coverage of the CLI bundle; each
 *   module's initialiser is a function named after its source file);
 * - `--cpu-prof`: self time by script and the functions with the most self time, summed over the rounds' CPU
 *   profiles (`node --cpu-prof`);
 * - `--rounds N` (default 9), `--top N` (default 30).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_RUN, startChatServer, writeLocalRunFixture } from "./cli-fixture.js";

const bin = fileURLToPath(new URL("../dist/hosts/cli/main.js", import.meta.url));
const flags = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = flags.indexOf(name);
  return at >= 0 ? Number(flags[at + 1]) : fallback;
};
const ROUNDS = option("--rounds", 9);
const TOP = option("--top", 30);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Run {
  ms: number;
  mb?: number;
  /** ms from the start to each request the server saw. */
  requests: number[];
}

function run(
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  takeArrivals: () => number[] = () => [],
): Promise<Run> {
  return new Promise((resolve, reject) => {
    takeArrivals();
    const timed = existsSync("/usr/bin/time");
    const started = performance.now();
    const child = spawn(timed ? "/usr/bin/time" : argv[0]!, timed ? ["-f", "%M", ...argv] : argv.slice(1), {
      env,
      cwd,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      if (code !== 0) return reject(new Error(`${argv.join(" ")} failed (${code}): ${stderr}`));
      const kb = timed ? Number(stderr.trim().split("\n").at(-1)) : Number.NaN;
      const requests = takeArrivals().map((at) => at - started);
      resolve({ ms, requests, ...(Number.isFinite(kb) ? { mb: kb / 1024 } : {}) });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "kc-cli-profile-"));
const server = await startChatServer();
try {
  const agentDir = writeLocalRunFixture(dir, server.url);
  const { NODE_EXTRA_CA_CERTS: _certs, ...inherited } = process.env;
  const env: NodeJS.ProcessEnv = { ...inherited, KNIGHTCODE_AGENT_DIR: agentDir };
  const command = [process.execPath, bin, ...LOCAL_RUN];
  // The first run writes the code cache; every measured run has it.
  await run(command, env, dir);

  const floor: Run[] = [];
  const runs: Run[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    floor.push(await run([process.execPath, "-e", ""], env, dir));
    runs.push(await run(command, env, dir, server.takeArrivals));
  }
  const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;
  const floorMs = median(floor.map((r) => r.ms));
  const totalMs = median(runs.map((r) => r.ms));
  const first = median(runs.map((r) => r.requests[0] ?? Number.NaN));
  const second = median(runs.map((r) => r.requests[1] ?? Number.NaN));
  const mbs = runs.map((r) => r.mb).filter((m): m is number => m !== undefined);
  console.log(`2-turn JSON run, local server (median of ${ROUNDS})`);
  console.log(`  node -e "" (the floor)            ${ms(floorMs)}`);
  console.log(
    `  the run                           ${ms(totalMs)}  (${(totalMs / floorMs).toFixed(2)}x the floor)`,
  );
  console.log(`    start to first request          ${ms(first)}`);
  console.log(`    first to second request         ${ms(second - first)}`);
  console.log(`    second request to exit          ${ms(totalMs - second)}`);
  if (mbs.length) console.log(`  peak RSS                          ${median(mbs).toFixed(1).padStart(7)} MB`);

  if (flags.includes("--modules")) {
    const hook = join(dir, "load-list.cjs");
    writeFileSync(
      hook,
      `process.on("exit", () => require("node:fs").writeFileSync(process.env.KC_LOAD_LIST, process.moduleLoadList.join("\\n")));\n`,
    );
    const loaded = async (argv: string[]) => {
      const list = join(dir, "load-list.txt");
      await run([argv[0]!, "--require", hook, ...argv.slice(1)], { ...env, KC_LOAD_LIST: list }, dir);
      return readFileSync(list, "utf8").split("\n");
    };
    const base = new Set(await loaded([process.execPath, "-e", ""]));
    const extra = (await loaded(command)).filter((m) => !base.has(m) && m.startsWith("NativeModule "));
    console.log(`\nNode built-in modules beyond the floor (${extra.length}):`);
    console.log(`  ${extra.map((m) => m.slice("NativeModule ".length)).join(" ")}`);

    const coverage = join(dir, "coverage");
    await run(command, { ...env, NODE_V8_COVERAGE: coverage }, dir);
    const modules = new Set<string>();
    for (const file of readdirSync(coverage)) {
      const { result } = JSON.parse(readFileSync(join(coverage, file), "utf8")) as {
        result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
      };
      for (const script of result.filter((s) => /knightcode-(cli|side)-/.test(s.url))) {
        for (const fn of script.functions) {
          if (/\.(ts|js|mjs|cjs)$/.test(fn.functionName) && fn.ranges[0]!.count > 0)
            modules.add(fn.functionName);
        }
      }
    }
    const byFolder = new Map<string, string[]>();
    for (const module of [...modules].sort()) {
      const folder = module.startsWith("node_modules/")
        ? module
            .split("/")
            .slice(0, module.split("/")[1]!.startsWith("@") ? 3 : 2)
            .join("/")
        : module.split("/").slice(0, 2).join("/");
      byFolder.set(folder, [...(byFolder.get(folder) ?? []), module]);
    }
    console.log(`\nBundle modules initialised (${modules.size}):`);
    for (const [folder, list] of [...byFolder].sort((a, b) => b[1].length - a[1].length)) {
      console.log(
        `  ${String(list.length).padStart(3)} ${folder}: ${list.map((m) => m.split("/").at(-1)).join(" ")}`,
      );
    }
  }

  if (flags.includes("--cpu-prof")) {
    const profiles = join(dir, "profiles");
    for (let i = 0; i < ROUNDS; i++) {
      await run([process.execPath, "--cpu-prof", "--cpu-prof-dir", profiles, bin, ...LOCAL_RUN], env, dir);
    }
    const byScript = new Map<string, number>();
    const byFunction = new Map<string, number>();
    let total = 0;
    for (const file of readdirSync(profiles)) {
      const profile = JSON.parse(readFileSync(join(profiles, file), "utf8")) as {
        nodes: {
          id: number;
          callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
        }[];
        samples: number[];
        timeDeltas: number[];
      };
      const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
      profile.samples.forEach((id, i) => {
        const us = profile.timeDeltas[i] ?? 0;
        const frame = nodes.get(id)!;
        const script = frame.url
          ? frame.url.startsWith("node:") || !frame.url.includes("/")
            ? "(Node's own modules)"
            : frame.url.split("/").at(-1)!
          : frame.functionName;
        const name = `${frame.functionName || "(anonymous)"} ${script}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`;
        byScript.set(script, (byScript.get(script) ?? 0) + us);
        byFunction.set(name, (byFunction.get(name) ?? 0) + us);
        total += us;
      });
    }
    const perRun = (us: number) => `${(us / 1000 / ROUNDS).toFixed(1).padStart(7)} ms`;
    console.log(`\nCPU profile, self time per run (mean of ${ROUNDS}; ${perRun(total).trim()} sampled)`);
    for (const [script, us] of [...byScript].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
      console.log(`  ${perRun(us)}  ${script}`);
    }
    console.log("Functions:");
    for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
      console.log(`  ${perRun(us)}  ${name}`);
    }
  }
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

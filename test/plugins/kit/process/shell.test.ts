/** The shell engine against real processes: exit codes, merged output, limits, spill file, group kills. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  keepTail,
  resolveShell,
  runShellCommand,
  SHELL_MAX_BYTES,
  SHELL_MAX_LINES,
  type ShellResult,
  START_GATE,
} from "../../../../plugins/kit/process/shell.js";
import { alive, gone, pidWritten } from "../../../helpers/processes.js";

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

describe("shell engine: a command starts only once its group is registered", () => {
  // The engine writes the start line after registering the command's process group with the watchdog; an agent
  // killed before that leaves a command that never runs, where it used to leave one that outlived it.
  for (const shell of ["/bin/sh", "/bin/bash"].filter((s) => existsSync(s))) {
    it(`${shell}: without the start line the command does not run; with it, it runs with /dev/null as stdin`, () => {
      const command = `${START_GATE}echo ran; readlink /proc/self/fd/0`;
      const closed = spawnSync(shell, ["-c", command], { input: "", encoding: "utf8" });
      expect(closed.stdout).to.equal("");
      expect(closed.status).to.equal(129);
      const started = spawnSync(shell, ["-c", command], {
        input: "\nNOT FOR THE COMMAND\n",
        encoding: "utf8",
      });
      expect(started.status).to.equal(0);
      expect(started.stdout).to.equal("ran\n/dev/null\n");
    });
  }
});

describe("shell engine (runShellCommand)", () => {
  let dir: string;
  const spilled: string[] = [];
  const pids: number[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-shell-"));
  });
  afterEach(() => {
    for (const pid of pids.splice(0)) killQuietly(pid);
    for (const path of spilled.splice(0)) rmSync(path, { force: true });
    rmSync(dir, { recursive: true, force: true });
  });
  const run = async (command: string, options: Partial<Parameters<typeof runShellCommand>[1]> = {}) => {
    const result = await runShellCommand(command, { cwd: dir, ...options });
    if (result.fullOutputPath) spilled.push(result.fullOutputPath);
    return result;
  };
  const readPid = () => {
    const pid = Number(readFileSync(join(dir, "pid"), "utf8").trim());
    // Never 0 or NaN: process.kill(0) would signal this test's own process group.
    expect(Number.isInteger(pid) && pid > 1, `pid file holds ${pid}`).to.equal(true);
    pids.push(pid);
    return pid;
  };

  it("returns the exit code, success or failure", async () => {
    const ok = await run("echo hi");
    expect(ok).to.include({ exitCode: 0, timedOut: false, aborted: false, truncated: false, output: "hi\n" });
    expect(ok.totalLines).to.equal(1);
    expect(ok.totalBytes).to.equal(3);
    expect(ok.fullOutputPath).to.equal(undefined);
    expect((await run("exit 3")).exitCode).to.equal(3);
    expect((await run("false")).exitCode).to.equal(1);
  });

  it("merges stderr into the output in arrival order and streams every chunk", async () => {
    const chunks: string[] = [];
    const result = await run("echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three", {
      onData: (c) => chunks.push(c),
    });
    expect(result.output).to.equal("one\ntwo\nthree\n");
    expect(chunks.join("")).to.equal("one\ntwo\nthree\n");
    expect(chunks.length).to.be.at.least(3);
  });

  it("runs in the given cwd, with the given env, through -c of a POSIX shell", async () => {
    const result = await run('pwd; echo "$KC_TEST_VAR"', { env: { KC_TEST_VAR: "from-env" } });
    expect(result.output).to.equal(`${dir}\nfrom-env\n`);
    expect(resolveShell({ SHELL: "/usr/bin/fish" })).to.equal("/bin/bash");
    expect(resolveShell({ SHELL: "/bin/sh" })).to.equal("/bin/sh");
    expect(resolveShell({})).to.equal("/bin/bash");
    const sh = await run("echo $0", { shell: "/bin/sh" });
    expect(sh.output).to.equal("/bin/sh\n");
  });

  it("rejects for a missing working folder or shell, and does not run an already aborted command", async () => {
    let error: unknown;
    try {
      await runShellCommand("echo hi", { cwd: join(dir, "missing") });
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/Working directory does not exist/);
    let spawnError: unknown;
    try {
      await runShellCommand("echo hi", { cwd: dir, shell: join(dir, "no-such-shell") });
    } catch (e) {
      spawnError = e;
    }
    expect(String(spawnError)).to.match(/ENOENT/);
    const controller = new AbortController();
    controller.abort();
    const result = await run("touch ran", { signal: controller.signal });
    expect(result).to.include({ aborted: true, exitCode: null });
    expect(existsSync(join(dir, "ran"))).to.equal(false);
  });

  it("keeps a bounded tail of a 10 MB output and writes all of it to a file, in bounded time and memory", async () => {
    const started = Date.now();
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    let chunks = 0;
    const result = await run("head -c 10485760 /dev/zero | tr '\\0' 'a' | fold -w 100", {
      onData: () => {
        chunks++;
        if (chunks % 16 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
      },
    });
    const elapsed = Date.now() - started;
    expect(result.exitCode).to.equal(0);
    expect(result.truncated).to.equal(true);
    expect(result.totalBytes).to.equal(10485760 + 104857);
    expect(result.totalLines).to.equal(104858);
    expect(Buffer.byteLength(result.output)).to.be.at.most(SHELL_MAX_BYTES);
    expect(result.output.split("\n").length).to.be.at.most(SHELL_MAX_LINES);
    expect(result.output.endsWith("a".repeat(60))).to.equal(true);
    expect(result.fullOutputPath).to.match(/knightcode-bash-[0-9a-f]+\.log$/);
    expect(result.fullOutputPath!.startsWith(tmpdir())).to.equal(true);
    expect(statSync(result.fullOutputPath!).size).to.equal(result.totalBytes);
    expect(statSync(result.fullOutputPath!).mode & 0o777).to.equal(0o600);
    expect(elapsed).to.be.below(15_000);
    expect(peak - baseline).to.be.below(64 * 1024 * 1024);
  });

  it("counts lines against the line limit and spills when there are more", async () => {
    const exact = await run(`seq 1 ${SHELL_MAX_LINES}`);
    expect(exact).to.include({ truncated: false, totalLines: SHELL_MAX_LINES });
    expect(exact.fullOutputPath).to.equal(undefined);
    const over = await run(`seq 1 ${SHELL_MAX_LINES + 1}`);
    expect(over).to.include({ truncated: true, totalLines: SHELL_MAX_LINES + 1 });
    expect(over.output.split("\n")[0]).to.equal("2");
    expect(readFileSync(over.fullOutputPath!, "utf8").split("\n")[0]).to.equal("1");
  });

  it("kills the whole process group on timeout, background jobs included", async () => {
    const started = Date.now();
    const result = await run(`sleep 30 & echo $! > ${dir}/pid; echo started; sleep 30`, { timeoutMs: 1_000 });
    expect(Date.now() - started).to.be.below(5_000);
    expect(result).to.include({ timedOut: true, aborted: false, exitCode: null, output: "started\n" });
    expect(result.signal).to.equal("SIGTERM");
    expect(await gone(readPid())).to.equal(true);
  });

  it("kills the whole process group on abort, subshells included", async () => {
    const controller = new AbortController();
    const pending = run(`(sleep 30; echo never) & echo $! > ${dir}/pid; sleep 30`, {
      signal: controller.signal,
      onData: () => {},
    });
    await pidWritten(dir);
    controller.abort();
    const result = await pending;
    expect(result).to.include({ aborted: true, timedOut: false, exitCode: null });
    expect(await gone(readPid())).to.equal(true);
  });

  it("escalates to SIGKILL when the group ignores SIGTERM", async () => {
    const started = Date.now();
    const result = await run(`trap '' TERM; sleep 30 & echo $! > ${dir}/pid; sleep 30`, { timeoutMs: 300 });
    expect(result.timedOut).to.equal(true);
    expect(Date.now() - started).to.be.below(6_000);
    expect(await gone(readPid())).to.equal(true);
  });

  it("returns once the shell exits even when a background job holds the output open", async () => {
    const started = Date.now();
    const result: ShellResult = await run(`sleep 5 & echo $! > ${dir}/pid; echo done`);
    expect(Date.now() - started).to.be.below(3_000);
    expect(result).to.include({ exitCode: 0, output: "done\n" });
    // Only timeout and abort kill the group: the job a command started on purpose keeps running.
    const pid = readPid();
    expect(alive(pid)).to.equal(true);
  });
});

describe("keepTail", () => {
  it("keeps whole lines from the end within both limits", () => {
    expect(keepTail("a\nb\nc\n", 2, 100)).to.deep.equal({ text: "b\nc\n", truncated: true, keptLines: 2 });
    expect(keepTail("a\nb\nc", 5, 100)).to.deep.equal({ text: "a\nb\nc", truncated: false, keptLines: 3 });
    expect(keepTail("aaaa\nbb\ncc", 5, 5)).to.deep.equal({ text: "bb\ncc", truncated: true, keptLines: 2 });
    expect(keepTail("", 5, 5)).to.deep.equal({ text: "", truncated: false, keptLines: 0 });
  });

  it("cuts a single line longer than the byte limit to its end, on a character boundary", () => {
    const kept = keepTail(`${"é".repeat(10)}\n`, 5, 5);
    expect(kept.truncated).to.equal(true);
    expect(kept.text).to.equal("éé\n");
  });
});

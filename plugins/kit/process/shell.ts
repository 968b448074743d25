/**
 * The shell engine behind the `bash` tool and user commands (`!cmd`, RPC `bash`): runs a command through the
 * user's shell in its own process group, streams its merged output, keeps a bounded tail in memory and spills the
 * full output to a temp file once it outgrows the limits. Timeout and abort kill the whole group (SIGTERM, then
 * SIGKILL after 2 s), so nothing the command started in the background survives them. A job left in the background
 * by a command that ended normally keeps running while this process lives, and ends with it: on a normal exit and,
 * through the group watchdog, when this process is killed.
 */
import { accessSync, constants, existsSync, statSync, type WriteStream } from "node:fs";
import { basename } from "node:path";
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { createPrivateWriteStream, privateTempPath } from "../files/private-file.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES } from "../truncate.js";
import { unwatchGroup, watchGroup } from "./group-watchdog.js";

/** The core tools' output limits (plugins/kit/truncate.ts): the last 2,000 lines or 50 KB. */
export const SHELL_MAX_LINES = DEFAULT_MAX_LINES;
export const SHELL_MAX_BYTES = DEFAULT_MAX_BYTES;

/** How long a killed group gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2_000;
/** After the shell exits, how long its output may keep arriving (a background job may hold the pipe open). */
const DRAIN_GRACE_MS = 250;
const DRAIN_MAX_MS = 2_000;

export interface ShellOptions {
  cwd: string;
  signal?: AbortSignal;
  /** Kills the process group after this many milliseconds. */
  timeoutMs?: number;
  /** Every chunk of output (stdout and stderr, in arrival order), decoded as UTF-8. */
  onData?(chunk: string): void;
  /** Merged over `process.env`; a variable set to `undefined` is removed. */
  env?: Record<string, string | undefined>;
  /** The shell to run `-c` with; defaults to `$SHELL` when it is sh-like, else /bin/bash, else /bin/sh. */
  shell?: string;
  /** Runs the command somewhere else (a sandbox, a remote shell) instead of the local shell. */
  operations?: BashOperations;
}

export interface ShellResult extends ShellExit {
  /** The kept tail: at most the last 2,000 lines or 50 KB. */
  output: string;
  /** Whether `output` is less than everything the command printed. */
  truncated: boolean;
  totalBytes: number;
  totalLines: number;
  /** The complete output, when it was truncated (`<tmpdir>/knightcode-bash-<random>.log`). */
  fullOutputPath?: string;
}

const SH_LIKE = /^(sh|bash|zsh|dash|ksh|mksh|ash|yash|posh)$/;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** `$SHELL` when it is a POSIX-like shell that exists, else /bin/bash, else /bin/sh. */
export function resolveShell(env: Record<string, string | undefined> = process.env): string {
  const user = env.SHELL;
  if (user && SH_LIKE.test(basename(user)) && isExecutable(user)) return user;
  if (isExecutable("/bin/bash")) return "/bin/bash";
  return "/bin/sh";
}

/**
 * Keeps the last whole lines of `text` that fit both limits. A last line longer than the byte limit on its own is
 * cut to its final `maxBytes` bytes (on a character boundary), so something is always shown.
 */
export function keepTail(
  text: string,
  maxLines = SHELL_MAX_LINES,
  maxBytes = SHELL_MAX_BYTES,
): { text: string; truncated: boolean; keptLines: number } {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  const trailing = body.length < text.length ? "\n" : "";
  if (body === "") return { text, truncated: false, keptLines: 0 };
  let end = body.length;
  let size = 0;
  let kept = 0;
  let start = body.length;
  while (end >= 0 && kept < maxLines) {
    const nl = body.lastIndexOf("\n", end - 1);
    const line = body.slice(nl + 1, end);
    const add = Buffer.byteLength(line, "utf8") + (kept > 0 ? 1 : 0);
    if (size + add > maxBytes) {
      if (kept === 0) {
        const cut = lastBytes(line, maxBytes);
        return { text: cut + trailing, truncated: true, keptLines: 1 };
      }
      break;
    }
    size += add;
    kept++;
    start = nl + 1;
    if (nl < 0) return { text, truncated: false, keptLines: kept };
    end = nl;
  }
  return { text: body.slice(start) + trailing, truncated: start > 0, keptLines: kept };
}

/** The last `maxBytes` bytes of `s`, starting on a character boundary. */
function lastBytes(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= maxBytes) return s;
  let from = buf.length - maxBytes;
  while (from < buf.length && (buf[from]! & 0xc0) === 0x80) from++;
  return buf.subarray(from).toString("utf8");
}

/**
 * Collects a command's output with bounded memory: a rolling tail of text (enough for the limits), counts of
 * bytes and lines, and, once the output outgrows the limits, the full raw bytes streamed to a temp file.
 */
export class OutputCollector {
  totalBytes = 0;
  private newlines = 0;
  private endsWithNewline = true;
  private tail = "";
  /** Whether text was dropped from the front of `tail`. */
  private dropped = false;
  /** Raw bytes kept until the output first outgrows the limits; then they go to the file. */
  private pending: Buffer[] = [];
  private file: WriteStream | undefined;
  private filePath: string | undefined;
  private fileError = false;

  constructor(
    private readonly maxLines = SHELL_MAX_LINES,
    private readonly maxBytes = SHELL_MAX_BYTES,
  ) {}

  /**
   * Adds one chunk: `raw` is what goes to the file (its bytes), `text` its decoded form. Returns false when the
   * file asks the producer to wait for `drain()`.
   */
  push(raw: Buffer, text: string): boolean {
    if (raw.length === 0) return true;
    this.totalBytes += raw.length;
    for (let i = raw.indexOf(10); i !== -1; i = raw.indexOf(10, i + 1)) this.newlines++;
    this.endsWithNewline = raw[raw.length - 1] === 10;
    this.tail += text;
    // Code units never outnumber bytes, so the last maxBytes + 1 code units cover every line the limits keep.
    const keep = this.maxBytes + 1;
    if (this.tail.length > 2 * keep) {
      this.tail = this.tail.slice(this.tail.length - keep);
      this.dropped = true;
    }
    if (this.file) return this.write(raw);
    this.pending.push(raw);
    if (this.totalBytes > this.maxBytes || this.newlines > this.maxLines) {
      this.openFile();
      const chunks = this.pending;
      this.pending = [];
      let ok = true;
      for (const chunk of chunks) ok = this.write(chunk) && ok;
      return ok;
    }
    return true;
  }

  /** Text without new bytes (a decoder's flushed remainder). */
  pushText(text: string): void {
    this.tail += text;
  }

  /** Resolves when the file can take more (at once when there is no file or it is not full). */
  drain(): Promise<void> {
    const file = this.file;
    if (!file?.writableNeedDrain || this.fileError) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        file.off("drain", done);
        file.off("error", done);
        file.off("close", done);
        resolve();
      };
      file.on("drain", done);
      file.on("error", done);
      file.on("close", done);
    });
  }

  get totalLines(): number {
    return this.newlines + (this.totalBytes > 0 && !this.endsWithNewline ? 1 : 0);
  }

  /** The tail so far, within the limits (for progress updates). */
  snapshot(): { text: string; truncated: boolean } {
    const kept = keepTail(this.tail, this.maxLines, this.maxBytes);
    return { text: kept.text, truncated: kept.truncated || this.dropped };
  }

  /** Closes the file (writing it if the output was truncated but never reached it) and returns the result. */
  async finish(): Promise<{
    output: string;
    truncated: boolean;
    totalBytes: number;
    totalLines: number;
    fullOutputPath?: string;
  }> {
    const { text, truncated } = this.snapshot();
    if (truncated && !this.file) {
      this.openFile();
      for (const chunk of this.pending) this.write(chunk);
    }
    this.pending = [];
    const file = this.file;
    if (file) {
      await new Promise<void>((resolve) => {
        if (this.fileError || file.destroyed) return resolve();
        file.once("error", () => resolve());
        file.end(() => resolve());
      });
    }
    return {
      output: text,
      truncated,
      totalBytes: this.totalBytes,
      totalLines: this.totalLines,
      ...(this.filePath && !this.fileError ? { fullOutputPath: this.filePath } : {}),
    };
  }

  /** Drops the file (e.g. on a failure before anything was returned). */
  discard(): void {
    this.file?.destroy();
    this.pending = [];
  }

  private openFile(): void {
    this.filePath = privateTempPath("bash", "log");
    this.file = createPrivateWriteStream(this.filePath);
    this.file.on("error", () => {
      this.fileError = true;
    });
  }

  private write(chunk: Buffer): boolean {
    if (!this.file || this.fileError) return true;
    return this.file.write(chunk);
  }
}

// ---- process groups -------------------------------------------------------------------------------

/**
 * Groups of this process's commands that still have members: a command running, or a job it left in the
 * background. They end with this process: killed by the `exit` handler on a normal exit, and by the group watchdog
 * (group-watchdog.ts) when this process is killed outright.
 */
const liveGroups = new Set<number>();
/** Groups whose shell is still running (the sweeper leaves them to their command). */
const running = new Set<number>();
let exitHookInstalled = false;
/** Looks now and then for groups whose last member ended, so they are forgotten (their ids may be reused). */
let sweeper: NodeJS.Timeout | undefined;
const SWEEP_MS = 2_000;

function trackGroup(pid: number): void {
  liveGroups.add(pid);
  watchGroup(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const group of liveGroups) signalGroup(group, "SIGKILL");
  });
}

/** The command's shell has exited: its group is forgotten now if empty, else once its background jobs end. */
function settleGroup(pid: number): void {
  if (signalGroup(pid, 0)) {
    sweeper ??= setInterval(sweepGroups, SWEEP_MS).unref();
    return;
  }
  forgetGroup(pid);
}

function forgetGroup(pid: number): void {
  liveGroups.delete(pid);
  unwatchGroup(pid);
}

function sweepGroups(): void {
  for (const group of liveGroups) if (!running.has(group) && !signalGroup(group, 0)) forgetGroup(group);
  if ([...liveGroups].every((group) => running.has(group))) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the whole group, SIGKILL after the grace period to whatever is left. */
function killGroup(pid: number): void {
  signalGroup(pid, "SIGTERM");
  // The escalation keeps this process alive until it fires or the group is gone, whichever comes first.
  const escalate = setTimeout(() => {
    clearInterval(watch);
    if (signalGroup(pid, 0)) signalGroup(pid, "SIGKILL");
  }, KILL_GRACE_MS);
  const watch = setInterval(() => {
    if (!signalGroup(pid, 0)) {
      clearInterval(watch);
      clearTimeout(escalate);
    }
  }, 100);
  watch.unref();
}

// ---- the engine -----------------------------------------------------------------------------------

/** How one command ended. */
export interface ShellExit {
  /** `null` when the shell was killed by a signal. */
  exitCode: number | null;
  /** The signal that ended the shell, if one did. */
  signal?: string;
  timedOut: boolean;
  aborted: boolean;
}

export interface ExecShellOptions {
  cwd: string;
  signal?: AbortSignal;
  /** Kills the process group after this many milliseconds. */
  timeoutMs?: number;
  /**
   * Every chunk of raw output (stdout and stderr, in arrival order). Each chunk ends on a character boundary
   * (for UTF-8 output), so one decoder can read them all. A returned promise pauses that stream until it settles.
   */
  onData(chunk: Buffer): void | Promise<void>;
  /** The complete environment of the shell (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** The shell to run `-c` with; defaults to `$SHELL` when it is sh-like, else /bin/bash, else /bin/sh. */
  shell?: string;
}

/**
 * Put before every command: read the start line (exit quietly without it), then give the command /dev/null as its
 * stdin. On the command's own first line, so the line numbers in its error messages do not change.
 */
export const START_GATE = "IFS= read -r _ || exit 129; exec </dev/null; ";

/** Bytes at the end of `chunk` that start a UTF-8 character the chunk does not finish. */
function incompleteTail(chunk: Buffer): number {
  for (let back = 1; back <= Math.min(3, chunk.length); back++) {
    const byte = chunk[chunk.length - back]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needs > back ? back : 0;
  }
  return 0;
}

/**
 * Runs `command` with `<shell> -c` in `cwd`, in its own process group, and streams its raw output. Never rejects
 * for the command's own failure, only when the folder is missing or the shell cannot start.
 */
export async function execShellCommand(command: string, options: ExecShellOptions): Promise<ShellExit> {
  const { cwd, signal, timeoutMs, onData } = options;
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
    throw new Error(`Working directory does not exist: ${cwd}`);
  }
  if (signal?.aborted) return { exitCode: null, timedOut: false, aborted: true };
  const env = options.env ?? process.env;
  const shell = options.shell ?? resolveShell(env);

  // Loaded on first use: most sessions start without running a command.
  const { execa } = await import("execa");
  // The command waits for a line on its stdin before it starts, which this process writes once the group is
  // registered with the watchdog: a command that ran first could outlive an agent killed in between (seen under
  // load). Then its stdin is /dev/null again, as if ignored; without that line (this process died) it never runs.
  const child = execa(shell, ["-c", `${START_GATE}${command}`], {
    cwd,
    env,
    extendEnv: false,
    detached: true,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    buffer: false,
    reject: false,
    stripFinalNewline: false,
    cleanup: false,
  });
  // Everything we need comes from the subprocess's events; its promise is only kept from rejecting unhandled.
  void Promise.resolve(child).catch(() => undefined);
  const pid = child.pid;

  let timedOut = false;
  let aborted = false;
  let killed = false;
  const kill = () => {
    if (killed || pid === undefined) return;
    killed = true;
    killGroup(pid);
  };

  return await new Promise<ShellExit>((resolve, reject) => {
    if (pid !== undefined) {
      running.add(pid);
      trackGroup(pid);
    }
    child.stdin?.on("error", () => {
      // The shell ended before it read the line (it could not start): its exit is reported below.
    });
    child.stdin?.end("\n");
    const streams = [child.stdout, child.stderr].filter((s): s is Readable => s !== null && s !== undefined);
    let open = streams.length;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: unknown;
    let done = false;
    let drainTimer: NodeJS.Timeout | undefined;
    let drainDeadline: NodeJS.Timeout | undefined;

    const timer =
      timeoutMs !== undefined && timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            kill();
          }, timeoutMs)
        : undefined;
    const onAbort = () => {
      aborted = true;
      kill();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    // The signal may have fired while execa was loading or the child starting: a listener added now would miss it.
    if (signal?.aborted) onAbort();

    const deliver = (stream: Readable, chunk: Buffer) => {
      let waiting: Promise<void> | undefined;
      try {
        waiting = onData(chunk) || undefined;
      } catch {
        // A failing listener must not break the command.
      }
      if (waiting) {
        stream.pause();
        void waiting.then(
          () => stream.resume(),
          () => stream.resume(),
        );
      }
    };

    const finish = () => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      if (drainTimer) clearTimeout(drainTimer);
      if (drainDeadline) clearTimeout(drainDeadline);
      signal?.removeEventListener("abort", onAbort);
      for (const s of streams) if (!s.destroyed) s.destroy();
      if (pid !== undefined) {
        running.delete(pid);
        settleGroup(pid);
      }
      if (spawnError !== undefined && !exit) {
        reject(spawnError instanceof Error ? spawnError : new Error(String(spawnError)));
        return;
      }
      resolve({
        exitCode: exit?.code ?? null,
        ...(exit?.signal ? { signal: exit.signal } : {}),
        timedOut,
        aborted,
      });
    };
    const maybeFinish = () => {
      if (exit && open === 0) finish();
    };

    for (const stream of streams) {
      // An unfinished character waits for the rest of it, so chunks of the two streams never split one.
      let carry: Buffer | undefined;
      stream.on("data", (raw: Buffer) => {
        const data = carry ? Buffer.concat([carry, raw]) : raw;
        const cut = incompleteTail(data);
        carry = cut > 0 ? data.subarray(data.length - cut) : undefined;
        if (data.length > cut) deliver(stream, cut > 0 ? data.subarray(0, data.length - cut) : data);
        if (exit && drainTimer) drainTimer.refresh();
      });
      stream.once("close", () => {
        if (carry) deliver(stream, carry);
        carry = undefined;
        open--;
        maybeFinish();
      });
      stream.on("error", () => {
        // A destroyed pipe after the shell exited is expected; close follows.
      });
    }

    child.once("error", (error) => {
      spawnError = error;
      if (!exit) finish();
    });
    child.once("exit", (code, sig) => {
      exit = { code, signal: sig };
      // The command is over: a late timeout or abort must not kill what it left running on purpose.
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (killed) {
        // A member that ignored SIGTERM holds the pipe until the SIGKILL; one that left the group, forever.
        drainDeadline = setTimeout(finish, KILL_GRACE_MS + DRAIN_GRACE_MS);
      } else {
        // The shell is gone; a background job it left may still hold the pipe. Give the output a moment to
        // drain, then stop reading (the job keeps running: only timeout, abort and the end of this process kill the group).
        drainTimer = setTimeout(finish, DRAIN_GRACE_MS);
        drainDeadline = setTimeout(finish, DRAIN_MAX_MS);
      }
      maybeFinish();
    });
  });
}

// ---- pluggable execution (the bash tool's operations) ----------------------------------------------

/**
 * How a command runs, so a sandbox or a remote shell can take the place of the local one (pi's `BashOperations`).
 * `exec` streams the output to `onData` and resolves with the exit code (`null` when killed); it rejects with
 * `Error("aborted")` when `signal` aborts it and with `Error("timeout:<seconds>")` when `timeout` (seconds) passes.
 */
export interface BashOperations {
  exec(
    command: string,
    cwd: string,
    options: {
      /** A returned promise asks the producer to pause until it settles (the local shell does). */
      onData: (data: Buffer) => void | Promise<void>;
      signal?: AbortSignal;
      timeout?: number;
      env?: NodeJS.ProcessEnv;
    },
  ): Promise<{ exitCode: number | null }>;
}

/** The local shell as `BashOperations`: `execShellCommand` with pi's rejection contract. */
export function createLocalBashOperations(options: { shellPath?: string } = {}): BashOperations {
  return {
    async exec(command, cwd, { onData, signal, timeout, env }) {
      const exit = await execShellCommand(command, {
        cwd,
        onData,
        ...(signal ? { signal } : {}),
        ...(timeout !== undefined && timeout > 0 ? { timeoutMs: timeout * 1000 } : {}),
        ...(env ? { env } : {}),
        ...(options.shellPath ? { shell: options.shellPath } : {}),
      });
      if (exit.timedOut) throw new Error(`timeout:${timeout}`);
      if (exit.aborted) throw new Error("aborted");
      return { exitCode: exit.exitCode };
    },
  };
}

// ---- the collecting runner --------------------------------------------------------------------------

/**
 * Runs `command` and collects its output within the limits (the full output goes to a temp file when it outgrows
 * them). Given `operations`, the command runs through them instead of the local shell. Never rejects for the
 * command's own failure, only for a missing folder or a shell that cannot start.
 */
export async function runShellCommand(command: string, options: ShellOptions): Promise<ShellResult> {
  const { cwd, signal, timeoutMs, onData } = options;
  const collector = new OutputCollector();
  const decoder = new StringDecoder("utf8");
  const take = (raw: Buffer): void | Promise<void> => {
    const text = decoder.write(raw);
    const full = !collector.push(raw, text);
    if (text && onData) {
      try {
        onData(text);
      } catch {
        // A failing listener must not break the command.
      }
    }
    if (full) return collector.drain();
  };
  const env = options.env ? withoutUnset({ ...process.env, ...options.env }) : process.env;

  let exit: ShellExit;
  try {
    if (options.operations) {
      exit = await execThrough(options.operations, command, { cwd, env, take, signal, timeoutMs });
    } else {
      exit = await execShellCommand(command, {
        cwd,
        env,
        onData: take,
        ...(signal ? { signal } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        ...(options.shell ? { shell: options.shell } : {}),
      });
    }
  } catch (error) {
    collector.discard();
    throw error;
  }
  const rest = decoder.end();
  if (rest) {
    collector.pushText(rest);
    try {
      onData?.(rest);
    } catch {
      // ignored, as above
    }
  }
  return { ...exit, ...(await collector.finish()) };
}

/** Drops the variables set to `undefined`, so a caller can remove one of `process.env`. */
function withoutUnset(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));
}

/** Runs through pi-style operations, turning their `aborted` / `timeout:` rejections into a `ShellExit`. */
async function execThrough(
  operations: BashOperations,
  command: string,
  run: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    take: (raw: Buffer) => void | Promise<void>;
    signal: AbortSignal | undefined;
    timeoutMs: number | undefined;
  },
): Promise<ShellExit> {
  if (run.signal?.aborted) return { exitCode: null, timedOut: false, aborted: true };
  try {
    const { exitCode } = await operations.exec(command, run.cwd, {
      onData: (data) => run.take(Buffer.isBuffer(data) ? data : Buffer.from(data)),
      env: run.env,
      ...(run.signal ? { signal: run.signal } : {}),
      ...(run.timeoutMs !== undefined ? { timeout: run.timeoutMs / 1000 } : {}),
    });
    return { exitCode, timedOut: false, aborted: false };
  } catch (error) {
    const message = error instanceof Error ? error.message : "";
    if (message.startsWith("timeout:")) return { exitCode: null, timedOut: true, aborted: false };
    if (message === "aborted" || run.signal?.aborted)
      return { exitCode: null, timedOut: false, aborted: true };
    throw error;
  }
}

/**
 * One measurement of bench/session-resume.bench.ts, in a process of its own so its peak RSS is the measurement's
 * alone. `node --import tsx --conditions=knightcode-source bench/session-resume-child.ts <what> <cwd> <agentDir>
 * [file]` prints one JSON line: `{ms, cpuMs, rssMb, messages}` (cpuMs: user + system CPU time of the
 * measurement, which a busy machine inflates much less than wall time).
 * - `store`: `SessionManager.open(file)` + `buildContext()`.
 * - `sdk`: `createAgentSession({ session: { path: file } })`, as `--session <file>` does.
 * - `continue`: `createAgentSession({ session: { continue: true } })`, as `-c` does (a listing, then the open).
 * - `new`: `createAgentSession` with a new session: the start-up every resume stands on.
 * - `list`: `SessionManager.list({ cwd })`, the resume picker's listing.
 * - `read`: `thread/read` with its turns from a `knightcode app-server` (dist/) that has not loaded the thread; `ms`
 *   is the request's round trip, `rssMb` the server's peak RSS (VmHWM), `messages` the turns on the page.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { spawnAppServer } from "../hosts/sdk/app-server-client.js";
import { createAgentSession } from "../hosts/sdk/create-agent-session.js";
import { SessionManager } from "../plugins/session-store/session-manager.js";

const [what, cwd, agentDir, file] = process.argv.slice(2);
if (!what || !cwd || !agentDir) throw new Error("usage: session-resume-child <what> <cwd> <agentDir> [file]");

async function measure(): Promise<number> {
  switch (what) {
    case "store": {
      const session = SessionManager.open(file!);
      const count = session.buildContext().messages.length;
      session.close();
      return count;
    }
    case "sdk":
    case "continue":
    case "new": {
      const session = what === "sdk" ? { path: file! } : what === "continue" ? { continue: true } : {};
      const handle = await createAgentSession({ cwd, agentDir, session, warn: () => {} });
      const count = handle.getState().messageCount;
      await handle.dispose();
      return count;
    }
    case "list":
      return SessionManager.list({ cwd, agentDir }).length;
    case "read":
      return threadRead();
    default:
      throw new Error(`unknown measurement ${what}`);
  }
}

/** The server's own figures, for `read`. */
let server: { ms: number; rssMb: number } | undefined;

async function threadRead(): Promise<number> {
  const main = fileURLToPath(new URL("../dist/hosts/cli/main.js", import.meta.url));
  const app = spawnAppServer({
    command: process.execPath,
    args: [main, "app-server"],
    cwd: cwd!,
    env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir! },
    timeoutMs: 120_000,
  });
  try {
    await app.client.initialize();
    const threadId = /_([0-9a-f-]{36})\.jsonl$/.exec(file!)![1]!;
    const sent = performance.now();
    const read = await app.client.request("thread/read", { threadId, includeTurns: true });
    const ms = performance.now() - sent;
    const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${app.child.pid}/status`, "utf8"))!;
    server = { ms, rssMb: Number(peak[1]) / 1024 };
    return read.turns!.length;
  } finally {
    await app.stop();
  }
}

const started = performance.now();
const cpu = process.cpuUsage();
const messages = await measure();
const ms = performance.now() - started;
const used = process.cpuUsage(cpu);
const cpuMs = (used.user + used.system) / 1000;
// maxRSS is the process's high-water mark in KiB (getrusage), start-up included.
const rssMb = process.resourceUsage().maxRSS / 1024;
console.log(JSON.stringify(server ? { ...server, cpuMs, messages } : { ms, cpuMs, rssMb, messages }));

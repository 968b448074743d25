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
 */
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
    default:
      throw new Error(`unknown measurement ${what}`);
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
console.log(JSON.stringify({ ms, cpuMs, rssMb, messages }));

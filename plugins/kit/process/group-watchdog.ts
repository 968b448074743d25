/**
 * Ties the process groups of commands (the `bash` tool, user `!` commands) to the life of this process, even when
 * it is killed with SIGKILL and none of its own cleanup runs.
 *
 * Each command runs in its own process group, and a job it leaves in the background stays in that group. An
 * `exit` handler can kill the groups when this process ends normally, but nothing runs on SIGKILL (or on a crash of
 * Node itself), and Linux offers no portable "kill my grandchildren when I die" (PR_SET_PDEATHSIG covers only a
 * direct child, and only from native code). So, on the first command, a tiny watchdog starts: `/bin/sh` running a
 * loop that reads group ids from a pipe whose only writer is this process. The kernel closes that pipe when this
 * process dies, however it dies; the watchdog then reads end-of-file, kills every group still registered with
 * SIGKILL, and exits. One watchdog per process, a few hundred kilobytes, idle in a blocking read.
 *
 * The watchdog runs in a session of its own (detached), so a Ctrl-C or a hang-up of the terminal does not end it
 * before it did its job, and it does not keep this process's event loop alive.
 */
import type { ChildProcess } from "node:child_process";

/**
 * `+<pgid>` registers a group, `-<pgid>` forgets it; at end-of-file every registered group gets SIGKILL. The ids
 * are numbers written by this module, so the script needs no quoting beyond what it does.
 */
const WATCHDOG_SCRIPT = `trap '' HUP INT
groups=" "
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups\${line#+} " ;;
    -*) id=\${line#-}; kept=" "
        for g in $groups; do [ "$g" = "$id" ] || kept="$kept$g "; done
        groups=$kept ;;
  esac
done
for g in $groups; do kill -9 -"$g" 2>/dev/null; done
`;

let watchdog: ChildProcess | undefined;
let unavailable = process.platform === "win32";

function start(): ChildProcess | undefined {
  if (watchdog || unavailable) return watchdog;
  try {
    // Looked up here, not imported: node:child_process (with the net, dgram and stream modules it loads) comes with
    // the first command, and a run that starts none (a JSON run whose tools only read files) does without it.
    const { spawn } = process.getBuiltinModule("node:child_process");
    const child = spawn("/bin/sh", ["-c", WATCHDOG_SCRIPT], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    });
    child.on("error", () => {
      // No shell to run it: commands still run; their groups are then killed only on a normal exit.
      unavailable = true;
      watchdog = undefined;
    });
    child.once("exit", () => {
      if (watchdog === child) watchdog = undefined;
    });
    // A watchdog that died makes writes fail with EPIPE: the next command starts a new one.
    child.stdin?.on("error", () => {
      if (watchdog === child) watchdog = undefined;
    });
    child.unref();
    (child.stdin as { unref?(): void } | null)?.unref?.();
    watchdog = child;
    // A watchdog started again (the first one was killed) takes over the groups still registered.
    for (const pgid of registered) child.stdin?.write(`+${pgid}\n`);
    return child;
  } catch {
    unavailable = true;
    return undefined;
  }
}

const registered = new Set<number>();

/** The watchdog kills group `pgid` if this process dies while it is registered. */
export function watchGroup(pgid: number): void {
  const child = start();
  if (!child?.stdin?.writable) return;
  registered.add(pgid);
  child.stdin.write(`+${pgid}\n`);
}

/** The group is gone (or no longer ours to kill): the watchdog forgets it, so a reused id is never killed. */
export function unwatchGroup(pgid: number): void {
  if (!registered.delete(pgid)) return;
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`-${pgid}\n`);
}

/** The watchdog's process id, for tests. */
export function watchdogPid(): number | undefined {
  return watchdog?.pid;
}

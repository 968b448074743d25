/**
 * Notices a run that can never finish. A handler or tool whose promise waits on nothing (no timer, socket or
 * process left) leaves Node's event loop empty, and Node would end the process as if all went well: a print run
 * would exit 0 with no answer. Node says so first with `beforeExit`; each run in progress hears it and ends with an
 * error naming what it waits for. One process listener serves every session, installed while a run is watched.
 */

const watchers = new Set<() => void>();

function onBeforeExit(): void {
  for (const stalled of [...watchers]) stalled();
}

/** Calls `stalled` each time the process has nothing left to do; the returned function stops watching. */
export function watchForStall(stalled: () => void): () => void {
  if (watchers.size === 0) process.on("beforeExit", onBeforeExit);
  watchers.add(stalled);
  return () => {
    if (watchers.delete(stalled) && watchers.size === 0) process.off("beforeExit", onBeforeExit);
  };
}

/** Hands out promises that resolve at the next stall; `fire` resolves every one handed out so far. */
export class Stalls {
  private waiting: (() => void)[] = [];

  next(): Promise<"stalled"> {
    return new Promise((resolve) => this.waiting.push(() => resolve("stalled")));
  }

  fire(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  /** `work`'s value, or `"stalled"` when the process stalls first. */
  race<T>(work: Promise<T>): Promise<T | "stalled"> {
    return Promise.race([work, this.next()]);
  }
}

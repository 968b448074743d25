/**
 * Who acts in a checkout right now: runs (recorded by `builtin:worktrees` around each run) and exclusive git
 * actions (a revert, a handoff, a commit). An action is refused while a run is going there (`turnInProgress`); a
 * run or a tool call that wants to start while an action runs waits for it. The state belongs to one git service
 * instance (a `process` service, so every session of the process that uses the same provider shares it), not to
 * the module.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { GitServiceError } from "@knightcodeai/cli/kit";

/** The same folder reached through a symlink is the same checkout. */
function key(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return resolve(root);
  }
}

export class CheckoutLock {
  private readonly turns = new Map<string, number>();
  private readonly actions = new Map<string, Promise<unknown>>();

  /** Marks a run going in `root` until the returned function is called (once). */
  beginTurn(root: string): () => void {
    const k = key(root);
    this.turns.set(k, (this.turns.get(k) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.turns.get(k) ?? 1) - 1;
      if (left > 0) this.turns.set(k, left);
      else this.turns.delete(k);
    };
  }

  /** `beginTurn` once no exclusive action runs in `root`; the check and the mark happen in one step. */
  async enterTurn(root: string): Promise<() => void> {
    const k = key(root);
    for (let other = this.actions.get(k); other; other = this.actions.get(k))
      await other.catch(() => undefined);
    return this.beginTurn(k);
  }

  isTurnRunning(root: string): boolean {
    return this.turns.has(key(root));
  }

  /** Whether an exclusive action runs in `root` now. */
  isBusy(root: string): boolean {
    return this.actions.has(key(root));
  }

  /** Resolves once no exclusive action runs in `root`. */
  async waitForActions(root: string): Promise<void> {
    const k = key(root);
    for (let running = this.actions.get(k); running; running = this.actions.get(k))
      await running.catch(() => undefined);
  }

  /**
   * Runs `fn` as the only action in `root`: refused with `turnInProgress` while a run is going there, and queued
   * behind another action already running.
   */
  async runExclusive<T>(root: string, fn: () => Promise<T>): Promise<T> {
    const k = key(root);
    // The last check and the claim happen in the same synchronous step, so two callers cannot both pass.
    for (let other = this.actions.get(k); other; other = this.actions.get(k))
      await other.catch(() => undefined);
    if (this.turns.has(k))
      throw new GitServiceError("turnInProgress", `a turn is running in ${k}; wait for it to finish`);
    const running = fn();
    this.actions.set(k, running);
    try {
      return await running;
    } finally {
      if (this.actions.get(k) === running) this.actions.delete(k);
    }
  }
}

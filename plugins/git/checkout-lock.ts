/**
 * Who acts in a checkout right now, process-wide: turns (recorded by `builtin:worktrees` around each run) and
 * exclusive git actions (a revert, a handoff). An action is refused while a turn runs there (`turnInProgress`);
 * a turn or a tool call that wants to start while an action runs waits for it (`waitForCheckout`).
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { GitServiceError } from "./errors.js";

const turns = new Map<string, number>();
const actions = new Map<string, Promise<unknown>>();

/** The same folder reached through a symlink is the same checkout. */
function key(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return resolve(root);
  }
}

/** Marks a turn running in `root` until the returned function is called (once). */
export function beginCheckoutTurn(root: string): () => void {
  const k = key(root);
  turns.set(k, (turns.get(k) ?? 0) + 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    const left = (turns.get(k) ?? 1) - 1;
    if (left > 0) turns.set(k, left);
    else turns.delete(k);
  };
}

/** `beginCheckoutTurn` once no exclusive action runs in `root`; the check and the mark happen in one step. */
export async function enterCheckoutTurn(root: string): Promise<() => void> {
  const k = key(root);
  for (let other = actions.get(k); other; other = actions.get(k)) await other.catch(() => undefined);
  return beginCheckoutTurn(k);
}

export function isTurnRunning(root: string): boolean {
  return turns.has(key(root));
}

/** Resolves once no exclusive action runs in `root`. */
export async function waitForCheckout(root: string): Promise<void> {
  const k = key(root);
  for (let running = actions.get(k); running; running = actions.get(k)) {
    await running.catch(() => undefined);
  }
}

/**
 * Runs `fn` as the only action in `root`: refused with `turnInProgress` while a turn runs there, and queued behind
 * another action already running.
 */
export async function runExclusive<T>(root: string, fn: () => Promise<T>): Promise<T> {
  const k = key(root);
  // The last check and the claim happen in the same synchronous step, so two callers cannot both pass.
  for (let other = actions.get(k); other; other = actions.get(k)) await other.catch(() => undefined);
  if (turns.has(k))
    throw new GitServiceError("turnInProgress", `a turn is running in ${k}; wait for it to finish`);
  const running = fn();
  actions.set(k, running);
  try {
    return await running;
  } finally {
    if (actions.get(k) === running) actions.delete(k);
  }
}

/** Whether an exclusive action runs in `root` now (a cheap check before awaiting `waitForCheckout`). */
export function isCheckoutBusy(root: string): boolean {
  return actions.has(key(root));
}

/**
 * Which session the code running now works for: set around extension code (factories, event handlers, tools,
 * commands and shortcuts) and inherited by everything it starts (awaits, timers, callbacks). Module-scope helpers
 * that extensions call without a context, such as the kit's `complete()`, read it to act for the calling session
 * and no other; with two sessions open in one process (the app-server), "the newest session" would be the wrong one.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const binding = new AsyncLocalStorage<object>();

/** Runs `fn` bound to `session` (a no-op when it already is). */
export function runInSession<T>(session: object, fn: () => T): T {
  return binding.getStore() === session ? fn() : binding.run(session, fn);
}

/** The session the running code is bound to, if any. */
export function boundSession(): object | undefined {
  return binding.getStore();
}

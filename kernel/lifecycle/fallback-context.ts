/** A minimal `ctx` for sessions whose plugins provide no context factory, and the staleness guard. */
import type { ExtensionContext } from "../api/context.js";
import { MissingServiceError, StaleContextError } from "../errors.js";

interface RuntimeView {
  readonly cwd: string;
  readonly mode: ExtensionContext["mode"];
}

/**
 * `cwd`, `mode` and `hasUI: false`; anything else a context plugin would provide throws a MissingServiceError
 * naming it (a bare kernel in a test, say; the SDK always provides the plugin).
 */
export function createFallbackContext(runtime: RuntimeView): ExtensionContext {
  const known: Record<string, unknown> = { cwd: runtime.cwd, mode: runtime.mode, hasUI: false };
  return new Proxy(known, {
    get(target, property) {
      // Symbols and `then` are asked by inspection and by `await`, which must not fail.
      if (typeof property === "symbol" || property === "then" || property in target)
        return target[property as string];
      throw new MissingServiceError(
        `ctx.${property} needs a context plugin (core.context), which this session lacks`,
      );
    },
  }) as unknown as ExtensionContext;
}

/** Wraps a context so that any use after its runtime generation ended throws a clear error. */
export function guardContext<T extends object>(ctx: T, isLive: () => boolean, what: string): T {
  return new Proxy(ctx, {
    get(target, property, receiver) {
      if (!isLive()) throw new StaleContextError(what);
      return Reflect.get(target, property, receiver);
    },
  });
}

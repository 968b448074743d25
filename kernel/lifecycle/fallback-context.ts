/** A minimal `ctx` for sessions whose plugins provide no context factory, and the staleness guard. */
import type { ExtensionContext } from "../api/context.js";
import { MissingServiceError, StaleContextError } from "../errors.js";

interface RuntimeView {
  readonly cwd: string;
  readonly mode: ExtensionContext["mode"];
}

export function createFallbackContext(runtime: RuntimeView): ExtensionContext {
  const missing = (what: string) => () => {
    throw new MissingServiceError(
      `ctx.${what} needs a context plugin (core.context), which this session lacks`,
    );
  };
  return {
    cwd: runtime.cwd,
    mode: runtime.mode,
    hasUI: false,
    // What a session without a UI does is the host's matter (the SDK's headless UI); a bare kernel has none.
    get agentDir(): never {
      return missing("agentDir")();
    },
    get ui(): never {
      return missing("ui")();
    },
    get sessionManager(): never {
      return missing("sessionManager")();
    },
    get modelRegistry(): never {
      return missing("modelRegistry")();
    },
    model: undefined,
    thinkingLevel: undefined,
    signal: undefined,
    isIdle: () => true,
    isProjectTrusted: () => false,
    hasPendingMessages: () => false,
    abort: () => {},
    shutdown: missing("shutdown"),
    getContextUsage: () => undefined,
    compact: missing("compact"),
    getSystemPrompt: () => "",
    getDiscoveredResources: () => ({ skillPaths: [], promptPaths: [], themePaths: [] }),
  };
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

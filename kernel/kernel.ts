/**
 * createKernel: the composition of the mechanisms. A host (or the SDK) gives it plugins and extension sources;
 * it gives back sessions. Nothing here knows what a tool, a model or a mode is.
 */
import type { HostMode } from "./api/context.js";
import type { SessionStartEvent } from "./api/events.js";
import type { ExtensionLogEntry } from "./api/extension-api.js";
import { Container, type PluginDefinition } from "./container/container.js";
import { coreTokens } from "./container/core-tokens.js";
import type { Token } from "./container/tokens.js";
import type { BusPolicies } from "./events/hook-bus.js";
import {
  ExtensionLoader,
  type ExtensionLoaderOptions,
  type ExtensionLoadFailure,
  type ExtensionSource,
} from "./extensions/loader.js";
import { SharedServiceInstances } from "./extensions/services.js";
import { type ExtensionErrorReport, SessionRuntime } from "./lifecycle/session-runtime.js";

export interface KernelOptions {
  plugins?: readonly PluginDefinition<any, any>[];
  /** Persistent transform cache for extensions (`<agentDir>/cache/jiti`); `false` disables it. */
  cacheDir: string | false;
  /** Package names extensions may import without installing them, mapped to the running package's modules. */
  virtualModules?: ExtensionLoaderOptions["virtualModules"];
  /** Return checks and name suggestions for the hook bus. */
  bus?: BusPolicies;
  /** The API version extensions' `apiVersion` ranges are checked against (see ExtensionLoaderOptions). */
  apiVersion?: string;
  /** Looks at each extension file once it imported (ExtensionLoaderOptions.inspect). */
  inspect?: ExtensionLoaderOptions["inspect"];
}

export interface SessionOptions {
  sources: readonly ExtensionSource[];
  cwd: string;
  mode: HostMode;
  start?: SessionStartEvent;
  /** Session-level services (values) for this session's scope. */
  values?: [Token<any>, unknown][];
  /** Runs after the first factories, before `session_start` (see SessionRuntime.start). */
  beforeReady?(runtime: SessionRuntime): Promise<void>;
  /** The sources a reload imports again; defaults to `sources`. */
  reloadSources?(): readonly ExtensionSource[];
  onExtensionError?(report: ExtensionErrorReport): void;
  onExtensionLog?(entry: ExtensionLogEntry): void;
  /** The set of virtual modules this session's extension files import through (the loader's `moduleSet`). */
  moduleSet?: string;
  /** How long an extension factory may take (SessionRuntimeOptions.factoryTimeoutMs). */
  factoryTimeoutMs?(): number | undefined;
}

export interface Kernel {
  readonly container: Container;
  readonly loader: ExtensionLoader;
  /** Replaces the provider of a token (call before the first session). */
  provide(plugin: PluginDefinition<any, any>): void;
  /**
   * Loads the sources and starts a session runtime. Load failures are reported and the rest still load. When an
   * extension refuses the session (ExtensionStartupError), the runtime is returned with `startupFailure` set.
   */
  createSession(
    options: SessionOptions,
  ): Promise<{ runtime: SessionRuntime; failures: ExtensionLoadFailure[] }>;
  dispose(): Promise<unknown[]>;
}

export function createKernel(options: KernelOptions): Kernel {
  const container = new Container();
  for (const plugin of options.plugins ?? []) container.provide(plugin);
  const sharedServices = new SharedServiceInstances();
  const loader = new ExtensionLoader({
    cacheDir: options.cacheDir,
    ...(options.virtualModules ? { virtualModules: options.virtualModules } : {}),
    ...(options.apiVersion !== undefined ? { apiVersion: options.apiVersion } : {}),
    ...(options.inspect ? { inspect: options.inspect } : {}),
  });

  return {
    container,
    loader,
    provide(plugin) {
      container.provide(plugin);
    },
    async createSession(session) {
      container.validate([
        coreTokens.hooks,
        coreTokens.runtime,
        ...(session.values ?? []).map(([token]) => token),
      ]);
      const moduleSet = session.moduleSet ? { moduleSet: session.moduleSet } : {};
      const { extensions, failures, release } = await loader.load(session.sources, moduleSet);
      // The factories this session uses stay cached while it runs (a reload swaps them for the fresh ones).
      let releaseFactories = release;
      const runtime = new SessionRuntime({
        container,
        extensions,
        loadFailures: failures,
        reloadExtensions: async () => {
          const fresh = await loader.load(session.reloadSources?.() ?? session.sources, {
            fresh: true,
            ...moduleSet,
          });
          releaseFactories();
          releaseFactories = fresh.release;
          return fresh;
        },
        onDisposed: () => releaseFactories(),
        cwd: session.cwd,
        mode: session.mode,
        ...(session.values ? { values: session.values } : {}),
        ...(session.onExtensionError ? { onExtensionError: session.onExtensionError } : {}),
        ...(session.onExtensionLog ? { onExtensionLog: session.onExtensionLog } : {}),
        ...(options.bus ? { bus: options.bus } : {}),
        ...(session.factoryTimeoutMs ? { factoryTimeoutMs: session.factoryTimeoutMs } : {}),
        sharedServices,
      });
      try {
        await runtime.start(session.start, {
          ...(session.beforeReady ? { beforeReady: () => session.beforeReady!(runtime) } : {}),
        });
      } catch (error) {
        if (!runtime.startupFailure) {
          await runtime.shutdown();
          throw error;
        }
      }
      return { runtime, failures };
    },
    dispose: () => container.dispose(),
  };
}

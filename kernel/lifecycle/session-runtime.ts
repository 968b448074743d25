/**
 * One session's extension runtime: loading → ready → shutting-down → disposed.
 *
 * Starting calls every extension factory in load order, each with its own facade bound to this session's scope,
 * then emits `session_start`. Reload emits `session_shutdown`, disposes every registration, calls fresh factories
 * and emits `session_start` again. An ExtensionStartupError from `session_start` propagates to the host and leaves
 * the session unable to prompt until a reload succeeds.
 */
import type { ExtensionCommandContext, ExtensionContext, HostMode } from "../api/context.js";
import type { SessionShutdownEvent, SessionStartEvent } from "../api/events.js";
import type { ExtensionInfo, ExtensionLogEntry } from "../api/extension-api.js";
import type { Container, SessionScope } from "../container/container.js";
import { coreTokens } from "../container/core-tokens.js";
import type { Token } from "../container/tokens.js";
import { ExtensionLoadError, errorMessage, KernelError, SessionStartupFailedError } from "../errors.js";
import {
  type BusPolicies,
  ExtensionHandlerError,
  type HandlerErrorReport,
  HookBus,
} from "../events/hook-bus.js";
import { createExtensionAPI, SharedEventChannels } from "../extensions/facade.js";
import type { LoadedExtension, LoadResult } from "../extensions/loader.js";
import { ServiceDirectory, SharedServiceInstances } from "../extensions/services.js";
import { DisposableStore } from "./disposable.js";
import { createFallbackContext, guardContext } from "./fallback-context.js";
import { boundSession, runInSession } from "./session-binding.js";
import { watchForStall } from "./stall-watch.js";

export type RuntimeState = "loading" | "ready" | "shutting-down" | "disposed";

const ORIGIN_RANK: Readonly<Record<ExtensionInfo["origin"], number>> = {
  builtin: 0,
  user: 1,
  project: 2,
  package: 3,
  cli: 4,
  sdk: 5,
};

export interface ExtensionErrorReport {
  /** Owner id of the extension. */
  extension: string;
  path?: string;
  event: string;
  message: string;
  error: unknown;
}

export interface SessionRuntimeOptions {
  container: Container;
  extensions: readonly LoadedExtension[];
  /** Failures from loading, reported with the rest. */
  loadFailures?: readonly { id: string; error: ExtensionLoadError }[];
  /** Fresh factories for reload (re-imports edited files); defaults to calling the same factories again. */
  reloadExtensions?(): Promise<LoadResult>;
  /** Called once the session is disposed (its extensions' factories may leave the loader's cache). */
  onDisposed?(): void;
  /** Session-level services, e.g. the session store handle. */
  values?: [Token<any>, unknown][];
  cwd: string;
  mode: HostMode;
  /** Where extension errors go besides the `extension_error` event (hosts print them). */
  onExtensionError?(report: ExtensionErrorReport): void;
  /** Where `knightcode.log` entries go. */
  onExtensionLog?(entry: ExtensionLogEntry): void;
  bus?: BusPolicies;
  /** The instances of `process` services, shared with the other sessions of the kernel. */
  sharedServices?: SharedServiceInstances;
  /**
   * How long one factory's promise may take to settle, in ms (read each time a factory runs; 0 or unset: no limit).
   * A factory still pending when the process has nothing left to do fails at once, limit or not.
   */
  factoryTimeoutMs?(): number | undefined;
}

class Generation {
  active = true;
  loading = true;
  readonly stores = new Map<string, DisposableStore>();
  /** Ids and package names of the extensions whose factories ran, and of those that failed, for `requires`. */
  readonly started = new Set<string>();
  readonly failed = new Set<string>();

  async dispose(): Promise<unknown[]> {
    this.active = false;
    const errors: unknown[] = [];
    for (const store of [...this.stores.values()].reverse()) errors.push(...(await store.disposeAll()));
    return errors;
  }

  registrations(): number {
    let total = 0;
    for (const store of this.stores.values()) total += store.size;
    return total;
  }
}

export class SessionRuntime {
  readonly bus: HookBus;
  readonly scope: SessionScope;
  private readonly channels: SharedEventChannels;
  /** `knightcode.services`: what the session's extensions provide one another. */
  readonly services: ServiceDirectory;
  private generation = new Generation();
  private _extensions: readonly LoadedExtension[] = [];
  /** Whether code from outside the built-ins runs in this session (see `enter`). */
  private bindsCode = false;
  private infos: ExtensionInfo[] = [];
  private failure: Error | undefined;
  private contextCache: { generation: Generation; ctx: ExtensionContext } | undefined;
  private _state: RuntimeState = "loading";
  /** Load failures not reported yet; they are reported when factories next run. */
  private readonly pendingFailures: ExtensionLoadError[] = [];
  private reportedFailures: ExtensionLoadError[] = [];
  private positions = 0;
  private reloading: Promise<void> | undefined;

  constructor(private readonly options: SessionRuntimeOptions) {
    this.extensions = options.extensions;
    this.pendingFailures.push(...(options.loadFailures ?? []).map((f) => f.error));
    this.bus = new HookBus({
      ...options.bus,
      onHandlerError: (report) => this.handleError(report),
      enter: (fn) => this.enter(fn),
    });
    this.channels = new SharedEventChannels((report) => this.handleError(report));
    this.services = new ServiceDirectory(
      options.sharedServices ?? new SharedServiceInstances(),
      (owner, event, error) => this.handleError({ owner, event, error }),
    );
    this.scope = options.container.createScope([
      [coreTokens.hooks, this.bus],
      [coreTokens.runtime, this],
      ...(options.values ?? []),
    ]);
  }

  private get extensions(): readonly LoadedExtension[] {
    return this._extensions;
  }

  private set extensions(extensions: readonly LoadedExtension[]) {
    this._extensions = extensions;
    this.bindsCode = extensions.some((ext) => ext.origin !== "builtin");
  }

  /**
   * Runs extension code bound to this session (session-binding.ts). Only module-scope model calls read the binding
   * (the kit's `complete()`, `getModel()`), and no built-in makes them, while binding makes Node run an async hook
   * for every promise of the process from then on (AsyncLocalStorage; several ms and MBs on a print run). So a
   * session of built-ins alone runs its code unbound, unless it is called from code bound to a session already,
   * which then is rebound to this one as before.
   */
  private enter<T>(fn: () => T): T {
    return this.bindsCode || boundSession() !== undefined ? runInSession(this, fn) : fn();
  }

  get state(): RuntimeState {
    return this._state;
  }

  get cwd(): string {
    return this.options.cwd;
  }

  get mode(): HostMode {
    return this.options.mode;
  }

  /** The loaded extensions of the current generation, in load order. */
  get extensionInfos(): readonly ExtensionInfo[] {
    return this.infos;
  }

  /** Extensions that failed to load, or whose factory threw, in this generation. */
  get loadFailures(): readonly ExtensionLoadError[] {
    return this.reportedFailures;
  }

  /** Set while an ExtensionStartupError refuses the session. */
  get startupFailure(): Error | undefined {
    return this.failure;
  }

  /** Registrations, handlers and channel subscriptions alive now (a leak check compares it across reloads). */
  liveRegistrations(): number {
    return this.generation.registrations();
  }

  /**
   * Calls the factories and emits `session_start`. Throws when an extension refuses the session.
   * `beforeReady` runs after the factories and before `session_start`: the host resolves project trust there
   * (with the extensions loaded so far) and adds project extensions with `addExtensions()`.
   */
  async start(
    event: SessionStartEvent = { reason: "startup" },
    options: { beforeReady?: () => Promise<void> } = {},
  ): Promise<void> {
    if (this._state !== "loading") {
      throw new KernelError("KC_ERR_STATE", `Cannot start a ${this._state} session`);
    }
    await this.runFactories(this.extensions);
    await options.beforeReady?.();
    this.generation.loading = false;
    this._state = "ready";
    await this.emitStart(event);
  }

  /** Calls the factories of more extensions while the session is still loading (see `start`). */
  async addExtensions(
    extensions: readonly LoadedExtension[],
    failures: readonly ExtensionLoadError[] = [],
  ): Promise<void> {
    if (this._state !== "loading") {
      throw new KernelError("KC_ERR_STATE", "Extensions can only be added while the session is loading");
    }
    this.extensions = [...this.extensions, ...extensions];
    this.pendingFailures.push(...failures);
    await this.runFactories(extensions);
  }

  /** While a reload runs, a promise that settles when it ends (services use it to bridge re-registration). */
  get pendingReload(): Promise<void> | undefined {
    return this.reloading;
  }

  /** Shutdown of the extension runtime plus fresh factories; the session itself (its scope) stays. */
  async reload(): Promise<void> {
    if (this._state !== "ready") {
      throw new KernelError("KC_ERR_STATE", `Cannot reload a ${this._state} session`);
    }
    let done: () => void = () => {};
    this.reloading = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      await this.reloadExtensions();
    } finally {
      this.reloading = undefined;
      done();
    }
  }

  private async reloadExtensions(): Promise<void> {
    this._state = "loading";
    await this.bus.emit(
      "session_shutdown",
      { reason: "reload" } satisfies SessionShutdownEvent,
      this.context(),
    );
    this.reportDisposeErrors(await this.generation.dispose());
    if (this.options.reloadExtensions) {
      const fresh = await this.options.reloadExtensions();
      this.extensions = fresh.extensions;
      this.pendingFailures.push(...fresh.failures.map((f) => f.error));
    }
    this.generation = new Generation();
    this.infos = [];
    this.reportedFailures = [];
    this.positions = 0;
    await this.runFactories(this.extensions, false);
    this.generation.loading = false;
    this._state = "ready";
    // A host listening to the session stream (RPC, JSON) hears of the failures as it does at start-up, where it
    // reads them from `loadFailures` because nothing could listen yet: one `extension_error` (`event: "load"`) each.
    if (this.bus.has("extension_error")) {
      for (const failure of this.reportedFailures) {
        const payload = { extensionPath: failure.extension, event: "load", error: failure.message };
        await this.bus.emit("extension_error", payload, this.context()).catch((e) =>
          this.sink({
            extension: failure.extension,
            event: "extension_error",
            message: errorMessage(e),
            error: e,
          }),
        );
      }
    }
    await this.emitStart({ reason: "reload" });
  }

  /** Emits `session_shutdown`, disposes every registration, then the session scope. Idempotent. */
  async shutdown(event: SessionShutdownEvent = { reason: "quit" }): Promise<void> {
    if (this._state === "shutting-down" || this._state === "disposed") return;
    this._state = "shutting-down";
    try {
      await this.bus.emit("session_shutdown", event, this.context());
    } finally {
      this.reportDisposeErrors(await this.generation.dispose());
      this.reportDisposeErrors(await this.scope.dispose());
      this._state = "disposed";
      this.options.onDisposed?.();
    }
  }

  /** Throws unless the session may prompt a provider, compact or run extension commands. */
  assertCanPrompt(what = "prompt"): void {
    if (this.failure) throw new SessionStartupFailedError(what, this.failure);
    if (this._state !== "ready")
      throw new KernelError("KC_ERR_STATE", `Cannot ${what}: the session is ${this._state}`);
  }

  /** The `ctx` for handlers of the current generation; it goes stale when the generation ends. */
  context(): ExtensionContext {
    const generation = this.generation;
    if (this.contextCache?.generation === generation) return this.contextCache.ctx;
    const factory = this.scope.tryResolve(coreTokens.context);
    const base = factory ? factory.create() : createFallbackContext(this);
    const ctx = guardContext(base, () => generation.active, "ctx");
    this.contextCache = { generation, ctx };
    return ctx;
  }

  commandContext(): ExtensionCommandContext {
    const generation = this.generation;
    const factory = this.scope.tryResolve(coreTokens.context);
    if (!factory) {
      throw new KernelError("KC_ERR_MISSING_SERVICE", `Command contexts need ${coreTokens.context}`);
    }
    return guardContext(factory.createCommandContext(), () => generation.active, "command ctx");
  }

  /** Reports an extension failure: to the host sink and as an `extension_error` event. */
  handleError({ owner, event, error }: HandlerErrorReport): void {
    const report: ExtensionErrorReport = {
      extension: owner.id,
      ...(owner.path ? { path: owner.path } : {}),
      event,
      message: errorMessage(error),
      error,
    };
    this.sink(report);
    if (event === "extension_error" || !this.bus.has("extension_error")) return;
    const payload = { extensionPath: owner.path ?? owner.id, event, error: report.message };
    this.bus
      .emit("extension_error", payload, this.context())
      .catch((e) =>
        this.sink({ extension: owner.id, event: "extension_error", message: errorMessage(e), error: e }),
      );
  }

  /** `knightcode.log` entries go to the host; without one, warnings and errors go to stderr. */
  private log(entry: ExtensionLogEntry): void {
    if (this.options.onExtensionLog) this.options.onExtensionLog(entry);
    else if (entry.level !== "info")
      process.stderr.write(`[knightcode] ${entry.extension}: ${entry.message}\n`);
  }

  private sink(report: ExtensionErrorReport): void {
    if (this.options.onExtensionError) this.options.onExtensionError(report);
    else process.stderr.write(`[knightcode] ${report.extension} (${report.event}): ${report.message}\n`);
  }

  /**
   * Calls the factories in order. A factory that never finishes stops a start (`unfinishedStops`); on a reload it
   * is reported like one that threw, so the session already in use goes on without it.
   */
  private async runFactories(extensions: readonly LoadedExtension[], unfinishedStops = true): Promise<void> {
    const generation = this.generation;
    for (const failure of this.pendingFailures.splice(0)) {
      this.reportedFailures.push(failure);
      this.sink({ extension: failure.extension, event: "load", message: failure.message, error: failure });
    }
    for (const [index, ext] of extensions.entries()) {
      const names = [ext.id, ...(ext.packageName ? [ext.packageName] : [])];
      const missing = this.missingRequirement(ext, extensions.slice(index + 1));
      if (missing) {
        for (const name of names) generation.failed.add(name);
        const failure = new ExtensionLoadError(ext.path ?? ext.id, missing);
        this.reportedFailures.push(failure);
        this.sink({ extension: ext.id, event: "load", message: failure.message, error: failure });
        continue;
      }
      // Load order is origin first (built-in, personal, project, package, CLI, SDK), then position, so
      // extensions added in a later phase still run their handlers in the documented order.
      const order = ORIGIN_RANK[ext.origin] * 100_000 + this.positions++;
      const info: ExtensionInfo = Object.freeze({
        id: ext.id,
        origin: ext.origin,
        order,
        ...(ext.path ? { path: ext.path } : {}),
      });
      for (const warning of ext.warnings ?? [])
        this.log({ extension: ext.id, level: "warn", message: warning });
      const store = new DisposableStore();
      generation.stores.set(info.id, store);
      const api = createExtensionAPI({
        info,
        ...(ext.dialect ? { dialect: ext.dialect } : {}),
        store,
        generation,
        scope: this.scope,
        bus: this.bus,
        events: this.channels,
        services: this.services,
        log: (owner, level, message) => this.log({ extension: owner.id, level, message }),
      });
      try {
        await settleFactory(
          this.enter(() => ext.factory(api)),
          this.options.factoryTimeoutMs?.() ?? 0,
        );
        this.infos = [...this.infos, info].sort((a, b) => a.order - b.order);
        for (const name of names) generation.started.add(name);
      } catch (error) {
        for (const name of names) generation.failed.add(name);
        // A throwing factory leaves nothing half-registered behind; neither does one that never finished (what it
        // registers later goes to a disposed store, which disposes it at once).
        await store.disposeAll();
        generation.stores.delete(info.id);
        if (error instanceof UnfinishedFactory && unfinishedStops) {
          // The extension may still be half way through setting itself up: the session does not start without it,
          // and the host says which extension and why (a print or JSON run exits 1 instead of 0 with no answer).
          const failure = new ExtensionLoadError(ext.path ?? ext.id, error.message);
          this.reportedFailures.push(failure);
          throw failure;
        }
        const failure = new ExtensionLoadError(
          ext.path ?? ext.id,
          error instanceof UnfinishedFactory ? error.message : `the factory threw: ${errorMessage(error)}`,
          error,
        );
        this.reportedFailures.push(failure);
        this.sink({ extension: info.id, event: "load", message: failure.message, error: failure });
      }
    }
  }

  /**
   * Why `ext` cannot start, or undefined: each extension it requires (an owner id or a package name) must have
   * started in this session, or be still to come in this batch.
   */
  private missingRequirement(ext: LoadedExtension, later: readonly LoadedExtension[]): string | undefined {
    const generation = this.generation;
    for (const required of ext.requires ?? []) {
      if (generation.started.has(required)) continue;
      if (later.some((other) => other.id === required || other.packageName === required)) continue;
      return generation.failed.has(required)
        ? `it requires ${required}, which failed to load`
        : `it requires ${required}, which is not loaded in this session (switched off, not installed, or not listed)`;
    }
    return undefined;
  }

  private async emitStart(event: SessionStartEvent): Promise<void> {
    this.failure = undefined;
    try {
      // A session_start handler that waits on nothing would otherwise end the process mid-start with code 0.
      await settleOrStall(this.bus.emit("session_start", event, this.context()), () => {
        const waiting = this.bus.pending().map((h) => `the ${h.event} handler of ${h.owner.id}`);
        return new KernelError(
          "KC_ERR_STALLED",
          `The session cannot start: it waits for ${waiting.length > 0 ? [...new Set(waiting)].join(", ") : "work"}, ` +
            "which never settled and has nothing left that could settle it (a promise that is never resolved).",
        );
      });
    } catch (error) {
      if (!(error instanceof ExtensionHandlerError)) throw error;
      this.failure = error;
      this.sink({ extension: error.owner.id, event: "session_start", message: error.message, error });
      throw error;
    }
  }

  private reportDisposeErrors(errors: unknown[]): void {
    for (const error of errors) {
      this.sink({ extension: "kernel", event: "dispose", message: errorMessage(error), error });
    }
  }
}

/** A factory whose promise did not settle: within the time limit, or before the process ran out of work. */
class UnfinishedFactory extends Error {}

/** Waits for a factory's promise, but not forever (see `settleOrStall`). */
async function settleFactory(result: unknown, timeoutMs: number): Promise<void> {
  if (!isThenable(result)) return;
  await settleOrStall(
    Promise.resolve(result),
    () =>
      new UnfinishedFactory(
        "it never finished loading: its factory returned a promise that never settled, and nothing is left " +
          "that could settle it (a promise that is never resolved)",
      ),
    timeoutMs,
    () =>
      new UnfinishedFactory(
        `it never finished loading: its factory's promise did not settle within ${timeoutMs / 1000} s ` +
          "(setting extensionLoad.timeoutMs)",
      ),
  );
}

/**
 * `work`'s outcome, or a rejection with `stalled()` when the process runs out of work first. A promise that nothing
 * can settle any more (no timer, socket or process left) empties Node's event loop, and Node would exit with code 0
 * in the middle of starting: `beforeExit` says so first (stall-watch.ts). With `timeoutMs` > 0, also a rejection with `late()` after
 * that long; its timer is unref'd so that it does not hide the stall for `timeoutMs`.
 */
async function settleOrStall<T>(
  work: Promise<T>,
  stalled: () => Error,
  timeoutMs = 0,
  late: () => Error = stalled,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let unwatch: (() => void) | undefined;
  const unfinished = new Promise<never>((_, reject) => {
    unwatch = watchForStall(() => reject(stalled()));
    if (timeoutMs > 0) {
      timer = setTimeout(() => reject(late()), timeoutMs);
      timer.unref();
    }
  });
  try {
    return await Promise.race([work, unfinished]);
  } finally {
    clearTimeout(timer);
    unwatch?.();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"
  );
}

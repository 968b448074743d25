/**
 * The hook bus: `on(event, handler)` plus one dispatcher per event kind, built on tapable.
 *
 * tapable has no untap, so the bus keeps its own ordered registration list per event and builds a fresh tapable
 * hook from it after every change (copy-on-write). A dispatch holds the hook it started with, so subscribing or
 * unsubscribing never changes a dispatch already running. Each handler is wrapped with its event's error policy.
 */
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook } from "tapable";
import { type EventKind, type EventSpec, type EventsOfKind, eventCatalog } from "../api/event-catalog.js";
import type {
  BoundaryResult,
  BoundaryState,
  ContextFor,
  ExtensionEventName,
  ExtensionEvents,
} from "../api/events.js";
import type { ExtensionOrigin } from "../api/extension-api.js";
import { errorMessage, isExtensionStartupError, KernelError } from "../errors.js";

/** The payload a handler of event `E` receives. */
export type PayloadOf<E extends ExtensionEventName> = ExtensionEvents[E]["event"];
/** What a handler of event `E` may return. */
export type ResultOf<E extends ExtensionEventName> = ExtensionEvents[E]["result"];
/** A boundary event's own fields; the bus adds the accumulated `{entries, continue, end}`. */
export type BoundaryPayload<E extends EventsOfKind<"boundary">> = Omit<PayloadOf<E>, keyof BoundaryState>;

/**
 * Who registered a handler. Handlers run by `order` (extension load order), then registration order; handlers
 * subscribed with `{ fallback: true }` run after all others, so a built-in default can answer only what nobody else did.
 */
export interface HandlerOwner {
  readonly id: string;
  readonly order: number;
  readonly origin?: ExtensionOrigin;
  readonly path?: string;
}

export interface HandlerErrorReport {
  owner: HandlerOwner;
  event: string;
  error: unknown;
}

export type AnyHandler = (event: any, ctx: any) => unknown | void | Promise<unknown>;

/** Raised by a dispatch whose error policy is `propagate` (ExtensionStartupError from `session_start`). */
export class ExtensionHandlerError extends KernelError {
  readonly owner: HandlerOwner;
  readonly event: string;
  constructor(owner: HandlerOwner, event: string, cause: unknown) {
    super("KC_ERR_EXTENSION_HANDLER", `Extension ${owner.id} refused ${event}: ${errorMessage(cause)}`, {
      cause,
    });
    this.owner = owner;
    this.event = event;
  }
}

export interface TransformOptions<V, E extends ExtensionEventName> {
  /** Builds the handler payload from the current value; defaults to the value itself. */
  toEvent?(value: V): PayloadOf<E>;
  /** Folds a handler's non-undefined result into the value; defaults to replacing it. */
  fold?(value: V, result: NonNullable<ResultOf<E>>): V;
  /** Stops the chain after a result (e.g. `input` handled). */
  stop?(result: NonNullable<ResultOf<E>>): boolean;
}

export interface GateOptions<R> {
  /** The decision a throwing handler stands for (block, cancel, untrusted). */
  failClosed(error: unknown, owner: HandlerOwner): R;
  /** Whether a result is a decision; defaults to any non-undefined value. Learns whose result it is. */
  isDecision?(result: R, owner: HandlerOwner): boolean;
  /**
   * Milliseconds each handler has to answer; one that takes longer is reported and fails closed as if it had
   * thrown, and its late answer is ignored. Absent or 0: no limit. The timer does not keep the process alive, so a
   * handler waiting on nothing at all still shows up as pending work (`pending()`).
   */
  timeoutMs?: number;
}

/** A handler that was called and has not settled yet. */
export interface PendingHandler {
  readonly owner: HandlerOwner;
  readonly event: string;
}

interface Registration {
  readonly owner: HandlerOwner;
  readonly handler: AnyHandler;
  readonly seq: number;
  readonly last: number;
}

interface Dispatch {
  payload: unknown;
  ctx: unknown;
  transform?: {
    toEvent?(value: unknown): unknown;
    fold?(value: unknown, result: unknown): unknown;
    stop?(result: unknown): boolean;
  };
  gate?: GateOptions<unknown>;
}

interface Folded {
  value: unknown;
  stopped: boolean;
}

type BuiltHook =
  | AsyncSeriesHook<[Dispatch]>
  | AsyncSeriesWaterfallHook<[Folded, Dispatch]>
  | AsyncSeriesBailHook<[Dispatch], unknown>;

/** What the composition root teaches the bus; the kernel itself knows no event shapes and no spelling aids. */
export interface BusPolicies {
  /**
   * Throws when a transform or lastWins handler's return does not have its event's shape; the throw is reported and
   * the return skipped like a handler's own.
   */
  checkReturn?(event: string, value: unknown): void;
  /** The known name a misspelt event name probably meant, for the error that rejects it. */
  suggestName?(name: string, known: readonly string[]): string | undefined;
}

export interface HookBusOptions extends BusPolicies {
  onHandlerError(report: HandlerErrorReport): void;
  /** Runs extension code bound to the bus's session (see `enter`); identity when absent. */
  enter?<T>(fn: () => T): T;
}

export class HookBus {
  private readonly registrations = new Map<string, readonly Registration[]>();
  private readonly hooks = new Map<string, BuiltHook>();
  private readonly catalog: Readonly<Record<string, EventSpec>> = eventCatalog;
  private seq = 0;
  /** Handlers whose promise has not settled, to explain a run that can never finish (Rollup's runHook). */
  private readonly running = new Set<PendingHandler>();
  private readonly faultWatchers = new Set<{ owner: string; fail(error: unknown): void }>();

  constructor(private readonly options: HookBusOptions) {}

  /**
   * Runs extension code that is not a handler (a tool's execute, a command) bound to the bus's session, as every
   * dispatch runs its handlers, so module-scope helpers know whom the code works for (`session-binding.ts`).
   */
  enter<T>(fn: () => T): T {
    return this.options.enter ? this.options.enter(fn) : fn();
  }

  /** The handlers called and not settled yet, oldest first. */
  pending(): PendingHandler[] {
    return [...this.running];
  }

  /** Subscribes a handler; the returned function unsubscribes it (idempotent). */
  on(event: string, handler: AnyHandler, owner: HandlerOwner, options?: { fallback?: boolean }): () => void {
    const spec = this.specOf(event);
    if (typeof handler !== "function") {
      throw new KernelError(
        "KC_ERR_INVALID_HANDLER",
        `${owner.id}: the handler for "${event}" is not a function`,
      );
    }
    if (spec.participants && !(owner.origin && spec.participants.includes(owner.origin))) {
      throw new KernelError(
        "KC_ERR_NOT_A_PARTICIPANT",
        `${owner.id} may not handle "${event}": only ${spec.participants.join(", ")} extensions take part`,
      );
    }
    const registration: Registration = {
      owner,
      handler: this.tracked(event, owner, handler),
      seq: this.seq++,
      last: options?.fallback ? 1 : 0,
    };
    const next = [...(this.registrations.get(event) ?? []), registration].sort(
      (a, b) => a.last - b.last || a.owner.order - b.owner.order || a.seq - b.seq,
    );
    this.replace(event, next);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.replace(
        event,
        (this.registrations.get(event) ?? []).filter((r) => r !== registration),
      );
    };
  }

  /** Whether anyone listens: hot events skip building their payload when nobody does. */
  has(event: string): boolean {
    return (this.registrations.get(event)?.length ?? 0) > 0;
  }

  /** Number of handlers for one event, or for all events. */
  count(event?: string): number {
    if (event !== undefined) return this.registrations.get(event)?.length ?? 0;
    let total = 0;
    for (const list of this.registrations.values()) total += list.length;
    return total;
  }

  async emit<E extends EventsOfKind<"notify">>(
    event: E,
    payload: PayloadOf<E>,
    ctx?: ContextFor<E>,
  ): Promise<void> {
    const hook = this.hookFor(event, "notify") as AsyncSeriesHook<[Dispatch]> | undefined;
    if (hook) await this.enter(() => hook.promise({ payload, ctx }));
  }

  /**
   * Runs a transform chain over `initial`. Without `toEvent` the value is the payload handlers see; with it, the
   * value may be anything the caller folds handler results into.
   */
  async transform<E extends EventsOfKind<"transform">, V = PayloadOf<E>>(
    event: E,
    initial: V,
    ctx?: ContextFor<E>,
    options: TransformOptions<V, E> = {},
  ): Promise<V> {
    const hook = this.hookFor(event, "transform") as AsyncSeriesWaterfallHook<[Folded, Dispatch]> | undefined;
    if (!hook) return initial;
    const dispatch: Dispatch = {
      payload: undefined,
      ctx,
      transform: options as Dispatch["transform"],
    };
    const result = await this.enter(() => hook.promise({ value: initial, stopped: false }, dispatch));
    return result.value as V;
  }

  async gate<E extends EventsOfKind<"gate">>(
    event: E,
    payload: PayloadOf<E>,
    ctx: ContextFor<E> | undefined,
    options: GateOptions<NonNullable<ResultOf<E>>>,
  ): Promise<NonNullable<ResultOf<E>> | undefined> {
    const hook = this.hookFor(event, "gate") as AsyncSeriesBailHook<[Dispatch], unknown> | undefined;
    if (!hook) return undefined;
    return (await this.enter(() => hook.promise({ payload, ctx, gate: options as GateOptions<unknown> }))) as
      | NonNullable<ResultOf<E>>
      | undefined;
  }

  async lastWins<E extends EventsOfKind<"lastWins">>(
    event: E,
    payload: PayloadOf<E>,
    ctx?: ContextFor<E>,
  ): Promise<NonNullable<ResultOf<E>> | undefined> {
    const hook = this.hookFor(event, "lastWins") as AsyncSeriesWaterfallHook<[Folded, Dispatch]> | undefined;
    if (!hook) return undefined;
    const result = await this.enter(() =>
      hook.promise({ value: undefined, stopped: false }, { payload, ctx }),
    );
    return result.value as NonNullable<ResultOf<E>> | undefined;
  }

  /** Runs an actionable boundary; `payload` is the event without the accumulated state. */
  async boundary<E extends EventsOfKind<"boundary">>(
    event: E,
    payload: BoundaryPayload<E>,
    ctx?: ContextFor<E>,
    initial: BoundaryState = { entries: [], continue: false, end: false },
  ): Promise<BoundaryState> {
    const hook = this.hookFor(event, "boundary") as AsyncSeriesWaterfallHook<[Folded, Dispatch]> | undefined;
    if (!hook) return initial;
    const result = await this.enter(() => hook.promise({ value: initial, stopped: false }, { payload, ctx }));
    return result.value as BoundaryState;
  }

  /** Wraps a handler so that, while its promise is unsettled, it is listed by `pending()`. */
  private tracked(event: string, owner: HandlerOwner, handler: AnyHandler): AnyHandler {
    return (payload, ctx) => {
      const result = handler(payload, ctx);
      if (!(result instanceof Promise)) return result;
      const entry: PendingHandler = { owner, event };
      this.running.add(entry);
      return result.finally(() => this.running.delete(entry));
    };
  }

  private specOf(event: string): EventSpec {
    const spec = Object.hasOwn(this.catalog, event) ? this.catalog[event] : undefined;
    if (!spec) {
      const near = this.options.suggestName?.(event, Object.keys(this.catalog));
      throw new KernelError(
        "KC_ERR_UNKNOWN_EVENT",
        `Unknown event "${event}".${near ? ` Did you mean "${near}"?` : ""}`,
      );
    }
    return spec;
  }

  private replace(event: string, next: readonly Registration[]): void {
    this.registrations.set(event, next);
    this.hooks.delete(event);
  }

  private hookFor(event: string, kind: EventKind): BuiltHook | undefined {
    const spec = this.specOf(event);
    if (spec.kind !== kind) {
      throw new KernelError(
        "KC_ERR_WRONG_DISPATCH",
        `"${event}" is a ${spec.kind} event and cannot be dispatched as ${kind}`,
      );
    }
    let hook = this.hooks.get(event);
    if (hook) return hook;
    const list = this.registrations.get(event);
    if (!list || list.length === 0) return undefined;
    hook = this.build(event, spec, list);
    this.hooks.set(event, hook);
    return hook;
  }

  /**
   * Reports a fault of an extension that happened outside its handlers (a tool result JSON cannot write, an
   * exception from its timer) the way a throwing handler is reported: `extension_error`, extension and event named.
   */
  report(owner: HandlerOwner, event: string, error: unknown): void {
    this.options.onHandlerError({ owner, event, error });
  }

  /**
   * While a tool call of extension `owner` runs, its runner watches for a fault of that extension outside the call
   * (an exception from one of its timers): `fail` fails the call. The returned function stops watching.
   */
  watchFaults(owner: string, fail: (error: unknown) => void): () => void {
    const watcher = { owner, fail };
    this.faultWatchers.add(watcher);
    return () => this.faultWatchers.delete(watcher);
  }

  /** A fault of `owner` outside its handlers: reported like a throwing handler, and its watched calls fail. */
  fault(owner: HandlerOwner, event: string, error: unknown): void {
    this.report(owner, event, error);
    for (const watcher of [...this.faultWatchers]) if (watcher.owner === owner.id) watcher.fail(error);
  }

  private build(event: string, spec: EventSpec, list: readonly Registration[]): BuiltHook {
    switch (spec.kind) {
      case "notify": {
        const hook = new AsyncSeriesHook<[Dispatch]>(["dispatch"]);
        for (const { owner, handler } of list) {
          hook.tapPromise(owner.id, async (d) => {
            try {
              await handler(d.payload, d.ctx);
            } catch (error) {
              if (spec.errorPolicy === "propagate" && isExtensionStartupError(error)) {
                throw new ExtensionHandlerError(owner, event, error);
              }
              this.report(owner, event, error);
            }
          });
        }
        return hook;
      }
      case "gate": {
        const hook = new AsyncSeriesBailHook<[Dispatch], unknown>(["dispatch"]);
        for (const { owner, handler } of list) {
          hook.tapPromise(owner.id, async (d) => {
            const gate = d.gate!;
            try {
              const result = await withinLimit(handler(d.payload, d.ctx), gate.timeoutMs);
              const decided = gate.isDecision
                ? result !== undefined && gate.isDecision(result, owner)
                : result != null;
              return decided ? result : undefined;
            } catch (error) {
              this.report(owner, event, error);
              return gate.failClosed(error, owner);
            }
          });
        }
        return hook;
      }
      default: {
        const hook = new AsyncSeriesWaterfallHook<[Folded, Dispatch]>(["folded", "dispatch"]);
        for (const { owner, handler } of list) {
          hook.tapPromise(owner.id, async (state, d) => {
            if (state.stopped) return state;
            try {
              return await this.fold(event, spec.kind, state, d, handler);
            } catch (error) {
              this.report(owner, event, error);
              return state;
            }
          });
        }
        return hook;
      }
    }
  }

  private async fold(
    event: string,
    kind: EventKind,
    state: Folded,
    d: Dispatch,
    handler: AnyHandler,
  ): Promise<Folded> {
    if (kind === "transform") {
      const t = d.transform ?? {};
      const result = await handler(t.toEvent ? t.toEvent(state.value) : state.value, d.ctx);
      if (result === undefined) return state;
      this.options.checkReturn?.(event, result);
      return { value: t.fold ? t.fold(state.value, result) : result, stopped: t.stop?.(result) ?? false };
    }
    if (kind === "lastWins") {
      const result = await handler(d.payload, d.ctx);
      if (result === undefined) return state;
      this.options.checkReturn?.(event, result);
      return { value: result, stopped: false };
    }
    const acc = state.value as BoundaryState;
    const result = (await handler(
      { ...(d.payload as object), entries: [...acc.entries], continue: acc.continue, end: acc.end },
      d.ctx,
    )) as BoundaryResult | undefined;
    if (result === undefined) return state;
    if (typeof result !== "object" || result === null)
      throw new TypeError("a boundary handler must return an object");
    if (result.entries !== undefined && !Array.isArray(result.entries))
      throw new TypeError("`entries` must be an array");
    return {
      value: {
        entries: result.entries ?? acc.entries,
        continue: typeof result.continue === "boolean" ? result.continue : acc.continue,
        end: acc.end || result.end === true,
      },
      stopped: false,
    };
  }
}

/** A gate handler's answer, or a rejection once `timeoutMs` passed without one. */
function withinLimit(answer: unknown, timeoutMs: number | undefined): Promise<unknown> {
  if (!timeoutMs || !(answer instanceof Promise)) return Promise.resolve(answer);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`did not answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}

/**
 * The per-extension ExtensionAPI facade. Each extension gets its own object in each session, bound to its owner
 * id and to that session's scope, so an action taken through one session's API can never reach another.
 * Every registration becomes a disposable in the extension's store; reload and shutdown dispose the store.
 */
import type { ExtensionAPI, ExtensionEventBus, ExtensionInfo } from "../api/extension-api.js";
import type { SessionScope } from "../container/container.js";
import { KernelError, MissingServiceError, StaleContextError } from "../errors.js";
import type { AnyHandler, HandlerErrorReport, HookBus } from "../events/hook-bus.js";
import { type Disposable, type DisposableStore, toDisposable } from "../lifecycle/disposable.js";
import { apiRoutes } from "./api-routes.js";

/** The lifetime an API object belongs to: one factory run of one session runtime. */
export interface Generation {
  readonly active: boolean;
  readonly loading: boolean;
}

export interface FacadeDeps {
  info: ExtensionInfo;
  store: DisposableStore;
  generation: Generation;
  scope: SessionScope;
  bus: HookBus;
  events: SharedEventChannels;
}

export function createExtensionAPI({
  info,
  store,
  generation,
  scope,
  bus,
  events,
}: FacadeDeps): ExtensionAPI {
  const assertLive = (what: string) => {
    if (!generation.active) throw new StaleContextError(`knightcode.${what}() of ${info.id}`);
  };
  const own = (unsubscribe: () => void, label: string): (() => void) => {
    const registration = store.add(toDisposable(unsubscribe, `${info.id} ${label}`));
    return () => {
      store.delete(registration);
      void registration.dispose();
    };
  };

  const api: Record<string, unknown> = {
    extension: info,
    events: {
      emit: (channel: string, data?: unknown) => {
        assertLive("events.emit");
        events.emit(channel, data);
      },
      on: (channel: string, handler: (data: unknown) => void | Promise<void>) => {
        assertLive("events.on");
        return own(events.on(channel, handler, info), `events.on(${channel})`);
      },
    } satisfies ExtensionEventBus,
    on: (event: string, handler: AnyHandler) => {
      assertLive("on");
      return own(bus.on(event, handler, info), `on(${event})`);
    },
  };

  for (const [method, route] of Object.entries(apiRoutes)) {
    api[method] = (...args: unknown[]) => {
      assertLive(method);
      if (route.loadOnly && !generation.loading) {
        throw new KernelError(
          "KC_ERR_REGISTER_AFTER_START",
          `${info.id}: knightcode.${method}() is only allowed while the extension factory runs`,
        );
      }
      if (!scope.has(route.token)) {
        throw new MissingServiceError(
          `knightcode.${method}() needs ${route.token}, which no plugin provides`,
        );
      }
      const service = scope.resolve(route.token);
      const fn = service[method];
      if (typeof fn !== "function") {
        throw new MissingServiceError(`${route.token} does not implement ${method}() (called by ${info.id})`);
      }
      const result = fn.call(service, info, ...args);
      if (isDisposable(result)) {
        store.add(result);
        return undefined;
      }
      return result;
    };
  }
  return api as unknown as ExtensionAPI;
}

function isDisposable(value: unknown): value is Disposable {
  return typeof value === "object" && value !== null && typeof (value as Disposable).dispose === "function";
}

/** `knightcode.events`: free-form channels between the extensions of one session, with handler isolation. */
export class SharedEventChannels {
  private readonly channels = new Map<
    string,
    readonly { owner: ExtensionInfo; handler: (data: unknown) => unknown }[]
  >();

  constructor(private readonly report: (report: HandlerErrorReport) => void) {}

  on(channel: string, handler: (data: unknown) => unknown, owner: ExtensionInfo): () => void {
    const entry = { owner, handler };
    this.channels.set(channel, [...(this.channels.get(channel) ?? []), entry]);
    return () => {
      this.channels.set(
        channel,
        (this.channels.get(channel) ?? []).filter((e) => e !== entry),
      );
    };
  }

  emit(channel: string, data: unknown): void {
    for (const { owner, handler } of this.channels.get(channel) ?? []) {
      const fail = (error: unknown) => this.report({ owner, event: `events:${channel}`, error });
      try {
        const result = handler(data);
        if (result instanceof Promise) result.catch(fail);
      } catch (error) {
        fail(error);
      }
    }
  }

  count(): number {
    let total = 0;
    for (const list of this.channels.values()) total += list.length;
    return total;
  }
}

/**
 * `knightcode.services`: typed services the extensions of a session offer one another (in the spirit of VS Code's
 * extension exports). A reference made by `defineService()` names a service and carries its type; one extension
 * provides it, the others get it. A provider registered with `fallback` is a default that any other provider of
 * the same reference replaces while that one is registered. Providers are registrations like any other: reload
 * and shutdown remove them, and `watch` listeners hear of every change of provider.
 *
 * A `process` reference has one instance per providing extension per process (`SharedServiceInstances`, held by
 * the kernel), so the sessions of an app-server share, say, the lock on a checkout.
 */
import type { ExtensionInfo, ServiceRef } from "../api/extension-api.js";
import { errorMessage, KernelError, MissingServiceError } from "../errors.js";
import { type Disposable, toDisposable } from "../lifecycle/disposable.js";

const SERVICE_ID = /^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$/;

/** Makes a service reference; declare it once (in the kit, or in a module both sides import). */
export function defineService<T>(
  id: string,
  options: { description: string; scope?: "session" | "process"; providedBy?: string },
): ServiceRef<T> {
  if (!SERVICE_ID.test(id)) {
    throw new KernelError(
      "KC_ERR_INVALID_TOKEN",
      `Service id "${id}" must be dotted lower camel case, for example "knightcode.git"`,
    );
  }
  return Object.freeze({
    id,
    description: options.description,
    scope: options.scope ?? "session",
    ...(options.providedBy ? { providedBy: options.providedBy } : {}),
  });
}

/** The instances of `process` services, shared by the sessions of one kernel. */
export class SharedServiceInstances {
  private readonly instances = new Map<string, { value: unknown; users: number }>();

  /** The instance for this provider (made on first use); `release` when the provider goes away. */
  acquire(key: string, create: () => unknown): { value: unknown; release(): void } {
    let entry = this.instances.get(key);
    if (!entry) {
      entry = { value: create(), users: 0 };
      this.instances.set(key, entry);
    }
    entry.users++;
    let released = false;
    const held = entry;
    return {
      value: entry.value,
      release: () => {
        if (released) return;
        released = true;
        held.users--;
        if (held.users === 0 && this.instances.get(key) === held) this.instances.delete(key);
      },
    };
  }
}

interface Provider {
  owner: ExtensionInfo;
  create: () => unknown;
  fallback: boolean;
  made?: { value: unknown; release?: () => void };
}

type Listener = (service: unknown) => void;

/** A reference without its type, for the code that does not care which service it names. */
type RefInfo = Omit<ServiceRef<unknown>, "__service">;

/** One session's services. */
export class ServiceDirectory {
  private readonly providers = new Map<string, Provider[]>();
  private readonly listeners = new Map<string, Set<{ owner: ExtensionInfo; listener: Listener }>>();

  constructor(
    private readonly shared: SharedServiceInstances,
    private readonly report: (owner: ExtensionInfo, what: string, error: unknown) => void,
  ) {}

  provide<T>(
    owner: ExtensionInfo,
    ref: ServiceRef<T>,
    create: () => T,
    options: { fallback?: boolean } = {},
  ): Disposable {
    if (typeof create !== "function") {
      throw new TypeError(
        `${owner.id}: knightcode.services.provide(${ref.id}) needs a function that makes it`,
      );
    }
    const fallback = options.fallback === true;
    const list = (this.providers.get(ref.id) ?? []).filter((p) => p.owner.id !== owner.id);
    const rival = list.find((p) => p.fallback === fallback);
    if (rival) {
      throw new KernelError(
        "KC_ERR_SERVICE_CONFLICT",
        `${owner.id} provides ${ref.id}, which ${rival.owner.id} already provides` +
          `${fallback ? " as a default" : ""}. Switch one of the two extensions off` +
          `${fallback ? "" : ", or register the default one with { fallback: true }"}.`,
      );
    }
    const before = this.active(ref.id);
    const replaced = (this.providers.get(ref.id) ?? []).find((p) => p.owner.id === owner.id);
    const provider: Provider = { owner, create, fallback };
    this.providers.set(ref.id, [...list, provider]);
    if (replaced) this.release(replaced);
    this.changed(ref, before);
    return toDisposable(() => {
      const now = this.active(ref.id);
      const rest = (this.providers.get(ref.id) ?? []).filter((p) => p !== provider);
      if (rest.length > 0) this.providers.set(ref.id, rest);
      else this.providers.delete(ref.id);
      this.release(provider);
      this.changed(ref, now);
    }, `${owner.id} services.provide(${ref.id})`);
  }

  get<T>(ref: ServiceRef<T>): T | undefined {
    const provider = this.active(ref.id);
    return provider ? (this.instance(ref, provider) as T) : undefined;
  }

  require<T>(ref: ServiceRef<T>, caller: ExtensionInfo): T {
    const provider = this.active(ref.id);
    if (!provider) {
      const by = ref.providedBy ? ` (${ref.providedBy} provides it; is it switched off?)` : "";
      throw new MissingServiceError(
        `${caller.id} needs the service ${ref.id} (${ref.description}), which no extension of this session provides${by}`,
      );
    }
    return this.instance(ref, provider) as T;
  }

  /** Who provides the reference now, for listings and tests. */
  providerOf(ref: RefInfo): ExtensionInfo | undefined {
    return this.active(ref.id)?.owner;
  }

  watch<T>(owner: ExtensionInfo, ref: ServiceRef<T>, listener: (service: T | undefined) => void): Disposable {
    const entry = { owner, listener: listener as Listener };
    let set = this.listeners.get(ref.id);
    if (!set) {
      set = new Set();
      this.listeners.set(ref.id, set);
    }
    set.add(entry);
    this.call(entry, ref);
    return toDisposable(() => {
      this.listeners.get(ref.id)?.delete(entry);
    }, `${owner.id} services.watch(${ref.id})`);
  }

  /** The provider in force: the newest that is not a default, else the default. */
  private active(id: string): Provider | undefined {
    const list = this.providers.get(id);
    if (!list) return undefined;
    return list.find((p) => !p.fallback) ?? list[0];
  }

  private instance(ref: RefInfo, provider: Provider): unknown {
    if (provider.made) return provider.made.value;
    const make = () => {
      try {
        return provider.create();
      } catch (error) {
        throw new KernelError(
          "KC_ERR_MISSING_SERVICE",
          `${provider.owner.id} failed to make the service ${ref.id}: ${errorMessage(error)}`,
          { cause: error },
        );
      }
    };
    if (ref.scope === "process") {
      const held = this.shared.acquire(`${ref.id}\0${provider.owner.id}`, make);
      provider.made = { value: held.value, release: held.release };
    } else provider.made = { value: make() };
    return provider.made.value;
  }

  private release(provider: Provider): void {
    provider.made?.release?.();
    provider.made = undefined;
  }

  private changed(ref: RefInfo, before: Provider | undefined): void {
    if (this.active(ref.id) === before) return;
    for (const entry of [...(this.listeners.get(ref.id) ?? [])]) this.call(entry, ref);
  }

  private call(entry: { owner: ExtensionInfo; listener: Listener }, ref: RefInfo): void {
    try {
      const provider = this.active(ref.id);
      entry.listener(provider ? this.instance(ref, provider) : undefined);
    } catch (error) {
      this.report(entry.owner, `services.watch(${ref.id})`, error);
    }
  }
}

/**
 * Provider registrations are process-wide (the spec says so): every session of the process sees a provider any
 * session registered, and `unregisterProvider` removes it for everyone.
 *
 * Each session's registration is kept separately, so sessions coming and going never take a provider away from a
 * session that still has it registered. When several registrations of one name are alive, one that is not a default
 * wins over a default (`{fallback: true}`, as the built-ins register: a user's replacement beats them), and among
 * equals the most recent wins. A session that
 * reloads registers again; its old registration is kept until the reload finishes, so other sessions see no gap.
 */
import {
  type Disposable,
  type ExtensionInfo,
  type ProviderConfig,
  toDisposable,
} from "../../kernel/index.js";

export interface ProviderEntry {
  name: string;
  config: ProviderConfig;
  owner: string;
  origin: ExtensionInfo["origin"];
  /** Registered as a default, which any other registration of the name replaces. */
  fallback: boolean;
}

interface Registration extends ProviderEntry {
  holder: object;
  seq: number;
}

export class ProviderStore {
  private readonly registrations = new Map<string, Registration[]>();
  private seq = 0;
  private version = 0;

  /**
   * @param holder identifies the registering session.
   * @param options.pendingReload while the holder's session reloads, the promise of its end: removal waits for it.
   */
  register(
    name: string,
    config: ProviderConfig,
    owner: ExtensionInfo,
    holder: object,
    options: { fallback?: boolean; pendingReload?: () => Promise<void> | undefined } = {},
  ): Disposable {
    const pendingReload = options.pendingReload ?? (() => undefined);
    const list = (this.registrations.get(name) ?? []).filter(
      (r) => !(r.holder === holder && r.owner === owner.id),
    );
    const registration: Registration = {
      name,
      config,
      owner: owner.id,
      origin: owner.origin,
      fallback: options.fallback === true,
      holder,
      seq: this.seq++,
    };
    list.push(registration);
    this.registrations.set(name, list);
    this.version++;
    const remove = () => {
      const current = this.registrations.get(name);
      if (!current?.includes(registration)) return;
      const rest = current.filter((r) => r !== registration);
      if (rest.length > 0) this.registrations.set(name, rest);
      else this.registrations.delete(name);
      this.version++;
    };
    return toDisposable(() => {
      const reload = pendingReload();
      if (reload) void reload.finally(remove);
      else remove();
    }, `${owner.id} provider ${name}`);
  }

  unregister(name: string): boolean {
    const removed = this.registrations.delete(name);
    if (removed) this.version++;
    return removed;
  }

  get(name: string): ProviderEntry | undefined {
    const list = this.registrations.get(name);
    if (!list || list.length === 0) return undefined;
    const preferred = list.filter((r) => !r.fallback);
    const pool = preferred.length > 0 ? preferred : list;
    const winner = pool.reduce((a, b) => (b.seq > a.seq ? b : a));
    return {
      name,
      config: winner.config,
      owner: winner.owner,
      origin: winner.origin,
      fallback: winner.fallback,
    };
  }

  list(): ProviderEntry[] {
    return [...this.registrations.keys()].map((name) => this.get(name)!);
  }

  /** Changes whenever a provider is added or removed (lets callers cache model lists). */
  get revision(): number {
    return this.version;
  }

  /**
   * A registered provider that implements a wire API (the one registered under the API's name first), for custom
   * providers that name only the API and for providers whose models use several; never the provider `except`.
   */
  implementationOf(api: string, except?: string): ProviderConfig["streamSimple"] | undefined {
    const own = this.get(api);
    if (own && own.name !== except && own.config.api === api && own.config.streamSimple)
      return own.config.streamSimple;
    for (const entry of this.list()) {
      if (entry.name === except) continue;
      if (entry.config.api === api && entry.config.streamSimple) return entry.config.streamSimple;
    }
    return undefined;
  }
}

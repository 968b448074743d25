/**
 * Provider registrations are process-wide (the spec says so): every session of the process sees a provider any
 * session registered. A registration made by an extension lives while at least one session that registered it
 * is alive, so a reload (which registers again) never leaves a gap; `unregisterProvider` removes it for everyone.
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
  origin: ExtensionInfo["origin"] | "models.json";
}

export class ProviderStore {
  private readonly entries = new Map<string, ProviderEntry & { holders: Set<object> }>();
  private version = 0;

  register(name: string, config: ProviderConfig, owner: ExtensionInfo, holder: object): Disposable {
    const existing = this.entries.get(name);
    const holders = existing && existing.owner === owner.id ? existing.holders : new Set<object>();
    holders.add(holder);
    const entry = { name, config, owner: owner.id, origin: owner.origin, holders };
    this.entries.set(name, entry);
    this.version++;
    return toDisposable(() => {
      entry.holders.delete(holder);
      if (entry.holders.size === 0 && this.entries.get(name) === entry) {
        this.entries.delete(name);
        this.version++;
      }
    }, `${owner.id} provider ${name}`);
  }

  unregister(name: string): boolean {
    const removed = this.entries.delete(name);
    if (removed) this.version++;
    return removed;
  }

  get(name: string): ProviderEntry | undefined {
    return this.entries.get(name);
  }

  list(): ProviderEntry[] {
    return [...this.entries.values()];
  }

  /** Changes whenever a provider is added or removed (lets callers cache model lists). */
  get revision(): number {
    return this.version;
  }

  /** A registered provider that implements a wire API, for custom providers that name only the API. */
  implementationOf(api: string): ProviderConfig["streamSimple"] | undefined {
    for (const entry of this.entries.values()) {
      if (entry.config.api === api && entry.config.streamSimple) return entry.config.streamSimple;
    }
    return undefined;
  }
}

/**
 * The service container on awilix: plugins provide tokens, declare the tokens they need, and live in the root
 * scope (one per process) or in a session scope (one child scope per session). Providing a token again replaces
 * the earlier provider, which is how a service is swapped.
 *
 * awilix neither disposes child scopes nor isolates failing disposers, so the container tracks what it created
 * and disposes it last-in first-out, running every disposer even when one fails.
 */
import { type AwilixContainer, asFunction, asValue, createContainer, InjectionMode, Lifetime } from "awilix";
import { KernelError, MissingServiceError } from "../errors.js";
import type { ServiceOf, Token } from "./tokens.js";

type DepsMap = Record<string, Token<any>>;
type ResolvedDeps<D extends DepsMap> = { [K in keyof D]: ServiceOf<D[K]> };

export interface PluginDefinition<T = unknown, D extends DepsMap = DepsMap> {
  /** `plugin:<name>`; named in every error about it. */
  id: string;
  provides: Token<T>;
  deps?: D;
  create(deps: ResolvedDeps<D>): T;
  dispose?(service: T): void | Promise<void>;
}

export function definePlugin<T, D extends DepsMap = Record<string, never>>(
  plugin: PluginDefinition<T, D>,
): PluginDefinition<T, D> {
  return plugin;
}

interface Created {
  id: string;
  dispose(): void | Promise<void>;
}

export class Container {
  private readonly awilix: AwilixContainer;
  private readonly providers = new Map<
    string,
    { token: Token<unknown>; plugin?: PluginDefinition<any, any> }
  >();
  /** What each container (by its cradle) created, in creation order. */
  private readonly created = new WeakMap<object, Created[]>();
  private readonly scopes = new Set<SessionScope>();
  private disposed = false;

  constructor() {
    this.awilix = createContainer({ strict: true, injectionMode: InjectionMode.PROXY });
    this.created.set(this.awilix.cradle, []);
  }

  /** Registers a plugin as the provider of its token, replacing any earlier provider. */
  provide<T, D extends DepsMap>(plugin: PluginDefinition<T, D>): this {
    const token = plugin.provides as Token<unknown>;
    this.providers.set(token.id, { token, plugin });
    // A root instance made by the earlier provider must not shadow the replacement. Scopes that already exist
    // keep what they resolved until they end.
    this.awilix.cache.delete(token.id);
    const lifetime = token.scope === "root" ? Lifetime.SINGLETON : Lifetime.SCOPED;
    this.awilix.register(
      token.id,
      asFunction(
        (cradle: Record<string, unknown>) => {
          const deps: Record<string, unknown> = {};
          for (const [name, dep] of Object.entries(plugin.deps ?? {})) deps[name] = cradle[dep.id];
          const service = plugin.create(deps as ResolvedDeps<D>);
          if (plugin.dispose) {
            this.created.get(cradle)?.push({ id: plugin.id, dispose: () => plugin.dispose!(service) });
          }
          return service;
        },
        { lifetime },
      ),
    );
    return this;
  }

  /** Registers a ready-made root value for a token. */
  provideValue<T>(token: Token<T>, value: T): this {
    if (token.scope !== "root") {
      throw new KernelError(
        "KC_ERR_SCOPE",
        `${token} is session-scoped; provide its value on a session scope`,
      );
    }
    this.providers.set(token.id, { token: token as Token<unknown> });
    this.awilix.register(token.id, asValue(value));
    return this;
  }

  has(token: Token<unknown>): boolean {
    return this.providers.has(token.id);
  }

  /**
   * Checks every plugin's dependencies before anything is created: a missing token or a root plugin that needs a
   * session token fails with one message naming the plugin and the token.
   * @param sessionValues tokens that every session scope will provide as values.
   */
  validate(sessionValues: readonly Token<unknown>[] = []): void {
    const problems: string[] = [];
    const sessionProvided = new Set(sessionValues.map((t) => t.id));
    for (const { plugin, token } of this.providers.values()) {
      if (!plugin) continue;
      for (const dep of Object.values(plugin.deps ?? {}) as Token<unknown>[]) {
        const provided = this.providers.has(dep.id) || sessionProvided.has(dep.id);
        if (!provided) {
          problems.push(`plugin "${plugin.id}" needs ${dep}, which no plugin provides`);
        } else if (token.scope === "root" && dep.scope === "session") {
          problems.push(`plugin "${plugin.id}" provides root ${token} but needs session-scoped ${dep}`);
        }
      }
    }
    if (problems.length > 0) throw new MissingServiceError(`Cannot start: ${problems.join("; ")}`);
  }

  resolve<T>(token: Token<T>): T {
    return resolveFrom(this.awilix, token, this.providers.has(token.id));
  }

  /** A child scope for one session; `values` are session-level services (e.g. the session's hook bus). */
  createScope(values: [Token<any>, unknown][] = []): SessionScope {
    if (this.disposed) throw new KernelError("KC_ERR_DISPOSED", "The container was disposed");
    const awilixScope = this.awilix.createScope();
    this.created.set(awilixScope.cradle, []);
    const scope = new SessionScope(awilixScope, this, () => this.scopes.delete(scope));
    for (const [token, value] of values) scope.provideValue(token, value);
    this.scopes.add(scope);
    return scope;
  }

  /** Disposes open session scopes (newest first), then the root services, LIFO; returns every failure. */
  async dispose(): Promise<unknown[]> {
    if (this.disposed) return [];
    this.disposed = true;
    const errors: unknown[] = [];
    for (const scope of [...this.scopes].reverse()) errors.push(...(await scope.dispose()));
    errors.push(...(await this.disposeCreated(this.awilix.cradle)));
    return errors;
  }

  /** @internal */
  isProvided(id: string, scope?: SessionScope): boolean {
    return this.providers.has(id) || (scope?.hasValue(id) ?? false);
  }

  /** @internal */
  async disposeCreated(cradle: object): Promise<unknown[]> {
    const list = this.created.get(cradle) ?? [];
    this.created.set(cradle, []);
    const errors: unknown[] = [];
    for (const item of list.reverse()) {
      try {
        await item.dispose();
      } catch (error) {
        errors.push(new KernelError("KC_ERR_DISPOSE", `Disposing ${item.id} failed`, { cause: error }));
      }
    }
    return errors;
  }
}

export class SessionScope {
  private readonly values = new Set<string>();
  private disposed = false;

  constructor(
    private readonly awilix: AwilixContainer,
    private readonly container: Container,
    private readonly onDisposed: () => void,
  ) {}

  provideValue<T>(token: Token<T>, value: T): void {
    this.values.add(token.id);
    this.awilix.register(token.id, asValue(value));
  }

  hasValue(id: string): boolean {
    return this.values.has(id);
  }

  has(token: Token<unknown>): boolean {
    return this.container.isProvided(token.id, this);
  }

  resolve<T>(token: Token<T>): T {
    if (this.disposed)
      throw new KernelError("KC_ERR_DISPOSED", `Cannot resolve ${token}: the session scope was disposed`);
    return resolveFrom(this.awilix, token, this.has(token));
  }

  tryResolve<T>(token: Token<T>): T | undefined {
    return this.has(token) ? this.resolve(token) : undefined;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Runs the disposers of everything this scope created, LIFO; returns the failures. */
  async dispose(): Promise<unknown[]> {
    if (this.disposed) return [];
    this.disposed = true;
    this.onDisposed();
    return this.container.disposeCreated(this.awilix.cradle);
  }
}

function resolveFrom<T>(awilix: AwilixContainer, token: Token<T>, provided: boolean): T {
  if (!provided)
    throw new MissingServiceError(
      `Nothing provides ${token}${token.description ? ` (${token.description})` : ""}`,
    );
  return awilix.resolve<T>(token.id);
}

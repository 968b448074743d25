/**
 * The extension loader on jiti: TypeScript and JavaScript extensions load without a build step.
 *
 * One jiti instance serves every extension, with a persistent transform cache (under the agent directory) and a
 * shared module cache, so a module is evaluated once per process however many sessions call its factory. Modules
 * are imported concurrently; factories are called later, in load order, by the session runtime.
 * `virtualModules` maps package names (`@knightcodeai/cli`, `@sinclair/typebox`) to the running package's own
 * module objects, so an extension needs neither installed and shares their classes (instanceof works). A host may
 * keep several named sets of them (a session that turns a compatibility layer off imports through a set without
 * its names); each set has its own jiti instance and module cache.
 *
 * What an extension needs (`ExtensionMeta`: the module's `meta` export, and `apiVersion`/`requires` in the
 * `knightcode` field of the nearest package.json, found as Node finds a file's `type`) is read here. An
 * `apiVersion` range the running API (`ExtensionLoaderOptions.apiVersion`, given by the host) does not satisfy is a
 * load failure naming the extension, the range and the version; `requires` goes to the session runtime, which knows
 * what else loaded.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import type { Jiti } from "jiti";
import type {
  ExtensionFactory,
  ExtensionMeta,
  ExtensionOrigin,
  ProviderConfig,
} from "../api/extension-api.js";
import { ExtensionLoadError, errorMessage } from "../errors.js";
import { satisfies } from "./version-range.js";

export interface ExtensionSource {
  origin: ExtensionOrigin;
  /** A `.ts`/`.js` file, a directory with `index.ts`/`index.js`, or a package directory listing its extensions. */
  path?: string;
  /** An extension given as code (built-ins, SDK callers). */
  factory?: ExtensionFactory;
  /** Name for an inline factory: the owner id becomes `<origin>:<name>`. */
  name?: string;
}

export interface LoadedExtension {
  id: string;
  origin: ExtensionOrigin;
  path?: string;
  factory: ExtensionFactory;
  /** Extensions it requires (its meta and its package's), checked by the session runtime before the factory runs. */
  requires?: readonly string[];
  /** The `name` of the package.json nearest to its file: a `requires` entry may name it. */
  packageName?: string;
  /** What the host's `inspect` found: warnings to report when the factory runs, and how to read event names. */
  warnings?: readonly string[];
  dialect?: EventDialect;
}

/**
 * How the `on(name)` of an extension written against another agent's event names is read, for a name the event
 * catalogue lacks: the catalogue event it means (with `adapt` turning that event's payload into the one the handler
 * expects, or `undefined` to skip this dispatch), or why it is never emitted (the handler is kept nowhere and the
 * extension is warned). A name in the catalogue is never translated.
 */
export interface EventDialect {
  translateEvent(event: string): { event: string; adapt?(payload: any): any } | { never: string };
  /**
   * A provider configuration written in the other agent's shape (its `streamSimple` signature, say), as KnightCode's
   * `registerProvider` takes it. Unset: the configuration is used as given.
   */
  adaptProvider?(config: ProviderConfig): ProviderConfig;
}

/** What a host learns from an extension file after it imported (see ExtensionLoaderOptions.inspect). */
export interface ExtensionInspection {
  warnings?: readonly string[];
  dialect?: EventDialect;
}

export interface ExtensionLoadFailure {
  id: string;
  origin: ExtensionOrigin;
  path?: string;
  error: ExtensionLoadError;
}

export interface LoadResult {
  extensions: LoadedExtension[];
  failures: ExtensionLoadFailure[];
  /**
   * Unpins the cached factories this load uses (the session that loaded them ended or reloaded); idempotent. Until
   * then they stay cached however many others are evicted.
   */
  release(): void;
}

/** Cached factories no session uses that the loader keeps (spec: up to 256 inactive factories remain). */
export const INACTIVE_FACTORIES_KEPT = 256;

interface CachedFactory {
  factory: unknown;
  declared: unknown;
  /** Loads that use it and have not released it: while above 0 it is pinned. */
  users: number;
}

export interface ExtensionLoaderOptions {
  /** Persistent transform cache directory; `false` disables it. */
  cacheDir: string | false;
  /**
   * Modules given to extension files by name; produced once per module set, when the first extension file of
   * that set loads. The function receives the set's name (`load()`'s `moduleSet`, `"default"` when not given).
   */
  virtualModules?: Record<string, unknown> | ((moduleSet: string) => Promise<Record<string, unknown>>);
  /**
   * The version of the API the host offers extensions (for KnightCode, its package version), checked against the
   * `apiVersion` an extension declares; without it, declarations are read but no range is checked.
   */
  apiVersion?: string;
  /**
   * Looks at an extension file once it imported, given its module set's virtual modules: what it imports that the
   * host cannot give it (warnings), and how its event names read (a compatibility layer's dialect).
   */
  inspect?(
    file: string,
    modules: Record<string, unknown>,
  ): ExtensionInspection | undefined | Promise<ExtensionInspection | undefined>;
}

export interface LoadOptions {
  /** Re-evaluate modules (for /reload after edits) instead of reusing the module cache. */
  fresh?: boolean;
  /** Which set of virtual modules the files may import (see ExtensionLoaderOptions.virtualModules). */
  moduleSet?: string;
}

const INDEX_FILES = ["index.ts", "index.js", "index.mts", "index.mjs"];

export class ExtensionLoader {
  /**
   * One jiti per module set, created on the first file to load: sessions with only built-in (inline) extensions
   * never load jiti.
   */
  private readonly shared = new Map<string, Promise<Jiti>>();
  private readonly virtualModules = new Map<string, Promise<Record<string, unknown>>>();
  /** The nearest package.json of each folder looked at (null: none up to the root). */
  private readonly packages = new Map<string, NearestPackage | null>();
  /**
   * Factories of extension files by module set and path, least recently loaded first. A session's load pins what it
   * uses until it releases them; past `INACTIVE_FACTORIES_KEPT` unpinned ones, the oldest is dropped with its module,
   * so a later load evaluates the file again. A session holds its own factories, so dropping one never touches it.
   */
  private readonly factories = new Map<string, CachedFactory>();

  constructor(private readonly options: ExtensionLoaderOptions) {}

  /** Expands a source into the extension files it stands for (a package may list several). */
  expand(
    source: ExtensionSource,
  ): { id: string; path?: string; factory?: ExtensionFactory; error?: string }[] {
    if (source.factory) {
      return [{ id: `${source.origin}:${source.name ?? "inline"}`, factory: source.factory }];
    }
    if (!source.path)
      return [{ id: `${source.origin}:?`, error: "the source names neither a path nor a factory" }];
    const path = resolve(source.path);
    const id = `${source.origin}:${path}`;
    if (!existsSync(path)) return [{ id, path, error: "no such file or directory" }];
    if (!statSync(path).isDirectory()) return [{ id, path }];
    const manifest = join(path, "package.json");
    if (existsSync(manifest)) {
      let listed: unknown;
      try {
        listed = JSON.parse(readFileSync(manifest, "utf8"))?.knightcode?.extensions;
      } catch (error) {
        return [{ id, path: manifest, error: `package.json is not valid JSON (${errorMessage(error)})` }];
      }
      if (listed !== undefined) {
        if (!Array.isArray(listed) || listed.some((entry) => typeof entry !== "string")) {
          return [
            {
              id,
              path: manifest,
              error: '"knightcode.extensions" in package.json must be an array of paths',
            },
          ];
        }
        return (listed as string[]).map((entry) => {
          const file = resolve(path, entry);
          return existsSync(file)
            ? { id: `${source.origin}:${file}`, path: file }
            : { id: `${source.origin}:${file}`, path: file, error: `listed in ${manifest} but missing` };
        });
      }
    }
    const index = INDEX_FILES.map((name) => join(path, name)).find((file) => existsSync(file));
    if (!index) return [{ id, path, error: `the directory has no ${INDEX_FILES.slice(0, 2).join(" or ")}` }];
    return [{ id: `${source.origin}:${index}`, path: index }];
  }

  /**
   * Imports every source concurrently and returns the factories in source order. A broken extension becomes a
   * failure naming its file and the reason; the others still load.
   */
  async load(sources: readonly ExtensionSource[], options: LoadOptions = {}): Promise<LoadResult> {
    const planned = sources.flatMap((source) =>
      this.expand(source).map((item) => ({ ...item, origin: source.origin })),
    );
    const needsJiti = planned.some((item) => !item.factory && !item.error);
    if (options.fresh) this.packages.clear();
    const set = options.moduleSet ?? "default";
    let jiti: Jiti | undefined;
    if (needsJiti && options.fresh) jiti = await this.createJiti(false, set);
    else if (needsJiti) {
      if (!this.shared.has(set)) this.shared.set(set, this.createJiti(true, set));
      jiti = await this.shared.get(set);
    }
    const pinned: CachedFactory[] = [];
    const settled = await Promise.all(
      planned.map(async (item): Promise<LoadedExtension | ExtensionLoadFailure> => {
        const base = { id: item.id, origin: item.origin, ...(item.path ? { path: item.path } : {}) };
        if (item.error) return { ...base, error: new ExtensionLoadError(item.path ?? item.id, item.error) };
        let factory: unknown = item.factory;
        let declared: unknown = item.factory ? (item.factory as { meta?: unknown }).meta : undefined;
        if (!factory) {
          const key = `${set}\0${item.path!}`;
          let cached = options.fresh ? undefined : this.factories.get(key);
          if (!cached) {
            try {
              const mod = (await jiti!.import(item.path!)) as
                | { default?: unknown; meta?: unknown }
                | undefined;
              cached = {
                factory: mod && typeof mod === "object" && "default" in mod ? mod.default : mod,
                declared: mod?.meta,
                users: 0,
              };
            } catch (error) {
              return {
                ...base,
                error: new ExtensionLoadError(item.path!, describeImportError(error), error),
              };
            }
          }
          // Most recently loaded last.
          this.factories.delete(key);
          this.factories.set(key, cached);
          cached.users++;
          pinned.push(cached);
          factory = cached.factory;
          declared = cached.declared;
          if (typeof factory !== "function") {
            return {
              ...base,
              error: new ExtensionLoadError(
                item.path!,
                "the module has no default export function (the extension factory)",
              ),
            };
          }
        }
        const needs = this.needs(declared, item.path);
        if ("error" in needs)
          return { ...base, error: new ExtensionLoadError(item.path ?? item.id, needs.error) };
        let found: ExtensionInspection | undefined;
        if (item.path && this.options.inspect) {
          try {
            found = await this.options.inspect(item.path, await this.modulesOf(set));
          } catch (error) {
            found = { warnings: [`could not inspect its imports: ${errorMessage(error)}`] };
          }
        }
        return {
          ...base,
          factory: factory as ExtensionFactory,
          ...(found?.warnings?.length ? { warnings: found.warnings } : {}),
          ...(found?.dialect ? { dialect: found.dialect } : {}),
          ...(needs.requires.length > 0 ? { requires: needs.requires } : {}),
          ...(needs.packageName ? { packageName: needs.packageName } : {}),
        };
      }),
    );
    let released = false;
    const result: LoadResult = {
      extensions: [],
      failures: [],
      release: () => {
        if (released) return;
        released = true;
        for (const cached of pinned) cached.users--;
        this.evict();
      },
    };
    for (const item of settled) {
      if ("error" in item) result.failures.push(item);
      else result.extensions.push(item);
    }
    return result;
  }

  /** Drops the least recently loaded unpinned factories past `INACTIVE_FACTORIES_KEPT`, with their modules. */
  private evict(): void {
    let inactive = 0;
    for (const cached of this.factories.values()) if (cached.users <= 0) inactive++;
    for (const [key, cached] of this.factories) {
      if (inactive <= INACTIVE_FACTORIES_KEPT) break;
      if (cached.users > 0) continue;
      this.factories.delete(key);
      inactive--;
      // jiti keeps modules in Node's require cache: without the entry, the next load evaluates the file again.
      const path = key.slice(key.indexOf("\0") + 1);
      delete createRequire(import.meta.url).cache[path];
    }
  }

  /** How many factories are cached, and how many of them a session uses (for tests and diagnostics). */
  cachedFactories(): { total: number; pinned: number } {
    let pinned = 0;
    for (const cached of this.factories.values()) if (cached.users > 0) pinned++;
    return { total: this.factories.size, pinned };
  }

  /**
   * What the extension at `path` needs: its `meta` export and its package's declaration, checked for shape and for
   * the API version; `requires` joined from both.
   */
  private needs(
    declared: unknown,
    path: string | undefined,
  ): { requires: string[]; packageName?: string } | { error: string } {
    const own = readMeta(declared, "its meta export");
    if ("error" in own) return own;
    const pkg = path ? this.nearestPackage(dirname(path)) : undefined;
    const shared = pkg ? readMeta(pkg.knightcode, `"knightcode" in ${pkg.path}`, true) : {};
    if ("error" in shared) return shared;
    for (const [meta, where] of [
      [own.meta, "its meta.apiVersion"],
      [shared.meta, `"knightcode.apiVersion" in ${pkg?.path}`],
    ] as const) {
      const range = meta?.apiVersion;
      if (range === undefined || this.options.apiVersion === undefined) continue;
      let ok: boolean;
      try {
        ok = satisfies(this.options.apiVersion, range);
      } catch (error) {
        return { error: `${where} "${range}" is not a version range: ${errorMessage(error)}` };
      }
      if (!ok) {
        return {
          error: `it needs the KnightCode API ${range} (${where}), and this is KnightCode ${this.options.apiVersion}`,
        };
      }
    }
    const requires = [...new Set([...(shared.meta?.requires ?? []), ...(own.meta?.requires ?? [])])];
    return { requires, ...(pkg?.name ? { packageName: pkg.name } : {}) };
  }

  /** The package.json closest above `dir` (as Node looks for a file's `type`), read once per folder. */
  private nearestPackage(dir: string): NearestPackage | undefined {
    const seen: string[] = [];
    let found: NearestPackage | null | undefined;
    for (let at = dir; ; ) {
      found = this.packages.get(at);
      if (found !== undefined) break;
      seen.push(at);
      const file = join(at, "package.json");
      if (existsSync(file)) {
        found = { path: file };
        try {
          const json = JSON.parse(readFileSync(file, "utf8")) as {
            name?: unknown;
            knightcode?: unknown;
          } | null;
          if (typeof json?.name === "string") found.name = json.name;
          if (json?.knightcode !== undefined) found.knightcode = json.knightcode;
        } catch {
          // Not this loader's file to judge (a package directory's own is reported by expand()): no declaration.
        }
        break;
      }
      const parent = dirname(at);
      if (parent === at) {
        found = null;
        break;
      }
      at = parent;
    }
    for (const folder of seen) this.packages.set(folder, found);
    return found ?? undefined;
  }

  private async createJiti(moduleCache: boolean, set: string): Promise<Jiti> {
    // jiti's CommonJS entry: its ES entry imports a 190 KB CommonJS bundle, which makes Node scan that bundle for
    // export names first (about as costly as loading it, and 10 MB more memory).
    const { createJiti } = createRequire(import.meta.url)("jiti") as typeof import("jiti");
    return createJiti(join(dirname(new URL(import.meta.url).pathname), "loader.js"), {
      fsCache: this.options.cacheDir,
      moduleCache,
      interopDefault: true,
      virtualModules: await this.modulesOf(set),
    });
  }

  /** The virtual modules of a set, produced once. */
  private modulesOf(set: string): Promise<Record<string, unknown>> {
    const virtual = this.options.virtualModules;
    let modules = this.virtualModules.get(set);
    if (!modules) {
      modules = typeof virtual === "function" ? virtual(set) : Promise.resolve(virtual ?? {});
      this.virtualModules.set(set, modules);
    }
    return modules;
  }
}

interface NearestPackage {
  path: string;
  name?: string;
  knightcode?: unknown;
}

/**
 * An `ExtensionMeta` as declared (`where` names it in errors); `inPackage`: the package's `knightcode` object, whose
 * other keys (`extensions`, `skills`, ...) belong to the package manager.
 */
function readMeta(
  value: unknown,
  where: string,
  inPackage = false,
): { meta?: ExtensionMeta } | { error: string } {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return inPackage ? {} : { error: `${where} must be an object: { apiVersion?, requires? }` };
  }
  const { apiVersion, requires } = value as { apiVersion?: unknown; requires?: unknown };
  if (apiVersion !== undefined && typeof apiVersion !== "string") {
    return { error: `${where}: apiVersion must be a version range such as "^0.1"` };
  }
  if (
    requires !== undefined &&
    (!Array.isArray(requires) || requires.some((r) => typeof r !== "string" || !r))
  ) {
    return { error: `${where}: requires must be a list of extension ids or package names` };
  }
  return {
    meta: {
      ...(apiVersion !== undefined ? { apiVersion } : {}),
      ...(requires !== undefined ? { requires: requires as string[] } : {}),
    },
  };
}

function describeImportError(error: unknown): string {
  const message = errorMessage(error);
  // Syntax errors from the transform carry the position on the first line; keep the message short.
  return message.split("\n").slice(0, 6).join("\n");
}

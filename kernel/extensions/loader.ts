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
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import type { Jiti } from "jiti";
import type { ExtensionFactory, ExtensionOrigin } from "../api/extension-api.js";
import { ExtensionLoadError, errorMessage } from "../errors.js";

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
}

export interface ExtensionLoaderOptions {
  /** Persistent transform cache directory; `false` disables it. */
  cacheDir: string | false;
  /**
   * Modules given to extension files by name; produced once per module set, when the first extension file of
   * that set loads. The function receives the set's name (`load()`'s `moduleSet`, `"default"` when not given).
   */
  virtualModules?: Record<string, unknown> | ((moduleSet: string) => Promise<Record<string, unknown>>);
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
    const set = options.moduleSet ?? "default";
    let jiti: Jiti | undefined;
    if (needsJiti && options.fresh) jiti = await this.createJiti(false, set);
    else if (needsJiti) {
      if (!this.shared.has(set)) this.shared.set(set, this.createJiti(true, set));
      jiti = await this.shared.get(set);
    }
    const settled = await Promise.all(
      planned.map(async (item): Promise<LoadedExtension | ExtensionLoadFailure> => {
        const base = { id: item.id, origin: item.origin, ...(item.path ? { path: item.path } : {}) };
        if (item.error) return { ...base, error: new ExtensionLoadError(item.path ?? item.id, item.error) };
        if (item.factory) return { ...base, factory: item.factory };
        try {
          const mod = (await jiti!.import(item.path!)) as { default?: unknown } | undefined;
          const factory = mod && typeof mod === "object" && "default" in mod ? mod.default : mod;
          if (typeof factory !== "function") {
            return {
              ...base,
              error: new ExtensionLoadError(
                item.path!,
                "the module has no default export function (the extension factory)",
              ),
            };
          }
          return { ...base, factory: factory as ExtensionFactory };
        } catch (error) {
          return { ...base, error: new ExtensionLoadError(item.path!, describeImportError(error), error) };
        }
      }),
    );
    const result: LoadResult = { extensions: [], failures: [] };
    for (const item of settled) {
      if ("error" in item) result.failures.push(item);
      else result.extensions.push(item);
    }
    return result;
  }

  private async createJiti(moduleCache: boolean, set: string): Promise<Jiti> {
    // jiti's CommonJS entry: its ES entry imports a 190 KB CommonJS bundle, which makes Node scan that bundle for
    // export names first (about as costly as loading it, and 10 MB more memory).
    const { createJiti } = createRequire(import.meta.url)("jiti") as typeof import("jiti");
    const virtual = this.options.virtualModules;
    let modules = this.virtualModules.get(set);
    if (!modules) {
      modules = typeof virtual === "function" ? virtual(set) : Promise.resolve(virtual ?? {});
      this.virtualModules.set(set, modules);
    }
    return createJiti(join(dirname(new URL(import.meta.url).pathname), "loader.js"), {
      fsCache: this.options.cacheDir,
      moduleCache,
      interopDefault: true,
      virtualModules: await modules,
    });
  }
}

function describeImportError(error: unknown): string {
  const message = errorMessage(error);
  // Syntax errors from the transform carry the position on the first line; keep the message short.
  return message.split("\n").slice(0, 6).join("\n");
}

/**
 * The modules an extension file may import without installing them (`@knightcodeai/cli`, its subpaths and
 * TypeBox). They map to this running package's own module objects, so classes such as ExtensionStartupError are
 * the very ones the kernel checks for.
 *
 * The package's entry points publish themselves here when they are evaluated (`index.ts`, `testing.ts`): the
 * composition root sits below them and never imports them. Each module is produced on first use, when the first
 * extension file loads, so a run with only built-in extensions loads neither the test kit nor jiti.
 */
type ModuleLoader = () => unknown;

const loaders = new Map<string, ModuleLoader>([
  ["@sinclair/typebox", () => import("@sinclair/typebox")],
  ["@sinclair/typebox/compiler", () => import("@sinclair/typebox/compiler")],
  ["@sinclair/typebox/value", () => import("@sinclair/typebox/value")],
]);

export const PACKAGE_NAME = "@knightcodeai/cli";

/** What the entry points pass in: the kit and SDK namespaces, and loaders for the other subpaths. */
export interface PackageEntries {
  kit: object;
  sdk: object;
  testing: ModuleLoader;
  plugin: ModuleLoader;
}

/** Called by the package entry points. The first publication of a name wins (every entry offers the same modules). */
export function publishPackageEntries(entries: PackageEntries): void {
  const offer = (name: string, loader: ModuleLoader) => {
    if (!loaders.has(name)) loaders.set(name, loader);
  };
  offer(PACKAGE_NAME, () => ({ ...entries.kit, ...entries.sdk }));
  offer(`${PACKAGE_NAME}/kit`, () => entries.kit);
  offer(`${PACKAGE_NAME}/testing`, entries.testing);
  offer(`${PACKAGE_NAME}/plugin`, entries.plugin);
}

/** Every published module, loaded. The loader calls this once, when it first needs jiti. */
export async function packageModules(): Promise<Record<string, unknown>> {
  if (!loaders.has(PACKAGE_NAME)) {
    throw new Error(
      `${PACKAGE_NAME} has not published its modules for extension files: import the SDK through the package entry (${PACKAGE_NAME}), not an internal path`,
    );
  }
  const entries = await Promise.all([...loaders].map(async ([name, load]) => [name, await load()] as const));
  return Object.fromEntries(entries);
}

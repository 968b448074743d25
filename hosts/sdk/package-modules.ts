/**
 * The modules an extension file may import without installing them (`@knightcodeai/cli`, its subpaths and
 * TypeBox). They map to this running package's own module objects, so classes such as ExtensionStartupError are
 * the very ones the kernel checks for.
 *
 * The package's entry points publish themselves here when they are evaluated (`index.ts`, `testing.ts`): the
 * composition root sits below them and never imports them. The modules are produced when the first extension file
 * loads, so a run with only built-in extensions loads none of this, nor jiti; the test kit, the plugin surface and
 * the terminal UI building blocks wait until an extension imports them, so a run whose extensions do not (a print run with personal extensions)
 * never loads them.
 */
type ModuleLoader = () => unknown;

const loaders = new Map<string, ModuleLoader>([
  ["@sinclair/typebox", () => import("@sinclair/typebox")],
  ["@sinclair/typebox/compiler", () => import("@sinclair/typebox/compiler")],
  ["@sinclair/typebox/value", () => import("@sinclair/typebox/value")],
]);

export const PACKAGE_NAME = "@knightcodeai/cli";

/** The module set of sessions that keep `builtin:pi-compat` on: the package's modules plus pi's names for them. */
export const PI_COMPAT_SET = "pi-compat";

/** Subpaths that load when an extension imports them rather than with the others. */
const ON_IMPORT = new Set([`${PACKAGE_NAME}/testing`, `${PACKAGE_NAME}/plugin`, `${PACKAGE_NAME}/tui`]);

/** What the entry points pass in: the kit and SDK namespaces, and loaders for the other subpaths. */
export interface PackageEntries {
  kit: object;
  sdk: object;
  testing: ModuleLoader;
  plugin: ModuleLoader;
  tui: ModuleLoader;
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
  offer(`${PACKAGE_NAME}/tui`, entries.tui);
}

/**
 * Every published module of a module set (see PI_COMPAT_SET). The loader calls this once per set, when it first
 * needs jiti for it. The test kit, the plugin surface and the terminal UI building blocks are getters that start
 * their import when read and give its promise: jiti reads a virtual module only
 * when an extension imports it, and its `import()` (which the loader uses) awaits the promise.
 */
export async function packageModules(moduleSet = "default"): Promise<Record<string, unknown>> {
  if (!loaders.has(PACKAGE_NAME)) {
    throw new Error(
      `${PACKAGE_NAME} has not published its modules for extension files: import the SDK through the package entry (${PACKAGE_NAME}), not an internal path`,
    );
  }
  const eager = [...loaders].filter(([name]) => !ON_IMPORT.has(name));
  const modules: Record<string, unknown> = Object.fromEntries(
    await Promise.all(eager.map(async ([name, load]) => [name, await load()] as const)),
  );
  for (const name of ON_IMPORT) {
    const load = loaders.get(name);
    if (load) Object.defineProperty(modules, name, { enumerable: true, get: async () => load() });
  }
  if (moduleSet === PI_COMPAT_SET) {
    const { piModules } = await import("./pi-compat/modules.js");
    const tui = loaders.get(`${PACKAGE_NAME}/tui`);
    let loadedTui: Promise<Record<string, unknown>> | undefined;
    let mapped: Promise<import("./pi-compat/modules.js").CodingAgentMapped> | undefined;
    Object.defineProperties(
      modules,
      Object.getOwnPropertyDescriptors(
        piModules({
          root: modules[PACKAGE_NAME] as Record<string, unknown>,
          kit: modules[`${PACKAGE_NAME}/kit`] as Record<string, unknown>,
          typebox: modules["@sinclair/typebox"] as Record<string, unknown>,
          typeboxValue: modules["@sinclair/typebox/value"] as Record<string, unknown>,
          typeboxCompiler: modules["@sinclair/typebox/compiler"] as Record<string, unknown>,
          tui: () => (loadedTui ??= tui ? (tui() as Promise<Record<string, unknown>>) : Promise.resolve({})),
          mapped: () =>
            (mapped ??= (async () => {
              const [helpers, sdk, agent, yaml] = await Promise.all([
                import("./pi-compat/helpers.js"),
                import("./pi-compat/sdk.js"),
                import("./pi-compat/agent.js"),
                import("../../plugins/kit/frontmatter-yaml.js"),
              ]);
              helpers.useYamlReader(yaml.readYamlBlock);
              return { helpers, sdk, agent };
            })()),
        }),
      ),
    );
  }
  return modules;
}

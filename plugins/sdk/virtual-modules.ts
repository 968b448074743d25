/**
 * The modules an extension may import without installing them. They map to this running package's own module
 * objects, so classes such as ExtensionStartupError are the very ones the kernel checks for.
 */
export async function packageVirtualModules(): Promise<Record<string, unknown>> {
  const [self, testing, plugin, typebox, compiler, value] = await Promise.all([
    import("@knightcodeai/cli"),
    import("@knightcodeai/cli/testing"),
    import("@knightcodeai/cli/plugin"),
    import("@sinclair/typebox"),
    import("@sinclair/typebox/compiler"),
    import("@sinclair/typebox/value"),
  ]);
  return {
    "@knightcodeai/cli": self,
    "@knightcodeai/cli/testing": testing,
    "@knightcodeai/cli/plugin": plugin,
    "@sinclair/typebox": typebox,
    "@sinclair/typebox/compiler": compiler,
    "@sinclair/typebox/value": value,
  };
}

/**
 * Import boundaries of the microkernel (see docs/architecture.md):
 * - kernel/ imports nothing from plugins/, builtin-extensions/, hosts/ or the package entry points;
 * - builtin-extensions/ and hosts/ import only the package's public entry points (by package name,
 *   `@knightcodeai/cli[/testing|/plugin]`), npm packages, node built-ins, and files of their own folder.
 */
const entryPoints = "^(index|testing|plugin)\\.ts$";
module.exports = {
  forbidden: [
    {
      name: "kernel-is-self-contained",
      severity: "error",
      comment: "kernel/ must not know about plugins, built-in extensions, hosts or the package entry points.",
      from: { path: "^kernel/" },
      to: { path: ["^plugins/", "^builtin-extensions/", "^hosts/", entryPoints] },
    },
    {
      name: "builtin-extensions-use-public-api-only",
      severity: "error",
      comment:
        "A built-in extension may import only @knightcodeai/cli (and its public subpaths), npm packages, node built-ins and its own files.",
      from: { path: "^builtin-extensions/([^/]+)/" },
      to: {
        pathNot: ["^builtin-extensions/$1/", "(^|/)node_modules/", entryPoints],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "hosts-use-public-api-only",
      severity: "error",
      comment:
        "A host may import only @knightcodeai/cli (and its public subpaths), npm packages, node built-ins and its own files.",
      from: { path: "^hosts/([^/]+)/" },
      to: {
        pathNot: ["^hosts/$1/", "(^|/)node_modules/", entryPoints],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "public-api-by-package-name",
      severity: "error",
      comment: "Reach the package entry points by name (@knightcodeai/cli), never by a relative path.",
      from: { path: "^(builtin-extensions|hosts)/" },
      to: { path: entryPoints, dependencyTypes: ["local"] },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["^dist/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["knightcode-source", "import", "require", "node", "default"],
      extensions: [".ts", ".js", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

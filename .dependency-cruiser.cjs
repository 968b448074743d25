/**
 * Import boundaries of the microkernel (see docs/architecture.md). The layers, bottom to top:
 *   kernel/ <- plugins/kit/ (run-time helpers) <- plugins/ (services) <- kit.ts (public kit entry)
 *   <- builtin-extensions/ <- hosts/sdk/ (the composition root) <- hosts/testing/ <- index.ts, testing.ts
 *   <- hosts/cli and the other hosts.
 * - kernel/ imports nothing above it;
 * - plugins/ (services) never import built-in extensions, hosts or the package entry points;
 * - plugins/kit/ imports only the kernel and itself;
 * - kit.ts (`@knightcodeai/cli/kit`) re-exports only the kernel and plugins/kit/: no service module;
 * - builtin-extensions/ import only `@knightcodeai/cli/kit` (and `/tui`), npm packages, node built-ins and their own files;
 * - hosts other than the composition root (hosts/sdk, hosts/testing) use the public entry points only;
 * - no runtime import cycles anywhere (type-only imports aside).
 */
const entryPoints = "^(index|kit|testing|plugin|tui)\\.ts$";
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "No runtime import cycles: a cycle means two layers know each other. Type-only imports are fine.",
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    {
      name: "kernel-is-self-contained",
      severity: "error",
      comment: "kernel/ must not know about plugins, built-in extensions, hosts or the package entry points.",
      from: { path: "^kernel/" },
      to: { path: ["^plugins/", "^builtin-extensions/", "^hosts/", entryPoints] },
    },
    {
      name: "services-never-reach-up",
      severity: "error",
      comment: "Services (plugins/) never import built-in extensions, hosts or the package entry points.",
      from: { path: "^plugins/" },
      to: { path: ["^builtin-extensions/", "^hosts/", entryPoints] },
    },
    {
      name: "kit-is-a-leaf",
      severity: "error",
      comment:
        "plugins/kit/ holds the run-time helpers extensions use; it imports only the kernel and itself.",
      from: { path: "^plugins/kit/" },
      to: { path: "^plugins/", pathNot: "^plugins/kit/" },
    },
    {
      name: "kit-entry-holds-no-service",
      severity: "error",
      comment:
        "@knightcodeai/cli/kit is the kernel's public API and the run-time helpers of plugins/kit/: a service module re-exported there would be a door the built-ins have and a replacement would not. Reach a service through the public API (ctx, ModeContext.host, knightcode.services).",
      from: { path: "^kit\\.ts$" },
      to: { pathNot: ["^kernel/", "^plugins/kit/", "(^|/)node_modules/"], dependencyTypesNot: ["core"] },
    },
    {
      name: "builtin-extensions-use-public-kit-only",
      severity: "error",
      comment:
        "A built-in extension may import only @knightcodeai/cli/kit and /tui, npm packages, node built-ins and its own files (each provider under providers/ is a built-in of its own).",
      from: { path: "^builtin-extensions/(providers/[^/]+|[^/]+)/" },
      to: {
        pathNot: ["^builtin-extensions/$1/", "(^|/)node_modules/", "^(kit|tui)\\.ts$"],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "hosts-use-public-api-only",
      severity: "error",
      comment:
        "A host may import only @knightcodeai/cli (and its public subpaths), npm packages, node built-ins and its own files. The composition root (hosts/sdk) and the test kit (hosts/testing) are the exceptions. The built-in manifest is public data (BUILTIN_MANIFEST); a host may read it by path so that --help loads no SDK.",
      from: { path: "^hosts/([^/]+)/", pathNot: "^hosts/(sdk|testing)/" },
      to: {
        pathNot: ["^hosts/$1/", "(^|/)node_modules/", entryPoints, "^hosts/sdk/builtin-manifest\\.ts$"],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "composition-root-below-entries",
      severity: "error",
      comment: "hosts/sdk is below the package entry points and the test kit; they publish themselves to it.",
      from: { path: "^hosts/sdk/" },
      to: { path: ["^hosts/(?!sdk/)", entryPoints], pathNot: "^kit\\.ts$" },
    },
    {
      name: "public-api-by-package-name",
      severity: "error",
      comment: "Reach the package entry points by name (@knightcodeai/cli), never by a relative path.",
      from: { path: "^(builtin-extensions|hosts/(?!sdk/|testing/))" },
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

/**
 * Builds dist/ (`npm run build`): esbuild bundles the package entry points (`.`, `./kit`, `./testing`, `./plugin`, `./tui`)
 * and the `knightcode` command; `tsc -p tsconfig.build.json` then writes the declarations beside them.
 *
 * Why a bundle: an unbundled start-up loads about 380 ES modules (TypeBox alone is 250 files), and resolving,
 * reading and compiling each file costs more than the code in it. With code splitting the entries share chunks, so
 * every class exists once and `instanceof` holds across entries; each dynamic `import()` (a built-in extension, a
 * mode's implementation, the CLI's run code) stays its own chunk and loads only when it is called.
 *
 * Bundled: our code, TypeBox, tapable and awilix (small, needed by every session), and `yaml` (in a chunk of its own,
 * loaded with the first frontmatter). External: what loads lazily or must stay a real package (jiti, the provider
 * SDKs, the MCP SDK, execa, ajv, jsonc-parser).
 *
 * The `knightcode` command itself runs from a second bundle: everything `hosts/cli/run.ts` reaches in one CommonJS
 * file, `dist/chunks/knightcode-cli-<hash>.cjs`, which `hosts/cli/bundle-loader.ts` compiles with a V8 code cache
 * (Node 20 keeps no compiled code for ES modules; compiling is most of a start-up). Its name carries a hash of its
 * content, so a cache never meets other source.
 */
import { createHash } from "node:crypto";
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { type BuildOptions, build, type Plugin } from "esbuild";
import { wrapBundle } from "../hosts/cli/bundle-format.js";

const root = new URL("..", import.meta.url);
const outdir = new URL("dist/", root).pathname;

/**
 * `--declarations`, run after tsc (`npm run build`): pi-tui is bundled, not a dependency, so the declarations that
 * name it would not resolve where the package is installed. Its own declarations are copied to
 * `dist/vendor/pi-tui/` and the specifier `@mariozechner/pi-tui` in ours becomes a relative path to them.
 */
if (process.argv.includes("--declarations")) {
  const vendor = join(outdir, "vendor", "pi-tui");
  const piTui = new URL("node_modules/@mariozechner/pi-tui/dist/", root).pathname;
  rmSync(vendor, { recursive: true, force: true });
  cpSync(piTui, vendor, { recursive: true, filter: (path) => !/\.(js|map)$/.test(path) });
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? walk(join(dir, entry.name))
        : entry.name.endsWith(".d.ts")
          ? [join(dir, entry.name)]
          : [],
    );
  for (const file of walk(outdir).filter((path) => !path.startsWith(vendor))) {
    const text = readFileSync(file, "utf8");
    if (!text.includes('"@mariozechner/pi-tui"')) continue;
    let target = relative(dirname(file), join(vendor, "index.js"));
    if (!target.startsWith(".")) target = `./${target}`;
    writeFileSync(file, text.replaceAll('"@mariozechner/pi-tui"', JSON.stringify(target)));
  }
  process.exit(0);
}
const external = [
  "@anthropic-ai/sdk",
  "@modelcontextprotocol/sdk",
  "ajv",
  "execa",
  "jiti",
  // Loaded by createRequire() only when a configuration file fails JSON.parse (plugins/kit/files/json-file.ts).
  "jsonc-parser",
  "openai",
  // webfetch's HTML converter, loaded with the first page it reads.
  "turndown",
  "ws",
  // The codemode sandbox's QuickJS loads its .wasm file from beside its own module.
  "quickjs-emscripten-core",
  "@jitl/quickjs-wasmfile-release-sync",
];

// awilix imports fast-glob (and with it micromatch, picomatch, braces) for loadModules(), which KnightCode never
// calls; a stub keeps those packages out of every start-up.
const noGlob: Plugin = {
  name: "awilix-without-fast-glob",
  setup(b) {
    b.onResolve({ filter: /^fast-glob$/ }, () => ({ path: "fast-glob", namespace: "stub" }));
    b.onLoad({ filter: /^fast-glob$/, namespace: "stub" }, () => ({
      contents:
        'export default { sync() { throw new Error("awilix loadModules() is not available in KnightCode"); } };',
    }));
  },
};

// TypeBox's ES modules have no side effects, but its package does not say so; without the flag esbuild keeps every
// module its index files re-export (the whole Value namespace comes with one imported Check()), so a start-up
// would parse about 100 KB of TypeBox that nothing calls.
const typeboxWithoutSideEffects: Plugin = {
  name: "typebox-side-effect-free",
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (
        args.pluginData === "typebox" ||
        !(args.path.startsWith("@sinclair/typebox") || args.importer.includes("/@sinclair/typebox/"))
      )
        return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "typebox",
      });
      return resolved.errors.length > 0 ? undefined : { ...resolved, sideEffects: false };
    });
  },
};

/**
 * Parts of the CLI that only some runs use, each built as a bundle of its own (`knightcode-side-<name>-<hash>.cjs`)
 * so that every other run neither reads nor deserialises them: the main bundle's `import()` of the entry becomes
 * `__kcSide(file, shared)`, which the loader compiles with its own code cache. A side bundle takes the package's
 * public modules (`shared`) from the main bundle rather than carrying copies, so there is one kit, one set of
 * error classes and one token table; the build fails if a source file would be in both.
 */
const sideEntries: Record<string, string> = {
  // The terminal UI building blocks (`@knightcodeai/cli/tui`, pi-tui inside): the interactive mode and extensions
  // that import them share this one copy, and every other run leaves its 200 KB unread.
  tui: "tui.ts",
  interactive: "builtin-extensions/mode-interactive/interactive-mode.ts",
  "app-server": "builtin-extensions/mode-app-server/app-server-mode.ts",
  "app-server-schema": "builtin-extensions/mode-app-server/schema-gen.ts",
  // The ACP mode with the Agent Client Protocol SDK (and the zod it validates with).
  acp: "builtin-extensions/mode-acp/acp-mode.ts",
  // The YAML parser behind the kit's parseFrontmatter (the `yaml` package, bundled), for runs with skills or
  // prompt templates: one file with its own code cache instead of the package's 70-odd modules.
  frontmatter: "plugins/kit/frontmatter-yaml.ts",
};
const shareable = ["@knightcodeai/cli", "@knightcodeai/cli/kit", "@knightcodeai/cli/tui"];

/**
 * Source files of the main bundle that a side bundle reaches by path rather than through a package entry, each with
 * the entry that exports all of it: the side bundle takes them from that entry, so they exist once. (The terminal
 * UI blocks re-export the themes, which the kit publishes.)
 */
const fromEntries: Record<string, string> = { "plugins/kit/theme.ts": "@knightcodeai/cli/kit" };
const sharedSources: Plugin = {
  name: "shared-sources",
  setup(b) {
    b.onResolve({ filter: /^\./ }, async (args) => {
      if (args.pluginData === "shared-sources" || args.importer.includes("/node_modules/")) return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "shared-sources",
      });
      const entry = fromEntries[resolved.path.slice(root.pathname.length)];
      return entry ? { path: entry, external: true } : undefined;
    });
  },
};

/** Packages whose classes extensions compare with the CLI's (`instanceof`): the build fails if two bundles hold one. */
const singleCopy = ["node_modules/@mariozechner/pi-tui/"];

/** Settings both kinds of CLI bundle are built with. */
const cjsBundle = {
  absWorkingDir: root.pathname,
  bundle: true,
  write: false,
  format: "cjs",
  platform: "node",
  target: "node20",
  conditions: ["knightcode-source"],
  define: { "import.meta.url": "__kcImportMetaUrl" },
  banner: { js: 'var __kcImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  metafile: true,
  // Whitespace and comments are a third of the text, and every run reads and decodes all of it; one character
  // outside ASCII (in a comment) would make V8 hold the whole source as two-byte text. Names stay, so stack
  // traces read as before, with columns instead of lines.
  minifyWhitespace: true,
  charset: "ascii",
  legalComments: "eof",
  logLevel: "warning",
} satisfies BuildOptions;

rmSync(outdir, { recursive: true, force: true });
const cliBundle = await buildCliBundle();
await build({
  absWorkingDir: root.pathname,
  entryPoints: [
    "index.ts",
    "kit.ts",
    "testing.ts",
    "plugin.ts",
    "tui.ts",
    // The CLI's run code as an ES module, for `--help` and for KNIGHTCODE_CLI_BUNDLE=0 (see buildCliEntry).
    { in: "hosts/cli/run.ts", out: "chunks/cli-run" },
    // A worker thread's entry must be a file of its own (builtin-extensions/codemode/sandbox.ts finds it).
    "builtin-extensions/codemode/sandbox-worker.ts",
    // The same for `images.autoResize`'s worker (builtin-extensions/mode-interactive/image-resize-thread.ts).
    "builtin-extensions/mode-interactive/image-resize-worker.ts",
  ],
  outbase: ".",
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  conditions: ["knightcode-source"],
  external: external.flatMap((name) => [name, `${name}/*`]),
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: "linked",
  // Bundled CommonJS (tapable) calls require() for node built-ins; an ES module has no require of its own.
  banner: {
    js: 'import { createRequire as __kcRequire } from "node:module"; const require = __kcRequire(import.meta.url);',
  },
  plugins: [noGlob, typeboxWithoutSideEffects],
  logLevel: "warning",
});
await buildCliEntry(cliBundle);

/**
 * `dist/hosts/cli/main.js`, the `knightcode` command: a CommonJS script (its folder's package.json says so) holding
 * main.ts and the bundle loader. As an ES module it would start Node's ES module loader before anything of ours
 * runs, which costs a run more than the loader's work. Its `import("./run.js")` (for `--help`, and without a
 * bundle) reaches the ES module build of run.ts.
 */
async function buildCliEntry(cliBundle: string): Promise<void> {
  const runModule: Plugin = {
    name: "cli-run-module",
    setup(b) {
      b.onResolve({ filter: /^\.\/run\.js$/ }, () => ({ path: "../../chunks/cli-run.js", external: true }));
    },
  };
  await build({
    ...cjsBundle,
    write: true,
    metafile: false,
    sourcemap: "linked",
    entryPoints: ["hosts/cli/main.ts"],
    outfile: new URL("hosts/cli/main.js", `file://${outdir}`).pathname,
    define: { ...cjsBundle.define, __KNIGHTCODE_CLI_BUNDLE__: JSON.stringify(cliBundle) },
    plugins: [runModule],
  });
  writeFileSync(new URL("hosts/cli/package.json", `file://${outdir}`), '{ "type": "commonjs" }\n');
  chmodSync(new URL("hosts/cli/main.js", `file://${outdir}`), 0o755);
}

interface CjsOutput {
  name: string;
  /** Our own source files in it. */
  sources: string[];
  /** Its files of the `singleCopy` packages. */
  packages: string[];
  /** The shareable modules it imports. */
  shared: string[];
}

/**
 * Writes one CLI bundle as `dist/chunks/<stem>-<hash>.cjs`. Code that asks for its own address (`import.meta.url`)
 * gets the bundle's, which sits with the chunks. Calls of `import()` (external packages only: everything of ours
 * is inside) become `__kcImport()`, the loader's function, because a script restored from a code cache on Node 20
 * cannot run `import()` itself.
 */
async function writeCjsBundle(stem: string, options: BuildOptions): Promise<CjsOutput> {
  const result = await build({ ...cjsBundle, outfile: `${stem}.cjs`, ...options });
  const text = result.outputFiles![0]!.text;
  const inputs = result.metafile!.inputs;
  const imports = Object.values(inputs).flatMap((input) => input.imports);
  const dynamicImports = imports.filter((i) => i.kind === "dynamic-import" && i.external).length;
  let rewritten = 0;
  const code = text.replace(/(?<![\w$.])import\(/g, () => {
    rewritten++;
    return "__kcImport(";
  });
  if (rewritten < dynamicImports) {
    throw new Error(
      `${stem} has import() calls the loader cannot serve (${rewritten} rewritten, ${dynamicImports} external dynamic imports)`,
    );
  }
  // The file holds the code as the loader compiles it (hosts/cli/bundle-format.ts).
  const file = wrapBundle(code);
  const name = `${stem}-${createHash("sha256").update(file).digest("hex").slice(0, 16)}.cjs`;
  mkdirSync(new URL("chunks/", `file://${outdir}`), { recursive: true });
  writeFileSync(new URL(`chunks/${name}`, `file://${outdir}`), file);
  return {
    name,
    sources: Object.keys(inputs).filter((path) => !path.includes("node_modules/")),
    packages: Object.keys(inputs).filter((path) => singleCopy.some((p) => path.includes(p))),
    shared: [...new Set(imports.filter((i) => i.external && shareable.includes(i.path)).map((i) => i.path))],
  };
}

/**
 * The CLI as CommonJS bundles (see the top of this file): the side bundles, then the main one, whose `import()` of a
 * side entry is replaced by a module that asks the loader for it. Returns the main bundle's file name.
 */
async function buildCliBundle(): Promise<string> {
  const externals = external.flatMap((name) => [name, `${name}/*`]);
  const sides = new Map<string, CjsOutput>();
  for (const [name, entry] of Object.entries(sideEntries)) {
    const side = await writeCjsBundle(`knightcode-side-${name}`, {
      entryPoints: [entry],
      external: [...externals, ...shareable],
      plugins: [noGlob, typeboxWithoutSideEffects, sharedSources],
    });
    sides.set(new URL(entry, root).pathname, side);
  }
  const sidePlugin: Plugin = {
    name: "cli-side-bundles",
    setup(b) {
      // A side bundle's entry that is also a package entry (the terminal UI blocks): the main bundle's requires of
      // it for other side bundles are the same side module.
      b.onResolve({ filter: /^@knightcodeai\/cli\/tui$/ }, () => {
        const path = new URL("tui.ts", root).pathname;
        return sides.has(path) ? { path, namespace: "kc-side" } : undefined;
      });
      b.onResolve({ filter: /^\./ }, async (args) => {
        if (args.kind !== "dynamic-import" || args.pluginData === "side") return undefined;
        const resolved = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: "side",
        });
        return sides.has(resolved.path) ? { path: resolved.path, namespace: "kc-side" } : undefined;
      });
      b.onLoad({ filter: /.*/, namespace: "kc-side" }, (args) => {
        const side = sides.get(args.path)!;
        const shared = side.shared.map((id) => `${JSON.stringify(id)}: require(${JSON.stringify(id)})`);
        return {
          contents: `module.exports = __kcSide(${JSON.stringify(side.name)}, { ${shared.join(", ")} });`,
          loader: "js",
          resolveDir: root.pathname,
        };
      });
    },
  };
  const main = await writeCjsBundle("knightcode-cli", {
    entryPoints: ["hosts/cli/run.ts"],
    external: externals,
    plugins: [noGlob, typeboxWithoutSideEffects, sidePlugin],
  });
  for (const side of sides.values()) {
    const both = side.sources.filter((path) => main.sources.includes(path));
    if (both.length > 0)
      throw new Error(`${side.name} repeats modules of the main CLI bundle: ${both.join(", ")}`);
  }
  const holders = new Map<string, string>();
  for (const bundle of [main, ...sides.values()]) {
    for (const path of bundle.packages) {
      const other = holders.get(path);
      if (other)
        throw new Error(`${path} is in both ${other} and ${bundle.name}: its classes would exist twice`);
      holders.set(path, bundle.name);
    }
  }
  return main.name;
}

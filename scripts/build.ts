/**
 * Builds dist/ (`npm run build`): esbuild bundles the package entry points (`.`, `./kit`, `./testing`, `./plugin`, `./tui`)
 * and the `knightcode` command; `tsc -p tsconfig.build.json` then writes the declarations beside them.
 *
 * Why a bundle: an unbundled start-up loads about 380 ES modules (TypeBox alone is 250 files), and resolving,
 * reading and compiling each file costs more than the code in it. With code splitting the entries share chunks, so
 * every class exists once and `instanceof` holds across entries; each dynamic `import()` (a built-in extension, a
 * mode's implementation, the CLI's run code) stays its own chunk and loads only when it is called.
 *
 * Bundled: our code, TypeBox, tapable and awilix (small, needed by every session). External: what loads lazily or
 * must stay a real package (jiti, the provider SDKs, the MCP SDK, execa, ajv).
 *
 * The `knightcode` command itself runs from a second bundle: everything `hosts/cli/run.ts` reaches in one CommonJS
 * file, `dist/chunks/knightcode-cli-<hash>.cjs`, which `hosts/cli/bundle-loader.ts` compiles with a V8 code cache
 * (Node 20 keeps no compiled code for ES modules; compiling is most of a start-up). Its name carries a hash of its
 * content, so a cache never meets other source.
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { build, type Plugin } from "esbuild";

const root = new URL("..", import.meta.url);
const outdir = new URL("dist/", root).pathname;
const external = [
  "@anthropic-ai/sdk",
  "@modelcontextprotocol/sdk",
  "ajv",
  "execa",
  "jiti",
  "openai",
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
    "hosts/cli/main.ts",
    // A worker thread's entry must be a file of its own (builtin-extensions/codemode/sandbox.ts finds it).
    "builtin-extensions/codemode/sandbox-worker.ts",
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
  define: { __KNIGHTCODE_CLI_BUNDLE__: JSON.stringify(cliBundle) },
  logLevel: "warning",
});
chmodSync(new URL("hosts/cli/main.js", `file://${outdir}`), 0o755);

/**
 * The CLI as one CommonJS bundle (see the top of this file), written as `dist/chunks/knightcode-cli-<hash>.cjs`;
 * returns its file name. Code that asks for its own address (`import.meta.url`) gets the bundle's, which sits with
 * the chunks. Calls of `import()` (external packages only: everything of ours is inside) become `__kcImport()`,
 * the loader's function, because a script restored from a code cache on Node 20 cannot run `import()` itself.
 */
async function buildCliBundle(): Promise<string> {
  const result = await build({
    absWorkingDir: root.pathname,
    entryPoints: ["hosts/cli/run.ts"],
    bundle: true,
    write: false,
    outfile: "knightcode-cli.cjs",
    format: "cjs",
    platform: "node",
    target: "node20",
    conditions: ["knightcode-source"],
    external: external.flatMap((name) => [name, `${name}/*`]),
    define: { "import.meta.url": "__kcImportMetaUrl" },
    banner: { js: 'var __kcImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [noGlob, typeboxWithoutSideEffects],
    metafile: true,
    // Whitespace and comments are a third of the text, and every run reads and decodes all of it; one character
    // outside ASCII (in a comment) would make V8 hold the whole source as two-byte text. Names stay, so stack
    // traces read as before, with columns instead of lines.
    minifyWhitespace: true,
    charset: "ascii",
    legalComments: "eof",
    logLevel: "warning",
  });
  const text = result.outputFiles[0]!.text;
  const dynamicImports = Object.values(result.metafile.inputs)
    .flatMap((input) => input.imports)
    .filter((i) => i.kind === "dynamic-import" && i.external).length;
  let rewritten = 0;
  const code = text.replace(/(?<![\w$.])import\(/g, () => {
    rewritten++;
    return "__kcImport(";
  });
  if (rewritten < dynamicImports) {
    throw new Error(
      `The CLI bundle has import() calls the loader cannot serve (${rewritten} rewritten, ${dynamicImports} external dynamic imports)`,
    );
  }
  const name = `knightcode-cli-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.cjs`;
  mkdirSync(new URL("chunks/", `file://${outdir}`), { recursive: true });
  writeFileSync(new URL(`chunks/${name}`, `file://${outdir}`), code);
  return name;
}

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
 */
import { chmodSync, rmSync } from "node:fs";
import { build, type Plugin } from "esbuild";

const root = new URL("..", import.meta.url);
const outdir = new URL("dist/", root).pathname;
const external = ["@anthropic-ai/sdk", "@modelcontextprotocol/sdk", "ajv", "execa", "jiti", "openai", "ws"];

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

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root.pathname,
  entryPoints: ["index.ts", "kit.ts", "testing.ts", "plugin.ts", "tui.ts", "hosts/cli/main.ts"],
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
  plugins: [noGlob],
  logLevel: "warning",
});
chmodSync(new URL("hosts/cli/main.js", `file://${outdir}`), 0o755);

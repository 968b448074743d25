import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { ExtensionAPI, ExtensionFactory } from "../../../kernel/api/extension-api.js";
import { ExtensionLoadError, ExtensionStartupError } from "../../../kernel/errors.js";
import { ExtensionLoader, type LoadedExtension } from "../../../kernel/extensions/loader.js";

/** What the test extensions write into the object their factory receives. */
interface Probe {
  result?: unknown;
}

const marker = { marker: true };

function run(factory: ExtensionFactory): unknown {
  const probe: Probe = {};
  const returned = factory(probe as unknown as ExtensionAPI);
  expect(returned).to.equal(undefined);
  return probe.result;
}

/** An ESM extension whose factory stores `value` (a JS expression) as the probe's result. */
function extensionSource(value: string, options: { delayMs?: number } = {}): string {
  const delay = options.delayMs
    ? `await new Promise((resolve) => setTimeout(resolve, ${options.delayMs}));\n`
    : "";
  return `${delay}export default function (kc) {\n  kc.result = ${value};\n}\n`;
}

describe("kernel/extensions ExtensionLoader", () => {
  let dir: string;
  let cacheDir: string;
  let typebox: typeof import("@sinclair/typebox");

  before(async () => {
    typebox = await import("@sinclair/typebox");
  });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "kc-loader-"));
    cacheDir = path.join(dir, ".cache");
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function newLoader(options: { cacheDir?: string | false } = {}): ExtensionLoader {
    return new ExtensionLoader({
      cacheDir: options.cacheDir ?? cacheDir,
      virtualModules: {
        "@knightcodeai/cli": { ExtensionStartupError, marker },
        "@sinclair/typebox": typebox,
      },
    });
  }

  function write(relative: string, content: string): string {
    const file = path.join(dir, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    return file;
  }

  function results(extensions: LoadedExtension[]): unknown[] {
    return extensions.map((extension) => run(extension.factory));
  }

  it("loads a .ts extension that imports @knightcodeai/cli and @sinclair/typebox without node_modules", async () => {
    const file = write(
      "typed.ts",
      [
        'import type { ExtensionAPI } from "@knightcodeai/cli";',
        'import { ExtensionStartupError, marker } from "@knightcodeai/cli";',
        'import { Type } from "@sinclair/typebox";',
        "",
        "interface Result { startupError: unknown; marker: unknown; schema: unknown }",
        "",
        "export default function (kc: ExtensionAPI & { result?: Result }): void {",
        "  const schema: ReturnType<typeof Type.String> = Type.String();",
        "  kc.result = { startupError: ExtensionStartupError, marker, schema };",
        "}",
        "",
      ].join("\n"),
    );
    expect(fs.existsSync(path.join(dir, "node_modules"))).to.equal(false);

    const { extensions, failures } = await newLoader().load([{ origin: "user", path: file }]);

    expect(failures).to.deep.equal([]);
    expect(extensions).to.have.length(1);
    expect(extensions[0]!.id).to.equal(`user:${file}`);
    expect(extensions[0]!.origin).to.equal("user");
    expect(extensions[0]!.path).to.equal(file);
    const result = run(extensions[0]!.factory) as { startupError: unknown; marker: unknown; schema: unknown };
    expect(result.startupError).to.equal(ExtensionStartupError);
    expect(result.marker).to.equal(marker);
    expect(result.schema).to.deep.equal(typebox.Type.String());
    expect(typebox.Kind in (result.schema as object)).to.equal(true);
  });

  it("loads a .js ESM extension file", async () => {
    const file = write("plain.js", extensionSource('"from js"'));
    const { extensions, failures } = await newLoader().load([{ origin: "project", path: file }]);
    expect(failures).to.deep.equal([]);
    expect(extensions.map((e) => e.id)).to.deep.equal([`project:${file}`]);
    expect(results(extensions)).to.deep.equal(["from js"]);
  });

  it("loads a directory through its index.ts, with id <origin>:<path to index.ts>", async () => {
    const extensionDir = path.join(dir, "with-index");
    const index = write("with-index/index.ts", extensionSource('"index" as string'));
    const { extensions, failures } = await newLoader().load([{ origin: "user", path: extensionDir }]);
    expect(failures).to.deep.equal([]);
    expect(extensions).to.have.length(1);
    expect(extensions[0]!.id).to.equal(`user:${index}`);
    expect(extensions[0]!.path).to.equal(index);
    expect(results(extensions)).to.deep.equal(["index"]);
  });

  it("loads a directory's index.ts when its package.json lists no extensions", async () => {
    write("pkg/package.json", JSON.stringify({ name: "pkg" }));
    const index = write("pkg/index.ts", extensionSource('"pkg index"'));
    const { extensions, failures } = await newLoader().load([
      { origin: "package", path: path.join(dir, "pkg") },
    ]);
    expect(failures).to.deep.equal([]);
    expect(extensions.map((e) => e.id)).to.deep.equal([`package:${index}`]);
  });

  it("reports a directory without an index file as a failure", async () => {
    const empty = path.join(dir, "empty");
    fs.mkdirSync(empty);
    const { extensions, failures } = await newLoader().load([{ origin: "user", path: empty }]);
    expect(extensions).to.deep.equal([]);
    expect(failures).to.have.length(1);
    expect(failures[0]!.id).to.equal(`user:${empty}`);
    expect(failures[0]!.error.message).to.include(empty);
    expect(failures[0]!.error.message).to.include("index.ts");
  });

  describe("package directories", () => {
    it("yields the extensions listed in package.json knightcode.extensions, in that order", async () => {
      write("pkg/package.json", JSON.stringify({ knightcode: { extensions: ["./a.ts", "./b.ts"] } }));
      // a.ts finishes importing after b.ts, so completion order differs from list order.
      const a = write("pkg/a.ts", extensionSource('"a"', { delayMs: 40 }));
      const b = write("pkg/b.ts", extensionSource('"b"'));
      write("pkg/index.ts", extensionSource('"index"'));
      const { extensions, failures } = await newLoader().load([
        { origin: "package", path: path.join(dir, "pkg") },
      ]);
      expect(failures).to.deep.equal([]);
      expect(extensions.map((e) => e.id)).to.deep.equal([`package:${a}`, `package:${b}`]);
      expect(extensions.map((e) => e.path)).to.deep.equal([a, b]);
      expect(results(extensions)).to.deep.equal(["a", "b"]);
    });

    it("turns a listed file that is missing into a failure naming it, and loads the rest", async () => {
      write("pkg/package.json", JSON.stringify({ knightcode: { extensions: ["./a.ts", "./gone.ts"] } }));
      const a = write("pkg/a.ts", extensionSource('"a"'));
      const gone = path.join(dir, "pkg", "gone.ts");
      const { extensions, failures } = await newLoader().load([
        { origin: "package", path: path.join(dir, "pkg") },
      ]);
      expect(extensions.map((e) => e.id)).to.deep.equal([`package:${a}`]);
      expect(failures).to.have.length(1);
      expect(failures[0]!.id).to.equal(`package:${gone}`);
      expect(failures[0]!.path).to.equal(gone);
      expect(failures[0]!.error).to.be.instanceOf(ExtensionLoadError);
      expect(failures[0]!.error.message).to.include(gone);
      expect(failures[0]!.error.message).to.include("missing");
    });

    it("turns a package.json with invalid JSON into a failure", async () => {
      const manifest = write("pkg/package.json", '{"knightcode": {"extensions": [');
      write("pkg/a.ts", extensionSource('"a"'));
      const { extensions, failures } = await newLoader().load([
        { origin: "package", path: path.join(dir, "pkg") },
      ]);
      expect(extensions).to.deep.equal([]);
      expect(failures).to.have.length(1);
      expect(failures[0]!.path).to.equal(manifest);
      expect(failures[0]!.error.code).to.equal("KC_ERR_EXTENSION_LOAD");
      expect(failures[0]!.error.message).to.include(manifest);
      expect(failures[0]!.error.message).to.include("not valid JSON");
    });

    it("turns a knightcode.extensions that is not an array of paths into a failure", async () => {
      const manifest = write("pkg/package.json", JSON.stringify({ knightcode: { extensions: "./a.ts" } }));
      write("pkg/a.ts", extensionSource('"a"'));
      const { extensions, failures } = await newLoader().load([
        { origin: "package", path: path.join(dir, "pkg") },
      ]);
      expect(extensions).to.deep.equal([]);
      expect(failures).to.have.length(1);
      expect(failures[0]!.path).to.equal(manifest);
      expect(failures[0]!.error.message).to.include("must be an array of paths");
    });
  });

  it("turns a syntax error into a failure naming the file while the other extensions still load in order", async () => {
    const first = write("first.ts", extensionSource('"first"', { delayMs: 40 }));
    const broken = write("broken.ts", "export default function (kc: any) {\n  kc.result = ;\n}\n");
    const last = write("last.js", extensionSource('"last"'));
    const { extensions, failures } = await newLoader().load([
      { origin: "user", path: first },
      { origin: "user", path: broken },
      { origin: "user", path: last },
    ]);
    expect(extensions.map((e) => e.id)).to.deep.equal([`user:${first}`, `user:${last}`]);
    expect(results(extensions)).to.deep.equal(["first", "last"]);
    expect(failures).to.have.length(1);
    const failure = failures[0]!;
    expect(failure.id).to.equal(`user:${broken}`);
    expect(failure.origin).to.equal("user");
    expect(failure.path).to.equal(broken);
    expect(failure.error).to.be.instanceOf(ExtensionLoadError);
    expect(failure.error.extension).to.equal(broken);
    expect(failure.error.message).to.include(broken);
    expect(failure.error.cause).to.be.instanceOf(Error);
  });

  it("turns a module without a default export function into a failure mentioning the default export", async () => {
    const named = write("named.ts", "export const value = 1;\nexport function notDefault() {}\n");
    const { extensions, failures } = await newLoader().load([{ origin: "user", path: named }]);
    expect(extensions).to.deep.equal([]);
    expect(failures).to.have.length(1);
    expect(failures[0]!.path).to.equal(named);
    expect(failures[0]!.error.message).to.include(named);
    expect(failures[0]!.error.message).to.include("default export");
  });

  it("turns a module whose default export is not a function into a failure", async () => {
    const objectDefault = write("object-default.ts", "export default { name: 'not a factory' };\n");
    const { extensions, failures } = await newLoader().load([{ origin: "user", path: objectDefault }]);
    expect(extensions).to.deep.equal([]);
    expect(failures.map((f) => f.path)).to.deep.equal([objectDefault]);
    expect(failures[0]!.error.message).to.include("default export");
  });

  it("turns a missing path into a failure saying there is no such file", async () => {
    const missing = path.join(dir, "nope.ts");
    const { extensions, failures } = await newLoader().load([{ origin: "cli", path: missing }]);
    expect(extensions).to.deep.equal([]);
    expect(failures).to.have.length(1);
    expect(failures[0]!.id).to.equal(`cli:${missing}`);
    expect(failures[0]!.path).to.equal(missing);
    expect(failures[0]!.error.message).to.include(missing);
    expect(failures[0]!.error.message).to.include("no such file");
  });

  it("gives an inline factory source the id <origin>:<name> and keeps it in source order", async () => {
    const factory: ExtensionFactory = (kc) => {
      (kc as Probe).result = "inline";
    };
    const file = write("file.ts", extensionSource('"file"', { delayMs: 20 }));
    const { extensions, failures } = await newLoader().load([
      { origin: "user", path: file },
      { origin: "builtin", name: "x", factory },
      { origin: "sdk", factory },
    ]);
    expect(failures).to.deep.equal([]);
    expect(extensions.map((e) => e.id)).to.deep.equal([`user:${file}`, "builtin:x", "sdk:inline"]);
    expect(extensions[1]!.factory).to.equal(factory);
    expect(extensions[1]!.origin).to.equal("builtin");
    expect(extensions[1]).to.not.have.property("path");
  });

  it("turns a source with neither a path nor a factory into a failure", async () => {
    const { extensions, failures } = await newLoader().load([{ origin: "user" }]);
    expect(extensions).to.deep.equal([]);
    expect(failures.map((f) => f.id)).to.deep.equal(["user:?"]);
    expect(failures[0]!.error.message).to.include("neither a path nor a factory");
  });

  it("shares the module cache: the same file loaded twice by one loader gives the same factory", async () => {
    const file = write("cached.ts", extensionSource("{ count: 0 }"));
    const loader = newLoader();
    const first = await loader.load([{ origin: "user", path: file }]);
    const second = await loader.load([{ origin: "project", path: file }]);
    expect(first.extensions).to.have.length(1);
    expect(second.extensions).to.have.length(1);
    expect(second.extensions[0]!.factory).to.equal(first.extensions[0]!.factory);
  });

  it("re-evaluates an edited file with { fresh: true } but not without it", async () => {
    const file = write("edited.ts", extensionSource('"v1"'));
    const loader = newLoader();
    const before = await loader.load([{ origin: "user", path: file }]);
    expect(results(before.extensions)).to.deep.equal(["v1"]);

    fs.writeFileSync(file, extensionSource('"v2"'));
    const cached = await loader.load([{ origin: "user", path: file }]);
    expect(cached.extensions[0]!.factory).to.equal(before.extensions[0]!.factory);

    const fresh = await loader.load([{ origin: "user", path: file }], { fresh: true });
    expect(fresh.failures).to.deep.equal([]);
    expect(fresh.extensions[0]!.factory).to.not.equal(before.extensions[0]!.factory);
    expect(results(fresh.extensions)).to.deep.equal(["v2"]);
  });

  it("writes transformed modules to the persistent cache directory", async () => {
    const file = write("persisted.ts", extensionSource('"persisted" as const'));
    expect(fs.existsSync(cacheDir)).to.equal(false);
    const { extensions } = await newLoader().load([{ origin: "user", path: file }]);
    expect(extensions).to.have.length(1);
    expect(fs.statSync(cacheDir).isDirectory()).to.equal(true);
    const cached = fs
      .readdirSync(cacheDir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile());
    expect(cached.length).to.be.greaterThan(0);
  });

  it("writes nothing to disk when the cache is disabled", async () => {
    const file = write("uncached.ts", extensionSource('"uncached" as const'));
    const { extensions } = await newLoader({ cacheDir: false }).load([{ origin: "user", path: file }]);
    expect(results(extensions)).to.deep.equal(["uncached"]);
    expect(fs.readdirSync(dir)).to.deep.equal(["uncached.ts"]);
  });
});

/**
 * An extension author's own project: its package.json has only `@knightcodeai/cli` (installed from this package's
 * `npm pack` tarball) plus its test runner, it copies an example extension, and its mocha tests use the test kit.
 * npm runs offline with `npm ci`: the project's lockfile is written from ours (see author-lockfile.ts), so every
 * package is a tarball that this repository's own `npm ci` already put in npm's cache, and no network is used.
 */

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { useTempDir } from "../helpers/temp-dir.js";
import { buildAuthorLockfile, type Lockfile } from "./author-lockfile.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);

describe("an extension author's project built from examples/", function () {
  this.timeout(240_000);
  const tmp = useTempDir("kc-author-");

  it("installs the packed package with nothing else and runs its extension tests with mocha", async () => {
    // dist/ is already built by the test command, so packing needs no scripts.
    await run("npm", ["pack", "--ignore-scripts", "--pack-destination", tmp.path], {
      cwd: root,
      timeout: 120_000,
    });
    const tarball = readdirSync(tmp.path).find((f) => f.endsWith(".tgz"))!;
    const own = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      name: string;
      version: string;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const project = join(tmp.path, "my-extension");
    mkdirSync(join(project, "src"), { recursive: true });
    mkdirSync(join(project, "test"), { recursive: true });
    copyFileSync(join(root, "examples", "extensions", "hello.ts"), join(project, "src", "hello.ts"));
    const devDependencies = {
      "@knightcodeai/cli": `file:../${tarball}`,
      chai: own.devDependencies.chai!,
      mocha: own.devDependencies.mocha!,
      tsx: own.devDependencies.tsx!,
    };
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({
        name: "my-knightcode-extension",
        private: true,
        type: "module",
        // A session's first start in a fresh project compiles the extension and loads the CLI: more than mocha's
        // default 2 s on a busy machine.
        scripts: { test: "mocha --import=tsx --timeout 30000 'test/**/*.test.ts'" },
        devDependencies,
      }),
    );
    const integrity = `sha512-${createHash("sha512")
      .update(readFileSync(join(tmp.path, tarball)))
      .digest("base64")}`;
    const lock = buildAuthorLockfile({
      ownLock: JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as Lockfile,
      name: "my-knightcode-extension",
      devDependencies,
      cli: {
        name: own.name,
        version: own.version,
        resolved: `file:../${tarball}`,
        integrity,
        dependencies: own.dependencies,
      },
    });
    writeFileSync(join(project, "package-lock.json"), JSON.stringify(lock, null, 2));
    writeFileSync(
      join(project, "test", "hello.test.ts"),
      `import { expect } from "chai";
import { createTestSession } from "@knightcodeai/cli/testing";
import hello from "../src/hello.js";

describe("hello", () => {
  it("greets by name", async () => {
    const t = await createTestSession({ extensions: [hello] });
    try {
      await t.prompt("/hello Ada");
      expect(t.ui.notifications).to.deep.equal([{ message: "Hello, Ada!", level: "info" }]);
    } finally {
      await t.dispose();
    }
  });
});
`,
    );
    await run("npm", ["ci", "--offline", "--no-audit", "--no-fund"], {
      cwd: project,
      timeout: 180_000,
    }).catch((error: { stderr?: string }) => {
      if (String(error.stderr).includes("ENOTCACHED")) {
        throw new Error(
          `npm's cache lacks a tarball this repository's lockfile pins (run npm ci here first): ${error.stderr}`,
        );
      }
      throw error;
    });
    const installed = readdirSync(join(project, "node_modules", "@knightcodeai", "cli"));
    expect(installed).to.include("dist").and.not.include("kernel");
    const { stdout } = await run("npm", ["test"], { cwd: project, timeout: 120_000 }).catch(
      (error: { stdout?: string; stderr?: string }) => {
        throw new Error(`the project's npm test failed:\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
      },
    );
    expect(stdout).to.contain("1 passing");
  });
});

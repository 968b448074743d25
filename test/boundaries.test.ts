/**
 * The import-boundary check (dependency-cruiser with .dependency-cruiser.cjs) fails on a violation and names the
 * offending import. It runs twice, on small trees in temp dirs laid out like the project: one that keeps every
 * boundary (a type-only cycle included), and one that breaks each rule once, in files of its own, so that each case
 * below reads its rule's line in the same report (one run of dependency-cruiser instead of one per case).
 */

import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";

const root = fileURLToPath(new URL("..", import.meta.url));
const depcruise = join(root, "node_modules", ".bin", "depcruise");

async function cruise(cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      depcruise,
      [
        "--config",
        ".dependency-cruiser.cjs",
        "kernel",
        "plugins",
        "builtin-extensions",
        "hosts",
        "index.ts",
        "kit.ts",
      ],
      { cwd, timeout: 60_000 },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

/** A tree that keeps its boundaries, with a cycle of which one import is type-only (allowed). */
function writeCleanTree(write: (rel: string, text: string) => void): void {
  write(
    "package.json",
    JSON.stringify({
      name: "@knightcodeai/cli",
      type: "module",
      exports: {
        ".": { "knightcode-source": "./index.ts", default: "./dist/index.js" },
        "./kit": { "knightcode-source": "./kit.ts", default: "./dist/kit.js" },
      },
    }),
  );
  write(
    "tsconfig.json",
    JSON.stringify({
      compilerOptions: {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        customConditions: ["knightcode-source"],
      },
    }),
  );
  write("kit.ts", `export { service } from "./plugins/kit/helper.js";\n`);
  write("plugins/kit/helper.ts", "export const service = 1;\n");
  write("index.ts", `export * from "./kit.js";\nexport { root } from "./hosts/sdk/root.js";\n`);
  write("hosts/sdk/root.ts", `export const root = () => import("../../builtin-extensions/good/index.js");\n`);
  write("plugins/service.ts", "export const service = 1;\n");
  write("kernel/core.ts", "export const core = 1;\n");
  write(
    "builtin-extensions/good/index.ts",
    `import { service } from "@knightcodeai/cli/kit";\nexport default service;\n`,
  );
  write("hosts/good/main.ts", `import { service } from "@knightcodeai/cli";\nexport const x = service;\n`);
  write("plugins/a.ts", `import { b } from "./b.js";\nexport const a = () => b;\n`);
  write("plugins/b.ts", `import type { T } from "./c.js";\nexport const b: T = 1;\n`);
  write(
    "plugins/c.ts",
    `import type { a } from "./a.js";\nexport type T = ReturnType<typeof a> extends 1 ? 1 : 1;\n`,
  );
}

/** The clean tree plus one violation of each rule. */
function writeBrokenTree(write: (rel: string, text: string) => void): void {
  writeCleanTree(write);
  // A built-in extension imports a service.
  write(
    "builtin-extensions/bad/index.ts",
    `import { service } from "../../plugins/service.js";\nexport default service;\n`,
  );
  // The kit entry re-exports a service module.
  write(
    "kit.ts",
    `export { service } from "./plugins/kit/helper.js";\nexport { service as store } from "./plugins/service.js";\n`,
  );
  // The kernel imports a service.
  write("kernel/bad.ts", `import { service } from "../plugins/service.js";\nexport const y = service;\n`);
  // A host reaches the public entry by a relative path; another imports the kernel.
  write("hosts/relative/main.ts", `import { service } from "../../index.js";\nexport const y = service;\n`);
  write("hosts/kernel/main.ts", `import { core } from "../../kernel/core.js";\nexport const y = core;\n`);
  // A built-in extension imports the SDK entry, which lists the built-ins.
  write(
    "builtin-extensions/cycle/index.ts",
    `import { root } from "@knightcodeai/cli";\nexport default root;\n`,
  );
  write(
    "hosts/sdk/root.ts",
    `export const root = () => [import("../../builtin-extensions/good/index.js"), import("../../builtin-extensions/cycle/index.js")];\n`,
  );
  // Two services import each other at run time.
  write("plugins/d.ts", `import { e } from "./e.js";\nexport const d = () => e;\n`);
  write("plugins/e.ts", `import { d } from "./d.js";\nexport const e = () => d;\n`);
  // One provider built-in imports another's code (each folder under providers/ is a built-in of its own).
  write(
    "builtin-extensions/providers/one/index.ts",
    `import { two } from "../two/wire.js";\nexport default two;\n`,
  );
  write("builtin-extensions/providers/two/wire.ts", "export const two = 2;\n");
  // A service imports a built-in extension.
  write("plugins/bad.ts", `import ext from "../builtin-extensions/good/index.js";\nexport const y = ext;\n`);
}

describe("import boundaries", function () {
  // Each run of dependency-cruiser over a fixture tree is a child process: seconds, more on a busy machine.
  this.timeout(120_000);
  const dirs: string[] = [];
  let clean: { code: number; output: string };
  let broken: { code: number; output: string };

  async function cruiseTree(fill: (write: (rel: string, text: string) => void) => void) {
    const dir = mkdtempSync(join(tmpdir(), "kc-boundaries-"));
    dirs.push(dir);
    copyFileSync(join(root, ".dependency-cruiser.cjs"), join(dir, ".dependency-cruiser.cjs"));
    fill((rel, text) => {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      writeFileSync(join(dir, rel), text);
    });
    return cruise(dir);
  }

  before(async () => {
    [clean, broken] = await Promise.all([cruiseTree(writeCleanTree), cruiseTree(writeBrokenTree)]);
  });
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("passes a tree that keeps its boundaries, a type-only import cycle included", () => {
    expect(clean.code, clean.output).to.equal(0);
    expect(clean.output).to.not.contain("no-circular");
  });

  it("fails a tree that breaks them", () => {
    expect(broken.code, broken.output).to.not.equal(0);
  });

  it("names a built-in extension importing a plugin", () => {
    expect(broken.output).to.contain(
      "builtin-extensions-use-public-kit-only: builtin-extensions/bad/index.ts → plugins/service.ts",
    );
  });

  it("names the kit entry re-exporting a service module (a door only the built-ins would have)", () => {
    expect(broken.output).to.contain("kit-entry-holds-no-service: kit.ts → plugins/service.ts");
  });

  it("names the kernel importing a plugin", () => {
    expect(broken.output).to.contain("kernel-is-self-contained: kernel/bad.ts → plugins/service.ts");
  });

  it("names a host reaching the public entry point by a relative path", () => {
    expect(broken.output).to.contain("public-api-by-package-name: hosts/relative/main.ts → index.ts");
  });

  it("names a host importing the kernel directly", () => {
    expect(broken.output).to.contain("hosts-use-public-api-only: hosts/kernel/main.ts → kernel/core.ts");
  });

  it("names a built-in extension importing the SDK entry, which lists the built-ins (a cycle)", () => {
    expect(broken.output).to.contain(
      "builtin-extensions-use-public-kit-only: builtin-extensions/cycle/index.ts → index.ts",
    );
    expect(broken.output).to.contain("no-circular: builtin-extensions/cycle/index.ts → ");
  });

  it("names a runtime import cycle between two services, and not the type-only one", () => {
    expect(broken.output).to.match(/no-circular: plugins\/(d|e)\.ts → /);
    expect(broken.output).to.not.match(/no-circular: plugins\/(a|b|c)\.ts → /);
  });

  it("names a provider built-in importing another provider's files", () => {
    expect(broken.output).to.contain(
      "builtin-extensions-use-public-kit-only: builtin-extensions/providers/one/index.ts → builtin-extensions/providers/two/wire.ts",
    );
  });

  it("names a service importing a built-in extension", () => {
    expect(broken.output).to.contain(
      "services-never-reach-up: plugins/bad.ts → builtin-extensions/good/index.ts",
    );
  });
});

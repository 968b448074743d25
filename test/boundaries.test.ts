/**
 * The import-boundary check (dependency-cruiser with .dependency-cruiser.cjs) fails on a violation and names the
 * offending import. It runs on a small tree in a temp dir laid out like the project.
 */

import { execFile } from "node:child_process";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { useTempDir } from "./helpers/temp-dir.js";

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

describe("import boundaries", function () {
  // Each case runs dependency-cruiser over a fixture tree in a child process: seconds each, more on a busy machine.
  this.timeout(60_000);
  const tmp = useTempDir("kc-boundaries-");

  beforeEach(() => {
    copyFileSync(join(root, ".dependency-cruiser.cjs"), join(tmp.path, ".dependency-cruiser.cjs"));
    tmp.write(
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
    tmp.write(
      "tsconfig.json",
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          customConditions: ["knightcode-source"],
        },
      }),
    );
    tmp.write("kit.ts", `export { service } from "./plugins/kit/helper.js";\n`);
    tmp.write("plugins/kit/helper.ts", "export const service = 1;\n");
    tmp.write("index.ts", `export * from "./kit.js";\nexport { root } from "./hosts/sdk/root.js";\n`);
    tmp.write(
      "hosts/sdk/root.ts",
      `export const root = () => import("../../builtin-extensions/good/index.js");\n`,
    );
    tmp.write("plugins/service.ts", "export const service = 1;\n");
    tmp.write("kernel/core.ts", "export const core = 1;\n");
    tmp.write(
      "builtin-extensions/good/index.ts",
      `import { service } from "@knightcodeai/cli/kit";\nexport default service;\n`,
    );
    tmp.write(
      "hosts/good/main.ts",
      `import { service } from "@knightcodeai/cli";\nexport const x = service;\n`,
    );
  });

  it("passes a tree that keeps its boundaries", async () => {
    const { code, output } = await cruise(tmp.path);
    expect(code, output).to.equal(0);
  });

  it("fails when a built-in extension imports a plugin, naming the import", async () => {
    tmp.write(
      "builtin-extensions/bad/index.ts",
      `import { service } from "../../plugins/service.js";\nexport default service;\n`,
    );
    const { code, output } = await cruise(tmp.path);
    expect(code).to.not.equal(0);
    expect(output).to.contain(
      "builtin-extensions-use-public-kit-only: builtin-extensions/bad/index.ts → plugins/service.ts",
    );
  });

  it("fails when the kit entry re-exports a service module (a door only the built-ins would have)", async () => {
    tmp.write(
      "kit.ts",
      `export { service } from "./plugins/kit/helper.js";\nexport { service as store } from "./plugins/service.js";\n`,
    );
    const { code, output } = await cruise(tmp.path);
    expect(code).to.not.equal(0);
    expect(output).to.contain("kit-entry-holds-no-service: kit.ts → plugins/service.ts");
  });

  it("fails when the kernel imports a plugin", async () => {
    tmp.write(
      "kernel/bad.ts",
      `import { service } from "../plugins/service.js";\nexport const y = service;\n`,
    );
    const { code, output } = await cruise(tmp.path);
    expect(code).to.not.equal(0);
    expect(output).to.contain("kernel-is-self-contained: kernel/bad.ts → plugins/service.ts");
  });

  it("fails when a host reaches the public entry point by a relative path", async () => {
    tmp.write("hosts/bad/main.ts", `import { service } from "../../index.js";\nexport const y = service;\n`);
    const { code, output } = await cruise(tmp.path);
    expect(code).to.not.equal(0);
    expect(output).to.contain("public-api-by-package-name: hosts/bad/main.ts → index.ts");
  });

  it("fails when a host imports the kernel directly", async () => {
    tmp.write("hosts/bad/main.ts", `import { core } from "../../kernel/core.js";\nexport const y = core;\n`);
    const { code, output } = await cruise(tmp.path);
    expect(code).to.not.equal(0);
    expect(output).to.contain("hosts-use-public-api-only: hosts/bad/main.ts → kernel/core.ts");
  });

  it("fails when a built-in extension imports the SDK entry, which lists the built-ins (a cycle)", async () => {
    tmp.write(
      "builtin-extensions/bad/index.ts",
      `import { root } from "@knightcodeai/cli";\nexport default root;\n`,
    );
    tmp.write(
      "hosts/sdk/root.ts",
      `export const root = () => [import("../../builtin-extensions/good/index.js"), import("../../builtin-extensions/bad/index.js")];\n`,
    );
    const { code, output } = await cruise(tmp.path);
    expect(code).to.not.equal(0);
    expect(output).to.contain(
      "builtin-extensions-use-public-kit-only: builtin-extensions/bad/index.ts → index.ts",
    );
    expect(output).to.contain("no-circular: builtin-extensions/bad/index.ts → ");
  });

  it("fails on a runtime import cycle between two services, but not on a type-only one", async () => {
    tmp.write("plugins/a.ts", `import { b } from "./b.js";\nexport const a = () => b;\n`);
    tmp.write("plugins/b.ts", `import type { T } from "./c.js";\nexport const b: T = 1;\n`);
    tmp.write(
      "plugins/c.ts",
      `import type { a } from "./a.js";\nexport type T = ReturnType<typeof a> extends 1 ? 1 : 1;\n`,
    );
    expect((await cruise(tmp.path)).code).to.equal(0);
    tmp.write("plugins/b.ts", `import { a } from "./a.js";\nexport const b = () => a;\n`);
    const { code, output } = await cruise(tmp.path);
    expect(code).to.not.equal(0);
    expect(output).to.match(/no-circular: plugins\/(a|b)\.ts → /);
  });

  it("fails when a service imports a built-in extension", async () => {
    tmp.write(
      "plugins/bad.ts",
      `import ext from "../builtin-extensions/good/index.js";\nexport const y = ext;\n`,
    );
    const { code, output } = await cruise(tmp.path);
    expect(code).to.not.equal(0);
    expect(output).to.contain("services-never-reach-up: plugins/bad.ts → builtin-extensions/good/index.ts");
  });
});

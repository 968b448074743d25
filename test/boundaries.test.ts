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
      ["--config", ".dependency-cruiser.cjs", "kernel", "plugins", "builtin-extensions", "hosts", "index.ts"],
      { cwd, timeout: 60_000 },
    );
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

describe("import boundaries", () => {
  const tmp = useTempDir("kc-boundaries-");

  beforeEach(() => {
    copyFileSync(join(root, ".dependency-cruiser.cjs"), join(tmp.path, ".dependency-cruiser.cjs"));
    tmp.write(
      "package.json",
      JSON.stringify({
        name: "@knightcodeai/cli",
        type: "module",
        exports: { ".": { "knightcode-source": "./index.ts", default: "./dist/index.js" } },
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
    tmp.write("index.ts", `export { service } from "./plugins/service.js";\n`);
    tmp.write("plugins/service.ts", "export const service = 1;\n");
    tmp.write("kernel/core.ts", "export const core = 1;\n");
    tmp.write(
      "builtin-extensions/good/index.ts",
      `import { service } from "@knightcodeai/cli";\nexport default service;\n`,
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
      "builtin-extensions-use-public-api-only: builtin-extensions/bad/index.ts → plugins/service.ts",
    );
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
});

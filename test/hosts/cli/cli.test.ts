/** The built `knightcode` command, spawned as a child process. */

import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = join(root, "dist", "hosts", "cli", "main.js");

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("knightcode CLI", () => {
  const tmp = useTempDir("kc-cli-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });

  it("prints the package version", async () => {
    const { createRequire } = await import("node:module");
    const pkg = createRequire(import.meta.url)("../../../package.json") as { version: string };
    const { code, stdout } = await run(["--version"], env());
    expect(code).to.equal(0);
    expect(stdout.trim()).to.equal(pkg.version);
  });

  it("loads no extension for --version (a broken one is not even read)", async () => {
    const broken = tmp.write("broken.ts", "export default function (kc) { const = }");
    const { code, stderr } = await run(["--version", "-e", broken], env());
    expect(code).to.equal(0);
    expect(stderr).to.equal("");
  });

  it("prints usage for --help", async () => {
    const { code, stdout } = await run(["--help"], env());
    expect(code).to.equal(0);
    expect(stdout).to.contain("--extension <path>");
  });

  it("prints the same built-in modes and flags in --help from their manifest as a session registers", async () => {
    const fromManifest = await run(["--help"], env());
    // An extension that registers nothing makes --help open a session, so the built-ins really run.
    const empty = tmp.write("empty.ts", "export default () => {};");
    const fromSession = await run(["--help", "-e", empty], env());
    expect(fromManifest.code).to.equal(0);
    expect(fromSession.code, fromSession.stderr).to.equal(0);
    expect(fromManifest.stdout).to.contain("rpc ").and.contain("--script <value>");
    expect(fromManifest.stdout).to.equal(fromSession.stdout);
  });

  it("shows a personal extension's flags in --help and leaves out a built-in that settings disable", async () => {
    tmp.write(
      "agent/extensions/flagged.ts",
      `export default (kc: any) => kc.registerFlag("dry-run", { type: "boolean", description: "Change nothing" });`,
    );
    tmp.write("agent/settings.json", JSON.stringify({ extensions: ["-builtin:mode-rpc"] }));
    const { code, stdout, stderr } = await run(["--help"], env());
    expect(code, stderr).to.equal(0);
    expect(stdout).to.match(/--dry-run\s+Change nothing \(user:.*flagged\.ts\)/);
    expect(stdout).not.to.contain("builtin:mode-rpc");
    expect(stdout).to.contain("builtin:mode-print");
  });

  it("rejects an unknown option with exit code 2 and suggests the closest one", async () => {
    const { code, stderr } = await run(["--lst-extensions"], env());
    expect(code).to.equal(2);
    expect(stderr).to.contain("unknown option --lst-extensions (did you mean --list-extensions?)");
  });

  it("loads a TypeScript extension that imports the package and TypeBox with neither installed beside it", async () => {
    const file = tmp.write(
      "ext/tool.ts",
      `import { ExtensionStartupError, type ExtensionAPI } from "@knightcodeai/cli";
       import { Type } from "@sinclair/typebox";
       const schema = Type.Object({ path: Type.String() });
       export default function (kc: ExtensionAPI) {
         if (typeof ExtensionStartupError !== "function" || schema.type !== "object") throw new Error("bad imports");
         kc.registerCommand("check", { description: "checks things", handler: async () => {} });
         kc.registerFlag("strict-mode", { type: "boolean", description: "be strict" });
       }`,
    );
    const { code, stdout, stderr } = await run(["-e", file, "--list-extensions"], env());
    expect(stderr).to.equal("");
    expect(code).to.equal(0);
    expect(stdout).to.equal(`cli:${file}\n  /check  checks things\n  --strict-mode  be strict\n`);
  });

  it("reports a broken extension with its file, still loads the others, and exits 1", async () => {
    const broken = tmp.write("broken.ts", "export default function (kc) { const = }");
    const hello = join(root, "examples", "extensions", "hello.ts");
    const { code, stdout, stderr } = await run(["-e", broken, "-e", hello, "--list-extensions"], env());
    expect(code).to.equal(1);
    expect(stderr).to.contain(`Extension ${broken} failed to load`);
    expect(stdout).to.contain(`cli:${hello}\n  /hello  Show a greeting`);
  });

  it("ends --list-extensions quietly when its reader goes away (list | head)", async () => {
    const many = tmp.write(
      "many.ts",
      `export default (kc: any) => { for (let i = 0; i < 3000; i++) kc.registerCommand("command-" + i, { description: "a command with a long description " + i, handler: async () => {} }); };`,
    );
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [bin, "-e", many, "--list-extensions"], {
      env: { ...process.env, ...env() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error("knightcode --list-extensions did not end"));
      }, 30_000);
      child.on("close", (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(stderr).not.to.contain("EPIPE");
    expect(code).to.equal(0);
  });

  it("keeps the transform cache in the agent directory, or in $KNIGHTCODE_CODE_CACHE_DIR when it is set", async () => {
    const hello = join(root, "examples", "extensions", "hello.ts");
    const { existsSync, readdirSync } = await import("node:fs");
    await run(["-e", hello, "--list-extensions"], { ...env(), KNIGHTCODE_CODE_CACHE_DIR: "" });
    expect(readdirSync(join(tmp.path, "agent", "cache", "jiti")).length).to.be.greaterThan(0);
    const elsewhere = join(tmp.path, "caches");
    await run(["-e", hello, "--list-extensions"], {
      ...env(),
      KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent2"),
      KNIGHTCODE_CODE_CACHE_DIR: elsewhere,
    });
    expect(readdirSync(join(elsewhere, "jiti")).length).to.be.greaterThan(0);
    expect(existsSync(join(tmp.path, "agent2", "cache"))).to.equal(false);
  });
});

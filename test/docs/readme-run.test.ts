/**
 * The README's offline run command, taken from the README itself, answers within seconds on a machine whose npm
 * cache is empty (issue 32): `npx knightcode` there copied the project into npm's cache and ran the whole build
 * again (26 s and more).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The command of the README's first bash block under "## Run". */
function offlineCommand(): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const run = readme.slice(readme.indexOf("## Run"));
  const block = /```bash\n([\s\S]*?)```/.exec(run)?.[1];
  if (!block) throw new Error("README.md has no bash block under ## Run");
  return block.trim();
}

describe("README: the run command on a fresh machine", function () {
  this.timeout(30_000);

  it("answers the offline example within 5 s with an empty npm cache", async () => {
    const command = offlineCommand();
    expect(command).to.contain("--provider scripted");
    const cache = mkdtempSync(join(tmpdir(), "kc-npm-cache-"));
    const agentDir = mkdtempSync(join(tmpdir(), "kc-readme-agent-"));
    try {
      const started = Date.now();
      const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((done, fail) => {
        const child = spawn("/bin/sh", ["-c", command], {
          cwd: root,
          env: { ...process.env, npm_config_cache: cache, KNIGHTCODE_AGENT_DIR: agentDir },
          stdio: ["ignore", "pipe", "pipe"],
          // Its own process group, so a timeout ends npm and whatever npm started too.
          detached: true,
        });
        let out = "";
        child.stdout.on("data", (d) => {
          out += d;
        });
        child.stderr.resume();
        const timer = setTimeout(() => {
          process.kill(-child.pid!, "SIGKILL");
          fail(new Error(`${command} did not answer within 20 s`));
        }, 20_000);
        child.on("close", (exit) => {
          clearTimeout(timer);
          done({ code: exit, stdout: out });
        });
      });
      const took = Date.now() - started;
      expect(code).to.equal(0);
      expect(stdout).to.match(/hello/i);
      expect(took, `took ${took} ms`).to.be.below(5_000);
    } finally {
      rmSync(cache, { recursive: true, force: true });
      rmSync(agentDir, { recursive: true, force: true });
    }
  });
});

/**
 * The private index copy that diffs and snapshots use lives in a temp folder: removed when the work is done, and
 * also when the process exits in the middle of it (a quit during a turn's capture), where no `finally` runs.
 */
import { execFile } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { useTempDir } from "../../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../../..", import.meta.url));

describe("worktrees git: the private index copy", function () {
  this.timeout(30_000);
  const tmp = useTempDir("kc-temp-index-");

  it("is removed when the process exits while it is in use", async () => {
    const script = join(tmp.path, "exit-midway.ts");
    writeFileSync(
      script,
      `import { withTempIndex } from ${JSON.stringify(join(root, "builtin-extensions/worktrees/git/state.ts"))};
const repo = { root: ${JSON.stringify(tmp.path)}, gitDir: "", commonDir: "", indexFile: ${JSON.stringify(join(tmp.path, "no-index"))} };
void withTempIndex(repo as never, async (env) => {
  console.log(env.GIT_INDEX_FILE);
  process.exit(0);
  return new Promise<never>(() => {});
});
`,
    );
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--conditions", "knightcode-source", script],
      { cwd: root, timeout: 20_000 },
    );
    const indexFile = stdout.trim();
    expect(indexFile).to.match(/kc-git-index-/);
    expect(existsSync(join(indexFile, ".."))).to.equal(false);
  });
});

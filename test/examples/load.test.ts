/** Every example extension loads in the built CLI (`--list-extensions` exits 0). Run `npm run build` first. */

import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { runCli } from "../helpers/cli.js";
import { useTempDir } from "../helpers/temp-dir.js";

const examples = fileURLToPath(new URL("../../examples/extensions/", import.meta.url));

describe("example extensions", () => {
  const tmp = useTempDir("kc-examples-");
  const files = readdirSync(examples).filter((name) => name.endsWith(".ts"));

  it("finds the examples", () => {
    expect(files).to.include.members([
      "hello.ts",
      "todo.ts",
      "dynamic-tools.ts",
      "truncated-tool.ts",
      "permission-gate.ts",
      "protected-paths.ts",
      "status.ts",
      "sandboxed-bash.ts",
      "my-provider.ts",
      "allowlist-gate.ts",
      "mini-mcp.ts",
    ]);
  });

  for (const file of files) {
    it(`loads ${file} with --list-extensions`, async () => {
      const result = await runCli(["-e", join(examples, file), "--list-extensions"], {
        cwd: tmp.path,
        env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
      });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.contain(`cli:${join(examples, file)}`);
    });
  }
});

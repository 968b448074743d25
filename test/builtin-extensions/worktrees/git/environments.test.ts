import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  environmentsPath,
  listEnvironments,
  runEnvironmentScript,
  saveEnvironments,
} from "../../../../builtin-extensions/worktrees/git/environments.js";
import { GitServiceError } from "../../../../builtin-extensions/worktrees/git/errors.js";
import { useTempDir } from "../../../helpers/temp-dir.js";

describe("builtin:worktrees git engine: environments", () => {
  const tmp = useTempDir("kc-env-");

  it("saves and lists .knightcode/environments.json", () => {
    const saved = saveEnvironments(tmp.path, [
      { name: "node", setup: { default: "npm ci" } },
      { name: "none" },
    ]);
    expect(saved).to.have.length(2);
    expect(JSON.parse(readFileSync(environmentsPath(tmp.path), "utf8")).environments[0].name).to.equal(
      "node",
    );
    expect(listEnvironments(tmp.path, false)).to.deep.equal({ environments: saved, trusted: false });
  });

  it("refuses repeated names, more than 50, and unknown platforms", () => {
    const refuse = (value: unknown) => {
      try {
        saveEnvironments(tmp.path, value);
      } catch (error) {
        expect(error).to.be.instanceOf(GitServiceError);
        return (error as GitServiceError).message;
      }
      throw new Error("accepted");
    };
    expect(refuse([{ name: "a" }, { name: "a" }])).to.match(/unique; "a" repeats/);
    expect(refuse(Array.from({ length: 51 }, (_, i) => ({ name: `e${i}` })))).to.match(/at most 50/);
    expect(refuse([{ name: "a", setup: { plan9: "x" } }])).to.match(/not a platform/);
    expect(existsSync(environmentsPath(tmp.path))).to.equal(false);
  });

  it("runs a setup script in the worktree with KNIGHTCODE_WORKTREE_PATH, streaming its output", async () => {
    const chunks: string[] = [];
    const run = await runEnvironmentScript(
      { name: "x", setup: { default: 'echo "at $KNIGHTCODE_WORKTREE_PATH"; pwd > where.txt' } },
      "setup",
      { worktreePath: tmp.path, trusted: true, onOutput: (phase, text) => chunks.push(`${phase}:${text}`) },
    );
    expect(run.exitCode).to.equal(0);
    expect(chunks.join("")).to.equal(`setup:at ${tmp.path}\n`);
    expect(readFileSync(join(tmp.path, "where.txt"), "utf8").trim()).to.equal(tmp.path);
  });

  it("never runs a script of an untrusted project", async () => {
    const run = await runEnvironmentScript({ name: "x", setup: { default: "touch ran.txt" } }, "setup", {
      worktreePath: tmp.path,
      trusted: false,
    });
    expect(run.skipped).to.equal("untrusted");
    expect(existsSync(join(tmp.path, "ran.txt"))).to.equal(false);
  });
});

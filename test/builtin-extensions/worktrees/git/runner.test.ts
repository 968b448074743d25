import { expect } from "chai";
import { GitServiceError } from "../../../../builtin-extensions/worktrees/git/errors.js";
import { openRepo } from "../../../../builtin-extensions/worktrees/git/repo.js";
import {
  GitCommandError,
  GitOutputTooLargeError,
  gitText,
  runGit,
} from "../../../../builtin-extensions/worktrees/git/runner.js";
import { useGitRepo } from "./git-fixture.js";

describe("builtin:worktrees git engine: runner", () => {
  const fx = useGitRepo();

  it("fails with the args, exit code and stderr of the git call", async () => {
    const error = await runGit(["rev-parse", "--verify", "no-such-ref"], { cwd: fx.repo }).catch(
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(GitCommandError);
    const failure = error as GitCommandError;
    expect(failure.args).to.deep.equal(["rev-parse", "--verify", "no-such-ref"]);
    expect(failure.exitCode).to.equal(128);
    expect(failure.stderr).to.match(/fatal: Needed a single revision/);
  });

  it("treats the exit codes the caller lists as answers", async () => {
    fx.write("a.txt", "changed\n");
    const out = await runGit(["diff", "--quiet"], { cwd: fx.repo, okCodes: [1] });
    expect(out.code).to.equal(1);
  });

  it("kills git and fails when the output passes the bound", async () => {
    const error = await runGit(["hash-object", "--stdin"], { cwd: fx.repo, maxBytes: 10 }).catch(
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(GitOutputTooLargeError);
  });

  it("ignores GIT_DIR and GIT_INDEX_FILE from the environment", async () => {
    process.env.GIT_INDEX_FILE = "/nonexistent/index";
    try {
      expect(await gitText(["ls-files"], { cwd: fx.repo })).to.equal("a.txt");
    } finally {
      delete process.env.GIT_INDEX_FILE;
    }
  });

  it("answers notGitRepo outside a repository", async () => {
    const error = await openRepo(fx.dir).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(GitServiceError);
    expect((error as GitServiceError).errorName).to.equal("notGitRepo");
  });

  it("opens a repository from a subfolder, with its prefix and branch", async () => {
    fx.write("pkg/sub/x.txt", "x\n");
    const repo = await openRepo(`${fx.repo}/pkg/sub`);
    expect(repo.root).to.equal(fx.repo);
    expect(repo.prefix).to.equal("pkg/sub/");
    expect(repo.branch).to.equal("main");
    expect(repo.head).to.match(/^[0-9a-f]{40}$/);
  });
});

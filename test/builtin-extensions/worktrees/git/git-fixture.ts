/** Real git repositories in temp dirs for the git service tests. */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { GitServiceError } from "../../../../builtin-extensions/worktrees/git/errors.js";

export interface Fixture {
  readonly dir: string;
  /** The repository's checkout (`<dir>/repo`). */
  readonly repo: string;
  git(args: string[], cwd?: string): string;
  write(rel: string, text: string | Buffer, cwd?: string): string;
  read(rel: string, cwd?: string): string;
  commitAll(message: string, cwd?: string): void;
  indexBytes(cwd?: string): Buffer;
}

/** A fixed identity, no system config and no credential prompt, for every git a test runs. */
export const GIT_ENV = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
};

const ENV = { ...process.env, ...GIT_ENV };

/** A temp dir per test holding `repo/`, a git repository with one commit (`a.txt`), removed afterwards. */
export function useGitRepo(options: { empty?: boolean } = {}): Fixture {
  let dir = "";
  const fixture: Fixture = {
    get dir() {
      return dir;
    },
    get repo() {
      return join(dir, "repo");
    },
    git(args, cwd = fixture.repo) {
      return execFileSync("git", args, {
        cwd,
        env: ENV,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    },
    write(rel, text, cwd = fixture.repo) {
      const file = join(cwd, rel);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    read(rel, cwd = fixture.repo) {
      return readFileSync(join(cwd, rel), "utf8");
    },
    commitAll(message, cwd = fixture.repo) {
      fixture.git(["add", "-A"], cwd);
      fixture.git(["commit", "-q", "-m", message], cwd);
    },
    indexBytes(cwd = fixture.repo) {
      return readFileSync(join(fixture.git(["rev-parse", "--absolute-git-dir"], cwd).trim(), "index"));
    },
  };
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "kc-git-")));
    mkdirSync(join(dir, "repo"));
    fixture.git(["init", "-q", "-b", "main"]);
    if (!options.empty) {
      fixture.write("a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n");
      fixture.commitAll("first");
    }
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return fixture;
}

/** The rejection of `promise`, which must be a GitServiceError. */
export async function rejection(promise: Promise<unknown>): Promise<GitServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a GitServiceError").to.be.instanceOf(GitServiceError);
  return error as GitServiceError;
}

/** Ten short lines: room for hunks that do not touch. */
export const TEN = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

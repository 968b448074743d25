/**
 * The `git/*` methods of the app-server spec, on one checkout (a thread's worktree or the user's checkout):
 * status, stage and unstage (everything, a path or a hunk), commit, push, pull request, branches, log. Unlike reads
 * and reverts these are the user's own git actions: they write the index, and `git/commit` runs the user's hooks.
 */
import { execFile } from "node:child_process";
import type { BranchInfo, GitStatus, LogEntry, PullRequestParams, StageParams } from "@knightcodeai/cli/kit";
import { readChanges } from "./changes.js";
import { DEFAULT_CONTEXT, diffTrees, hunkPatch } from "./diff.js";
import { GitServiceError, gitConflict, invalidParams } from "./errors.js";
import { openRepo, operationInProgress, type RepoInfo, resolveCommit, treeOf } from "./repo.js";
import { GitCommandError, gitText, runGit, splitNul } from "./runner.js";
import { captureState, withTempIndex } from "./state.js";

export type { BranchInfo, GitStatus, LogEntry };
export type StageRequest = StageParams;
export type PrCreateRequest = PullRequestParams;

export async function gitStatus(cwd: string): Promise<GitStatus> {
  const repo = await openRepo(cwd);
  const out = await runGit(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"], {
    cwd: repo.root,
    read: true,
  });
  const status: GitStatus = {
    root: repo.root,
    ahead: 0,
    behind: 0,
    staged: 0,
    unstaged: 0,
    untracked: 0,
    conflicted: 0,
  };
  if (repo.branch) status.branch = repo.branch;
  if (repo.head) status.head = repo.head;
  const records = splitNul(out.stdout);
  for (let i = 0; i < records.length; i++) {
    const record = records[i] ?? "";
    if (record.startsWith("# branch.upstream ")) status.upstream = record.slice(18);
    else if (record.startsWith("# branch.ab ")) {
      const [ahead = "+0", behind = "-0"] = record.slice(12).split(" ");
      status.ahead = Number(ahead.slice(1));
      status.behind = Number(behind.slice(1));
    } else if (record.startsWith("1 ") || record.startsWith("2 ")) {
      const xy = record.slice(2, 4);
      if (xy[0] !== ".") status.staged++;
      if (xy[1] !== ".") status.unstaged++;
      // A rename or copy record is followed by its original path.
      if (record.startsWith("2 ")) i++;
    } else if (record.startsWith("u ")) status.conflicted++;
    else if (record.startsWith("? ")) status.untracked++;
  }
  const operation = operationInProgress(repo);
  if (operation) status.operation = operation;
  return status;
}

async function applyHunkToIndex(repo: RepoInfo, request: StageRequest, reverse: boolean): Promise<string[]> {
  const path = request.path ?? "";
  const context = request.context ?? DEFAULT_CONTEXT;
  const read = await readChanges(repo.root, { scope: reverse ? "staged" : "unstaged", context });
  const file = read.files.find((f) => f.path === path || f.oldPath === path);
  const hunk = context === 0 ? undefined : file?.hunks.find((h) => h.id === request.hunkId);
  if (!file || !hunk) {
    throw gitConflict(
      "diffChanged",
      `the hunk ${request.hunkId} of ${path} changed since it was read; read the diff again`,
      {
        paths: [path],
      },
    );
  }
  if (file.status !== "modified" || file.binary)
    return reverse ? unstagePaths(repo, [path]) : stagePaths(repo, [path]);
  // The parsed header is needed for the patch: read the same trees again through diffTrees.
  const state = await captureState(repo, { untrackedLimit: 0 });
  const from = reverse ? await treeOf(repo, repo.head) : state.indexTree;
  const to = reverse ? state.indexTree : state.workTree;
  const parsed = (await diffTrees(repo, from, to, { context })).files.find((f) => f.file.path === file.path);
  const same = parsed?.file.hunks.find((h) => h.id === hunk.id);
  if (!parsed || !same)
    throw gitConflict("diffChanged", `${path} changed while it was being staged`, { paths: [path] });
  try {
    await runGit(["apply", "--cached", ...(reverse ? ["-R"] : []), "--whitespace=nowarn", "-"], {
      cwd: repo.root,
      input: hunkPatch(parsed, same),
    });
  } catch (error) {
    if (error instanceof GitCommandError) {
      throw gitConflict("patchFailed", `the hunk does not apply to the index of ${path}`, {
        paths: [path],
        output: error.stderr,
      });
    }
    throw error;
  }
  return [path];
}

async function stagePaths(repo: RepoInfo, paths: readonly string[] | undefined): Promise<string[]> {
  const spec = paths ? paths.map((p) => `:(literal)${p}`) : ["."];
  await runGit(["add", "-A", "--", ...spec], { cwd: repo.root });
  return paths ? [...paths] : [];
}

async function unstagePaths(repo: RepoInfo, paths: readonly string[] | undefined): Promise<string[]> {
  const spec = paths ? paths.map((p) => `:(literal)${p}`) : ["."];
  if (repo.head) await runGit(["reset", "-q", "HEAD", "--", ...spec], { cwd: repo.root });
  else await runGit(["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", ...spec], { cwd: repo.root });
  return paths ? [...paths] : [];
}

/** `git/stage`: stages everything, one literal path, or one hunk of the unstaged diff. */
export async function gitStage(cwd: string, request: StageRequest = {}): Promise<{ paths: string[] }> {
  const repo = await openRepo(cwd);
  if (request.hunkId !== undefined) {
    if (request.path === undefined) throw invalidParams("`hunkId` needs `path`");
    return { paths: await applyHunkToIndex(repo, request, false) };
  }
  return { paths: await stagePaths(repo, request.path === undefined ? undefined : [request.path]) };
}

/** `git/unstage`: unstages everything, one literal path, or one hunk of the staged diff. */
export async function gitUnstage(cwd: string, request: StageRequest = {}): Promise<{ paths: string[] }> {
  const repo = await openRepo(cwd);
  if (request.hunkId !== undefined) {
    if (request.path === undefined) throw invalidParams("`hunkId` needs `path`");
    return { paths: await applyHunkToIndex(repo, request, true) };
  }
  return { paths: await unstagePaths(repo, request.path === undefined ? undefined : [request.path]) };
}

export interface CommitRequest {
  /** Empty or absent: `writeMessage` writes it from the staged diff. */
  message?: string;
  /** Default true: stage everything first. */
  includeUnstaged?: boolean;
  /** Writes a commit message for the staged diff (the thread's model, outside the conversation). */
  writeMessage?: (stagedDiff: string) => Promise<string>;
}

async function indexFingerprint(repo: RepoInfo): Promise<string> {
  const head = (await resolveCommit(repo.root, "HEAD")) ?? "unborn";
  const tree = await withTempIndex(repo, (env) => gitText(["write-tree"], { cwd: repo.root, env }));
  return `${head} ${tree}`;
}

/** `git/commit`: commits the staged changes (everything first unless `includeUnstaged: false`) with the user's hooks. */
export async function gitCommit(
  cwd: string,
  request: CommitRequest = {},
): Promise<{ commit: string; message: string }> {
  const repo = await openRepo(cwd);
  if (operationInProgress(repo)) {
    throw gitConflict("operationInProgress", `${operationInProgress(repo)} is in progress in ${repo.root}`);
  }
  if (request.includeUnstaged !== false) await stagePaths(repo, undefined);
  const before = await indexFingerprint(repo);
  const staged = await runGit(["diff", "--cached", "--quiet"], { cwd: repo.root, read: true, okCodes: [1] });
  if (repo.head && staged.code === 0) throw invalidParams("nothing is staged to commit");
  let message = request.message?.trim() ?? "";
  if (!message) {
    if (!request.writeMessage) throw invalidParams("an empty message needs a model to write one");
    const diff = await gitText(["diff", "--cached", "--no-color", "--no-ext-diff", "--stat", "-p"], {
      cwd: repo.root,
      read: true,
    });
    message = (await request.writeMessage(diff)).trim();
    if (!message) throw invalidParams("the model wrote an empty commit message");
  }
  if ((await indexFingerprint(repo)) !== before) {
    throw gitConflict(
      "concurrentChange",
      "the checkout changed while the commit message was written; nothing was committed",
    );
  }
  // A hook that refuses the commit surfaces as a GitCommandError carrying its output.
  await runGit(["commit", "-q", "-F", "-"], { cwd: repo.root, input: message });
  return { commit: await gitText(["rev-parse", "HEAD"], { cwd: repo.root, read: true }), message };
}

const AUTH_FAILURE =
  /Authentication failed|could not read Username|could not read Password|Permission denied \(publickey|terminal prompts disabled/i;

/**
 * `git/push`: pushes the current branch with one explicit, non-forcing refspec; the first push (no upstream) goes
 * to `origin` (or the only remote) and sets the upstream.
 */
export async function gitPush(cwd: string): Promise<{ remote: string; branch: string; upstream: string }> {
  const repo = await openRepo(cwd);
  if (!repo.branch) throw invalidParams("HEAD is detached: create a branch before pushing");
  const cfg = async (key: string) => {
    const out = await runGit(["config", "--get", key], { cwd: repo.root, read: true, okCodes: [1] });
    return out.stdout.toString("utf8").trim() || undefined;
  };
  let remote = await cfg(`branch.${repo.branch}.remote`);
  const merge = await cfg(`branch.${repo.branch}.merge`);
  const first = !remote || !merge;
  if (!remote) {
    const remotes = (await gitText(["remote"], { cwd: repo.root, read: true })).split("\n").filter(Boolean);
    remote = remotes.includes("origin") ? "origin" : remotes.length === 1 ? remotes[0] : undefined;
    if (!remote) throw invalidParams("no remote to push to: add one named origin");
  }
  const target = merge && !first ? merge : `refs/heads/${repo.branch}`;
  try {
    await runGit(
      [
        "push",
        "--porcelain",
        ...(first ? ["--set-upstream"] : []),
        remote,
        `refs/heads/${repo.branch}:${target}`,
      ],
      {
        cwd: repo.root,
      },
    );
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    if (AUTH_FAILURE.test(error.stderr))
      throw new GitServiceError("authRequired", `pushing to ${remote} needs credentials`);
    throw gitConflict("pushRejected", `the push to ${remote} was rejected`, { output: error.stderr });
  }
  return { remote, branch: repo.branch, upstream: `${remote}/${target.replace(/^refs\/heads\//, "")}` };
}

/** `git/pr/create`: `gh pr create` in the checkout; `toolMissing` without `gh`. Returns the URL gh printed. */
export async function gitPrCreate(cwd: string, request: PrCreateRequest = {}): Promise<{ url: string }> {
  const repo = await openRepo(cwd);
  const args = ["pr", "create"];
  if (request.title !== undefined) args.push("--title", request.title, "--body", request.body ?? "");
  else args.push("--fill");
  if (request.draft) args.push("--draft");
  const output = await new Promise<string>((resolve, reject) => {
    execFile(
      request.gh ?? "gh",
      args,
      {
        cwd: repo.root,
        env: { ...process.env, GH_PROMPT_DISABLED: "1", GIT_TERMINAL_PROMPT: "0" },
        maxBuffer: 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
          return reject(
            new GitServiceError("toolMissing", "gh (GitHub CLI) is not installed or not on PATH"),
          );
        }
        if (/auth login|not logged in|authenticat/i.test(stderr)) {
          return reject(new GitServiceError("authRequired", "gh is not signed in: run `gh auth login`"));
        }
        const code = typeof error.code === "number" ? error.code : -1;
        reject(new GitCommandError(["pr-create-via-gh", ...args], repo.root, code, stderr));
      },
    );
  });
  const url = output.trim().split("\n").filter(Boolean).pop() ?? "";
  return { url };
}

/** `git/branches`: the local branches, the current one marked. */
export async function gitBranches(cwd: string): Promise<{ current?: string; branches: BranchInfo[] }> {
  const repo = await openRepo(cwd);
  const out = await gitText(
    ["for-each-ref", "--format=%(refname:short)%00%(objectname)%00%(upstream:short)", "refs/heads/"],
    {
      cwd: repo.root,
      read: true,
    },
  );
  const branches = out
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [name = "", head = "", upstream = ""] = line.split("\0");
      return { name, head, ...(upstream ? { upstream } : {}), current: name === repo.branch };
    });
  return { ...(repo.branch ? { current: repo.branch } : {}), branches };
}

async function checkBranchName(repo: RepoInfo, name: string): Promise<void> {
  const ok = await runGit(["check-ref-format", "--branch", name], {
    cwd: repo.root,
    read: true,
    okCodes: [1, 128],
  });
  if (ok.code !== 0 || name.startsWith("-")) throw invalidParams(`"${name}" is not a valid branch name`);
}

/** `git/branch/create` ("Create branch here"): a branch at `HEAD`, checked out, the working files unchanged. */
export async function gitBranchCreate(cwd: string, name: string): Promise<{ branch: string }> {
  const repo = await openRepo(cwd);
  await checkBranchName(repo, name);
  if (!repo.head) throw invalidParams("no commit yet to create a branch at");
  if (await resolveCommit(repo.root, `refs/heads/${name}`)) {
    throw gitConflict("branchExists", `a branch named ${name} already exists`);
  }
  // Only HEAD moves: the branch points at the commit already checked out, so no file or index entry changes.
  await runGit(["branch", "--no-track", name, repo.head], { cwd: repo.root });
  await runGit(["symbolic-ref", "HEAD", `refs/heads/${name}`], { cwd: repo.root });
  return { branch: name };
}

/**
 * `git/branch/switch`: checks out an existing branch; refused (`localChanges`) when that would overwrite local
 * changes or an ignored file the branch tracks.
 */
export async function gitBranchSwitch(cwd: string, name: string): Promise<{ branch: string }> {
  const repo = await openRepo(cwd);
  const target = await resolveCommit(repo.root, `refs/heads/${name}`);
  if (!target) throw invalidParams(`no branch named ${name}`);
  const ignored = splitNul(
    (
      await runGit(["ls-files", "-z", "--others", "--ignored", "--exclude-standard"], {
        cwd: repo.root,
        read: true,
      })
    ).stdout,
  );
  if (ignored.length > 0) {
    const tracked = new Set(
      splitNul(
        (await runGit(["ls-tree", "-r", "-z", "--name-only", target], { cwd: repo.root, read: true })).stdout,
      ),
    );
    const clobbered = ignored.filter((p) => tracked.has(p));
    if (clobbered.length > 0) {
      throw gitConflict("localChanges", `switching to ${name} would overwrite ignored files it tracks`, {
        paths: clobbered,
      });
    }
  }
  try {
    await runGit(["switch", "--no-guess", name], { cwd: repo.root });
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    const paths = error.stderr
      .split("\n")
      .filter((line) => line.startsWith("\t"))
      .map((line) => line.trim());
    throw gitConflict(
      "localChanges",
      `switching to ${name} would overwrite local changes; commit or stash them first`,
      {
        paths,
        output: error.stderr,
      },
    );
  }
  return { branch: name };
}

/** `git/log`: the commits since `base` (the worktree's base, else the upstream), newest first, at most `limit`. */
export async function gitLog(
  cwd: string,
  options: { limit?: number; base?: string } = {},
): Promise<{ commits: LogEntry[] }> {
  const repo = await openRepo(cwd);
  if (!repo.head) return { commits: [] };
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1) throw invalidParams("`limit` must be a positive integer");
  let range = "HEAD";
  for (const base of [options.base, "@{upstream}"]) {
    if (base && (await resolveCommit(repo.root, base))) {
      range = `${base}..HEAD`;
      break;
    }
  }
  const out = await runGit(["log", "-z", `--max-count=${limit}`, "--format=%H%x01%s%x01%an%x01%aI", range], {
    cwd: repo.root,
    read: true,
  });
  const commits = splitNul(out.stdout).map((record) => {
    const [commit = "", subject = "", author = "", date = ""] = record.split("\x01");
    return { commit, subject, author, date };
  });
  return { commits };
}

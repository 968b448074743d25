/**
 * The errors of the git services, named as the app-server spec names them (`notGitRepo`, `gitConflict` with a
 * `reason`, ...), so a protocol handler forwards `errorName` and `data` without translating anything.
 */

/** The spec's error names the git services raise. */
export type GitErrorName =
  | "notGitRepo"
  | "invalidParams"
  | "gitConflict"
  | "toolMissing"
  | "authRequired"
  | "turnInProgress";

/** `gitConflict`'s `data.reason` values (app-server spec, "Workspaces, diffs and git"). */
export type GitConflictReason =
  | "diffChanged"
  | "patchFailed"
  | "concurrentChange"
  | "pushRejected"
  | "localChanges"
  | "operationInProgress"
  | "branchExists"
  | "recoveryRequired"
  | "worktreeDeleted"
  | "worktreeMissing"
  | "worktreeInUse"
  | "submodules";

/** `data` of a `gitConflict` error: the reason, and the paths, output or recovery text where they apply. */
export interface GitConflictData {
  reason: GitConflictReason;
  paths?: string[];
  output?: string;
  recoveryInstructions?: string;
  /** `recoveryRequired`: the saved patch of the changes that did not land. */
  patch?: string;
}

/** A refusal a protocol handler answers with the spec's error name and, for `gitConflict`, its `data`. */
export class GitServiceError extends Error {
  readonly errorName: GitErrorName;
  readonly data: GitConflictData | undefined;
  constructor(errorName: GitErrorName, message: string, data?: GitConflictData) {
    super(message);
    this.name = "GitServiceError";
    this.errorName = errorName;
    this.data = data;
  }
}

export function gitConflict(
  reason: GitConflictReason,
  message: string,
  extra?: Omit<GitConflictData, "reason">,
) {
  return new GitServiceError("gitConflict", message, { reason, ...extra });
}

export function invalidParams(message: string): GitServiceError {
  return new GitServiceError("invalidParams", message);
}

/**
 * The errors of the git engine, named as the app-server protocol names them (`notGitRepo`, `gitConflict` with a
 * `reason`, ...), so a protocol handler forwards `errorName` and `data` without translating anything. The class and
 * its types are the kit's (`gitService`), shared with any replacement of the engine.
 */
import { type GitConflictData, type GitConflictReason, GitServiceError } from "@knightcodeai/cli/kit";

export { GitServiceError };

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

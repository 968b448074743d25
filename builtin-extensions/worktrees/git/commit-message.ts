/**
 * The commit message `git/commit` asks the thread's model for when the message is empty: one call outside the
 * conversation, through the thread session's own model runtime (its providers, keys and models.json), given only
 * the staged diff (cut to a budget), answering with the message alone.
 */
import type { CommitMessageModel } from "@knightcodeai/cli/kit";

/** Diff text the model is shown; a larger diff is cut and says so. */
export const COMMIT_DIFF_BUDGET_CHARS = 40_000;

const SYSTEM_PROMPT =
  "You write git commit messages. Given a staged diff, answer with the commit message only: a summary line of at " +
  "most 72 characters in the imperative mood, then, if the change needs it, a blank line and a short body. No " +
  "code fences, no quotes, no preamble.";

/** A `writeMessage` for `gitCommit` that asks `writer.model` through `writer.models`. */
export function commitMessageWriter(writer: CommitMessageModel): (stagedDiff: string) => Promise<string> {
  return async (stagedDiff) => {
    const shown =
      stagedDiff.length > COMMIT_DIFF_BUDGET_CHARS
        ? `${stagedDiff.slice(0, COMMIT_DIFF_BUDGET_CHARS)}\n[the rest of the diff, ${stagedDiff.length - COMMIT_DIFF_BUDGET_CHARS} characters, is left out]`
        : stagedDiff;
    const answer = await writer.models
      .streamSimple(
        writer.model,
        [
          {
            role: "user",
            content: `Write the commit message for this staged diff:\n\n${shown}`,
            timestamp: Date.now(),
          },
        ],
        { systemPrompt: SYSTEM_PROMPT, ...(writer.signal ? { signal: writer.signal } : {}) },
      )
      .result();
    if (answer.stopReason === "error" || answer.stopReason === "aborted") {
      throw new Error(
        `the model could not write a commit message: ${answer.errorMessage ?? answer.stopReason}`,
      );
    }
    return answer.content
      .filter((block): block is { type: "text"; text: string } => block.type === "text")
      .map((block) => block.text)
      .join("")
      .trim();
  };
}

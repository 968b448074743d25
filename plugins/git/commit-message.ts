/**
 * The commit message `git/commit` asks the thread's model for when the message is empty: one call outside the
 * conversation, given only the staged diff (cut to a budget), answering with the message alone.
 */
import type { ModelRef } from "../kit/model-calls.js";
import { complete } from "../kit/model-calls.js";

/** Diff text the model is shown; a larger diff is cut and says so. */
export const COMMIT_DIFF_BUDGET_CHARS = 40_000;

const SYSTEM_PROMPT =
  "You write git commit messages. Given a staged diff, answer with the commit message only: a summary line of at " +
  "most 72 characters in the imperative mood, then, if the change needs it, a blank line and a short body. No " +
  "code fences, no quotes, no preamble.";

/** A `writeMessage` for `gitCommit` that asks `model`. */
export function commitMessageWriter(
  model: ModelRef,
  signal?: AbortSignal,
): (stagedDiff: string) => Promise<string> {
  return async (stagedDiff) => {
    const shown =
      stagedDiff.length > COMMIT_DIFF_BUDGET_CHARS
        ? `${stagedDiff.slice(0, COMMIT_DIFF_BUDGET_CHARS)}\n[the rest of the diff, ${stagedDiff.length - COMMIT_DIFF_BUDGET_CHARS} characters, is left out]`
        : stagedDiff;
    const answer = await complete(
      model,
      {
        systemPrompt: SYSTEM_PROMPT,
        messages: [
          {
            role: "user",
            content: `Write the commit message for this staged diff:\n\n${shown}`,
            timestamp: Date.now(),
          },
        ],
      },
      signal ? { signal } : {},
    );
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

/**
 * Review comments on `turn/start` and `turn/queue/add`: drafts the client kept while reviewing a diff, sent with
 * the user's text. The model reads the text followed by each comment with the lines it is about quoted: the
 * `quote` the client sends (the diff lines the user reviewed, with their " ", "+" or "-" prefixes), else the
 * commented lines of the file as it is now in the thread's cwd. The user item keeps the typed text and lists the
 * comments beside it; the queue shows the typed text alone.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { invalidParams } from "./errors.js";

export interface ReviewComment {
  path: string;
  line: number;
  endLine?: number;
  body: string;
  quote?: string[];
}

/** At most this many lines are quoted per comment, each cut to a line's worth of characters. */
const QUOTE_MAX_LINES = 60;
const QUOTE_LINE_MAX_CHARS = 400;
export const MAX_COMMENTS = 50;

/** Refuses comments the server could not quote: too many, a path outside the cwd, a range that runs backwards. */
export function checkComments(comments: readonly ReviewComment[], cwd: string): void {
  if (comments.length > MAX_COMMENTS)
    throw invalidParams(`At most ${MAX_COMMENTS} comments travel with one input`, { reason: "comments" });
  for (const [index, comment] of comments.entries()) {
    const rel = relative(cwd, resolve(cwd, comment.path));
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel))
      throw invalidParams(`comments[${index}].path ${comment.path} is not a file inside ${cwd}`, {
        reason: "comments",
        path: `/comments/${index}/path`,
      });
    if (comment.endLine !== undefined && comment.endLine < comment.line)
      throw invalidParams(`comments[${index}].endLine comes before its line`, {
        reason: "comments",
        path: `/comments/${index}/endLine`,
      });
  }
}

function clip(line: string): string {
  return line.length > QUOTE_LINE_MAX_CHARS ? `${line.slice(0, QUOTE_LINE_MAX_CHARS)}…` : line;
}

function quoted(comment: ReviewComment, cwd: string): string[] {
  const end = comment.endLine ?? comment.line;
  let lines: string[];
  if (comment.quote !== undefined) lines = comment.quote;
  else {
    try {
      lines = readFileSync(resolve(cwd, comment.path), "utf8")
        .split("\n")
        .slice(comment.line - 1, end);
    } catch {
      return ["(the file cannot be read now)"];
    }
  }
  const shown = lines.slice(0, QUOTE_MAX_LINES).map(clip);
  if (lines.length > QUOTE_MAX_LINES) shown.push(`(${lines.length - QUOTE_MAX_LINES} more lines)`);
  return shown;
}

/** The prompt the model reads: the user's text, then each comment under the lines it is about. */
export function composePrompt(text: string, comments: readonly ReviewComment[], cwd: string): string {
  if (comments.length === 0) return text;
  const parts = [text.trim() === "" ? "" : `${text}\n`, "Review comments on the changes:"];
  for (const comment of comments) {
    const end = comment.endLine ?? comment.line;
    parts.push(`\n${comment.path}:${comment.line}${end !== comment.line ? `-${end}` : ""}`);
    for (const line of quoted(comment, cwd)) parts.push(`> ${line}`);
    parts.push(comment.body);
  }
  return parts.join("\n").trimStart();
}

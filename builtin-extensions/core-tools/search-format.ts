/** Output helpers shared by grep, find and ls: the byte limit, and the bracketed notices that follow the output. */
import { MAX_BYTES, type Truncation, truncateHead } from "./truncate.js";

/** What details report about a cut output (the kept text itself is the content, so it is not repeated). */
export type TruncationInfo = Omit<Truncation, "text">;

/** Keeps whole lines from the start up to 50 KB (the count limits of each tool bound the number of lines). */
export function limitBytes(text: string): { text: string; truncation?: TruncationInfo } {
  const t = truncateHead(text, Number.MAX_SAFE_INTEGER, MAX_BYTES);
  if (!t.truncated) return { text };
  const { text: kept, ...info } = t;
  return { text: kept, truncation: info };
}

/** Appends notices as one bracketed paragraph: `\n\n[first. second]`. */
export function withNotices(text: string, notices: readonly string[]): string {
  return notices.length === 0 ? text : `${text}\n\n[${notices.join(". ")}]`;
}

/** Output helpers shared by grep, find and ls: the byte limit, and the bracketed notices that follow the output. */
import { DEFAULT_MAX_BYTES, truncateHead } from "@knightcodeai/cli/kit";

/** What details report about a cut output (the kept text itself is the content, so it is not repeated). */
export interface TruncationInfo {
  truncated: true;
  /** Lines in the whole output and lines kept. */
  totalLines: number;
  keptLines: number;
  limit: "lines" | "bytes";
}

/** Keeps whole lines from the start up to 50 KB (the count limits of each tool bound the number of lines). */
export function limitBytes(text: string): { text: string; truncation?: TruncationInfo } {
  const t = truncateHead(text, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: DEFAULT_MAX_BYTES });
  if (!t.truncated) return { text };
  return {
    text: t.content,
    truncation: {
      truncated: true,
      totalLines: t.totalLines,
      keptLines: t.outputLines,
      limit: t.truncatedBy ?? "bytes",
    },
  };
}

/** Appends notices as one bracketed paragraph: `\n\n[first. second]`. */
export function withNotices(text: string, notices: readonly string[]): string {
  return notices.length === 0 ? text : `${text}\n\n[${notices.join(". ")}]`;
}

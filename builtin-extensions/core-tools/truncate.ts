/**
 * Output limits shared by the core tools: at most 2,000 lines or 50 KB reach the model; long lines are cut.
 * `truncateHead` keeps the beginning (file reads), `truncateTail` keeps the end (command output).
 */
export const MAX_LINES = 2000;
export const MAX_BYTES = 50 * 1024;
export const MAX_LINE_CHARS = 500;

export interface Truncation {
  text: string;
  truncated: boolean;
  /** Lines in the input and lines kept. */
  totalLines: number;
  keptLines: number;
  /** Why it stopped: the line limit or the byte limit. */
  limit?: "lines" | "bytes";
}

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Keeps whole lines from the start until either limit is reached. */
export function truncateHead(text: string, maxLines = MAX_LINES, maxBytes = MAX_BYTES): Truncation {
  return keepLines(text, maxLines, maxBytes, "head");
}

/** Keeps whole lines from the end until either limit is reached. */
export function truncateTail(text: string, maxLines = MAX_LINES, maxBytes = MAX_BYTES): Truncation {
  return keepLines(text, maxLines, maxBytes, "tail");
}

function keepLines(text: string, maxLines: number, maxBytes: number, from: "head" | "tail"): Truncation {
  const lines = text.split("\n");
  const ordered = from === "head" ? lines : [...lines].reverse();
  const kept: string[] = [];
  let size = 0;
  let limit: Truncation["limit"];
  for (const line of ordered) {
    if (kept.length >= maxLines) {
      limit = "lines";
      break;
    }
    const add = bytes(line) + (kept.length > 0 ? 1 : 0);
    if (size + add > maxBytes) {
      limit = "bytes";
      break;
    }
    kept.push(line);
    size += add;
  }
  if (from === "tail") kept.reverse();
  return {
    text: kept.join("\n"),
    truncated: limit !== undefined,
    totalLines: lines.length,
    keptLines: kept.length,
    ...(limit ? { limit } : {}),
  };
}

/** Cuts one line to `max` characters, saying how much was left out. */
export function truncateLine(line: string, max = MAX_LINE_CHARS): { text: string; cut: boolean } {
  if (line.length <= max) return { text: line, cut: false };
  return { text: `${line.slice(0, max)}… [${line.length - max} more characters]`, cut: true };
}

export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

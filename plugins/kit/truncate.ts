/**
 * Output limits for tool results, shared by the core tools and third-party tools: at most 2,000 lines or 50 KB
 * reach the model, whichever comes first, and single long lines are cut. `truncateHead` keeps the beginning (file
 * reads, listings), `truncateTail` keeps the end (command output, where errors and results are). The result shape
 * is pi's `TruncationResult`, so tools written for pi read the same fields.
 */
export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
/** Where `truncateLine` cuts by default (grep's match lines). */
export const DEFAULT_MAX_LINE_CHARS = 500;

export interface TruncationOptions {
  /** Default `DEFAULT_MAX_LINES`. */
  maxLines?: number;
  /** Default `DEFAULT_MAX_BYTES` (UTF-8 bytes). */
  maxBytes?: number;
}

export interface TruncationResult {
  /** The text kept. */
  content: string;
  truncated: boolean;
  /** Which limit cut the text; `null` when nothing was cut. */
  truncatedBy: "lines" | "bytes" | null;
  /** Lines and UTF-8 bytes of the input. */
  totalLines: number;
  totalBytes: number;
  /** Lines and bytes kept (a partial line counts as one). */
  outputLines: number;
  outputBytes: number;
  /** `truncateTail` only: the last line alone was over the byte limit, so only its end is kept. */
  lastLinePartial: boolean;
  /** `truncateHead` only: the first line alone was over the byte limit, so nothing is kept. */
  firstLineExceedsLimit: boolean;
  /** The limits applied. */
  maxLines: number;
  maxBytes: number;
}

const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

/** Keeps whole lines from the start until either limit is reached. */
export function truncateHead(content: string, options: TruncationOptions = {}): TruncationResult {
  return keepLines(content, options, "head");
}

/**
 * Keeps whole lines from the end until either limit is reached. When the last line alone is over the byte limit,
 * its final bytes are kept (starting on a character boundary), so the end of the output is always shown.
 */
export function truncateTail(content: string, options: TruncationOptions = {}): TruncationResult {
  return keepLines(content, options, "tail");
}

function keepLines(content: string, options: TruncationOptions, from: "head" | "tail"): TruncationResult {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const lines = content.split("\n");
  const totalBytes = byteLength(content);
  const base = {
    totalLines: lines.length,
    totalBytes,
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return {
      ...base,
      content,
      truncated: false,
      truncatedBy: null,
      outputLines: lines.length,
      outputBytes: totalBytes,
    };
  }

  const kept: string[] = [];
  let size = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  for (let i = 0; i < lines.length; i++) {
    if (kept.length >= maxLines) break;
    const line = lines[from === "head" ? i : lines.length - 1 - i]!;
    const add = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (size + add > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    kept.push(line);
    size += add;
  }
  if (from === "tail") kept.reverse();

  if (kept.length === 0 && maxLines > 0) {
    if (from === "head") {
      return {
        ...base,
        content: "",
        truncated: true,
        truncatedBy,
        outputLines: 0,
        outputBytes: 0,
        firstLineExceedsLimit: true,
      };
    }
    const end = lastBytes(lines[lines.length - 1]!, maxBytes);
    return {
      ...base,
      content: end,
      truncated: true,
      truncatedBy,
      outputLines: 1,
      outputBytes: byteLength(end),
      lastLinePartial: true,
    };
  }
  return {
    ...base,
    content: kept.join("\n"),
    truncated: true,
    truncatedBy,
    outputLines: kept.length,
    outputBytes: size,
  };
}

/** The last `maxBytes` bytes of `text`, starting on a character boundary. */
function lastBytes(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= maxBytes) return text;
  let start = buffer.length - maxBytes;
  while (start < buffer.length && (buffer[start]! & 0xc0) === 0x80) start++;
  return buffer.subarray(start).toString("utf8");
}

/** Cuts one line to `maxChars` characters, saying how much was left out. */
export function truncateLine(
  line: string,
  maxChars = DEFAULT_MAX_LINE_CHARS,
): { text: string; wasTruncated: boolean } {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  return {
    text: `${line.slice(0, maxChars)}… [${line.length - maxChars} more characters]`,
    wasTruncated: true,
  };
}

/** A byte count for people: `512 B`, `50.0 KB`, `1.5 MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

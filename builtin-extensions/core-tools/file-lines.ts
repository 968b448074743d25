/**
 * Reads a window of lines from a text file without holding the whole file: the file streams through once, every
 * line is counted, and only the lines of the window are kept, each cut to a byte budget (a line longer than the
 * budget cannot be shown anyway; its real size is kept for the message).
 */

export interface LineWindow {
  /** Lines of the window, without their terminator (`\n`, or `\r\n`); the first line without a UTF-8 BOM. */
  lines: string[];
  /** Real byte length of each kept line (the text may be cut to the budget). */
  lineBytes: number[];
  /** Lines in the file: a final newline ends the last line rather than starting an empty one. */
  totalLines: number;
}

export interface LineWindowOptions {
  /** 1-based first line to keep. */
  start: number;
  /** At most this many lines are kept. */
  maxLines: number;
  /** Stop keeping lines once this many bytes are kept; a kept line is cut after this many bytes. */
  maxBytes: number;
}

const NEWLINE = 0x0a;

/** `chunks` is the file's content in order (a read stream, or one buffer). */
export async function readLineWindow(
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  options: LineWindowOptions,
): Promise<LineWindow> {
  const { start, maxLines, maxBytes } = options;
  const lines: string[] = [];
  const lineBytes: number[] = [];
  let line = 1; // the line the next byte belongs to
  let keptBytes = 0;
  let keeping = start === 1 && maxLines > 0;
  let parts: Buffer[] = [];
  let partsLength = 0; // bytes gathered for the current line (at most maxBytes + 1)
  let lineLength = 0; // real bytes of the current line
  let lastByte = -1;
  let sawBytes = false;

  const finishLine = () => {
    if (keeping) {
      let text = Buffer.concat(parts, partsLength).toString("utf8");
      if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.endsWith("\r") && lineLength <= maxBytes) text = text.slice(0, -1);
      lines.push(text);
      lineBytes.push(lineLength);
      keptBytes += lineLength + 1;
      if (lines.length >= maxLines || keptBytes > maxBytes) keeping = false;
    }
    parts = [];
    partsLength = 0;
    lineLength = 0;
    line++;
    if (line === start && maxLines > 0) keeping = true;
  };

  const gather = (chunk: Buffer, from: number, to: number) => {
    lineLength += to - from;
    if (!keeping || partsLength > maxBytes || to === from) return;
    const take = Math.min(to - from, maxBytes + 1 - partsLength);
    parts.push(chunk.subarray(from, from + take));
    partsLength += take;
  };

  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    sawBytes = true;
    let from = 0;
    for (let at = chunk.indexOf(NEWLINE, from); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
      gather(chunk, from, at);
      finishLine();
      from = at + 1;
    }
    gather(chunk, from, chunk.length);
    lastByte = chunk[chunk.length - 1]!;
  }
  // A last line without a final newline is still a line.
  if (sawBytes && lastByte !== NEWLINE) finishLine();
  return { lines, lineBytes, totalLines: line - 1 };
}

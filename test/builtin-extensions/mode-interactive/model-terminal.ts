/**
 * A terminal for tests that keeps what a real one would show: a screen of `rows` rows and the scrollback above it.
 * It understands what the renderer writes (text, CR, LF that scrolls at the bottom, cursor up and down, column,
 * clear line, clear screen, home, clear scrollback) and drops colours, links, markers and synchronized-output
 * brackets. Writing past the last column throws: a line too wide for the terminal would wrap and shift every row.
 */
import type { Terminal } from "@knightcodeai/cli/tui";
import { visibleWidth } from "@knightcodeai/cli/tui";

const segmenter = new Intl.Segmenter();
// biome-ignore lint/suspicious/noControlCharactersInRegex: reading escape sequences is the point
const TOKEN = /\x1b\[([?0-9;]*)([A-Za-z~])|\x1b\][^\x07]*\x07|\x1b_[^\x07]*\x07|[\r\n]|[^\x1b\r\n]+/gy;

export class ModelTerminal implements Terminal {
  scrollback: string[] = [];
  screen: string[][];
  row = 0;
  col = 0;
  bytes = 0;
  cursorShown = false;
  private onInput: (data: string) => void = () => {};
  private onResize: () => void = () => {};

  constructor(
    public columns: number,
    public rows: number,
  ) {
    this.screen = Array.from({ length: rows }, () => []);
  }

  /** The scrollback and the screen, oldest first, trailing spaces and blank rows at the end left out. */
  history(): string[] {
    const all = [...this.scrollback, ...this.screen.map((cells) => cells.join("").trimEnd())];
    while (all.length > 0 && all.at(-1) === "") all.pop();
    return all;
  }

  /** The screen's rows, trailing spaces left out. */
  shown(): string[] {
    return this.screen.map((cells) => cells.join("").trimEnd());
  }

  press(data: string): void {
    this.onInput(data);
  }

  resize(columns: number, rows: number): void {
    // A terminal keeps the bottom of its screen when it gets shorter; the renderer redraws everything anyway.
    while (this.screen.length > rows) this.scrollback.push(this.screen.shift()!.join("").trimEnd());
    while (this.screen.length < rows) this.screen.push([]);
    this.columns = columns;
    this.rows = rows;
    this.row = Math.min(this.row, rows - 1);
    this.onResize();
  }

  start(onInput: (data: string) => void, onResize: () => void): void {
    this.onInput = onInput;
    this.onResize = onResize;
  }
  stop(): void {}
  async drainInput(): Promise<void> {}
  get kittyProtocolActive(): boolean {
    return false;
  }
  moveBy(): void {}
  hideCursor(): void {
    this.cursorShown = false;
  }
  showCursor(): void {
    this.cursorShown = true;
  }
  clearLine(): void {}
  clearFromCursor(): void {}
  clearScreen(): void {}
  setTitle(): void {}
  setProgress(): void {}

  write(data: string): void {
    this.bytes += Buffer.byteLength(data);
    TOKEN.lastIndex = 0;
    let read = 0;
    for (let match = TOKEN.exec(data); match; match = TOKEN.exec(data)) {
      read = TOKEN.lastIndex;
      const [token, params, command] = match;
      if (token === "\r") this.col = 0;
      else if (token === "\n") this.lineFeed();
      else if (command) this.csi(params ?? "", command);
      else if (!token.startsWith("\x1b")) this.print(token);
    }
    if (read < data.length)
      throw new Error(`unreadable output at ${JSON.stringify(data.slice(read, read + 20))}`);
  }

  private lineFeed(): void {
    if (this.row < this.rows - 1) {
      this.row++;
      return;
    }
    this.scrollback.push(this.screen.shift()!.join("").trimEnd());
    this.screen.push([]);
  }

  private csi(params: string, command: string): void {
    const n = Number(params || "1");
    if (command === "A") this.row = Math.max(0, this.row - n);
    else if (command === "B") this.row = Math.min(this.rows - 1, this.row + n);
    else if (command === "G") this.col = n - 1;
    else if (command === "H") [this.row, this.col] = [0, 0];
    else if (command === "K" && params === "2") this.screen[this.row] = [];
    else if (command === "J" && params === "2") this.screen = Array.from({ length: this.rows }, () => []);
    else if (command === "J" && params === "3") this.scrollback = [];
  }

  private print(text: string): void {
    const cells = this.screen[this.row]!;
    for (const { segment } of segmenter.segment(text)) {
      const width = visibleWidth(segment);
      if (width === 0) continue;
      if (this.col + width > this.columns)
        throw new Error(`row ${this.row} is written past column ${this.columns}: ${JSON.stringify(text)}`);
      while (cells.length < this.col) cells.push(" ");
      cells[this.col] = segment;
      for (let i = 1; i < width; i++) cells[this.col + i] = "";
      this.col += width;
    }
  }
}

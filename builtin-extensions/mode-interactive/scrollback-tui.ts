/**
 * pi-tui's TUI with finished output handed to the terminal's scrollback. pi-tui draws every frame from all the
 * lines the program ever showed (render, reset codes, compare with the last frame): with 2,000 messages that is
 * 15,000 lines per streamed token. Lines that have scrolled above the screen are already in the terminal's
 * scrollback, where pi-tui cannot change them without clearing it and drawing everything again. So once such lines
 * are also final (the header and finished messages), they are frozen: later frames leave them out and the TUI
 * works on the rest as if the terminal's buffer began below them. A frame then costs what the visible part and the
 * message being written cost, however long the conversation.
 *
 * Whatever makes pi-tui clear the screen (a resize, a forced redraw, a change above the screen) thaws the frozen
 * lines first: that frame draws everything, as pi-tui does, so the scrollback stays whole and in order.
 *
 * pi-tui keeps its frame state in private fields; this class reads and shifts five of them. The package is pinned
 * (0.73.1) and the tests drive the result in tmux, so a change in them shows.
 */
import { type Component, type Terminal, TUI } from "@knightcodeai/cli/tui";

/** What decides which lines may be frozen. */
export interface FinalLines {
  /** How many of the first lines of a frame at this width can no longer change. */
  finalLines(width: number): number;
  /** Grows whenever lines reported final may have changed after all (a display toggle, another session shown). */
  readonly epoch: number;
}

/** The fields of pi-tui's TUI this class works with (private there). */
interface FrameState {
  previousLines: string[];
  previousWidth: number;
  previousHeight: number;
  cursorRow: number;
  hardwareCursorRow: number;
  maxLinesRendered: number;
  previousViewportTop: number;
  fullRedrawCount: number;
  doRender(): void;
}

/** Forwards to the real terminal; while `held`, output waits in order and can be dropped. */
class HeldTerminal implements Terminal {
  private queue: (() => void)[] | undefined;
  constructor(readonly real: Terminal) {}
  hold(): void {
    this.queue = [];
  }
  drop(): void {
    if (this.queue) this.queue = [];
  }
  release(): void {
    const queue = this.queue ?? [];
    this.queue = undefined;
    for (const run of queue) run();
  }
  private out(run: () => void): void {
    if (this.queue) this.queue.push(run);
    else run();
  }
  get columns(): number {
    return this.real.columns;
  }
  get rows(): number {
    return this.real.rows;
  }
  get kittyProtocolActive(): boolean {
    return this.real.kittyProtocolActive;
  }
  start(onInput: (data: string) => void, onResize: () => void): void {
    this.real.start(onInput, onResize);
  }
  stop(): void {
    this.real.stop();
  }
  drainInput(maxMs?: number, idleMs?: number): Promise<void> {
    return this.real.drainInput(maxMs, idleMs);
  }
  write(data: string): void {
    this.out(() => this.real.write(data));
  }
  moveBy(lines: number): void {
    this.out(() => this.real.moveBy(lines));
  }
  hideCursor(): void {
    this.out(() => this.real.hideCursor());
  }
  showCursor(): void {
    this.out(() => this.real.showCursor());
  }
  clearLine(): void {
    this.out(() => this.real.clearLine());
  }
  clearFromCursor(): void {
    this.out(() => this.real.clearFromCursor());
  }
  clearScreen(): void {
    this.out(() => this.real.clearScreen());
  }
  setTitle(title: string): void {
    this.real.setTitle(title);
  }
  setProgress(active: boolean): void {
    this.real.setProgress(active);
  }
}

export class ScrollbackTUI extends TUI {
  /** Lines at the top that are in the terminal's scrollback and left out of frames. */
  private frozen = 0;
  private epoch = 0;
  private inFrame = false;
  private final: FinalLines | undefined;
  private readonly held: HeldTerminal;
  private readonly state: FrameState;

  constructor(terminal: Terminal) {
    const held = new HeldTerminal(terminal);
    super(held);
    this.held = held;
    this.state = this as unknown as FrameState;
    const draw = this.state.doRender.bind(this);
    this.state.doRender = () => this.frame(draw);
  }

  /** Where final lines are known; without it nothing is frozen. */
  setFinalLines(final: FinalLines): void {
    this.final = final;
    this.epoch = final.epoch;
  }

  /** How many lines frames leave out now (for tests and the benchmark). */
  get frozenLines(): number {
    return this.frozen;
  }

  /** Every line, frozen or not, outside a frame; inside one, the lines below the frozen ones. */
  override render(width: number): string[] {
    if (!this.inFrame || this.frozen === 0) return super.render(width);
    const lines: string[] = [];
    let skip = this.frozen;
    for (const child of this.children as Component[]) {
      const part = child.render(width);
      if (skip >= part.length) {
        skip -= part.length;
        continue;
      }
      for (let i = skip; i < part.length; i++) lines.push(part[i]!);
      skip = 0;
    }
    return lines;
  }

  private frame(draw: () => void): void {
    const s = this.state;
    const width = this.terminal.columns;
    const height = this.terminal.rows;
    // A new width or height, a forced redraw (-1) or lines final until now that changed: pi-tui redraws all.
    const epoch = this.final?.epoch ?? 0;
    if (s.previousWidth !== width || s.previousHeight !== height || epoch !== this.epoch) this.thaw();
    this.epoch = epoch;
    this.inFrame = true;
    this.held.hold();
    try {
      const redraws = s.fullRedrawCount;
      draw();
      if (this.frozen > 0 && s.fullRedrawCount !== redraws) {
        // pi-tui cleared the screen and the scrollback to draw again (a change above the screen): what it wrote
        // lacks the frozen lines, so it is dropped and the frame drawn again with everything.
        this.held.drop();
        this.thaw();
        draw();
      }
    } finally {
      this.inFrame = false;
      this.held.release();
    }
    this.freeze(width, height);
  }

  /** Puts the frozen lines back: the next frame draws everything from a cleared screen. */
  private thaw(): void {
    if (this.frozen === 0) return;
    this.frozen = 0;
    const s = this.state;
    s.previousLines = [];
    s.previousWidth = -1;
    s.previousHeight = -1;
    s.cursorRow = 0;
    s.hardwareCursorRow = 0;
    s.maxLinesRendered = 0;
    s.previousViewportTop = 0;
  }

  /**
   * Freezes the final lines above the screen, keeping one screen of lines above it live, so content below that
   * shrinks or an overlay never reaches frozen lines.
   */
  private freeze(width: number, height: number): void {
    const s = this.state;
    if (!this.final || s.previousWidth !== width) return;
    const above = this.frozen + s.previousViewportTop - height;
    const target = Math.min(above, this.final.finalLines(width));
    const k = target - this.frozen;
    if (k <= 0) return;
    this.frozen = target;
    s.previousLines = s.previousLines.slice(k);
    s.cursorRow -= k;
    s.hardwareCursorRow -= k;
    s.previousViewportTop -= k;
    s.maxLinesRendered = Math.max(0, s.maxLinesRendered - k);
  }
}

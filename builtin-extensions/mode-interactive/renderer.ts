/**
 * The interactive mode's renderer: a differential terminal renderer of KnightCode's own that draws pi-tui
 * components, with finished output handed to the terminal's scrollback.
 *
 * Why its own and not pi-tui's `TUI`: pi-tui's `TUI` draws every frame from all the lines the program ever showed
 * (with 2,000 messages, 15,000 lines rendered, reset and compared per streamed token), and the only way to change
 * that was to subclass it and shift the private fields that hold its frame state, which any pi-tui release may
 * rename or reuse without notice. Newer pi-tui releases (1.x, `@earendil-works/pi-tui`) expose that state, but need
 * Node 22 where KnightCode supports Node 20. So this class owns its frame state and uses only what pi-tui publishes:
 * the `Component` and `Terminal` interfaces, `visibleWidth`, `truncateToWidth`, `isKeyRelease`, `matchesKey` and
 * `CURSOR_MARKER`. It offers every public member of pi-tui's `TUI` (`implements TUISurface`, a compile error if a
 * pi-tui upgrade adds one), so pi-tui's Editor, Loader and extensions' components take it as their `tui`.
 *
 * How a frame works. Rows are numbered from the first line the renderer drew. The terminal shows the last `rows`
 * of the rows written so far (`extent`); rows above them are in its scrollback, where nothing can reach them
 * without clearing it. A frame renders the components, lays the visible overlays over the screen, finds the cursor
 * marker, compares the lines with the last frame's and rewrites only the rows from the first changed to the last
 * changed one (clearing rows the content no longer reaches), inside one synchronized-output block, so nothing
 * flickers. It draws everything again, after clearing the screen and the scrollback, when the terminal's size
 * changed, when a change lies above the screen, on `requestRender(true)`, and when lines reported final changed
 * after all (`FinalLines.epoch`: a display toggle, another session).
 *
 * The scrollback part: lines that are above the screen by more than a screen and final (`FinalLines`: the header
 * and the settled messages) are frozen. Later frames leave them out: they are neither rendered into the frame nor
 * compared, so a frame costs what the visible part and the message being written cost, however long the
 * conversation. A full redraw thaws them and writes everything once more, so the scrollback stays whole and in order.
 */
import {
  type Component,
  Container,
  CURSOR_MARKER,
  isFocusable,
  isKeyRelease,
  matchesKey,
  type OverlayHandle,
  type OverlayOptions,
  type Terminal,
  type TUI,
  type TUISurface,
  truncateToWidth,
  visibleWidth,
} from "@knightcodeai/cli/tui";
import { overlayLine, placeOverlay } from "./overlays.js";

/** What decides which lines may be frozen. */
export interface FinalLines {
  /** How many of the first lines of a frame at this width can no longer change. */
  finalLines(width: number): number;
  /** Grows whenever lines reported final may have changed after all (a display toggle, another session shown). */
  readonly epoch: number;
}

type InputListener = Parameters<TUI["addInputListener"]>[0];

interface Overlay {
  component: Component;
  options: OverlayOptions | undefined;
  /** What had the focus when it opened; it gets the focus back. */
  before: Component | null;
  hidden: boolean;
  /** Higher is drawn on top. */
  order: number;
}

/** What the terminal holds since the last full redraw. */
interface Frame {
  /** The lines of the last frame below the frozen ones, as compared (before line ends are added). */
  lines: string[];
  width: number;
  height: number;
  /** Rows written so far (counting frozen ones): the last `height` of them are on screen. */
  extent: number;
  /** The row the terminal's cursor is on. */
  cursor: number;
}

/** Frames come at most this often; requests in between are drawn together. */
const FRAME_INTERVAL_MS = 16;
/** Ends every line: no colour or link reaches into the next one. */
const LINE_END = "\x1b[0m\x1b]8;;\x07";
const SYNC_START = "\x1b[?2026h";
const SYNC_END = "\x1b[?2026l";
/** Clear the screen, go home, clear the scrollback. */
const CLEAR_ALL = "\x1b[2J\x1b[H\x1b[3J";

/** Kitty and iTerm2 image lines are written as they are: their escapes carry the picture. */
export const isImageLine = (line: string) => line.includes("\x1b_G") || line.includes("\x1b]1337;File=");

export class ScrollbackRenderer extends Container implements TUISurface {
  onDebug?: () => void;
  private focusedComponent: Component | null = null;
  private readonly listeners = new Set<InputListener>();
  private overlays: Overlay[] = [];
  private overlayOrder = 0;
  private hardwareCursor: boolean;
  private clearOnShrink = false;
  private redraws = 0;
  private stopped = false;
  private scheduled = false;
  private forced = false;
  private timer: NodeJS.Timeout | undefined;
  private lastFrameAt = 0;
  private frame: Frame = { lines: [], width: 0, height: 0, extent: 0, cursor: 0 };
  /** Rows at the top that are in the terminal's scrollback and left out of frames. */
  private frozen = 0;
  private final: FinalLines | undefined;
  private epoch = 0;

  constructor(
    readonly terminal: Terminal,
    showHardwareCursor = false,
  ) {
    super();
    this.hardwareCursor = showHardwareCursor;
  }

  // ---- pi-tui's TUI surface ----

  get fullRedraws(): number {
    return this.redraws;
  }

  getShowHardwareCursor(): boolean {
    return this.hardwareCursor;
  }

  setShowHardwareCursor(enabled: boolean): void {
    if (this.hardwareCursor === enabled) return;
    this.hardwareCursor = enabled;
    if (!enabled) this.terminal.hideCursor();
    this.requestRender();
  }

  getClearOnShrink(): boolean {
    return this.clearOnShrink;
  }

  /** When on, content that shrinks is drawn again from a cleared screen rather than leaving blank rows below it. */
  setClearOnShrink(enabled: boolean): void {
    this.clearOnShrink = enabled;
  }

  setFocus(component: Component | null): void {
    if (isFocusable(this.focusedComponent)) this.focusedComponent.focused = false;
    this.focusedComponent = component;
    if (isFocusable(component)) component.focused = true;
  }

  showOverlay(component: Component, options?: OverlayOptions): OverlayHandle {
    const entry: Overlay = {
      component,
      options,
      before: this.focusedComponent,
      hidden: false,
      order: ++this.overlayOrder,
    };
    this.overlays.push(entry);
    if (!options?.nonCapturing && this.visible(entry)) this.setFocus(component);
    this.terminal.hideCursor();
    this.requestRender();
    const focused = () => this.focusedComponent === component;
    return {
      hide: () => {
        if (!this.overlays.includes(entry)) return;
        this.overlays = this.overlays.filter((o) => o !== entry);
        if (focused()) this.setFocus(this.topOverlay()?.component ?? entry.before);
        this.requestRender();
      },
      setHidden: (hidden) => {
        if (entry.hidden === hidden) return;
        entry.hidden = hidden;
        if (hidden && focused()) this.setFocus(this.topOverlay()?.component ?? entry.before);
        if (!hidden && !options?.nonCapturing && this.visible(entry)) {
          entry.order = ++this.overlayOrder;
          this.setFocus(component);
        }
        this.requestRender();
      },
      isHidden: () => entry.hidden,
      focus: () => {
        if (!this.overlays.includes(entry) || !this.visible(entry)) return;
        this.setFocus(component);
        entry.order = ++this.overlayOrder;
        this.requestRender();
      },
      unfocus: () => {
        if (!focused()) return;
        const top = this.topOverlay();
        this.setFocus(top && top !== entry ? top.component : entry.before);
        this.requestRender();
      },
      isFocused: focused,
    };
  }

  hideOverlay(): void {
    const entry = this.overlays.pop();
    if (!entry) return;
    if (this.focusedComponent === entry.component)
      this.setFocus(this.topOverlay()?.component ?? entry.before);
    this.requestRender();
  }

  hasOverlay(): boolean {
    return this.overlays.some((o) => this.visible(o));
  }

  override invalidate(): void {
    super.invalidate();
    for (const overlay of this.overlays) overlay.component.invalidate();
  }

  start(): void {
    this.stopped = false;
    this.terminal.start(
      (data) => this.input(data),
      () => this.requestRender(),
    );
    this.terminal.hideCursor();
    this.requestRender();
  }

  addInputListener(listener: InputListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  removeInputListener(listener: InputListener): void {
    this.listeners.delete(listener);
  }

  /** Stops drawing and leaves the terminal's cursor on a fresh line below the content. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = false;
    const f = this.frame;
    if (f.width > 0) this.terminal.write(`${this.moveTo(Math.max(0, this.frozen + f.lines.length - 1))}\r\n`);
    this.terminal.showCursor();
    this.terminal.stop();
  }

  /** Draws soon (at most one frame per 16 ms); `force` draws everything again from a cleared screen. */
  requestRender(force = false): void {
    if (force) this.forced = true;
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(() => {
      if (this.stopped) {
        this.scheduled = false;
        return;
      }
      const wait = this.forced ? 0 : Math.max(0, FRAME_INTERVAL_MS - (performance.now() - this.lastFrameAt));
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.scheduled = false;
        this.lastFrameAt = performance.now();
        this.draw();
      }, wait);
    });
  }

  // ---- KnightCode's additions ----

  /** Where final lines are known; without it nothing is frozen. */
  setFinalLines(final: FinalLines): void {
    this.final = final;
    this.epoch = final.epoch;
  }

  /** How many lines frames leave out now (for tests and the benchmark). */
  get frozenLines(): number {
    return this.frozen;
  }

  /** Draws one frame now, whatever is scheduled (what the frame timer calls; tests and the benchmark call it). */
  draw(): void {
    if (this.stopped) return;
    const width = this.terminal.columns;
    const height = this.terminal.rows;
    const f = this.frame;
    const epoch = this.final?.epoch ?? 0;
    const changedFinal = epoch !== this.epoch;
    this.epoch = epoch;
    if (f.width === 0) this.redraw(width, height, false);
    else if (this.forced || changedFinal || f.width !== width || f.height !== height)
      this.redraw(width, height, true);
    else this.update(width, height);
    this.forced = false;
    this.freeze(width, height);
  }

  // ---- frames ----

  /** The rows on screen begin here. */
  private top(extent = this.frame.extent, height = this.frame.height): number {
    return Math.max(0, extent - height);
  }

  /** Everything from the first row, after clearing the screen and the scrollback unless this is the first frame. */
  private redraw(width: number, height: number, clear: boolean): void {
    this.frozen = 0;
    const { lines, cursor } = this.compose(width, height, 0);
    let out = SYNC_START + (clear ? CLEAR_ALL : "");
    for (let i = 0; i < lines.length; i++) out += (i > 0 ? "\r\n" : "") + this.paint(lines[i]!, width);
    this.frame = {
      lines,
      width,
      height,
      extent: Math.max(1, lines.length),
      cursor: Math.max(0, lines.length - 1),
    };
    this.redraws++;
    this.finish(out, cursor);
  }

  /** Rewrites the rows that changed since the last frame, or everything when a change is out of reach. */
  private update(width: number, height: number): void {
    const f = this.frame;
    const base = this.frozen;
    const { lines, cursor } = this.compose(width, height, f.extent);
    const before = f.lines;
    let first = -1;
    let last = -1;
    for (let i = 0, n = Math.max(lines.length, before.length); i < n; i++) {
      if (lines[i] === before[i]) continue;
      if (first < 0) first = i;
      last = i;
    }
    if (first < 0) {
      f.lines = lines;
      this.finish(SYNC_START, cursor);
      return;
    }
    const top = this.top();
    const shrunk = lines.length < before.length;
    if (
      base + first < top ||
      (shrunk && base + lines.length - 1 < top) ||
      (shrunk && this.clearOnShrink && !this.hasOverlay())
    ) {
      this.redraw(width, height, true);
      return;
    }
    let out = SYNC_START + this.moveTo(base + first);
    const end = Math.min(last, lines.length - 1);
    for (let i = first; i <= end; i++) {
      if (i > first) out += this.down();
      out += `\x1b[2K${this.paint(lines[i]!, width)}`;
    }
    if (shrunk) {
      // Rows the content no longer reaches are blanked; they stay on screen as empty rows.
      out += this.moveTo(base + lines.length);
      out += "\x1b[2K";
      for (let i = lines.length + 1; i < before.length; i++) out += `${this.down()}\x1b[2K`;
    }
    f.lines = lines;
    this.finish(out, cursor);
  }

  /** Places the hardware cursor where the focused component marked it, and writes the frame. */
  private finish(out: string, cursor: { row: number; col: number } | undefined): void {
    if (cursor) out += `${this.moveTo(cursor.row, false)}\x1b[${cursor.col + 1}G`;
    // A frame that changed nothing and has no cursor to place writes nothing.
    if (out !== SYNC_START) this.terminal.write(out + SYNC_END);
    if (cursor && this.hardwareCursor) this.terminal.showCursor();
    else this.terminal.hideCursor();
  }

  /** One row down from the cursor's, writing a new row when it is the last one. */
  private down(): string {
    const f = this.frame;
    f.cursor++;
    f.extent = Math.max(f.extent, f.cursor + 1);
    return "\r\n";
  }

  /** The cursor to `row` (to its column 0 with `home`): moves within the rows written, new rows below them. */
  private moveTo(row: number, home = true): string {
    const f = this.frame;
    const lastRow = f.extent - 1;
    const target = Math.min(row, lastRow);
    const delta = target - f.cursor;
    let out = delta > 0 ? `\x1b[${delta}B` : delta < 0 ? `\x1b[${-delta}A` : "";
    if (home) out += "\r";
    f.cursor = target;
    while (f.cursor < row) out += this.down();
    return out;
  }

  /** A line as it is written: no wider than the terminal, and ending every style. */
  private paint(line: string, width: number): string {
    if (isImageLine(line)) return line;
    return (visibleWidth(line) > width ? truncateToWidth(line, width, "") : line) + LINE_END;
  }

  /**
   * The frame's lines below the `frozen` ones (a copy: components may reuse their arrays), with the visible
   * overlays laid over the screen, and the cursor marker's place (taken out of its line). `extent` is how many
   * rows the terminal holds before this frame (0 for a full redraw).
   */
  private compose(
    width: number,
    height: number,
    extent: number,
  ): { lines: string[]; cursor: { row: number; col: number } | undefined } {
    const base = this.frozen;
    const lines: string[] = [];
    let skip = base;
    for (const child of this.children) {
      const part = child.render(width);
      if (skip >= part.length) {
        skip -= part.length;
        continue;
      }
      for (let i = skip; i < part.length; i++) lines.push(part[i]!);
      skip = 0;
    }
    // The screen the overlays sit on: the last `height` rows of what the terminal will hold.
    const bottom = Math.max(extent, base + lines.length);
    const visible = this.overlays.filter((o) => this.visible(o)).sort((a, b) => a.order - b.order);
    if (visible.length > 0) {
      const end = Math.max(bottom, height);
      while (base + lines.length < end) lines.push("");
      const screenTop = end - height - base;
      for (const { component, options } of visible) {
        const { width: w, maxHeight } = placeOverlay(options, 0, width, height);
        let shown = component.render(w);
        if (maxHeight !== undefined) shown = shown.slice(0, maxHeight);
        const { row, col } = placeOverlay(options, shown.length, width, height);
        for (let i = 0; i < shown.length; i++) {
          const at = screenTop + row + i;
          if (at >= 0 && at < lines.length) lines[at] = overlayLine(lines[at]!, shown[i]!, col, w, width);
        }
      }
    }
    const firstShown = Math.max(0, this.top(Math.max(extent, base + lines.length), height) - base);
    for (let i = lines.length - 1; i >= firstShown; i--) {
      const line = lines[i]!;
      const at = line.indexOf(CURSOR_MARKER);
      if (at < 0) continue;
      lines[i] = line.slice(0, at) + line.slice(at + CURSOR_MARKER.length);
      return { lines, cursor: { row: base + i, col: visibleWidth(line.slice(0, at)) } };
    }
    return { lines, cursor: undefined };
  }

  /**
   * Freezes the final lines above the screen, keeping one screen of rows above it live, so content that shrinks
   * or an overlay never reaches frozen lines.
   */
  private freeze(width: number, height: number): void {
    const f = this.frame;
    if (!this.final || f.width !== width) return;
    const target = Math.min(this.top() - height, this.final.finalLines(width));
    const k = target - this.frozen;
    if (k <= 0) return;
    this.frozen = target;
    f.lines = f.lines.slice(k);
  }

  // ---- input ----

  private visible(overlay: Overlay): boolean {
    if (overlay.hidden) return false;
    return overlay.options?.visible?.(this.terminal.columns, this.terminal.rows) ?? true;
  }

  /** The top visible overlay that takes the keys. */
  private topOverlay(): Overlay | undefined {
    return [...this.overlays]
      .filter((o) => !o.options?.nonCapturing && this.visible(o))
      .sort((a, b) => a.order - b.order)
      .at(-1);
  }

  private input(data: string): void {
    for (const listener of this.listeners) {
      const result = listener(data);
      if (result?.consume) return;
      if (result?.data !== undefined) data = result.data;
    }
    if (data.length === 0) return;
    if (this.onDebug && matchesKey(data, "shift+ctrl+d")) {
      this.onDebug();
      return;
    }
    // An overlay that stopped being visible (a resize, its `visible` option) gives up the keys.
    const overlay = this.overlays.find((o) => o.component === this.focusedComponent);
    if (overlay && !this.visible(overlay)) this.setFocus(this.topOverlay()?.component ?? overlay.before);
    const target = this.focusedComponent;
    if (!target?.handleInput) return;
    if (isKeyRelease(data) && !target.wantsKeyRelease) return;
    target.handleInput(data);
    this.requestRender();
  }
}

/**
 * The `tui` a component is given. pi-tui's constructors that take one (`Editor`, `Loader`, `CancellableLoader`) ask
 * for its `TUI` class; what they use of it is `requestRender()` and `terminal.rows`. KnightCode hands component
 * factories one of three things: the interactive mode's renderer, which offers every public member of pi-tui's
 * `TUI` (a `TUISurface`); a `DetachedUI`, a real `TUI` on a terminal that shows nothing; or, in a mode that draws
 * nothing live, a bare `UIHost` with only `requestRender()`. `asTUI()` turns each into what pi-tui accepts.
 */
import { type Terminal, TUI } from "@mariozechner/pi-tui";
import type { UIHost } from "../../../kernel/index.js";

/**
 * Every public member of pi-tui's `TUI`: all that code outside that class can reach of one. A class that
 * `implements TUISurface` fails to compile when a pi-tui release adds a public member it lacks.
 */
export type TUISurface = { [K in keyof TUI]: TUI[K] };

/** The members a TUI stand-in must have besides `terminal` (checked at run time by `isTUI`). */
const METHODS = ["requestRender", "setFocus", "showOverlay", "hideOverlay", "hasOverlay", "render"] as const;

/**
 * Whether `host` can stand where pi-tui wants its `TUI`: an instance of it, or an object with its public surface
 * (a terminal with columns and rows, and the rendering, focus and overlay methods). Code outside pi-tui's `TUI`
 * class can only reach its public members, so such an object serves every pi-tui component.
 */
export function isTUI(host: unknown): host is TUI {
  if (host instanceof TUI) return true;
  if (typeof host !== "object" || host === null) return false;
  const terminal = (host as { terminal?: Partial<Terminal> }).terminal;
  if (typeof terminal?.columns !== "number" || typeof terminal.rows !== "number") return false;
  return METHODS.every((name) => typeof (host as Record<string, unknown>)[name] === "function");
}

/**
 * `host` as pi-tui's `TUI`: itself when it has the whole surface (the interactive mode's renderer, a `DetachedUI`),
 * otherwise a `DetachedUI` of 80×24 that passes render requests on to it. Use it where a factory's `tui` (typed
 * `UIHost` by the extension API) goes into a pi-tui constructor: `new Editor(asTUI(tui), theme)`.
 */
export function asTUI(host: UIHost | TUISurface): TUI {
  return isTUI(host) ? host : new DetachedUI(undefined, host);
}

/** A terminal that shows nothing and takes no input, of a fixed size. */
class DetachedTerminal implements Terminal {
  constructor(
    public columns: number,
    public rows: number,
  ) {}
  get kittyProtocolActive(): boolean {
    return false;
  }
  start(): void {}
  stop(): void {}
  async drainInput(): Promise<void> {}
  write(): void {}
  moveBy(): void {}
  hideCursor(): void {}
  showCursor(): void {}
  clearLine(): void {}
  clearFromCursor(): void {}
  clearScreen(): void {}
  setTitle(): void {}
  setProgress(): void {}
}

/**
 * A pi-tui `TUI` for using components where nothing is drawn live (tests, a widget rendered once into lines):
 * focus and overlays work as in pi-tui, but `requestRender()` only counts (`renderRequests`, for tests) and passes
 * the request on to `host` when one is given. Its terminal has the given size and draws nothing.
 */
export class DetachedUI extends TUI {
  renderRequests = 0;

  constructor(
    size: { columns: number; rows: number } = { columns: 80, rows: 24 },
    private readonly host?: UIHost,
  ) {
    super(new DetachedTerminal(size.columns, size.rows));
  }

  override requestRender(force?: boolean): void {
    this.renderRequests++;
    this.host?.requestRender(force);
  }
}

/**
 * Loader and BorderedLoader: a spinner with a message, between two borders for the bordered one. The spinner
 * advances on a timer only while started and asks its `tui` to redraw; outside a terminal it renders its current
 * frame. BorderedLoader can be cancellable: escape aborts its `signal`.
 */
import type { UIHost, UITheme } from "../../../kernel/index.js";
import { Container } from "./component.js";
import { matchesKey } from "./keys.js";
import { DynamicBorder, Text } from "./text.js";

export interface LoaderIndicatorOptions {
  frames?: string[];
  intervalMs?: number;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export class Loader extends Text {
  private frames = FRAMES;
  private intervalMs = 80;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ui: UIHost,
    private readonly spinnerColorFn: (text: string) => string,
    private readonly messageColorFn: (text: string) => string,
    private message = "Loading...",
    indicator?: LoaderIndicatorOptions,
  ) {
    super("", 1, 0);
    this.setIndicator(indicator);
  }

  override render(width: number): string[] {
    const spinner = this.frames.length
      ? `${this.spinnerColorFn(this.frames[this.frame % this.frames.length]!)} `
      : "";
    this.setText(`${spinner}${this.messageColorFn(this.message)}`);
    return super.render(width);
  }

  start(): void {
    this.stop();
    if (this.frames.length < 2) return;
    this.timer = setInterval(() => {
      this.frame++;
      this.ui.requestRender();
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  setMessage(message: string): void {
    this.message = message;
    this.ui.requestRender();
  }

  setIndicator(indicator?: LoaderIndicatorOptions): void {
    this.frames = indicator?.frames ?? FRAMES;
    this.intervalMs = indicator?.intervalMs ?? 80;
    this.frame = 0;
    if (this.timer) this.start();
  }
}

/** A loader that escape (or ctrl+c) cancels: its `signal` aborts and `onAbort` runs. */
export class CancellableLoader extends Loader {
  private readonly controller = new AbortController();
  onAbort?: () => void;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  handleInput(data: string): void {
    if (!(matchesKey(data, "escape") || matchesKey(data, "ctrl+c")) || this.aborted) return;
    this.controller.abort();
    this.onAbort?.();
  }

  dispose(): void {
    this.stop();
  }
}

export class BorderedLoader extends Container {
  private readonly loader: Loader;
  private readonly controller = new AbortController();
  private readonly cancellable: boolean;
  private abortHandler: (() => void) | undefined;

  constructor(tui: UIHost, theme: UITheme, message: string, options: { cancellable?: boolean } = {}) {
    super();
    this.cancellable = options.cancellable ?? true;
    const border = new DynamicBorder((text) => theme.fg("border", text));
    this.loader = new Loader(
      tui,
      (text) => theme.fg("accent", text),
      (text) => theme.fg("muted", text),
      message,
    );
    this.addChild(border);
    this.addChild(this.loader);
    if (this.cancellable) this.addChild(new Text(theme.fg("dim", "esc cancel"), 1, 0));
    this.addChild(border);
    this.loader.start();
  }

  /** Aborted when the person cancels (escape), for the work the loader waits on. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  set onAbort(fn: (() => void) | undefined) {
    this.abortHandler = fn;
  }

  handleInput(data: string): void {
    if (!this.cancellable || !(matchesKey(data, "escape") || matchesKey(data, "ctrl+c"))) return;
    this.controller.abort();
    this.abortHandler?.();
  }

  dispose(): void {
    this.loader.stop();
  }
}

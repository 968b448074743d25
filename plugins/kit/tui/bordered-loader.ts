/**
 * BorderedLoader: pi-tui's spinner with a message between two rules, for an extension's long wait
 * (`ctx.ui.custom((tui, theme, _keys, done) => new BorderedLoader(tui, theme, "Fetching…"))`). Cancellable (the
 * default), the cancel keys (`tui.select.cancel`: escape, ctrl+c) abort its `signal` and run `onAbort`, and a hint
 * line says so. pi's coding agent offers one to extensions; pi-tui has none. The spinner turns until `dispose()`.
 */
import { CancellableLoader, Container, Loader, Spacer, Text } from "@mariozechner/pi-tui";
import type { UIHost, UITheme } from "../../../kernel/index.js";
import { DynamicBorder } from "./dynamic-border.js";
import { asTUI, type TUISurface } from "./host.js";
import { keyHint } from "./themes.js";

export class BorderedLoader extends Container {
  private readonly loader: Loader;
  private readonly cancellable: CancellableLoader | undefined;
  /** The signal of a loader that cannot be cancelled: it never aborts. */
  private readonly never = new AbortController();

  constructor(
    tui: UIHost | TUISurface,
    theme: UITheme,
    message: string,
    options: { cancellable?: boolean } = {},
  ) {
    super();
    const host = asTUI(tui);
    const spinner = (text: string) => theme.fg("accent", text);
    const words = (text: string) => theme.fg("muted", text);
    const rule = () => new DynamicBorder((text) => theme.fg("border", text));
    this.cancellable =
      (options.cancellable ?? true) ? new CancellableLoader(host, spinner, words, message) : undefined;
    this.loader = this.cancellable ?? new Loader(host, spinner, words, message);
    this.addChild(rule());
    this.addChild(this.loader);
    if (this.cancellable) {
      this.addChild(new Spacer(1));
      this.addChild(new Text(keyHint("tui.select.cancel", "cancel", theme), 1, 0));
    }
    this.addChild(new Spacer(1));
    this.addChild(rule());
  }

  /** Aborted when the person cancels, for the work the loader waits on. */
  get signal(): AbortSignal {
    return (this.cancellable ?? this.never).signal;
  }

  set onAbort(fn: (() => void) | undefined) {
    if (this.cancellable) this.cancellable.onAbort = fn;
  }

  handleInput(data: string): void {
    this.cancellable?.handleInput(data);
  }

  /** Stops the spinner's timer. */
  dispose(): void {
    this.loader.stop();
  }
}

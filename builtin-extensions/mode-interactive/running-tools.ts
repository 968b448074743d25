/**
 * The tool calls in flight: those whose arguments the model is writing (by content index of the message being
 * streamed, with the JSON so far) and those running, whose elapsed time ticks once a second until they end.
 */
import type { ToolCallView } from "./transcript.js";

const TICK_MS = 1000;

export class RunningTools {
  /** Tool calls being written, by their content index in the message streaming now. */
  readonly writing = new Map<number, { id: string; json: string }>();
  private readonly views = new Set<ToolCallView>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly render: () => void) {}

  /** A call started running: its time shows and ticks until it finishes. */
  running(view: ToolCallView): void {
    this.views.add(view);
    this.timer ??= setInterval(() => this.tick(), TICK_MS);
    // The interval must not keep a quitting process alive.
    this.timer.unref?.();
  }

  private tick(): void {
    for (const view of this.views) {
      if (view.running) view.changed();
      else this.views.delete(view);
    }
    if (this.views.size === 0) this.stop();
    this.render();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.views.clear();
    this.writing.clear();
  }
}

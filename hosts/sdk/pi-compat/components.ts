/**
 * pi's message components (`UserMessageComponent`, `AssistantMessageComponent`) for extensions that draw a
 * conversation themselves (a transcript in a `ctx.ui.custom()` overlay, say): pi-tui containers with pi's
 * constructors and methods, drawn with pi-tui's Markdown and the active theme's markdown colours. KnightCode's
 * interactive mode does not draw its own messages with them, so patching their prototypes changes nothing there.
 */

type Module = Record<string, unknown>;

interface TuiParts {
  Container: new () => {
    clear(): void;
    addChild(child: unknown): void;
    render(width: number): readonly string[];
    invalidate(): void;
  };
  Markdown: new (
    text: string,
    paddingX: number,
    paddingY: number,
    theme: unknown,
    style?: unknown,
  ) => unknown;
  Text: new (text: string, paddingX?: number, paddingY?: number) => unknown;
  Spacer: new (lines?: number) => unknown;
}

interface AssistantLike {
  content?: { type: string; text?: string; thinking?: string }[];
  stopReason?: string;
  errorMessage?: string;
}

/** The two classes over `tui` (KnightCode's terminal-UI module, which carries pi-tui as `piTui`). */
export function messageComponents(tui: Module): Module {
  const parts = tui.piTui as unknown as TuiParts;
  const defaultTheme = () => (tui.getMarkdownTheme as () => unknown)();
  const { Container, Markdown, Text, Spacer } = parts;

  class UserMessageComponent extends Container {
    constructor(
      private readonly text: string,
      private readonly markdownTheme: unknown = defaultTheme(),
      private outputPad = 1,
    ) {
      super();
      this.rebuild();
    }

    setOutputPad(padding: number): void {
      this.outputPad = padding;
      this.rebuild();
    }

    private rebuild(): void {
      this.clear();
      this.addChild(new Markdown(this.text, this.outputPad, 1, this.markdownTheme));
    }
  }

  class AssistantMessageComponent extends Container {
    private last: AssistantLike | undefined;

    constructor(
      message?: AssistantLike,
      private hideThinkingBlock = false,
      private readonly markdownTheme: unknown = defaultTheme(),
      private hiddenThinkingLabel = "Thinking...",
      private outputPad = 1,
    ) {
      super();
      if (message) this.updateContent(message);
    }

    setHideThinkingBlock(hide: boolean): void {
      this.hideThinkingBlock = hide;
      this.redraw();
    }

    setHiddenThinkingLabel(label: string): void {
      this.hiddenThinkingLabel = label;
      this.redraw();
    }

    setOutputPad(padding: number): void {
      this.outputPad = padding;
      this.redraw();
    }

    /** Draws `message` again (a streamed message as it grows); tool calls are drawn apart, as pi does. */
    updateContent(message: AssistantLike, _isStreaming = false): void {
      this.last = message;
      this.redraw();
    }

    private redraw(): void {
      this.clear();
      const message = this.last;
      if (!message) return;
      const blocks = (message.content ?? []).filter(
        (block) =>
          (block.type === "text" && block.text?.trim()) ||
          (block.type === "thinking" && block.thinking?.trim()),
      );
      if (blocks.length > 0) this.addChild(new Spacer(1));
      for (const block of blocks) {
        if (block.type === "text") {
          this.addChild(new Markdown(block.text!.trim(), this.outputPad, 0, this.markdownTheme));
        } else if (this.hideThinkingBlock) {
          this.addChild(new Text(this.hiddenThinkingLabel, this.outputPad, 0));
        } else {
          this.addChild(new Markdown(block.thinking!.trim(), this.outputPad, 0, this.markdownTheme));
        }
      }
      if (message.stopReason === "aborted") {
        this.addChild(new Text(message.errorMessage || "Operation aborted", this.outputPad, 0));
      } else if (message.stopReason === "error") {
        this.addChild(new Text(`Error: ${message.errorMessage || "Unknown error"}`, this.outputPad, 0));
      }
    }
  }

  return { UserMessageComponent, AssistantMessageComponent };
}

/**
 * ScrollbackTUI against pi-tui's own TUI: the same screen drawn by both must send the terminal the same bytes,
 * frame by frame, while the scrollback version leaves the lines above the screen out of its frames. A frame whose
 * bytes matched but that still walked every line would pass the first check; `frozenLines` and the count of lines
 * a frame renders catch that.
 */
import { type Component, type Terminal, TUI } from "@mariozechner/pi-tui";
import { expect } from "chai";
import { ScrollbackTUI } from "../../../builtin-extensions/mode-interactive/scrollback-tui.js";
import {
  AssistantMessageView,
  type Look,
  Transcript,
  UserMessageView,
} from "../../../builtin-extensions/mode-interactive/transcript.js";
import { builtinTheme } from "../../../plugins/kit/theme.js";

class RecordingTerminal implements Terminal {
  out = "";
  constructor(
    public columns: number,
    public rows: number,
  ) {}
  take(): string {
    const out = this.out;
    this.out = "";
    return out;
  }
  start(): void {}
  stop(): void {}
  async drainInput(): Promise<void> {}
  write(data: string): void {
    this.out += data;
  }
  get kittyProtocolActive(): boolean {
    return false;
  }
  moveBy(): void {}
  hideCursor(): void {
    this.out += "<hide>";
  }
  showCursor(): void {
    this.out += "<show>";
  }
  clearLine(): void {}
  clearFromCursor(): void {}
  clearScreen(): void {}
  setTitle(): void {}
  setProgress(): void {}
}

const look: Look = {
  theme: builtinTheme("dark")!,
  showThinking: false,
  toolsExpanded: false,
  hiddenThinkingLabel: "Thinking…",
  cwd: "/tmp",
  warn: () => {},
};

/** A header, the transcript and a bottom part (an editor's place), with a line count the test can change. */
function screen(tui: TUI, messages: number) {
  const header = { lines: ["HEADER"], render: () => header.lines, invalidate() {} };
  const bottom = {
    lines: ["─".repeat(10), "> ", "─".repeat(10), "footer"],
    render: () => bottom.lines,
    invalidate() {},
  };
  const transcript = new Transcript();
  for (let i = 0; i < messages; i++) {
    transcript.add(new UserMessageView(look, `question ${i}`));
    const answer = new AssistantMessageView(look);
    answer.append("text", 0, `Answer ${i}: the **store** keeps the entries.\n\n- one\n- two`);
    answer.finish({
      role: "assistant",
      content: [{ type: "text", text: `Answer ${i}: the **store** keeps the entries.\n\n- one\n- two` }],
      stopReason: "stop",
    } as never);
    transcript.add(answer);
  }
  transcript.settleAll();
  tui.addChild(header as Component);
  tui.addChild(transcript);
  tui.addChild(bottom as Component);
  return { header, transcript, bottom };
}

const frame = (tui: TUI) => (tui as unknown as { doRender(): void }).doRender();

describe("ScrollbackTUI", () => {
  function pair(messages = 200, columns = 60, rows = 20) {
    const plainTerm = new RecordingTerminal(columns, rows);
    const fastTerm = new RecordingTerminal(columns, rows);
    const plain = new TUI(plainTerm);
    const fast = new ScrollbackTUI(fastTerm);
    const a = screen(plain, messages);
    const b = screen(fast, messages);
    fast.setFinalLines({
      finalLines: (width) => b.header.lines.length + b.transcript.finalLines(width),
      get epoch() {
        return b.transcript.epoch;
      },
    });
    const both = (
      act: (s: { transcript: Transcript; header: { lines: string[] }; bottom: { lines: string[] } }) => void,
    ) => {
      act(a);
      act(b);
      frame(plain);
      frame(fast);
      return { plain: plainTerm.take(), fast: fastTerm.take() };
    };
    return { plain, fast, plainTerm, fastTerm, both };
  }

  it("writes what pi-tui's TUI writes while an answer streams, and leaves the lines above the screen out", () => {
    const { fast, both } = pair();
    const first = both(() => {});
    expect(first.fast).to.equal(first.plain);
    expect(first.fast).to.contain("question 0");
    let rendered = 0;
    const render = fast.render.bind(fast);
    fast.render = (width: number) => {
      const lines = render(width);
      rendered += lines.length;
      return lines;
    };
    const views: AssistantMessageView[] = [];
    both(({ transcript }) => {
      const view = new AssistantMessageView(look);
      views.push(view);
      transcript.add(view);
    });
    for (let i = 0; i < 60; i++) {
      const written = both(() => {
        for (const view of views) view.append("text", 0, `word${i} `);
      });
      expect(written.fast, `token ${i}`).to.equal(written.plain);
      if (i % 10 === 9) for (const view of views) view.append("text", 0, "\n\n");
    }
    const total = fast.render(60).length;
    expect(fast.frozenLines).to.be.greaterThan(total - 80);
    // 61 frames of the lines below the frozen ones: a few screens each, far from the 1,000 lines of the whole.
    expect(rendered / 61).to.be.lessThan(100);
    expect(total).to.be.greaterThan(1000);
  });

  it("draws everything again on a resize and when the transcript is redrawn, keeping the scrollback whole", () => {
    const { fast, fastTerm, plainTerm, both } = pair();
    both(() => {});
    both(() => {});
    expect(fast.frozenLines).to.be.greaterThan(0);
    fastTerm.columns = plainTerm.columns = 50;
    const resized = both(() => {});
    expect(resized.fast).to.equal(resized.plain);
    expect(resized.fast).to.contain("question 0");
    // Frozen again at the new width: the next token costs a screen, not the whole transcript.
    expect(fast.frozenLines).to.be.greaterThan(0);
    // A display toggle (ctrl+o, ctrl+t) redraws every view: the first question is written again.
    const toggled = both(({ transcript }) => transcript.invalidate());
    expect(toggled.fast).to.contain("\x1b[3J");
    expect(toggled.fast).to.contain("question 0");
  });

  it("writes what pi-tui's TUI writes when an overlay opens and closes over a long transcript", () => {
    const { plain, fast, both } = pair();
    both(() => {});
    both(() => {});
    expect(fast.frozenLines).to.be.greaterThan(0);
    const box = (): Component => ({
      render: () => ["+-- BOX --+", "|  hello  |", "+---------+"],
      invalidate() {},
    });
    const handles: { hide(): void }[] = [];
    const opened = both(() => {});
    handles.push(
      plain.showOverlay(box(), { anchor: "center" }),
      fast.showOverlay(box(), { anchor: "center" }),
    );
    const shown = both(() => {});
    expect(shown.fast).to.equal(shown.plain);
    expect(shown.fast).to.contain("BOX");
    for (const handle of handles) handle.hide();
    const hidden = both(() => {});
    expect(hidden.fast).to.equal(hidden.plain);
    expect(opened.fast).to.equal(opened.plain);
  });

  it("writes what pi-tui's TUI writes when the part below the transcript grows by a screen and shrinks again", () => {
    const { fast, both } = pair();
    both(() => {});
    both(() => {});
    expect(fast.frozenLines).to.be.greaterThan(0);
    const grown = both(({ bottom }) => {
      bottom.lines = [...bottom.lines, ...Array.from({ length: 25 }, (_, i) => `completion ${i}`)];
    });
    expect(grown.fast).to.equal(grown.plain);
    const shrunk = both(({ bottom }) => {
      bottom.lines = bottom.lines.slice(0, 4);
    });
    expect(shrunk.fast).to.equal(shrunk.plain);
    const after = both(({ transcript }) => transcript.add(new UserMessageView(look, "one more")));
    expect(after.fast).to.equal(after.plain);
  });

  it("redraws everything, as pi-tui does, when a line above the screen changes", () => {
    const { fast, both } = pair();
    both(() => {});
    both(() => {});
    expect(fast.frozenLines).to.be.greaterThan(0);
    const grown = both(({ header }) => header.lines.push("SECOND HEADER LINE"));
    expect(grown.plain).to.contain("\x1b[3J");
    expect(grown.fast).to.equal(grown.plain);
    expect(grown.fast).to.contain("question 0");
  });
});

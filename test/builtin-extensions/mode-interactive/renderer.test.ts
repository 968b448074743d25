/**
 * The interactive mode's renderer on a model terminal (model-terminal.ts), which keeps a screen and a scrollback as
 * a real terminal does: after every frame the terminal must hold the whole content, each line once and in order,
 * with the last lines on screen, while frames leave the lines frozen in the scrollback out. Resizes, overlays, a
 * bottom part that grows and shrinks, a change above the screen, the cursor marker and keys to a pi-tui Editor.
 * (The tmux tests in tui.test.ts check the same in a real terminal.)
 */
import {
  asTUI,
  type Component,
  CURSOR_MARKER,
  Editor,
  getEditorTheme,
  stripAnsi,
} from "@knightcodeai/cli/tui";
import { expect } from "chai";
import { ScrollbackRenderer } from "../../../builtin-extensions/mode-interactive/renderer.js";
import {
  AssistantMessageView,
  type Look,
  Transcript,
  UserMessageView,
} from "../../../builtin-extensions/mode-interactive/transcript.js";
import { builtinTheme } from "../../../plugins/kit/theme.js";
import { ModelTerminal } from "./model-terminal.js";

const look: Look = {
  theme: builtinTheme("dark")!,
  showThinking: false,
  toolsExpanded: false,
  hiddenThinkingLabel: "Thinking…",
  cwd: "/tmp",
  warn: () => {},
};

/** A header, the transcript and a bottom part (an editor's place), with line counts the test can change. */
function screen(renderer: ScrollbackRenderer, messages: number) {
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
    const text = `Answer ${i}: the **store** keeps the entries.\n\n- one\n- two`;
    answer.finish({ role: "assistant", content: [{ type: "text", text }], stopReason: "stop" } as never);
    transcript.add(answer);
  }
  transcript.settleAll();
  renderer.addChild(header);
  renderer.addChild(transcript);
  renderer.addChild(bottom);
  renderer.setFinalLines({
    finalLines: (width) => header.lines.length + transcript.finalLines(width),
    get epoch() {
      return transcript.epoch;
    },
  });
  return { header, transcript, bottom };
}

function setup(messages = 200, columns = 60, rows = 20) {
  const term = new ModelTerminal(columns, rows);
  const renderer = new ScrollbackRenderer(term);
  const parts = screen(renderer, messages);
  /** What the terminal should hold: every line of the content, as the terminal shows it. */
  const content = () => renderer.render(term.columns).map((line) => stripAnsi(line).trimEnd());
  const expectWhole = (why: string) => {
    const want = content();
    while (want.length > 0 && want.at(-1) === "") want.pop();
    expect(term.history(), why).to.deep.equal(want);
  };
  return { term, renderer, ...parts, content, expectWhole };
}

describe("the interactive mode's renderer", () => {
  it("keeps the whole content in the terminal while an answer streams, and leaves the lines above the screen out", () => {
    const { term, renderer, transcript, expectWhole } = setup();
    renderer.draw();
    expectWhole("first frame");
    const answer = new AssistantMessageView(look);
    transcript.add(answer);
    renderer.draw();
    let bytes = 0;
    for (let i = 0; i < 60; i++) {
      answer.append("text", 0, `word${i} `);
      if (i % 10 === 9) answer.append("text", 0, "\n\n");
      const before = term.bytes;
      renderer.draw();
      bytes += term.bytes - before;
      expectWhole(`token ${i}`);
    }
    const total = renderer.render(60).length;
    expect(total).to.be.greaterThan(1000);
    // Everything but about two screens is frozen: frames neither render nor compare those lines.
    expect(renderer.frozenLines).to.be.greaterThan(total - 80);
    // A token rewrites the lines of the last message, not the screen.
    expect(bytes / 60).to.be.lessThan(60 * 3);
    expect(renderer.fullRedraws).to.equal(1);
  });

  it("draws everything again on a resize and when the transcript is redrawn, keeping the scrollback whole", () => {
    const { term, renderer, transcript, expectWhole } = setup();
    renderer.draw();
    renderer.draw();
    expect(renderer.frozenLines).to.be.greaterThan(0);
    term.resize(50, 20);
    renderer.draw();
    expectWhole("after a resize");
    expect(renderer.fullRedraws).to.equal(2);
    // Frozen again at the new width: the next token costs a screen, not the whole transcript.
    expect(renderer.frozenLines).to.be.greaterThan(0);
    term.resize(50, 12);
    renderer.draw();
    expectWhole("after the terminal got shorter");
    // A display toggle (ctrl+o, ctrl+t) redraws every view: its lines may be in the scrollback already.
    transcript.invalidate();
    renderer.draw();
    expect(renderer.fullRedraws).to.equal(4);
    expectWhole("after a display toggle");
  });

  it("lays an overlay over the screen and takes it away again, leaving the scrollback alone", () => {
    const { term, renderer, content, expectWhole } = setup();
    renderer.draw();
    renderer.draw();
    const box: Component = { render: () => ["+-- BOX --+", "|  hello  |", "+---------+"], invalidate() {} };
    const handle = renderer.showOverlay(box, { anchor: "center", width: 11 });
    expect(renderer.hasOverlay()).to.equal(true);
    renderer.draw();
    const shown = term.shown();
    const middle = Math.floor((20 - 3) / 2);
    expect(shown.slice(middle, middle + 3).map((row) => row.slice(24, 35))).to.deep.equal([
      "+-- BOX --+",
      "|  hello  |",
      "+---------+",
    ]);
    // Around the box the lines below show through.
    const under = content().slice(-20)[middle]!;
    expect(shown[middle]!.slice(0, 24)).to.equal(under.padEnd(24).slice(0, 24));
    handle.hide();
    expect(renderer.hasOverlay()).to.equal(false);
    renderer.draw();
    expectWhole("after the overlay closed");
    expect(term.history().join("\n")).not.to.contain("BOX");
    expect(renderer.fullRedraws).to.equal(1);
  });

  it("blanks the rows a shrinking bottom part leaves, and writes below the content when it grows again", () => {
    const { renderer, bottom, transcript, expectWhole } = setup();
    renderer.draw();
    renderer.draw();
    const completions = Array.from({ length: 12 }, (_, i) => `completion ${i}`);
    bottom.lines = [...bottom.lines, ...completions];
    renderer.draw();
    expectWhole("grown by most of a screen");
    bottom.lines = bottom.lines.slice(0, 4);
    renderer.draw();
    expectWhole("shrunk again");
    transcript.add(new UserMessageView(look, "one more"));
    renderer.draw();
    expectWhole("a message after the shrink");
    expect(renderer.fullRedraws).to.equal(1);
    // Shrinking by more than a screen would leave the content's end in the scrollback: everything is drawn again.
    bottom.lines = [...bottom.lines, ...completions, ...completions];
    renderer.draw();
    bottom.lines = bottom.lines.slice(0, 4);
    renderer.draw();
    expectWhole("shrunk by more than a screen");
    expect(renderer.fullRedraws).to.equal(2);
  });

  it("draws everything again when a line above the screen changes", () => {
    const { renderer, header, expectWhole } = setup();
    renderer.draw();
    renderer.draw();
    expect(renderer.frozenLines).to.be.greaterThan(0);
    // Lines above the screen are out of reach: a change that moves them is drawn with everything else.
    header.lines.push("SECOND HEADER LINE");
    renderer.draw();
    expectWhole("after the header grew");
    expect(renderer.fullRedraws).to.equal(2);
  });

  it("puts the terminal's cursor where the focused component marks it, and gives it the keys", () => {
    const term = new ModelTerminal(40, 10);
    const renderer = new ScrollbackRenderer(term, true);
    renderer.addChild({ render: () => ["above"], invalidate() {} });
    const editor = new Editor(asTUI(renderer), getEditorTheme());
    renderer.addChild(editor);
    renderer.setFocus(editor);
    renderer.start();
    for (const key of "hello") term.press(key);
    term.press("\x1b[D");
    renderer.draw();
    expect(term.shown().slice(0, 4)).to.deep.equal(["above", "─".repeat(40), "hello", "─".repeat(40)]);
    expect([term.row, term.col, term.cursorShown]).to.deep.equal([2, 4, true]);
    expect(editor.render(40).join("")).to.contain(CURSOR_MARKER);
    renderer.stop();
    expect([term.row, term.col]).to.deep.equal([4, 0]);
  });

  it("never writes past the last column, even for a line too wide", () => {
    const term = new ModelTerminal(10, 5);
    const renderer = new ScrollbackRenderer(term);
    renderer.addChild({ render: () => ["0123456789ABCDEF", "日本語日本語日本語"], invalidate() {} });
    renderer.draw();
    expect(term.history()).to.deep.equal(["0123456789", "日本語日本"]);
  });
});

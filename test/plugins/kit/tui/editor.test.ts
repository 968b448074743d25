/**
 * The editors `@knightcodeai/cli/tui` gives: pi-tui's Editor and Input (typing, lines, paste, history, the cursor
 * marker), and KnightCode's CustomEditor, the editor extensions subclass, with the app's keys in front of pi-tui's.
 */
import {
  CURSOR_MARKER,
  CustomEditor,
  DetachedUI,
  Editor,
  getEditorTheme,
  Input,
  stripAnsi,
} from "@knightcodeai/cli/tui";
import { expect } from "chai";

const theme = { borderColor: (s: string) => s, selectList: getEditorTheme().selectList };
const type = (editor: { handleInput(data: string): void }, text: string) => {
  for (const ch of text) editor.handleInput(ch);
};

describe("tui Editor", () => {
  it("types, moves the cursor, deletes and starts new lines", () => {
    const editor = new Editor(new DetachedUI(), theme);
    type(editor, "helo");
    editor.handleInput("\x1b[D");
    editor.handleInput("l");
    expect(editor.getText()).to.equal("hello");
    editor.handleInput("\x05");
    editor.handleInput("\x1b[13;2u");
    type(editor, "wörld");
    editor.handleInput("\x7f");
    editor.handleInput("\x1b\r");
    type(editor, "x");
    expect(editor.getLines()).to.deep.equal(["hello", "wörl", "x"]);
    editor.handleInput("\x1b[A");
    editor.handleInput("\x01");
    editor.handleInput("\x1b[3~");
    expect(editor.getLines()[1]).to.equal("örl");
    editor.handleInput("\x0b");
    expect(editor.getLines()[1]).to.equal("");
  });

  it("deletes a word with ctrl+w and the line's start with ctrl+u", () => {
    const editor = new Editor(new DetachedUI(), theme);
    type(editor, "one two three");
    editor.handleInput("\x17");
    expect(editor.getText()).to.equal("one two ");
    editor.handleInput("\x15");
    expect(editor.getText()).to.equal("");
  });

  it("submits on enter, clears, and walks the history with up and down", () => {
    const editor = new Editor(new DetachedUI(), theme);
    const submitted: string[] = [];
    editor.onSubmit = (text) => {
      submitted.push(text);
      editor.addToHistory(text);
    };
    type(editor, "first");
    editor.handleInput("\r");
    type(editor, "second");
    editor.handleInput("\r");
    expect(submitted).to.deep.equal(["first", "second"]);
    expect(editor.getText()).to.equal("");
    editor.handleInput("\x1b[A");
    expect(editor.getText()).to.equal("second");
    editor.handleInput("\x1b[A");
    expect(editor.getText()).to.equal("first");
    editor.handleInput("\x1b[B");
    editor.handleInput("\x1b[B");
    expect(editor.getText()).to.equal("");
    editor.disableSubmit = true;
    type(editor, "kept");
    editor.handleInput("\r");
    expect(editor.getText()).to.equal("kept");
  });

  it("inserts a bracketed paste, even when it arrives in pieces, and kitty-encoded characters", () => {
    const editor = new Editor(new DetachedUI(), theme);
    editor.handleInput("\x1b[200~line one\nli");
    editor.handleInput("ne two\x1b[201~");
    editor.handleInput("\x1b[33u");
    expect(editor.getText()).to.equal("line one\nline two!");
  });

  it("shows a large paste as a placeholder and gives the whole text expanded", () => {
    const editor = new Editor(new DetachedUI(), theme);
    editor.handleInput(`\x1b[200~${"x\n".repeat(30)}\x1b[201~`);
    expect(editor.getText()).to.equal("[paste #1 +31 lines]");
    expect(editor.getExpandedText()).to.equal("x\n".repeat(30));
  });

  it("renders rules around the text and marks the cursor only while focused", () => {
    const editor = new Editor(new DetachedUI(), theme);
    type(editor, "ab");
    editor.handleInput("\x1b[D");
    expect(editor.render(5).map(stripAnsi)).to.deep.equal(["─────", "ab   ", "─────"]);
    expect(editor.render(5)[1]).not.to.include(CURSOR_MARKER);
    editor.focused = true;
    expect(editor.render(5)[1]).to.include(`a${CURSOR_MARKER}`);
  });

  it("tells onChange on every edit", () => {
    const editor = new Editor(new DetachedUI(), theme);
    const seen: string[] = [];
    editor.onChange = (text) => seen.push(text);
    type(editor, "ok");
    editor.handleInput("\x7f");
    expect(seen).to.deep.equal(["o", "ok", "o"]);
  });
});

describe("tui CustomEditor", () => {
  class ModalEditor extends CustomEditor {
    mode: "insert" | "normal" = "insert";
    override handleInput(data: string): void {
      if (this.mode === "normal" && data === "i") {
        this.mode = "insert";
        return;
      }
      if (this.mode === "normal") return;
      if (data === "\x1b") {
        this.mode = "normal";
        return;
      }
      super.handleInput(data);
    }
  }

  it("is pi-tui's Editor, and can be subclassed keeping the editing of keys the subclass passes on", () => {
    const editor = new ModalEditor(new DetachedUI(), theme);
    expect(editor).to.be.instanceOf(Editor);
    type(editor, "ab");
    editor.handleInput("\x1b");
    type(editor, "xyz");
    editor.handleInput("i");
    type(editor, "c");
    expect(editor.getText()).to.equal("abc");
  });

  it("offers keys to extension shortcuts, escape, ctrl+d on an empty editor, and bound actions first", () => {
    const bindings = { matches: (data: string, action: string) => action === "app.clear" && data === "\x0c" };
    const editor = new CustomEditor(new DetachedUI(), theme, bindings);
    const seen: string[] = [];
    editor.onExtensionShortcut = (data) => data === "\x07" && seen.push("shortcut") > 0;
    editor.onEscape = () => seen.push("escape");
    editor.onCtrlD = () => seen.push("ctrl+d");
    editor.onAction("app.clear", () => seen.push("clear"));
    editor.handleInput("\x04");
    editor.handleInput("\x07");
    editor.handleInput("\x1b");
    editor.handleInput("\x0c");
    type(editor, "q");
    editor.handleInput("\x04");
    expect(seen).to.deep.equal(["ctrl+d", "shortcut", "escape", "clear"]);
    expect(editor.getText()).to.equal("q");
  });

  it("takes a bare render host (what headless modes pass) and still renders", () => {
    let requests = 0;
    const editor = new CustomEditor({ requestRender: () => requests++ }, theme);
    type(editor, "hi");
    expect(editor.render(10).map(stripAnsi)[1]).to.equal("hi        ");
  });
});

describe("tui Input", () => {
  it("edits one line, submits on enter and reports escape", () => {
    const input = new Input();
    const seen: string[] = [];
    input.onSubmit = (value) => seen.push(`submit ${value}`);
    input.onEscape = () => seen.push("escape");
    for (const ch of "helo") input.handleInput(ch);
    input.handleInput("\x1b[D");
    input.handleInput("l");
    input.handleInput("\x1b[200~ big\nworld\x1b[201~");
    expect(input.getValue()).to.equal("hell bigworldo");
    input.handleInput("\x17");
    input.handleInput("\x05");
    input.handleInput("\x7f");
    input.handleInput("\r");
    input.handleInput("\x1b");
    expect(seen).to.deep.equal(["submit hell ", "escape"]);
  });

  it("scrolls a long value so the cursor stays on the line", () => {
    const input = new Input();
    input.setValue("abcdefghijklmnop");
    input.focused = true;
    expect(input.render(10)[0]).to.equal(`> ${CURSOR_MARKER}\x1b[7ma\x1b[27mbcdefgh`);
    input.handleInput("\x05");
    expect(input.render(10)[0]).to.equal(`> jklmnop${CURSOR_MARKER}\x1b[7m \x1b[27m`);
  });
});

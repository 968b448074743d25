/**
 * An extension's editor built on `@knightcodeai/cli/tui`: the extension file is loaded by the real loader, installs
 * a CustomEditor with its own autocomplete, and the editor it makes is pi-tui's Editor with autocomplete, undo and
 * the kill ring. A pi-style extension that imports `@mariozechner/pi-tui` gets the very same classes.
 */
import type { EditorFactory } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { DetachedUI, type Editor, getEditorTheme, stripAnsi } from "@knightcodeai/cli/tui";
import { expect } from "chai";
import { useTempDir } from "../../../helpers/temp-dir.js";

/** Completes `#name` snippets; the editor asks it after `#` and while the word goes on. */
const SNIPPET_EDITOR = `import type { ExtensionAPI } from "@knightcodeai/cli";
import { type AutocompleteProvider, CustomEditor } from "@knightcodeai/cli/tui";

const SNIPPETS = ["#hello", "#help", "#todo"];

const snippets: AutocompleteProvider = {
  async getSuggestions(lines, line, col) {
    const word = /(?:^|\\s)(#\\w*)$/.exec((lines[line] ?? "").slice(0, col))?.[1];
    if (word === undefined) return null;
    const items = SNIPPETS.filter((s) => s.startsWith(word)).map((value) => ({ value, label: value }));
    return items.length > 0 ? { prefix: word, items } : null;
  },
  applyCompletion(lines, line, col, item, prefix) {
    const text = lines[line] ?? "";
    const next = [...lines];
    next[line] = text.slice(0, col - prefix.length) + item.value + " " + text.slice(col);
    return { lines: next, cursorLine: line, cursorCol: col - prefix.length + item.value.length + 1 };
  },
};

class SnippetEditor extends CustomEditor {
  constructor(...args: ConstructorParameters<typeof CustomEditor>) {
    super(...args);
    this.setAutocompleteProvider(snippets);
  }
}

export default function (knightcode: ExtensionAPI) {
  knightcode.on("session_start", (_event, ctx) => {
    ctx.ui.setEditorComponent((tui, theme, keybindings) => new SnippetEditor(tui, theme, keybindings));
  });
}
`;

/** Written as a pi user would: pi-tui's Editor and Markdown, by pi's package name. */
const PI_STYLE = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Editor, Markdown } from "@mariozechner/pi-tui";
import * as kc from "@knightcodeai/cli/tui";

export default function (pi: ExtensionAPI) {
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.setWidget("pi-classes", () => new Markdown("**pi**", 0, 0, { heading: (s) => s, link: (s) => s, linkUrl: (s) => s, code: (s) => s, codeBlock: (s) => s, codeBlockBorder: (s) => s, quote: (s) => s, quoteBorder: (s) => s, hr: (s) => s, listBullet: (s) => s, bold: (s) => s, italic: (s) => s, strikethrough: (s) => s, underline: (s) => s }));
    const same = Editor === kc.Editor && Markdown === kc.Markdown;
    ctx.ui.setStatus("pi-classes", same ? "Editor and Markdown are @knightcodeai/cli/tui's" : "other classes");
    ctx.ui.setEditorComponent((tui, theme) => new Editor(tui, theme));
  });
}
`;

const ESC_UNDO = "\x1f"; // ctrl+- as a terminal without the kitty protocol sends it
const CTRL_W = "\x17";
const CTRL_U = "\x15";
const CTRL_Y = "\x19";
const ALT_Y = "\x1by";

/** pi-tui's Editor, told by what only it has among editors (the autocomplete list). */
const isEditor = (value: object): value is Editor =>
  typeof (value as Partial<Editor>).isShowingAutocomplete === "function";

async function until(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("an extension's editor from @knightcodeai/cli/tui", () => {
  const tmp = useTempDir("kc-tui-editor-");
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  /** The editor each extension's factory makes, extensions loaded from files by the real loader. */
  async function editorsOf(...sources: string[]): Promise<Editor[]> {
    t = await createTestSession({
      extensions: sources.map((source, i) => tmp.write(`extension-${i}.ts`, source)),
    });
    const factories = t.ui.calls
      .filter((call) => call.method === "setEditorComponent")
      .map((call) => call.args[0] as EditorFactory);
    if (factories.length !== sources.length) throw new Error("an extension installed no editor");
    // Each editor is checked by what it does: the test file's own copy of the classes may be another module
    // instance than the one extensions get (the test runner loads the package both as CommonJS and as ESM).
    return factories.map((factory) => {
      const made = factory(new DetachedUI(), getEditorTheme(), undefined);
      if (!isEditor(made)) throw new Error("an extension's editor is not pi-tui's Editor");
      return made;
    });
  }

  const type = (editor: Editor, text: string) => {
    for (const ch of text) editor.handleInput(ch);
  };

  it("completes with the extension's provider, undoes, and yanks from the kill ring", async () => {
    const [editor] = await editorsOf(SNIPPET_EDITOR);
    if (!editor) throw new Error("no editor");
    type(editor, "say #he");
    await until("the snippet list", () => editor.isShowingAutocomplete());
    const shown = editor.render(40).map((line) => stripAnsi(line).trim());
    expect(shown).to.include.members(["→ #hello", "#help"]);
    expect(shown.join("\n")).not.to.include("#todo");
    editor.handleInput("\t");
    expect(editor.getText()).to.equal("say #hello ");
    expect(editor.isShowingAutocomplete()).to.equal(false);

    editor.handleInput(ESC_UNDO);
    expect(editor.getText()).to.equal("say #he");
    editor.handleInput(ESC_UNDO);
    expect(editor.getText()).to.equal("say");

    editor.setText("alpha beta gamma");
    editor.handleInput(CTRL_W);
    editor.handleInput(CTRL_W);
    expect(editor.getText()).to.equal("alpha ");
    type(editor, "x");
    editor.handleInput(CTRL_U);
    expect(editor.getText()).to.equal("");
    editor.handleInput(CTRL_Y);
    expect(editor.getText()).to.equal("alpha x");
    editor.handleInput(ALT_Y);
    expect(editor.getText()).to.equal("beta gamma");
    editor.handleInput(ALT_Y);
    expect(editor.getText()).to.equal("alpha x");
  });

  it("gives a pi-style extension that imports @mariozechner/pi-tui the same classes", async () => {
    const [kc, pi] = await editorsOf(SNIPPET_EDITOR, PI_STYLE);
    if (!kc || !pi) throw new Error("no editor");
    // The KnightCode extension's CustomEditor extends the very Editor class the pi-style extension imported.
    expect(kc).to.be.instanceOf(pi.constructor);
    expect(pi.constructor).to.not.equal(kc.constructor);
    expect(t!.ui.widgets.get("pi-classes")?.map((line) => line.trimEnd())).to.deep.equal(["pi"]);
    expect(t!.ui.status.get("pi-classes")).to.equal("Editor and Markdown are @knightcodeai/cli/tui's");
    type(pi, "typed in pi's editor");
    expect(pi.getText()).to.equal("typed in pi's editor");
  });
});

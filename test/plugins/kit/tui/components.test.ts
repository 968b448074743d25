import { expect } from "chai";
import { builtinTheme } from "../../../../plugins/kit/theme.js";
import { Box } from "../../../../plugins/kit/tui/box.js";
import { Container, DetachedUI } from "../../../../plugins/kit/tui/component.js";
import { fuzzyFilter, fuzzyMatch } from "../../../../plugins/kit/tui/fuzzy.js";
import { BorderedLoader, CancellableLoader } from "../../../../plugins/kit/tui/loader.js";
import { Markdown } from "../../../../plugins/kit/tui/markdown.js";
import { SelectList } from "../../../../plugins/kit/tui/select-list.js";
import { SettingsList } from "../../../../plugins/kit/tui/settings-list.js";
import { DynamicBorder, Spacer, Text, TruncatedText } from "../../../../plugins/kit/tui/text.js";
import {
  getMarkdownTheme,
  getSelectListTheme,
  getSettingsListTheme,
  keyHint,
  keyText,
  rawKeyHint,
} from "../../../../plugins/kit/tui/themes.js";
import { stripAnsi, visibleWidth } from "../../../../plugins/kit/tui/width.js";

const plain = builtinTheme("dark", { color: false })!;
const DOWN = "\x1b[B";
const UP = "\x1b[A";

describe("tui components", () => {
  it("Text wraps within its padding; Spacer and DynamicBorder fill their space; Container stacks", () => {
    const text = new Text("the quick brown fox", 1, 1);
    expect(text.render(12)).to.deep.equal(["            ", " the quick ", " brown fox ", "            "]);
    expect(new Text("", 1, 1).render(10)).to.deep.equal([]);
    expect(new Spacer(2).render(5)).to.deep.equal(["", ""]);
    expect(new DynamicBorder().render(4)).to.deep.equal(["────"]);
    const stack = new Container();
    stack.addChild(new DynamicBorder());
    stack.addChild(new Text("hi", 0, 0));
    expect(stack.render(3)).to.deep.equal(["───", "hi"]);
  });

  it("TruncatedText shows its first line cut to the width", () => {
    expect(new TruncatedText("a long first line\nsecond", 1, 0).render(10)).to.deep.equal([" a long …"]);
  });

  it("CancellableLoader aborts once on escape", () => {
    const loader = new CancellableLoader(
      new DetachedUI(),
      (s) => s,
      (s) => s,
      "Waiting",
    );
    let calls = 0;
    loader.onAbort = () => calls++;
    loader.handleInput("x");
    expect(loader.aborted).to.equal(false);
    loader.handleInput("\x1b");
    loader.handleInput("\x1b");
    expect([loader.signal.aborted, calls]).to.deep.equal([true, 1]);
    expect(loader.render(20)[0]).to.match(/Waiting/);
    loader.dispose();
  });

  it("Box pads its children and paints every row with its background to the full width", () => {
    const box = new Box(1, 0, (s) => `<${s}>`);
    box.addChild(new Text("abc def", 0, 0));
    expect(box.render(6)).to.deep.equal(["< abc  >", "< def  >"]);
  });

  it("Markdown renders headings, emphasis, code, links, lists, code blocks, quotes and rules", () => {
    const md = new Markdown(
      "# Title\n\nSome **bold**, *italic* and `x*y*` [docs](https://e.x).\n\n- one\n  - nested\n1. first\n\n```ts\nconst a = 1;\n```\n\n> quoted\n\n---",
      0,
      0,
      getMarkdownTheme(plain),
    );
    expect(md.render(60)).to.deep.equal([
      "Title",
      "",
      "Some bold, italic and x*y* docs (https://e.x).",
      "",
      "• one",
      "  • nested",
      "1. first",
      "",
      "```ts",
      "  const a = 1;",
      "```",
      "",
      "│ quoted",
      "",
      "─".repeat(60),
    ]);
  });

  it("Markdown styles through its theme and wraps paragraphs to the width", () => {
    const md = new Markdown(
      "**bold** word word word word",
      1,
      0,
      getMarkdownTheme(builtinTheme("dark", { color: true })),
    );
    const lines = md.render(14);
    expect(lines[0]).to.include("\x1b[1mbold\x1b[22m");
    for (const line of lines) expect(visibleWidth(line)).to.be.at.most(14);
    expect(lines.map(stripAnsi).join(" ").replace(/\s+/g, " ").trim()).to.equal("bold word word word word");
  });

  it("SelectList moves with the arrows (wrapping), scrolls, filters fuzzily and reports enter and escape", () => {
    const items = ["apple", "banana", "cherry", "date"].map((label) => ({ value: label[0]!, label }));
    const list = new SelectList(items, 2, getSelectListTheme(plain));
    const chosen: string[] = [];
    list.onSelect = (item) => chosen.push(item.label);
    list.onCancel = () => chosen.push("cancelled");
    list.handleInput(UP);
    expect(list.getSelectedItem()?.label).to.equal("date");
    expect(list.render(30)).to.deep.equal(["  cherry", "→ date", "  (4/4)"]);
    list.handleInput(DOWN);
    list.handleInput("\r");
    list.setFilter("ban");
    list.handleInput("\r");
    list.handleInput("\x1b");
    expect(chosen).to.deep.equal(["apple", "banana", "cancelled"]);
    list.setFilter("zzz");
    expect(list.render(30)).to.deep.equal(["  No matches"]);
  });

  it("SettingsList cycles a value with enter, opens a submenu, and cancels with escape", () => {
    const changes: string[] = [];
    let cancelled = false;
    const list = new SettingsList(
      [
        {
          id: "mode",
          label: "Mode",
          currentValue: "fast",
          values: ["fast", "slow"],
          description: "How fast",
        },
        {
          id: "name",
          label: "Name",
          currentValue: "x",
          submenu: (_value, done) => ({
            render: () => ["pick a name"],
            invalidate() {},
            handleInput: () => done("y"),
          }),
        },
      ],
      5,
      getSettingsListTheme(plain),
      (id, value) => changes.push(`${id}=${value}`),
      () => {
        cancelled = true;
      },
    );
    expect(list.render(30).slice(0, 3)).to.deep.equal(["→ Mode  fast", "  Name  x", ""]);
    list.handleInput("\r");
    list.handleInput(DOWN);
    list.handleInput("\r");
    expect(list.render(30)).to.deep.equal(["pick a name"]);
    list.handleInput("k");
    expect(list.render(30)[1]).to.equal("→ Name  y");
    list.handleInput("\x1b");
    expect(changes).to.deep.equal(["mode=slow", "name=y"]);
    expect(cancelled).to.equal(true);
  });

  it("BorderedLoader shows its message between borders and aborts its signal on escape", () => {
    const tui = new DetachedUI();
    const loader = new BorderedLoader(tui, plain, "Fetching");
    let aborted = false;
    loader.onAbort = () => {
      aborted = true;
    };
    try {
      const lines = loader.render(20);
      expect(lines[0]).to.equal("─".repeat(20));
      expect(lines[1]).to.match(/^ \S Fetching/);
      expect(lines.at(-1)).to.equal("─".repeat(20));
      loader.handleInput("\x1b");
      expect(loader.signal.aborted).to.equal(true);
      expect(aborted).to.equal(true);
    } finally {
      loader.dispose();
    }
  });

  it("key hints name a binding's key, or the key given", () => {
    expect(keyText("app.interrupt")).to.equal("escape");
    expect(keyText("ctrl+x")).to.equal("ctrl+x");
    expect(keyHint("tui.select.confirm", "pick", plain)).to.equal("enter pick");
    const colored = builtinTheme("dark", { color: true })!;
    expect(rawKeyHint("q", "quit", colored)).to.equal(
      `${colored.fg("dim", "q")}${colored.fg("muted", " quit")}`,
    );
  });

  it("fuzzyFilter keeps in-order matches of every query word, best first", () => {
    const files = ["src/main.ts", "README.md", "main.ts", "maintenance.txt", "domain/a.ts"];
    expect(fuzzyFilter(files, "main", (s) => s)).to.deep.equal([
      "main.ts",
      "maintenance.txt",
      "src/main.ts",
      "domain/a.ts",
    ]);
    expect(fuzzyFilter(files, "src ts", (s) => s)).to.deep.equal(["src/main.ts"]);
    expect(fuzzyFilter(files, "", (s) => s)).to.deep.equal(files);
    expect(fuzzyMatch("xyz", "main").matches).to.equal(false);
    expect(fuzzyMatch("mn", "main").score).to.be.greaterThan(fuzzyMatch("ma", "main").score);
  });
});

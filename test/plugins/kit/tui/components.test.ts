/**
 * `@knightcodeai/cli/tui`: pi-tui's components as the public entry gives them (the same classes, behaving as
 * pi-tui's), and what KnightCode adds beside them (DynamicBorder, BorderedLoader, the component themes, key hints,
 * DetachedUI and asTUI, stripAnsi).
 */
import {
  asTUI,
  BorderedLoader,
  Box,
  builtinTheme,
  CancellableLoader,
  Container,
  DetachedUI,
  DynamicBorder,
  fuzzyFilter,
  fuzzyMatch,
  getMarkdownTheme,
  getSelectListTheme,
  getSettingsListTheme,
  isTUI,
  keyHint,
  keyText,
  Markdown,
  piTui,
  rawKeyHint,
  SelectList,
  SettingsList,
  Spacer,
  stripAnsi,
  Text,
  TruncatedText,
  TUI,
  visibleWidth,
} from "@knightcodeai/cli/tui";
import * as pi from "@mariozechner/pi-tui";
import { expect } from "chai";

const plain = builtinTheme("dark", { color: false })!;
const DOWN = "\x1b[B";
const UP = "\x1b[A";
const trimmed = (lines: string[]) => lines.map((line) => stripAnsi(line).trimEnd());

describe("tui components", () => {
  it("are pi-tui's own: every pi-tui export is the same object, and piTui is pi-tui's module", () => {
    for (const [name, value] of Object.entries(pi)) {
      expect(piTui[name as keyof typeof piTui], name).to.equal(value);
    }
    expect([Text, Markdown, SelectList, Container, TUI]).to.deep.equal([
      pi.Text,
      pi.Markdown,
      pi.SelectList,
      pi.Container,
      pi.TUI,
    ]);
  });

  it("Text wraps within its padding; Spacer and DynamicBorder fill their space; Container stacks", () => {
    const text = new Text("the quick brown fox", 1, 1);
    expect(text.render(12)).to.deep.equal(["            ", " the quick  ", " brown fox  ", "            "]);
    expect(new Text("", 1, 1).render(10)).to.deep.equal([]);
    expect(new Spacer(2).render(5)).to.deep.equal(["", ""]);
    expect(new DynamicBorder().render(4)).to.deep.equal(["────"]);
    expect(new DynamicBorder((s) => `<${s}>`).render(2)).to.deep.equal(["<──>"]);
    const stack = new Container();
    stack.addChild(new DynamicBorder());
    stack.addChild(new Text("hi", 0, 0));
    expect(stack.render(3)).to.deep.equal(["───", "hi "]);
  });

  it("TruncatedText shows its first line cut to the width", () => {
    expect(trimmed(new TruncatedText("a long first line\nsecond", 1, 0).render(10))).to.deep.equal([
      " a lon...",
    ]);
  });

  it("CancellableLoader aborts its signal on escape and ctrl+c, not on other keys", () => {
    for (const key of ["\x1b", "\x03"]) {
      const loader = new CancellableLoader(
        new DetachedUI(),
        (s) => s,
        (s) => s,
        "Waiting",
      );
      try {
        let calls = 0;
        loader.onAbort = () => calls++;
        loader.handleInput("x");
        expect(loader.aborted).to.equal(false);
        loader.handleInput(key);
        expect([loader.signal.aborted, calls]).to.deep.equal([true, 1]);
        expect(loader.render(20).join("\n")).to.match(/Waiting/);
      } finally {
        loader.dispose();
      }
    }
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
    expect(trimmed(md.render(60))).to.deep.equal([
      "Title",
      "",
      "Some bold, italic and x*y* docs (https://e.x).",
      "",
      "- one",
      "    - nested",
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
    expect(lines[0]).to.include("\x1b[1mbold");
    for (const line of lines) expect(visibleWidth(line)).to.be.at.most(14);
    expect(lines.map(stripAnsi).join(" ").replace(/\s+/g, " ").trim()).to.equal("bold word word word word");
  });

  it("SelectList moves with the arrows (wrapping), scrolls, filters by prefix and reports enter and escape", () => {
    const items = ["apple", "banana", "cherry", "date"].map((label) => ({ value: label, label }));
    const list = new SelectList(items, 2, getSelectListTheme(plain));
    const chosen: string[] = [];
    list.onSelect = (item) => chosen.push(item.label);
    list.onCancel = () => chosen.push("cancelled");
    list.handleInput(UP);
    expect(list.getSelectedItem()?.label).to.equal("date");
    expect(trimmed(list.render(30))).to.deep.equal(["  cherry", "→ date", "  (4/4)"]);
    list.handleInput(DOWN);
    list.handleInput("\r");
    list.setFilter("ban");
    list.handleInput("\r");
    list.handleInput("\x1b");
    expect(chosen).to.deep.equal(["apple", "banana", "cancelled"]);
    list.setFilter("zzz");
    expect(trimmed(list.render(30))).to.deep.equal(["  No matching commands"]);
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
    expect(trimmed(list.render(30)).slice(0, 2)).to.deep.equal(["→ Mode  fast", "  Name  x"]);
    list.handleInput("\r");
    list.handleInput(DOWN);
    list.handleInput("\r");
    expect(list.render(30)).to.deep.equal(["pick a name"]);
    list.handleInput("k");
    expect(trimmed(list.render(30))[1]).to.equal("→ Name  y");
    list.handleInput("\x1b");
    expect(changes).to.deep.equal(["mode=slow", "name=y"]);
    expect(cancelled).to.equal(true);
  });

  it("BorderedLoader shows its message between rules, with a cancel hint, and aborts its signal on escape", () => {
    const tui = new DetachedUI();
    const loader = new BorderedLoader(tui, plain, "Fetching");
    let aborted = false;
    loader.onAbort = () => {
      aborted = true;
    };
    try {
      const lines = trimmed(loader.render(30));
      expect(lines[0]).to.equal("─".repeat(30));
      expect(lines.find((line) => line.includes("Fetching"))).to.match(/^ \S Fetching$/);
      expect(lines).to.include(" escape/ctrl+c cancel");
      expect(lines.at(-1)).to.equal("─".repeat(30));
      loader.handleInput("\x1b");
      expect(loader.signal.aborted).to.equal(true);
      expect(aborted).to.equal(true);
    } finally {
      loader.dispose();
    }
    const steady = new BorderedLoader(tui, plain, "Saving", { cancellable: false });
    try {
      steady.handleInput("\x1b");
      expect(steady.signal.aborted).to.equal(false);
      expect(trimmed(steady.render(20)).join("\n")).not.to.include("cancel");
    } finally {
      steady.dispose();
    }
  });

  it("key hints name a binding's keys as pi-tui has them, or the key given", () => {
    expect(keyText("app.interrupt")).to.equal("escape");
    expect(keyText("tui.select.cancel")).to.equal("escape/ctrl+c");
    expect(keyText("ctrl+x")).to.equal("ctrl+x");
    expect(keyHint("tui.select.confirm", "pick", plain)).to.equal("enter pick");
    const colored = builtinTheme("dark", { color: true })!;
    expect(rawKeyHint("q", "quit", colored)).to.equal(
      `${colored.fg("dim", "q")}${colored.fg("muted", " quit")}`,
    );
  });

  it("fuzzyFilter keeps in-order matches of every query word, best first", () => {
    const files = ["src/main.ts", "README.md", "main.ts", "maintenance.txt", "domain/a.ts"];
    const found = fuzzyFilter(files, "main", (s) => s);
    expect(found.slice(0, 2)).to.have.members(["main.ts", "maintenance.txt"]);
    expect(found).to.have.members(["main.ts", "maintenance.txt", "src/main.ts", "domain/a.ts"]);
    expect(fuzzyFilter(files, "src ts", (s) => s)).to.deep.equal(["src/main.ts"]);
    expect(fuzzyFilter(files, "", (s) => s)).to.deep.equal(files);
    expect(fuzzyMatch("xyz", "main").matches).to.equal(false);
  });

  it("DetachedUI is a pi-tui TUI that draws nothing and counts render requests; asTUI wraps a bare host", () => {
    const detached = new DetachedUI({ columns: 40, rows: 10 });
    expect(detached).to.be.instanceOf(TUI);
    expect([detached.terminal.columns, detached.terminal.rows]).to.deep.equal([40, 10]);
    detached.requestRender();
    expect(detached.renderRequests).to.equal(1);
    expect(asTUI(detached)).to.equal(detached);
    let forwarded = 0;
    const bare = { requestRender: () => forwarded++ };
    expect(isTUI(bare)).to.equal(false);
    const wrapped = asTUI(bare);
    expect(wrapped).to.be.instanceOf(TUI);
    wrapped.requestRender();
    expect(forwarded).to.equal(1);
  });

  it("stripAnsi removes colours, links and the cursor marker", () => {
    expect(stripAnsi("\x1b[31mred\x1b[39m \x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b_pi:c\x07end")).to.equal(
      "red link end",
    );
  });
});

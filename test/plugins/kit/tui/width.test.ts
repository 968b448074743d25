/** Column arithmetic as `@knightcodeai/cli/tui` gives it (pi-tui's), and KnightCode's `stripAnsi`. */
import { stripAnsi, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@knightcodeai/cli/tui";
import { expect } from "chai";

const red = (s: string) => `\x1b[31m${s}\x1b[39m`;

describe("tui column widths", () => {
  it("counts columns without escape sequences, wide characters as two and combining marks as none", () => {
    expect(visibleWidth("hello")).to.equal(5);
    expect(visibleWidth(red("hello"))).to.equal(5);
    expect(visibleWidth("\x1b]8;;http://x\x07link\x1b]8;;\x07")).to.equal(4);
    expect(visibleWidth("日本語")).to.equal(6);
    expect(visibleWidth("한글")).to.equal(4);
    expect(visibleWidth("ｆｕｌｌ")).to.equal(8);
    expect(visibleWidth("e\u0301")).to.equal(1);
    expect(visibleWidth("🙂")).to.equal(2);
    expect(visibleWidth("👨‍👩‍👧")).to.equal(2);
    expect(visibleWidth("🇩🇪")).to.equal(2);
  });

  it('truncates to a width with an ellipsis ("..." unless another is given), resetting a cut styled line', () => {
    expect(stripAnsi(truncateToWidth("hello world", 8))).to.equal("hello...");
    expect(stripAnsi(truncateToWidth("hello world", 8, "…"))).to.equal("hello w…");
    expect(truncateToWidth("short", 8)).to.equal("short");
    expect(truncateToWidth("short", 8, "…", true)).to.equal("short   ");
    const cut = truncateToWidth(red("hello world"), 6, "…");
    expect(stripAnsi(cut)).to.equal("hello…");
    expect(cut.startsWith("\x1b[31m")).to.equal(true);
    expect(cut).to.include("\x1b[0m");
    expect(visibleWidth(cut)).to.equal(6);
  });

  it("never splits a wide character when truncating", () => {
    const cut = truncateToWidth("日本語テキスト", 6, "…");
    expect(stripAnsi(cut)).to.equal("日本…");
    expect(visibleWidth(cut)).to.equal(5);
    expect(visibleWidth(truncateToWidth("日本語テキスト", 6, "…", true))).to.equal(6);
    expect(truncateToWidth("abc", 0)).to.equal("");
  });

  it("wraps at spaces, and inside a word only when it is wider than the line", () => {
    expect(wrapTextWithAnsi("one two three four", 9)).to.deep.equal(["one two", "three", "four"]);
    expect(wrapTextWithAnsi("abcdefghij", 4)).to.deep.equal(["abcd", "efgh", "ij"]);
    expect(wrapTextWithAnsi("a\nb", 10)).to.deep.equal(["a", "b"]);
    for (const line of wrapTextWithAnsi(red("日本語のテキストを折り返す"), 7))
      expect(visibleWidth(line)).to.be.at.most(7);
  });
});

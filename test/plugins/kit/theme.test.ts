import { expect } from "chai";
import { BUILTIN_THEMES, builtinTheme, Theme, ThemeSelection } from "../../../plugins/kit/theme.js";

describe("themes", () => {
  const original = process.env.NO_COLOR;
  afterEach(() => {
    if (original === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = original;
  });

  it("styles text with ANSI SGR codes, closing each style with its own reset", () => {
    const theme = builtinTheme("dark", { color: true })!;
    expect(theme.fg("accent", "x")).to.equal("\x1b[38;5;75mx\x1b[39m");
    expect(theme.bg("selectedBg", "x")).to.equal("\x1b[48;5;237mx\x1b[49m");
    expect(theme.bold("x")).to.equal("\x1b[1mx\x1b[22m");
    expect(theme.italic("x")).to.equal("\x1b[3mx\x1b[23m");
    expect(theme.underline("x")).to.equal("\x1b[4mx\x1b[24m");
    expect(theme.inverse("x")).to.equal("\x1b[7mx\x1b[27m");
    expect(theme.strikethrough("x")).to.equal("\x1b[9mx\x1b[29m");
    expect(theme.getThinkingBorderColor("high")("x")).to.equal(theme.fg("thinkingHigh", "x"));
  });

  it("writes plain text under NO_COLOR or with colour off, and leaves unknown tokens and default colours alone", () => {
    process.env.NO_COLOR = "1";
    const theme = builtinTheme("dark")!;
    expect(theme.hasColor()).to.equal(false);
    expect([theme.fg("error", "x"), theme.bold("x"), theme.bg("toolErrorBg", "x")]).to.deep.equal([
      "x",
      "x",
      "x",
    ]);
    const colored = builtinTheme("light", { color: true })!;
    expect(colored.fg("nope" as never, "x")).to.equal("x");
    expect(colored.fg("text", "x")).to.equal("x");
  });

  it("writes 24-bit colour for hex values in truecolor mode and the nearest palette colour otherwise", () => {
    const fg = { accent: "#ff8000" } as never;
    expect(new Theme(fg, {} as never, "truecolor", { color: true }).fg("accent", "x")).to.equal(
      "\x1b[38;2;255;128;0mx\x1b[39m",
    );
    expect(new Theme(fg, {} as never, "256color", { color: true }).fg("accent", "x")).to.equal(
      "\x1b[38;5;208mx\x1b[39m",
    );
  });

  it("ThemeSelection lists the built-in themes, switches by name or object, and refuses unknown names", () => {
    const selection = new ThemeSelection("dark", { color: true });
    const seen: string[] = [];
    selection.onChange((theme) => seen.push(theme.name ?? "?"));
    expect(selection.all()).to.deep.equal(BUILTIN_THEMES.map((name) => ({ name, path: undefined })));
    expect(selection.get("light")?.name).to.equal("light");
    expect(selection.get("nope")).to.equal(undefined);
    expect(selection.set("light")).to.deep.equal({ success: true });
    expect(selection.theme.name).to.equal("light");
    const result = selection.set("nope");
    expect(result.success).to.equal(false);
    expect(result.error).to.match(/Unknown theme "nope".*dark, light/);
    const custom = builtinTheme("dark", { color: false })!;
    expect(selection.set(custom)).to.deep.equal({ success: true });
    expect(selection.theme).to.equal(custom);
    expect(selection.set({} as never).success).to.equal(false);
    expect(seen).to.deep.equal(["light", "dark"]);
  });
});

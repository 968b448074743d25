/** Key parsing and matching as `@knightcodeai/cli/tui` gives them (pi-tui's), for the key ids docs/tui.md names. */
import {
  decodeKittyPrintable,
  isKeyRelease,
  isKeyRepeat,
  Key,
  matchesKey,
  parseKey,
} from "@knightcodeai/cli/tui";
import { expect } from "chai";

describe("tui keys", () => {
  it("names printable and control characters", () => {
    expect(parseKey("a")).to.equal("a");
    expect(parseKey(" ")).to.equal("space");
    expect(parseKey("\x03")).to.equal("ctrl+c");
    expect(parseKey("\r")).to.equal("enter");
    expect(parseKey("\t")).to.equal("tab");
    expect(parseKey("\x7f")).to.equal("backspace");
    expect(parseKey("\x1b")).to.equal("escape");
  });

  it("reads ESC-prefixed alt keys and the legacy CSI and SS3 sequences with xterm modifiers", () => {
    expect(parseKey("\x1bx")).to.equal("alt+x");
    expect(parseKey("\x1b\r")).to.equal("alt+enter");
    expect(parseKey("\x1b[A")).to.equal("up");
    expect(parseKey("\x1bOB")).to.equal("down");
    expect(parseKey("\x1b[1;5C")).to.equal("ctrl+right");
    expect(parseKey("\x1b[1;6D")).to.equal("shift+ctrl+left");
    expect(parseKey("\x1b[Z")).to.equal("shift+tab");
    expect(parseKey("\x1b[3~")).to.equal("delete");
    expect(parseKey("\x1b[5;3~")).to.equal("alt+pageUp");
    expect(parseKey("\x1bOP")).to.equal("f1");
    expect(parseKey("\x1b[24~")).to.equal("f12");
  });

  it("reads kitty keyboard protocol events, releases and repeats included", () => {
    expect(parseKey("\x1b[97;5u")).to.equal("ctrl+a");
    expect(parseKey("\x1b[13;2u")).to.equal("shift+enter");
    expect(parseKey("\x1b[27u")).to.equal("escape");
    expect(parseKey("\x1b[97;9u")).to.equal("super+a");
    expect(isKeyRelease("\x1b[97;5:3u")).to.equal(true);
    expect(isKeyRelease("\x1b[1;5:3A")).to.equal(true);
    expect(isKeyRelease("\x1b[97;5u")).to.equal(false);
    expect(isKeyRepeat("\x1b[97;1:2u")).to.equal(true);
    expect(isKeyRelease("a")).to.equal(false);
  });

  it("matches key ids with modifiers in any order and the usual aliases", () => {
    expect(matchesKey("\x1b[1;6A", "shift+ctrl+up")).to.equal(true);
    expect(matchesKey("\x1b[1;6A", Key.ctrlShift("up"))).to.equal(true);
    expect(matchesKey("\x1b[1;6A", "ctrl+up")).to.equal(false);
    expect(matchesKey("\x1b", Key.esc)).to.equal(true);
    expect(matchesKey("\x03", Key.ctrl("c"))).to.equal(true);
    expect(matchesKey("\x1b[99;5u", "ctrl+c")).to.equal(true);
    expect(matchesKey("A", "shift+a")).to.equal(true);
    expect(matchesKey("A", "a")).to.equal(false);
  });

  it("gives undefined for data that is not one key", () => {
    expect(parseKey("")).to.equal(undefined);
    expect(parseKey("hello")).to.equal(undefined);
    expect(parseKey("\x1b[999~")).to.equal(undefined);
  });

  it("decodes the character a kitty key event types, but not a modified one", () => {
    expect(decodeKittyPrintable("\x1b[97u")).to.equal("a");
    expect(decodeKittyPrintable("\x1b[97:65;2u")).to.equal("A");
    expect(decodeKittyPrintable("\x1b[97;5u")).to.equal(undefined);
    expect(decodeKittyPrintable("\x1b[13u")).to.equal(undefined);
  });

  it("builds ids from names", () => {
    expect(Key.enter).to.equal("enter");
    expect(Key.slash).to.equal("/");
    expect(Key.ctrlShiftAlt("k")).to.equal("ctrl+shift+alt+k");
  });
});

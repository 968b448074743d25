/** The line-based terminal's ctx.ui: what it prints once, what it keeps without drawing, and raw key listeners. */

import { stripAnsi, Text } from "@knightcodeai/cli/tui";
import { expect } from "chai";
import { TerminalUI } from "../../../builtin-extensions/mode-interactive/terminal-ui.js";

function terminal(columns = 30) {
  const out: string[] = [];
  const ui = new TerminalUI(
    (text) => out.push(stripAnsi(text)),
    async () => undefined,
    () => columns,
  );
  return { ui, out };
}

describe("TerminalUI (line-based interactive mode)", () => {
  it("prints a component widget and a header once, rendered at the terminal's width", () => {
    const { ui, out } = terminal(24);
    ui.setWidget("todo", (_tui, theme) => new Text(theme.bold("write the tests before the code"), 0, 0));
    ui.setHeader(() => new Text("KnightCode", 0, 0));
    expect(out).to.deep.equal(["┌ todo\n│ write the tests before\n│ the code\n", "KnightCode\n"]);
  });

  it("says so when a component cannot be drawn here, and goes on", () => {
    const { ui, out } = terminal();
    ui.setWidget("fancy", () => {
      throw new Error("needs the terminal size");
    });
    expect(out.join("")).to.match(
      /"fancy" could not be drawn in this terminal mode: needs the terminal size/,
    );
  });

  it("keeps the footer, editor component, indicator and thinking label it cannot draw, and hides working messages", () => {
    const { ui, out } = terminal();
    const footer = () => new Text("f");
    const editor = () => ({
      render: () => [],
      invalidate() {},
      getText: () => "",
      setText() {},
      handleInput() {},
    });
    ui.setFooter(footer);
    ui.setEditorComponent(editor);
    ui.setWorkingIndicator({ frames: ["*"] });
    ui.setHiddenThinkingLabel("hmm");
    ui.setWorkingMessage("shown");
    ui.setWorkingVisible(false);
    ui.setWorkingMessage("hidden");
    expect(ui.undrawn).to.deep.equal({
      footer,
      workingIndicator: { frames: ["*"] },
      hiddenThinkingLabel: "hmm",
    });
    expect(ui.getEditorComponent()).to.equal(editor);
    expect(out).to.deep.equal(["shown\n"]);
  });

  it("passes each key to terminal-input listeners in order until one consumes it or unsubscribes", () => {
    const { ui } = terminal();
    const seen: string[] = [];
    const offFirst = ui.onTerminalInput((data) => {
      seen.push(`first ${data}`);
      return data === "q" ? { consume: true } : { data: data.toUpperCase() };
    });
    ui.onTerminalInput((data) => {
      seen.push(`second ${data}`);
      return undefined;
    });
    ui.terminalInput("q");
    ui.terminalInput("a");
    offFirst();
    ui.terminalInput("b");
    expect(seen).to.deep.equal(["first q", "first a", "second A", "second b"]);
  });

  it("switches themes, remembers tool expansion and appends a paste to the editor text", () => {
    const { ui } = terminal();
    expect(ui.setTheme("light")).to.deep.equal({ success: true });
    expect(ui.theme.name).to.equal("light");
    expect(ui.setTheme("neon").success).to.equal(false);
    ui.setToolsExpanded(true);
    expect(ui.getToolsExpanded()).to.equal(true);
    ui.setEditorText("a");
    ui.pasteToEditor("b");
    expect(ui.getEditorText()).to.equal("ab");
  });
});

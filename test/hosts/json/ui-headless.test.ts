/**
 * JSON and print mode have no UI: every ctx.ui method of the peer's surface is callable there, dialogs answer "no"
 * at once, what would be drawn is a no-op, the theme still colours (plain under NO_COLOR), and nothing reaches
 * stdout besides the protocol records (or the answer). The extension writes what it saw to a file, since the modes show nothing.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const extension = (out: string) => `
import { writeFileSync } from "node:fs";
import { Text } from "@knightcodeai/cli/tui";
export default function (kc: any) {
  const prompts: string[] = [];
  kc.on("ui_prompt_start", (e: any) => { prompts.push(e.kind); });
  kc.on("agent_end", async (_e: any, ctx: any) => {
    const ui = ctx.ui;
    const off = ui.onTerminalInput(() => ({ consume: true }));
    off();
    for (const call of [
      () => ui.setWorkingVisible(false), () => ui.setWorkingIndicator({ frames: [] }), () => ui.setHiddenThinkingLabel("x"),
      () => ui.setFooter(() => new Text("f")), () => ui.setHeader(() => new Text("h")),
      () => ui.setEditorComponent(() => new Text("e")), () => ui.setToolsExpanded(true), () => ui.pasteToEditor("p"),
      () => ui.setWidget("w", () => new Text("w")), () => ui.setWidget("l", ["line"]), () => ui.setWorkingMessage("m"),
      () => ui.setStatus("s", "t"), () => ui.setTitle("t"), () => ui.notify("n"),
    ]) call();
    writeFileSync(${JSON.stringify(out)}, JSON.stringify({
      hasUI: ctx.hasUI,
      styled: ui.theme.fg("accent", "x") + ui.theme.bg("selectedBg", "y") + ui.theme.bold("z"),
      themes: ui.getAllThemes(),
      setTheme: ui.setTheme("dark"),
      getTheme: ui.getTheme("dark") ?? null,
      editor: ui.getEditorComponent() ?? null,
      expanded: ui.getToolsExpanded(),
      text: ui.getEditorText(),
      confirm: await ui.confirm("Go?"),
      select: (await ui.select("Pick", ["a"])) ?? null,
      prompts,
    }));
  });
}
`;

const expected = {
  hasUI: false,
  styled: "\x1b[38;5;75mx\x1b[39m\x1b[48;5;237my\x1b[49m\x1b[1mz\x1b[22m",
  themes: [],
  setTheme: { success: false, error: "This session has no UI to theme" },
  getTheme: null,
  editor: null,
  expanded: false,
  text: "",
  confirm: false,
  select: null,
  prompts: [],
};

describe("ctx.ui in modes without a UI", () => {
  const tmp = useTempDir("kc-ui-headless-");

  for (const mode of [["--mode", "json"], ["-p"]]) {
    it(`answers every method without a crash in ${mode.join(" ")}, keeping stdout clean`, async () => {
      const out = join(tmp.path, "seen.json");
      const ext = tmp.write("ext.ts", extension(out));
      const script = tmp.write("s.json", JSON.stringify({ steps: [{ text: "answer" }] }));
      const run = await runCli(
        [...mode, "--no-session", "--provider", "scripted", "--script", script, "-e", ext, "hi"],
        { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"), NO_COLOR: "" } },
      );
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(readFileSync(out, "utf8"))).to.deep.equal(expected);
      if (mode[0] === "-p") expect(run.stdout).to.equal("answer\n");
      else
        for (const line of run.stdout.trim().split("\n")) expect(JSON.parse(line)).to.have.property("type");
      expect(run.stdout).not.to.match(/extension_ui|ui_prompt/);
    });
  }

  it("gives a theme that writes plain text under NO_COLOR", async () => {
    const out = join(tmp.path, "seen.json");
    const ext = tmp.write("ext.ts", extension(out));
    const script = tmp.write("s.json", JSON.stringify({ steps: [{ text: "answer" }] }));
    const run = await runCli(
      ["-p", "--no-session", "--provider", "scripted", "--script", script, "-e", ext, "hi"],
      {
        cwd: tmp.path,
        env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"), NO_COLOR: "1" },
      },
    );
    expect(run.code, run.stderr).to.equal(0);
    expect(JSON.parse(readFileSync(out, "utf8")).styled).to.equal("xyz");
  });
});

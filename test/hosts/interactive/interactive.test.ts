/**
 * The interactive mode in a real terminal: tmux runs the built `knightcode`, send-keys types, capture-pane reads the
 * screen. Start, a streamed answer, /help, stopping a run with Ctrl+C, an extension dialog, /quit.
 */

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

describe("interactive mode (through tmux)", () => {
  const tmp = useTempDir("kc-tui-");
  const session = `kc-test-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", session, ...args], { encoding: "utf8" });
  const screen = () => tmux("capture-pane", "-t", session, "-p");
  const type = (text: string) => tmux("send-keys", "-t", session, "-l", text);
  const key = (name: string) => tmux("send-keys", "-t", session, name);
  async function waitFor(text: string | RegExp, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const shown = screen();
      if (typeof text === "string" ? shown.includes(text) : text.test(shown)) return shown;
      if (Date.now() > deadline) throw new Error(`"${text}" did not appear; the screen shows:\n${shown}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  before(function () {
    if (!hasTmux) this.skip();
  });
  afterEach(() => {
    if (hasTmux) spawnSync("tmux", ["-L", session, "kill-server"]);
  });

  it("streams answers, shows /help, stops a run with Ctrl+C, answers a dialog and quits", async () => {
    const script = join(tmp.path, "script.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          { text: "Hello from the terminal." },
          { text: "A slow answer that will be stopped before it ends, word by word.", chunkDelayMs: 200 },
        ],
      }),
    );
    const ext = join(tmp.path, "ask.ts");
    writeFileSync(
      ext,
      `export default (kc: any) => {
        kc.on("session_start", (_e: any, ctx: any) => ctx.ui.notify("started with UI " + ctx.hasUI));
        kc.registerCommand("pick", { description: "pick a colour", handler: async (_a: string, ctx: any) => {
          const colour = await ctx.ui.select("Favourite colour?", ["red", "green"]);
          ctx.ui.notify("you picked " + colour);
        } });
      };`,
    );
    const command = [
      `KNIGHTCODE_AGENT_DIR=${join(tmp.path, "agent")}`,
      process.execPath,
      cliBin,
      "-e",
      ext,
      "--provider scripted",
      `--script ${script}`,
      "--no-session",
      "; echo KC-EXIT-$?; sleep 60",
    ].join(" ");
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", tmp.path, command);
    await waitFor("/hotkeys for keys");
    // The terminal UI is bound before session_start.
    expect(screen()).to.contain("started with UI true");
    type("hello");
    key("Enter");
    await waitFor("Hello from the terminal.");
    type("/help");
    key("Enter");
    await waitFor(/\/pick\s+pick a colour/);
    type("go slowly");
    key("Enter");
    await waitFor("A slow");
    key("C-c");
    const stopped = await waitFor("(stopped");
    expect(stopped).to.not.contain("word by word.");
    type("/pick");
    key("Enter");
    await waitFor("Favourite colour?");
    key("Down");
    key("Enter");
    await waitFor("you picked green");
    type("/quit");
    key("Enter");
    await waitFor("KC-EXIT-0");
  });

  it("compacts on /compact and shows what happened", async () => {
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 10 } }));
    const long = (word: string) => `${word} `.repeat(40).trim();
    const script = join(tmp.path, "script.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          { text: long("first") },
          { text: long("second") },
          { text: "TUI SUMMARY", expect: { lastUserTextContains: "Focus of this summary: names" } },
        ],
      }),
    );
    const command = [
      `KNIGHTCODE_AGENT_DIR=${agentDir}`,
      process.execPath,
      cliBin,
      "--provider scripted",
      `--script ${script}`,
      "--no-session",
      "; echo KC-EXIT-$?; sleep 60",
    ].join(" ");
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", tmp.path, command);
    await waitFor("/hotkeys for keys");
    type("one");
    key("Enter");
    await waitFor("first first");
    type("two");
    key("Enter");
    await waitFor("second second");
    type("/compact names");
    key("Enter");
    await waitFor("Compacting the conversation (manual)");
    const shown = await waitFor(/Compacted: \d+ → about \d+ tokens/);
    expect(shown).to.match(/Compacted: \d+ → about \d+ tokens/);
    type("/quit");
    key("Enter");
    await waitFor("KC-EXIT-0");
  });
});

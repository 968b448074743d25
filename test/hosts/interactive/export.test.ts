/** `/export <file>` typed in the interactive mode in a real terminal (tmux), then the written page read back. */

import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

describe("interactive mode: /export", () => {
  const tmp = useTempDir("kc-tui-export-");
  const session = `kc-export-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", session, ...args], { encoding: "utf8" });
  const screen = () => tmux("capture-pane", "-t", session, "-p", "-J");
  async function waitFor(text: string, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const shown = screen();
      if (shown.includes(text)) return shown;
      if (Date.now() > deadline) throw new Error(`"${text}" did not appear; the screen shows:\n${shown}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const enter = (text: string) => {
    tmux("send-keys", "-t", session, "-l", text);
    tmux("send-keys", "-t", session, "Enter");
  };

  before(function () {
    if (!hasTmux) this.skip();
  });
  afterEach(() => {
    if (hasTmux) spawnSync("tmux", ["-L", session, "kill-server"]);
  });

  it("writes the file it is given and says where", async () => {
    const script = join(tmp.path, "script.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [{ toolCalls: [{ name: "read", arguments: { path: "script.json" } }] }, { text: "Listed." }],
      }),
    );
    const command = [
      `KNIGHTCODE_AGENT_DIR=${join(tmp.path, "agent")}`,
      process.execPath,
      cliBin,
      "--provider scripted",
      `--script ${script}`,
      "--no-session",
      "; echo KC-EXIT-$?; sleep 60",
    ].join(" ");
    tmux("new-session", "-d", "-s", session, "-x", "200", "-y", "40", "-c", tmp.path, command);
    await waitFor("/hotkeys for keys");
    enter("list <files>");
    await waitFor("Listed.");
    enter("/export page.html");
    const path = join(tmp.path, "page.html");
    await waitFor(`Exported the session to ${path}`);
    const html = readFileSync(path, "utf8");
    expect(html).to.contain("list &lt;files&gt;");
    expect(html).to.contain('<span class="tool-name">read</span>');
    expect(html).to.contain('<span class="tool-arg">script.json</span>');
    expect(html).to.contain("&quot;steps&quot;");
    enter("/quit");
    await waitFor("KC-EXIT-0");
  });
});

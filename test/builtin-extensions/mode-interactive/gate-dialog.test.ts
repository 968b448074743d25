/**
 * The permission gate's dialog in the full terminal UI (issue 30): the built `knightcode --gate` in tmux against a
 * local server that is both the agent's model and the classifier. A call the classifier judges destructive asks with
 * the safe answer preselected, so Enter blocks it; "always" remembers the identical call for the session.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { GATE_CHOICES } from "../../../builtin-extensions/classifier-gate/index.js";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { type RecordedRequest, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { textStream, toolCallStream } from "../providers/openai-compatible/fixtures.js";
import { type TmuxDriver, useTerminalAndModel } from "./tmux-driver.js";

const RISKY = "risky: destructive or irreversible";

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("interactive UI: the permission gate's dialog (tmux, local model server)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-gate-tui-");
  let server: TestServer;
  let term: TmuxDriver;

  useTerminalAndModel((started) => {
    ({ server, term } = started);
  });

  const agentRequests = () => server.requests.filter((r) => !r.body?.tool_choice);
  const classifierRequests = () => server.requests.filter((r) => r.body?.tool_choice);

  it("--gate asks about a destructive call with the safe answer preselected and the reason shown; always-allow is remembered", async () => {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    mkdirSync(join(tmp.path, "build"));
    // Three identical calls in a row are the point here, not a loop to stop.
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ doomLoop: { threshold: 5 } }));
    const rm = { command: "rm -rf build" };
    server.respond((request: RecordedRequest, res) => {
      if (request.body.tool_choice)
        return writeSse(res, toolCallStream("call_cls", "classify", { label: RISKY }));
      const results = (request.body.messages as { role: string }[]).filter((m) => m.role === "tool").length;
      if (results < 3) return writeSse(res, toolCallStream(`call_${results}`, "bash", rm));
      return writeSse(res, textStream("All done."));
    });
    // No tools.json: the flag alone turns the gate on.
    term.start(
      `KNIGHTCODE_AGENT_DIR=${agentDir} ${process.execPath} ${cliBin} --gate --model local/m1`,
      tmp.path,
      110,
      40,
    );
    await term.waitFor("local/m1");
    // A /tools change is confirmed in one line, not with the whole listing.
    term.enter("/tools classifier-gate timeoutMs=15000");
    const confirmed = await term.waitFor("classifier-gate: timeoutMs = 15000");
    const flat = confirmed
      .split("\n")
      .map((l) => l.trim())
      .join(" ");
    expect(flat).to.contain(`(saved in ${join(agentDir, "tools.json")}; applies from the next tool call)`);
    expect(confirmed).to.not.contain("Tools (").and.not.contain("Classifier models:");
    term.enter("clean the build folder");
    const dialog = await term.waitFor(GATE_CHOICES.always);
    expect(dialog).to.contain("Allow bash?").and.contain("$ rm -rf build");
    expect(dialog).to.contain(`Why you are asked: the classifier judged it ${RISKY}`);
    // The safe answer is first and selected: the list's marker is on it.
    const rows = dialog.split("\n");
    const block = rows.findIndex((r) => r.includes(GATE_CHOICES.block));
    expect(rows[block]).to.match(/^\s*→/);
    expect(rows.find((r) => r.includes(GATE_CHOICES.once))).to.not.match(/^\s*→/);
    term.key("Enter");
    // Enter blocked it: the folder is still there, and the model was told. Its second try asks again.
    await term.waitFor("the user declined");
    await until(() => classifierRequests().length === 2);
    await term.waitFor(GATE_CHOICES.always);
    expect(existsSync(join(tmp.path, "build"))).to.equal(true);
    expect(JSON.stringify(agentRequests()[1]!.body.messages)).to.contain("the user declined");
    term.key("Down", "Down", "Enter");
    await term.waitFor("All done.");
    expect(existsSync(join(tmp.path, "build"))).to.equal(false);
    // The third, identical call ran on the remembered approval: no classifier request, no dialog.
    expect(classifierRequests()).to.have.length(2);
    expect(agentRequests()).to.have.length(4);
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });

  it("--help names --gate and --trust-project, with the old --approve as an alias", async () => {
    term.start(`${process.execPath} ${cliBin} --help`, tmp.path, 160, 60);
    const help = await term.waitFor("KC-EXIT-0");
    expect(help).to.match(/--gate\s+Turn the permission gate on for this run/);
    expect(help).to.match(
      /--trust-project, --no-trust-project\s+Trust, or do not trust.*also -a, --approve, -na, --no-approve/,
    );
  });
});

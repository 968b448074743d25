/**
 * Plan mode in the full terminal UI: the built `knightcode` in tmux against a local model server. /plan shows the
 * plan-mode status, a reply with a plan opens the review dialog with approval preselected, Enter approves it, and the
 * plan's progress shows as a widget; ctrl+alt+p toggles plan mode.
 */
import { join } from "node:path";
import { expect } from "chai";
import { REVIEW_CHOICES, REVIEW_TITLE } from "../../../builtin-extensions/plan-mode/index.js";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { type RecordedRequest, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { textStream } from "../providers/openai-compatible/fixtures.js";
import { type TmuxDriver, useTerminalAndModel } from "./tmux-driver.js";

const toolNames = (r: RecordedRequest | undefined): string[] =>
  ((r?.body?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);

describe("interactive UI: plan mode (tmux, local model server)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-plan-tui-");
  let server: TestServer;
  let term: TmuxDriver;

  useTerminalAndModel((started) => {
    ({ server, term } = started);
  });

  it("/plan, the review dialog (Enter approves), the progress widget; ctrl+alt+p toggles", async () => {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    server.respondInOrder(
      (_r, res) => writeSse(res, textStream("Plan:\n1. Add the greeting\n2. Print it")),
      (_r, res) => writeSse(res, textStream("Greeting added. [DONE:1]")),
    );
    term.start(
      `KNIGHTCODE_AGENT_DIR=${agentDir} ${process.execPath} ${cliBin} --model local/m1`,
      tmp.path,
      110,
      40,
    );
    await term.waitFor("local/m1");
    term.enter("/plan");
    await term.waitFor("plan mode (read-only)");
    term.enter("greet people");
    const dialog = await term.waitFor(REVIEW_CHOICES.keep);
    expect(dialog).to.contain(REVIEW_TITLE);
    const rows = dialog.split("\n");
    expect(rows.find((r) => r.includes(REVIEW_CHOICES.approve))).to.match(/^\s*→/);
    expect(toolNames(server.requests[0])).to.include("read").and.not.include("write");
    term.key("Enter");
    const progress = await term.waitFor("Greeting added.");
    expect(progress).to.contain("☑ 1. Add the greeting").and.contain("▶ 2. Print it");
    expect(progress).to.contain("plan 1/2");
    expect(toolNames(server.requests[1])).to.include("write");
    expect(JSON.stringify(server.requests[1]!.body.messages)).to.contain("Carry out this approved plan");

    term.key("C-M-p");
    await term.waitFor("plan mode (read-only)");
    term.key("C-M-p");
    await term.waitForGone("plan mode (read-only)");
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });
});

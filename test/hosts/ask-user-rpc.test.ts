/**
 * `ask_user` end to end with the built `knightcode`: in RPC mode its questions arrive as select and input dialogs
 * (an answer, an "other" answer, a skipped question, a note), and dismissing a dialog stops the turn; in JSON mode
 * (no UI) it is not offered, and a call made anyway fails saying no one can answer.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { NOTE_TITLE, OTHER_CHOICE, SKIP_CHOICE } from "../../builtin-extensions/ask-user/index.js";
import { cliBin, runCli } from "../helpers/cli.js";
import { RpcProcess } from "../helpers/rpc-process.js";
import { useTempDir } from "../helpers/temp-dir.js";

const QUESTIONS = [
  {
    id: "db",
    text: "Which database?",
    options: [
      { label: "Postgres (Recommended)", description: "what the rest of the stack uses" },
      { label: "SQLite" },
    ],
  },
  {
    id: "name",
    text: "What should the service be called?",
    options: [{ label: "api" }, { label: "backend" }],
  },
  { id: "ci", text: "Add a CI job?", options: [{ label: "yes" }, { label: "no" }] },
];

type Rec = { type: string; [k: string]: any };

describe("ask_user over RPC and in JSON mode", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-ask-user-");

  function script(steps: unknown[]): string {
    const file = join(tmp.path, "script.json");
    writeFileSync(file, JSON.stringify({ steps }));
    return file;
  }

  it("RPC: answers, an 'other' answer, a skipped question and a note come back at once; a dismissal stops the turn", async () => {
    const file = script([
      { toolCalls: [{ id: "ask_1", name: "ask_user", arguments: { questions: QUESTIONS } }] },
      { text: "Thanks, noted.", expect: { lastToolResult: { toolName: "ask_user", isError: false } } },
      { toolCalls: [{ id: "ask_2", name: "ask_user", arguments: { questions: QUESTIONS.slice(0, 1) } }] },
      { text: "THIS-STEP-MUST-NOT-RUN" },
    ]);
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--no-session", "--provider", "scripted", "--script", file],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    const rpc = new RpcProcess(child);
    try {
      const dialogs: Rec[] = [];
      const nextDialog = async () => {
        const dialog = await rpc.waitFor(
          (r) =>
            r.type === "extension_ui_request" &&
            ["select", "input"].includes(String(r.method)) &&
            !dialogs.includes(r),
        );
        dialogs.push(dialog);
        return dialog as Rec;
      };
      expect((await rpc.request("p1", "prompt", { message: "set up the service" })).success).to.equal(true);

      const db = await nextDialog();
      expect(db).to.include({ method: "select", title: "(1/3) Which database?" });
      expect(db.options).to.deep.equal([
        "Postgres (Recommended) — what the rest of the stack uses",
        "SQLite",
        OTHER_CHOICE,
        SKIP_CHOICE,
      ]);
      rpc.send({ type: "extension_ui_response", id: db.id, value: db.options[0] });
      const name = await nextDialog();
      rpc.send({ type: "extension_ui_response", id: name.id, value: OTHER_CHOICE });
      const own = await nextDialog();
      expect(own).to.include({ method: "input", title: "Your answer: What should the service be called?" });
      rpc.send({ type: "extension_ui_response", id: own.id, value: "gateway" });
      const ci = await nextDialog();
      rpc.send({ type: "extension_ui_response", id: ci.id, value: SKIP_CHOICE });
      const note = await nextDialog();
      expect(note).to.include({ method: "input", title: NOTE_TITLE });
      rpc.send({ type: "extension_ui_response", id: note.id, value: "keep it small" });

      const end = (await rpc.waitFor(
        (r) => r.type === "tool_execution_end" && r.toolCallId === "ask_1",
      )) as Rec;
      expect(end.isError).to.equal(false);
      expect(end.result.details).to.deep.equal({
        answers: { db: { label: "Postgres (Recommended)" }, name: { other: "gateway" } },
        skipped: ["ci"],
        note: "keep it small",
      });
      const text: string = end.result.content[0].text;
      expect(text).to.contain("db (Which database?): Postgres (Recommended)");
      expect(text).to.contain("in their own words: gateway").and.contain("Skipped: ci");
      await rpc.waitFor((r) => r.type === "agent_settled");

      expect((await rpc.request("p2", "prompt", { message: "one more question" })).success).to.equal(true);
      const again = await nextDialog();
      rpc.send({ type: "extension_ui_response", id: again.id, cancelled: true });
      const dismissed = (await rpc.waitFor(
        (r) => r.type === "tool_execution_end" && r.toolCallId === "ask_2",
      )) as Rec;
      expect(dismissed.result.details).to.deep.include({ dismissed: true });
      await rpc.waitFor(
        (r) =>
          r.type === "agent_settled" && rpc.records.filter((x) => x.type === "agent_settled").length === 2,
      );
      // The turn stopped: the model was not asked again after the dismissal.
      expect(JSON.stringify(rpc.records)).not.to.contain("THIS-STEP-MUST-NOT-RUN");
    } finally {
      await rpc.end();
      rpc.kill();
    }
  });

  it("JSON mode: not offered without a UI, and a call made anyway says no one can answer", async () => {
    const file = script([
      {
        toolCalls: [{ id: "ask_1", name: "ask_user", arguments: { questions: QUESTIONS.slice(0, 1) } }],
        expect: { tools: ["read"] },
      },
      { text: "ok" },
    ]);
    const plain = await runCli(
      ["--mode", "json", "--no-session", "--provider", "scripted", "--script", file, "go"],
      {
        cwd: tmp.path,
        env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
      },
    );
    const records = plain.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec);
    const refused = records.find((r) => r.type === "tool_execution_end")!;
    expect(refused.result.content[0].text).to.contain('Tool "ask_user" is not available here');

    const forced = await runCli(
      [
        "--mode",
        "json",
        "--no-session",
        "--provider",
        "scripted",
        "--script",
        file,
        "--tools",
        "read,ask_user",
        "go",
      ],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    const end = forced.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec)
      .find((r) => r.type === "tool_execution_end")!;
    expect(end.isError).to.equal(true);
    expect(end.result.content[0].text).to.contain("no one can answer");
  });
});

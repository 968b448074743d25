/**
 * Rows of the spec's json.md that KnightCode did but no test held (docs/spec-coverage.md), through the built
 * `knightcode --mode json` with the scripted model: thinking blocks and tool progress on the wire, `durationMs`
 * absent for a call that never ran, `entry_appended` and `session_info_changed` (a cleared name has no `name`), and
 * U+2028 / U+2029 inside records, which only LF separates. Branch-summary retries (`source: "branchSummary"`, no
 * `reason`) run in a test session.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { runCli } from "../helpers/cli.js";
import { useTempDir } from "../helpers/temp-dir.js";

type WireRecord = { type: string; [key: string]: unknown };

const EXTENSION = `import { Type } from "@sinclair/typebox";
export default (kc: any) => {
  kc.registerTool({
    name: "progress",
    description: "reports progress twice, then finishes",
    parameters: Type.Object({}),
    execute: async (_id: string, _params: unknown, _signal: unknown, onUpdate: any) => {
      onUpdate?.({ content: [{ type: "text", text: "half way" }], details: { step: 1 } });
      onUpdate?.({ content: [{ type: "text", text: "almost" }], details: { step: 2 } });
      return { content: [{ type: "text", text: "finished" }], details: { step: 3 } };
    },
  });
  kc.registerTool({
    name: "forbidden",
    description: "never allowed to run",
    parameters: Type.Object({}),
    execute: async () => ({ content: [{ type: "text", text: "ran anyway" }], details: undefined }),
  });
  kc.on("tool_call", (event: any) =>
    event.toolName === "forbidden" ? { block: true, reason: "forbidden is off limits" } : undefined,
  );
  kc.on("agent_start", () => {
    kc.appendEntry("wire-probe", { note: "kept out of the context" });
    kc.setSessionName("Named run");
  });
  kc.on("agent_end", () => kc.setSessionName(undefined));
};
`;

const SEPARATED = "one\u2028two\u2029three";

describe("spec rows: the JSON event stream (json.md)", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-spec-json-");

  it("streams thinking, tool progress, entries and name changes, and keeps U+2028/U+2029 inside records", async () => {
    const ext = tmp.write("probe.ts", EXTENSION);
    const script = join(tmp.path, "script.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          {
            thinking: "pondering the request",
            toolCalls: [
              { name: "progress", arguments: {}, id: "call_progress" },
              { name: "forbidden", arguments: {}, id: "call_forbidden" },
            ],
          },
          { text: SEPARATED },
        ],
      }),
    );
    const result = await runCli(
      ["--mode", "json", "-e", ext, "--provider", "scripted", "--script", script, "go"],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    expect(result.code, result.stderr).to.equal(0);

    // Records are split on LF only: every line is one JSON record, separators included.
    expect(result.stdout.endsWith("\n")).to.equal(true);
    const lines = result.stdout.slice(0, -1).split("\n");
    const records = lines.map((line) => JSON.parse(line) as WireRecord);
    const textEnd = records.find(
      (r) => r.type === "message_update" && (r.assistantMessageEvent as WireRecord).type === "text_end",
    )!;
    expect((textEnd.assistantMessageEvent as WireRecord).content).to.equal(SEPARATED);
    const final = records.filter((r) => r.type === "message_end").at(-1)!.message as {
      content: { text: string }[];
    };
    expect(final.content[0]!.text).to.equal(SEPARATED);
    // A reader that also broke lines at U+2028/U+2029 (as readline does) would cut a record in pieces.
    const splitAtSeparators = result.stdout.slice(0, -1).split(/[\n\u2028\u2029]/);
    if (result.stdout.includes("\u2028")) expect(splitAtSeparators.length).to.be.greaterThan(lines.length);

    // Thinking blocks: start, deltas and the authoritative end content, with no partial snapshots.
    const nested = records
      .filter((r) => r.type === "message_update")
      .map((r) => r.assistantMessageEvent as WireRecord);
    for (const event of nested) expect(event).to.not.have.property("partial");
    const thinking = nested.filter((e) => String(e.type).startsWith("thinking_"));
    expect(thinking[0]).to.deep.equal({ type: "thinking_start", contentIndex: 0 });
    const deltas = thinking.filter((e) => e.type === "thinking_delta");
    expect(deltas.length).to.be.greaterThan(0);
    for (const delta of deltas)
      expect(Object.keys(delta).sort()).to.deep.equal(["contentIndex", "delta", "type"]);
    expect(deltas.map((d) => d.delta).join("")).to.equal("pondering the request");
    expect(thinking.at(-1)).to.deep.equal({
      type: "thinking_end",
      contentIndex: 0,
      content: "pondering the request",
    });
    const toolStarts = nested.filter((e) => e.type === "toolcall_start");
    expect(toolStarts.map((e) => e.toolName)).to.deep.equal(["progress", "forbidden"]);
    expect(toolStarts[0]).to.include({ contentIndex: 1, id: "call_progress" });

    // Tool progress: each partial result on the wire, with the call's id, name and arguments.
    const updates = records.filter((r) => r.type === "tool_execution_update");
    expect(updates).to.deep.equal([
      {
        type: "tool_execution_update",
        toolCallId: "call_progress",
        toolName: "progress",
        args: {},
        partialResult: { content: [{ type: "text", text: "half way" }], details: { step: 1 } },
      },
      {
        type: "tool_execution_update",
        toolCallId: "call_progress",
        toolName: "progress",
        args: {},
        partialResult: { content: [{ type: "text", text: "almost" }], details: { step: 2 } },
      },
    ]);
    const ends = records.filter((r) => r.type === "tool_execution_end");
    const ran = ends.find((r) => r.toolCallId === "call_progress")!;
    expect(ran).to.include({ toolName: "progress", isError: false });
    expect(ran.durationMs).to.be.a("number").and.to.be.at.least(0);
    // A blocked call did not run: an error result and no durationMs.
    const blocked = ends.find((r) => r.toolCallId === "call_forbidden")!;
    expect(blocked).to.include({ toolName: "forbidden", isError: true });
    expect(blocked).to.not.have.property("durationMs");
    expect(JSON.stringify(blocked.result)).to.contain("forbidden is off limits");

    // entry_appended carries the persisted entry; session_info_changed without name is a cleared name.
    const appended = records.find((r) => r.type === "entry_appended")!;
    expect(appended.entry).to.deep.include({
      type: "custom",
      customType: "wire-probe",
      data: { note: "kept out of the context" },
    });
    const names = records.filter((r) => r.type === "session_info_changed");
    expect(names[0]).to.deep.equal({ type: "session_info_changed", name: "Named run" });
    expect(names.at(-1)).to.deep.equal({ type: "session_info_changed" });
  });

  describe("branch summary retries", () => {
    let t: TestSession | undefined;
    afterEach(async () => {
      await t?.dispose();
      t = undefined;
    });

    it("report source branchSummary and no reason", async () => {
      t = await createTestSession({
        persist: true,
        settings: { retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 } },
        script: [
          { text: "a" },
          { text: "b" },
          { error: { kind: "overloaded", message: "summary server busy" } },
          { text: "what branch two learned" },
        ],
        extensions: [
          (kc: ExtensionAPI) =>
            kc.registerCommand("go", {
              description: "moves to an entry with a summary",
              handler: async (id, ctx) => void (await ctx.navigateTree(id, { summarize: true })),
            }),
        ],
      });
      await t.prompt("one");
      const firstAnswer = t.session.sessionManager.getLeafId()!;
      await t.prompt("two");
      await t.prompt(`/go ${firstAnswer}`);
      const retry = t.events.filter((e) => e.type.startsWith("summarization_retry")).map((e) => ({ ...e }));
      expect(retry).to.have.length(3);
      expect(retry[0]).to.deep.include({
        type: "summarization_retry_scheduled",
        attempt: 1,
        maxAttempts: 3,
        errorMessage: "summary server busy",
      });
      expect(retry[1]).to.deep.equal({ type: "summarization_retry_attempt_start", source: "branchSummary" });
      expect(retry[2]).to.deep.equal({ type: "summarization_retry_finished" });
      const summary = t.session.sessionManager.getBranch().at(-1) as { type: string; summary?: string };
      expect(summary).to.include({ type: "branch_summary", summary: "what branch two learned" });
    });
  });
});

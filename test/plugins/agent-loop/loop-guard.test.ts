/**
 * The doom-loop guard in a session with a UI: a model that repeats the same failing tool call is stopped after
 * `doomLoop.threshold` turns in a row, once the person says so. (Modes without a UI, and --max-turns, are tested
 * through the CLI in test/hosts/cli/loop-limits.test.ts.)
 */

import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";

/** The same malformed call (read without its path) in every answer. */
const malformed = { toolCalls: [{ name: "read", arguments: { pathh: "notes.txt" } }] };
const repeat = <T>(step: T, n: number): T[] => Array.from({ length: n }, () => step);

type Assistant = { role: string; stopReason?: string; errorMessage?: string };

describe("doom-loop guard", () => {
  const sessions: TestSession[] = [];
  afterEach(async () => {
    for (const t of sessions.splice(0)) await t.dispose();
  });
  const open = async (options: TestSessionOptions) => {
    const t = await createTestSession(options);
    sessions.push(t);
    return t;
  };
  const assistants = (t: TestSession) =>
    t
      .eventsOfType("message_end")
      .map((e) => e.message as Assistant)
      .filter((m) => m.role === "assistant");

  it("asks after the same call failed three turns in a row, and stops the run with an error when told to", async () => {
    const t = await open({ script: repeat(malformed, 10) });
    t.answerDialogs(false);
    await t.prompt("read my notes");
    expect(t.dialogs).to.deep.equal(["confirm: The model keeps repeating a failing tool call"]);
    expect(t.toolCalls()).to.have.length(3);
    const last = assistants(t).at(-1)!;
    expect(last.stopReason).to.equal("error");
    expect(last.errorMessage).to.match(
      /^The same tool call failed 3 times in a row: read \{"pathh":"notes.txt"\}/,
    );
    expect(last.errorMessage).to.contain("Stopped at your request");
    expect(t.eventsOfType("agent_settled")).to.deep.equal([{ type: "agent_settled", aborted: false }]);
    // The stop is recorded where provider errors are, and the session takes the next prompt.
    const recorded = t.session.sessionManager.getBranch().at(-1)!;
    expect(recorded.type === "message" && (recorded.message as Assistant).stopReason).to.equal("error");
  });

  it("lets the model go on when the person says so, and asks again after as many failures more", async () => {
    const t = await open({ script: repeat(malformed, 10) });
    t.answerDialogs(true, false);
    await t.prompt("read my notes");
    expect(t.dialogs).to.have.length(2);
    expect(t.toolCalls()).to.have.length(6);
    expect(assistants(t).at(-1)!.stopReason).to.equal("error");
  });

  it("counts a call only while it keeps failing with the same arguments", async () => {
    const differing = [1, 2, 3, 4].map((n) => ({
      toolCalls: [{ name: "read", arguments: { pathh: `notes-${n}.txt` } }],
    }));
    const t = await open({ script: [...differing, { text: "gave up" }] });
    await t.prompt("read my notes");
    expect(t.dialogs).to.deep.equal([]);
    expect(t.lastAssistantText()).to.equal("gave up");
  });

  it("starts counting again after the call succeeded once", async () => {
    const t = await open({
      script: [
        malformed,
        malformed,
        { toolCalls: [{ name: "ls", arguments: {} }] },
        malformed,
        malformed,
        { text: "ok" },
      ],
      settings: { defaultTools: ["+ls"] },
    });
    await t.prompt("look around");
    expect(t.dialogs).to.deep.equal([]);
    expect(t.lastAssistantText()).to.equal("ok");
  });

  it("follows doomLoop.threshold, and doomLoop.enabled: false turns the guard off", async () => {
    const strict = await open({ script: repeat(malformed, 5), settings: { doomLoop: { threshold: 2 } } });
    strict.answerDialogs(false);
    await strict.prompt("read my notes");
    expect(strict.toolCalls()).to.have.length(2);
    expect(assistants(strict).at(-1)!.errorMessage).to.contain("failed 2 times in a row");

    const off = await open({
      script: [...repeat(malformed, 5), { text: "stopped by itself" }],
      settings: { doomLoop: { enabled: false } },
    });
    await off.prompt("read my notes");
    expect(off.dialogs).to.deep.equal([]);
    expect(off.toolCalls()).to.have.length(5);
    expect(off.lastAssistantText()).to.equal("stopped by itself");
  });

  it("asks after the same call succeeded three times in a row, and lets it go on or stops it", async () => {
    const reading = { toolCalls: [{ name: "ls", arguments: {} }] };
    const t = await open({ script: repeat(reading, 10), settings: { defaultTools: ["+ls"] } });
    t.answerDialogs(true, false);
    await t.prompt("look around");
    expect(t.dialogs).to.deep.equal([
      "confirm: The model keeps repeating the same tool call",
      "confirm: The model keeps repeating the same tool call",
    ]);
    expect(t.toolCalls()).to.have.length(6);
    const last = assistants(t).at(-1)!;
    expect(last.errorMessage).to.match(
      /^The same tool call was made 3 times in a row with the same arguments: ls \{\}/,
    );
  });

  it("does not count a call repeated with other calls between", async () => {
    const ls = { toolCalls: [{ name: "ls", arguments: {} }] };
    const find = { toolCalls: [{ name: "find", arguments: { pattern: "*.txt" } }] };
    const t = await open({
      script: [ls, ls, find, ls, ls, find, { text: "done" }],
      settings: { defaultTools: ["+ls", "+find"] },
    });
    await t.prompt("look around");
    expect(t.dialogs).to.deep.equal([]);
    expect(t.lastAssistantText()).to.equal("done");
  });
});

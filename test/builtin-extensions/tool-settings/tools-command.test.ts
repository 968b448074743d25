/** `/tools`: lists and changes tools.json, masking values of keys ending in `Key` in everything it shows. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";

describe("builtin:tool-settings (/tools)", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });
  const shown = () => t!.ui.notifications.map((n) => n.message).join("\n");

  it("lists the managed tools with their defaults and the classifier models", async () => {
    t = await createTestSession();
    await t.prompt("/tools");
    const text = shown();
    expect(text)
      .to.match(/classifier-gate {2}off/)
      .and.match(/ask-user {2}on/);
    expect(text).to.contain("Classifier models: scripted/scripted");
  });

  it("turns a tool on, sets and removes settings, and shows a ...Key value masked", async () => {
    t = await createTestSession();
    await t.prompt("/tools classifier-gate on");
    await t.prompt("/tools classifier-gate model=scripted/scripted");
    await t.prompt("/tools classifier-gate openaiKey=sk-abcdefgh9876");
    await t.prompt("/tools classifier-gate allow=bash(git status*), edit(src/**)");
    await t.prompt("/tools classifier-gate model=");
    const file = join(t.session.agentDir, "tools.json");
    // Each change is confirmed in one line, the value as stored (a key masked).
    expect(t.ui.notifications.map((n) => n.message)).to.deep.equal([
      `classifier-gate on (saved in ${file}; applies from the next tool call)`,
      `classifier-gate: model = scripted/scripted (saved in ${file}; applies from the next tool call)`,
      `classifier-gate: openaiKey = ****9876 (saved in ${file}; applies from the next tool call)`,
      `classifier-gate: allow = bash(git status*), edit(src/**) (saved in ${file}; applies from the next tool call)`,
      `classifier-gate: model removed (saved in ${file}; applies from the next tool call)`,
    ]);
    expect(JSON.parse(readFileSync(file, "utf8"))).to.deep.equal({
      "classifier-gate": {
        enabled: true,
        openaiKey: "sk-abcdefgh9876",
        allow: "bash(git status*), edit(src/**)",
      },
    });
    await t.prompt("/tools");
    expect(shown()).to.contain("openaiKey = ****9876").and.contain("allow = bash(git status*), edit(src/**)");
    expect(shown()).not.to.contain("abcdefgh");
    expect(t.warnings.join("\n") + t.logs.map((l) => l.message).join("\n")).not.to.contain("abcdefgh");
  });

  it("says what is wrong with an unknown tool or a change it cannot read", async () => {
    t = await createTestSession();
    await t.prompt("/tools nosuchtool on");
    await t.prompt("/tools classifier-gate loud");
    const errors = t.ui.notifications.filter((n) => n.level === "error").map((n) => n.message);
    expect(errors[0]).to.contain('Unknown tool "nosuchtool"').and.contain("classifier-gate, ask-user");
    expect(errors[1]).to.contain("Usage: /tools");
  });
});

/** The extension authors' test kit, used as a third party would. */

import type { ExtensionAPI } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";

describe("createTestSession", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("runs a prompt to settlement against scripted steps and records the tool calls", async () => {
    t = await createTestSession({
      script: [{ toolCalls: [{ name: "shout", arguments: { text: "hi" } }] }, { text: "done" }],
      extensions: [
        (kc: ExtensionAPI) =>
          kc.registerTool({
            name: "shout",
            description: "Shout",
            parameters: Type.Object({ text: Type.String() }),
            execute: async (_id, p) => ({
              content: [{ type: "text", text: p.text.toUpperCase() }],
              details: undefined,
            }),
          }),
      ],
    });
    await t.prompt("go");
    expect(t.lastAssistantText()).to.equal("done");
    const [call] = t.toolCalls();
    expect(call).to.deep.include({ toolName: "shout", args: { text: "hi" }, isError: false });
    expect(call!.result!.content[0]).to.deep.equal({ type: "text", text: "HI" });
    expect(t.eventsOfType("agent_settled")).to.have.length(1);
  });

  it("answers dialogs in order and records notifications", async () => {
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) =>
          kc.registerCommand("ask", {
            handler: async (_args, ctx) => {
              const colour = await ctx.ui.select("Colour?", ["red", "blue"]);
              const sure = await ctx.ui.confirm("Sure?");
              ctx.ui.notify(`${colour} ${sure}`);
            },
          }),
      ],
    });
    t.answerDialogs("blue", true);
    await t.prompt("/ask");
    expect(t.dialogs).to.deep.equal(["select: Colour?", "confirm: Sure?"]);
    expect(t.ui.notifications).to.deep.equal([{ message: "blue true", level: "info" }]);
  });

  it("records what extensions write with knightcode.log, tagged with their id", async () => {
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) =>
          kc.registerCommand("check", {
            handler: async () => {
              kc.log.info("checked 3 files");
              kc.log.warn("one file is large");
            },
          }),
      ],
    });
    await t.prompt("/check");
    expect(t.logs.map(({ level, message }) => ({ level, message }))).to.deep.equal([
      { level: "info", message: "checked 3 files" },
      { level: "warn", message: "one file is large" },
    ]);
    expect(t.logs[0]!.extension).to.match(/^sdk:/);
  });
});

/** examples/extensions/status.ts: the status text and widget follow a run. */

import type { ExtensionAPI } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import status from "../../examples/extensions/status.js";

describe("example: status", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("shows working while the run goes on, counts the tool calls, and shows idle when it settles", async () => {
    const seen: (string | undefined)[] = [];
    const probe = (knightcode: ExtensionAPI) =>
      knightcode.registerTool({
        name: "probe",
        description: "Record the status the user sees right now",
        parameters: Type.Object({}),
        async execute() {
          seen.push(t!.ui.status.get("status-example"));
          return { content: [{ type: "text", text: "ok" }], details: undefined };
        },
      });
    t = await createTestSession({
      extensions: [status, probe],
      script: [{ toolCalls: [{ name: "probe" }] }, { toolCalls: [{ name: "probe" }] }, { text: "done" }],
    });
    expect(t.ui.status.has("status-example")).to.equal(false);
    await t.prompt("go");
    expect(seen).to.deep.equal(["working", "working: 1 tool call(s)"]);
    expect(t.ui.status.get("status-example")).to.equal("idle: 2 tool call(s) in the last run");
    expect(t.ui.widgets.get("status-example")).to.deep.equal(["Tools run: probe, probe"]);
  });
});

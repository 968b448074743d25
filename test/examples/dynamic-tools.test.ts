/** examples/extensions/dynamic-tools.ts: optional tools stay inactive until `load_tools` runs. */

import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import dynamicTools from "../../examples/extensions/dynamic-tools.js";
import { sessionInternals } from "../../hosts/sdk/session-internals.js";

describe("example: dynamic-tools", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("activates the optional tools on the loader's call and keeps the active ones", async () => {
    t = await createTestSession({
      extensions: [dynamicTools],
      script: [
        { toolCalls: [{ name: "load_tools" }] },
        { toolCalls: [{ name: "uppercase", arguments: { text: "loud" } }] },
        { text: "done" },
      ],
    });
    const before = sessionInternals(t.session).tools.getActiveTools();
    expect(before).to.include("load_tools").and.include("bash");
    expect(before).to.not.include("uppercase").and.not.include("reverse");
    expect(
      sessionInternals(t.session)
        .tools.getAllTools()
        .map((tool) => tool.name),
    ).to.include.members(["uppercase", "reverse"]);

    await t.prompt("I need the text tools");
    const after = sessionInternals(t.session).tools.getActiveTools();
    expect(after).to.include.members([...before, "uppercase", "reverse"]);
    const upper = t.toolCalls().find((call) => call.toolName === "uppercase")!;
    expect(upper.isError).to.equal(false);
    expect(upper.result!.content[0]).to.deep.equal({ type: "text", text: "LOUD" });
  });
});

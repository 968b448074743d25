/** examples/extensions/permission-gate.ts: annotation-based confirmation of tool calls. */

import type { ExtensionAPI } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import permissionGate, { needsApproval } from "../../examples/extensions/permission-gate.js";

/** Two tools for the gate to judge: one that only reads, one that deletes. */
function sampleTools(knightcode: ExtensionAPI) {
  const ran: string[] = [];
  for (const [name, annotations] of [
    ["peek", { readOnlyHint: true, openWorldHint: false }],
    ["wipe", { destructiveHint: true }],
  ] as const) {
    knightcode.registerTool({
      name,
      description: `The ${name} tool`,
      parameters: Type.Object({}),
      annotations,
      async execute() {
        ran.push(name);
        return { content: [{ type: "text", text: `${name} ran` }], details: undefined };
      },
    });
  }
}

describe("example: permission-gate", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  const session = () =>
    createTestSession({
      extensions: [permissionGate, sampleTools],
      script: [{ toolCalls: [{ name: "peek" }, { name: "wipe" }] }, { text: "done" }],
    });

  it("blocks a destructive call that is not approved, and lets a read-only one through unasked", async () => {
    t = await session();
    t.answerDialogs(false);
    await t.prompt("go");
    expect(t.dialogs).to.deep.equal(["confirm: Allow tool call?"]);
    const [peek, wipe] = t.toolCalls();
    expect(peek).to.deep.include({ toolName: "peek", isError: false });
    expect(wipe).to.deep.include({ toolName: "wipe", isError: true });
    expect((wipe!.result!.content[0] as { text: string }).text).to.contain("wipe was not approved");
  });

  it("runs a destructive call the user approves", async () => {
    t = await session();
    t.answerDialogs(true);
    await t.prompt("go");
    expect(t.dialogs).to.deep.equal(["confirm: Allow tool call?"]);
    const wipe = t.toolCalls().find((call) => call.toolName === "wipe")!;
    expect(wipe.isError).to.equal(false);
    expect(wipe.result!.content[0]).to.deep.equal({ type: "text", text: "wipe ran" });
  });

  it("follows the Codex rule, with MCP's defaults for missing hints", () => {
    expect(needsApproval(undefined)).to.equal(true);
    expect(needsApproval({ readOnlyHint: true })).to.equal(false);
    expect(needsApproval({ readOnlyHint: true, destructiveHint: true })).to.equal(true);
    expect(needsApproval({ destructiveHint: false, openWorldHint: false })).to.equal(false);
    expect(needsApproval({ destructiveHint: false })).to.equal(true);
  });
});

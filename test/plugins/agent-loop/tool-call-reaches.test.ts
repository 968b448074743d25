/** `tool_call` carries `reaches` for a tool that declares `reachesTools`, and only for such a tool. */
import type { ExtensionAPI } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import { createTestSession } from "../../../hosts/testing/test-session.js";

describe("tool_call reaches", () => {
  it("is what reachesTools returns for the call, 'all' when it throws, and absent for other tools", async () => {
    const seen: Record<string, unknown> = {};
    const ext = (kc: ExtensionAPI) => {
      const tool = (name: string, reachesTools?: (input: { target: string }) => "all" | string[]) =>
        kc.registerTool({
          name,
          description: name,
          parameters: Type.Object({ target: Type.String() }),
          ...(reachesTools ? { reachesTools } : {}),
          execute: async () => ({ content: [{ type: "text", text: "ok" }], details: undefined }),
        });
      tool("words", (input) => [input.target, "other"]);
      tool("broken", () => {
        throw new Error("cannot tell");
      });
      tool("plain");
      kc.on("tool_call", (event) => {
        seen[event.toolName] = event.reaches ?? "absent";
        return undefined;
      });
    };
    const s = await createTestSession({
      extensions: [ext],
      script: [
        {
          toolCalls: [
            { name: "words", arguments: { target: "mcp__docs" } },
            { name: "broken", arguments: { target: "x" } },
            { name: "plain", arguments: { target: "x" } },
          ],
        },
        { text: "done" },
      ] as never,
    });
    try {
      await s.prompt("go");
      expect(seen).to.deep.equal({ words: ["mcp__docs", "other"], broken: "all", plain: "absent" });
    } finally {
      await s.dispose();
    }
  });
});

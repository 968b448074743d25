import type { ExtensionAPI } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";

export default function (knightcode: ExtensionAPI) {
  knightcode.registerTool({
    name: "echo",
    description: "Echo the text back",
    parameters: Type.Object({ text: Type.String() }),
    execute: async (_id, params) => ({ content: [{ type: "text", text: params.text }], details: undefined }),
  });
}

/**
 * Tools that stay out of the model's view until asked for.
 *
 * Shows: `defaultActive: false` registers a tool without declaring it to the model; a small `load_tools` tool then
 * turns them on with `setActiveTools`, keeping whatever was already active.
 */
import type { ExtensionAPI } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";

const OPTIONAL_TOOLS = ["uppercase", "reverse"];

export default function (knightcode: ExtensionAPI) {
  knightcode.registerTool({
    name: "uppercase",
    description: "Turn a text into capitals",
    parameters: Type.Object({ text: Type.String() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    defaultActive: false,
    async execute(_toolCallId, params) {
      return { content: [{ type: "text", text: params.text.toUpperCase() }], details: undefined };
    },
  });

  knightcode.registerTool({
    name: "reverse",
    description: "Reverse a text",
    parameters: Type.Object({ text: Type.String() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    defaultActive: false,
    async execute(_toolCallId, params) {
      return { content: [{ type: "text", text: [...params.text].reverse().join("") }], details: undefined };
    },
  });

  knightcode.registerTool({
    name: "load_tools",
    description: `Make the text tools (${OPTIONAL_TOOLS.join(", ")}) available from the next step on`,
    parameters: Type.Object({}),
    annotations: { readOnlyHint: true, openWorldHint: false },
    async execute() {
      const active = knightcode.getActiveTools();
      knightcode.setActiveTools([...new Set([...active, ...OPTIONAL_TOOLS])]);
      return {
        content: [{ type: "text", text: `Loaded: ${OPTIONAL_TOOLS.join(", ")}` }],
        details: { loaded: OPTIONAL_TOOLS },
      };
    },
  });
}

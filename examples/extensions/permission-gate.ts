/**
 * Asks before tool calls that could change things, using the tools' MCP annotations.
 *
 * Shows: a `tool_call` gate (extensions.md, "Tool exposure"). A call needs approval, as in Codex, when its tool says
 * it is destructive, or when it is not read-only and may be destructive or reach an open world (missing hints take
 * MCP's defaults: not read-only, destructive, open world). Without approval the call is blocked with a reason the
 * model reads. Where no one can answer (print mode), `ctx.ui.confirm` resolves `false`, so the gate fails closed.
 */
import type { ExtensionAPI, ToolAnnotations } from "@knightcodeai/cli";

export function needsApproval(hints: ToolAnnotations | undefined): boolean {
  if (hints?.destructiveHint === true) return true;
  if (hints?.readOnlyHint === true) return false;
  return (hints?.destructiveHint ?? true) || (hints?.openWorldHint ?? true);
}

export default function (knightcode: ExtensionAPI) {
  knightcode.on("tool_call", async (event, ctx) => {
    const hints = knightcode.getAllTools().find((tool) => tool.name === event.toolName)?.annotations;
    if (!needsApproval(hints)) return undefined;
    const approved = await ctx.ui.confirm(
      "Allow tool call?",
      `${event.toolName} ${JSON.stringify(event.input)}`,
    );
    if (approved) return undefined;
    return { block: true, reason: `${event.toolName} was not approved` };
  });
}

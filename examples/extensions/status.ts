/**
 * A status line and a widget that follow the agent while it works.
 *
 * Shows: `ctx.ui.setStatus` and `ctx.ui.setWidget` driven by `agent_start`, `tool_execution_end` and
 * `agent_settled`. The interactive mode shows them in the footer and above the editor; other modes ignore them.
 */
import type { ExtensionAPI } from "@knightcodeai/cli";

export default function (knightcode: ExtensionAPI) {
  let toolsRun: string[] = [];

  knightcode.on("agent_start", (_event, ctx) => {
    toolsRun = [];
    ctx.ui.setStatus("status-example", "working");
    ctx.ui.setWidget("status-example", ["Tools run: none yet"]);
  });

  knightcode.on("tool_execution_end", (event, ctx) => {
    toolsRun.push(`${event.toolName}${event.isError ? " (failed)" : ""}`);
    ctx.ui.setStatus("status-example", `working: ${toolsRun.length} tool call(s)`);
    ctx.ui.setWidget("status-example", [`Tools run: ${toolsRun.join(", ")}`]);
  });

  knightcode.on("agent_settled", (_event, ctx) => {
    ctx.ui.setStatus("status-example", `idle: ${toolsRun.length} tool call(s) in the last run`);
  });
}

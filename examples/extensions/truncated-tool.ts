/**
 * A tool with long output that keeps the model's share small.
 *
 * Shows: the "large output" rule of docs/tools.md. The tool keeps the first `MAX_LINES` lines for the model, writes
 * the rest to a temp file and names that file in a notice, so the model can read on if it needs to.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ToolResult } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";

export const MAX_LINES = 20;

export interface CountLinesDetails {
  totalLines: number;
  /** The file with the lines the model did not get, when there were more than `MAX_LINES`. */
  restPath?: string;
}

export default function (knightcode: ExtensionAPI) {
  knightcode.registerTool({
    name: "count_lines",
    description: "Print the numbers from 1 to `count`, one a line",
    parameters: Type.Object({ count: Type.Integer({ minimum: 1, maximum: 1_000_000 }) }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    async execute(_toolCallId, params): Promise<ToolResult<CountLinesDetails>> {
      const lines = Array.from({ length: params.count }, (_, i) => `line ${i + 1}`);
      if (lines.length <= MAX_LINES) {
        return { content: [{ type: "text", text: lines.join("\n") }], details: { totalLines: lines.length } };
      }
      const kept = lines.slice(0, MAX_LINES);
      const rest = lines.slice(MAX_LINES);
      const restPath = join(mkdtempSync(join(tmpdir(), "kc-count-lines-")), "rest.txt");
      writeFileSync(restPath, `${rest.join("\n")}\n`);
      const notice =
        `[Showing lines 1-${MAX_LINES} of ${lines.length}. ` +
        `The other ${rest.length} lines are in ${restPath}]`;
      return {
        content: [{ type: "text", text: `${kept.join("\n")}\n\n${notice}` }],
        details: { totalLines: lines.length, restPath },
      };
    },
  });
}

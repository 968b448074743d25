/**
 * The cap on what one tool result sends to the model (`tools.maxResultBytes`), whichever tool made it: a core tool
 * keeps its own smaller limits, but an extension's or an MCP server's tool may hand back megabytes, and all of it
 * would be sent with every later request. Past the cap, the text parts are joined and written whole to a temp file
 * (as `bash` does with long output), and the model gets their beginning with a notice naming that file.
 */
import type { TextContent, ToolResult } from "../../kernel/index.js";
import { privateTempPath, writePrivateFile } from "../kit/files/private-file.js";
import { formatSize, truncateHead } from "../kit/truncate.js";

/** Room kept for the notice, so text and notice together stay within the cap. */
const NOTICE_BYTES = 512;

/** `result` unchanged when its text is within `maxBytes` (0: no cap), else a copy with its text cut. */
export async function capResult(toolName: string, result: ToolResult, maxBytes: number): Promise<ToolResult> {
  if (maxBytes <= 0) return result;
  const texts = result.content.filter((c): c is TextContent => c.type === "text");
  let total = 0;
  for (const part of texts) total += Buffer.byteLength(part.text, "utf8");
  if (total <= maxBytes) return result;

  const full = texts.map((part) => part.text).join("\n");
  const path = privateTempPath("tool", "txt");
  let where: string;
  try {
    await writePrivateFile(path, full);
    where = `The full output is in ${path}`;
  } catch (error) {
    where = `The full output could not be kept (${(error as Error).message})`;
  }
  const budget = Math.max(0, maxBytes - NOTICE_BYTES);
  const head = truncateHead(full, { maxBytes: budget, maxLines: Number.MAX_SAFE_INTEGER });
  // One line longer than the budget keeps nothing as whole lines: its beginning is shown instead.
  const kept = head.firstLineExceedsLimit ? firstBytes(full, budget) : head.content;
  const notice =
    `[Output truncated: the "${toolName}" result had ${formatSize(total)} of text; the first ` +
    `${formatSize(Buffer.byteLength(kept, "utf8"))} are shown (tools.maxResultBytes is ${maxBytes}). ${where}]`;
  const others = result.content.filter((c) => c.type !== "text");
  return { ...result, content: [{ type: "text", text: `${kept}\n\n${notice}` }, ...others] };
}

/** The first `maxBytes` bytes of `text`, ending on a character boundary. */
function firstBytes(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text.slice(0, maxBytes), "utf8");
  if (buffer.length <= maxBytes) return buffer.toString("utf8");
  let end = maxBytes;
  while (end > 0 && (buffer[end]! & 0xc0) === 0x80) end--;
  return buffer.subarray(0, end).toString("utf8");
}

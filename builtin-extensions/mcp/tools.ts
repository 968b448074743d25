/**
 * An MCP tool as a KnightCode tool: `mcp__<server>__<tool>` in namespace `mcp__<server>` (alias `<server>`, the
 * server's instructions as the namespace's `instructions`), the server's annotations, `outputSchema` and
 * `structuredContent` passed through, `isError` kept as an error result that still carries its data. Text over the
 * usual tool limits (2,000 lines or 50 KB) is cut like a core tool's output: the model gets the start and a notice
 * naming a private (0600) temp file that holds the whole text.
 */
import type {
  ImageContent,
  McpServerConfig,
  TextContent,
  ToolAnnotations,
  ToolDefinition,
  ToolExposure,
  ToolResult,
  TSchema,
} from "@knightcodeai/cli/kit";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  errorMessage,
  formatSize,
  privateTempPath,
  truncateHead,
  writePrivateFile,
} from "@knightcodeai/cli/kit";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpConnection } from "./connection.js";
import { mcpNamespace, mcpToolName } from "./names.js";

/** A server with more tools than this defaults to `deferred` exposure instead of `direct` (docs/mcp.md). */
export const DEFERRED_THRESHOLD = 15;

export interface McpToolDetails {
  server: string;
  tool: string;
  /** The whole text of a result that was cut (`<tmpdir>/knightcode-mcp-<random>.txt`). */
  fullOutputPath?: string;
}

/** The exposure of one tool: `toolExposure[tool]`, else the entry's `exposure`, else by the server's size. */
export function exposureOf(config: McpServerConfig, tool: string, toolCount: number): ToolExposure {
  const own = config.toolExposure?.[tool] ?? config.exposure;
  if (own) return own as ToolExposure;
  return toolCount > DEFERRED_THRESHOLD ? "deferred" : "direct";
}

export function toToolDefinition(
  server: string,
  tool: Tool,
  connection: McpConnection,
  toolCount: number,
): ToolDefinition<TSchema, McpToolDetails> {
  const annotations: ToolAnnotations = {};
  const hints = tool.annotations ?? {};
  if (hints.title ?? tool.title) annotations.title = (hints.title ?? tool.title) as string;
  for (const key of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
    if (typeof hints[key] === "boolean") annotations[key] = hints[key];
  }
  const description = tool.description?.trim() || `${tool.name} (MCP server ${server})`;
  return {
    name: mcpToolName(server, tool.name),
    label: `${server}: ${tool.title ?? tool.name}`,
    description,
    parameters: tool.inputSchema as unknown as TSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as unknown as TSchema } : {}),
    exposure: exposureOf(connection.config, tool.name, toolCount),
    namespace: {
      name: mcpNamespace(server),
      aliases: [server],
      ...(connection.config.description ? { description: connection.config.description } : {}),
      ...(connection.instructions ? { instructions: connection.instructions } : {}),
    },
    annotations,
    async execute(_id, params, signal) {
      const details = { server, tool: tool.name };
      let result: CallToolResult;
      try {
        result = await connection.callTool(tool.name, (params ?? {}) as Record<string, unknown>, signal);
      } catch (error) {
        return {
          content: [{ type: "text", text: `MCP ${server}/${tool.name} failed: ${errorMessage(error)}` }],
          details,
          isError: true,
        };
      }
      return toToolResult(result, details);
    },
  };
}

/** An MCP call result as a tool result. */
export async function toToolResult(
  result: CallToolResult,
  details: McpToolDetails,
): Promise<ToolResult<McpToolDetails>> {
  const content: (TextContent | ImageContent)[] = [];
  for (const block of result.content ?? []) {
    switch (block.type) {
      case "text":
        content.push({ type: "text", text: block.text });
        break;
      case "image":
        content.push({ type: "image", data: block.data, mimeType: block.mimeType });
        break;
      case "audio":
        content.push({
          type: "text",
          text: `[audio ${block.mimeType}, ${block.data.length} base64 characters]`,
        });
        break;
      case "resource_link":
        content.push({ type: "text", text: `[resource ${block.name}: ${block.uri}]` });
        break;
      case "resource": {
        const resource = block.resource as { uri: string; mimeType?: string; text?: string; blob?: string };
        content.push({
          type: "text",
          text:
            resource.text !== undefined
              ? `[resource ${resource.uri}]\n${resource.text}`
              : `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ""}, binary]`,
        });
        break;
      }
    }
  }
  if (content.length === 0 && result.structuredContent !== undefined) {
    content.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  }
  if (content.length === 0)
    content.push({ type: "text", text: result.isError ? "(error, no details)" : "(no output)" });
  const capped = await capText(content, details);
  return {
    content: capped.content,
    details: capped.details,
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    ...(result.isError ? { isError: true } : {}),
  };
}

/**
 * The text blocks cut to the tool limits when together they are over them: one block with the start of the text
 * and a notice, the whole text in a private temp file (when it can be written), images kept after it.
 */
async function capText(
  content: (TextContent | ImageContent)[],
  details: McpToolDetails,
): Promise<{ content: (TextContent | ImageContent)[]; details: McpToolDetails }> {
  const texts = content.filter((c): c is TextContent => c.type === "text");
  const text = texts.map((c) => c.text).join("\n");
  const cut = truncateHead(text);
  if (!cut.truncated) return { content, details };
  const path = privateTempPath("mcp", "txt");
  let where = "";
  try {
    await writePrivateFile(path, text);
    where = ` The whole result is in ${path}; read it in parts (offset and limit) or search it.`;
  } catch (error) {
    where = ` The whole result could not be saved: ${errorMessage(error)}.`;
  }
  // A first line over the byte limit leaves no whole line to keep; its first bytes are better than nothing.
  const kept = cut.content || firstBytes(text, DEFAULT_MAX_BYTES);
  const notice = `[MCP result of ${details.server}/${details.tool} truncated: ${cut.totalLines} lines, ${formatSize(cut.totalBytes)}; showing the first ${DEFAULT_MAX_LINES} lines or ${formatSize(DEFAULT_MAX_BYTES)}.${where}]`;
  return {
    content: [{ type: "text", text: `${kept}\n\n${notice}` }, ...content.filter((c) => c.type !== "text")],
    details: { ...details, ...(where.includes(path) ? { fullOutputPath: path } : {}) },
  };
}

/** The first `maxBytes` UTF-8 bytes of `text`, ending on a whole character. */
function firstBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text.slice(0, maxBytes), "utf8");
  let end = Math.min(bytes.length, maxBytes);
  // Back off a character cut in two (continuation bytes are 10xxxxxx).
  if (end < bytes.length) while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}

/**
 * An MCP tool as a KnightCode tool: `mcp__<server>__<tool>` in namespace `mcp__<server>` (alias `<server>`, the
 * server's instructions as the namespace's `instructions`), the server's annotations, `outputSchema` and
 * `structuredContent` passed through, `isError` kept as an error result that still carries its data.
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
import { errorMessage } from "@knightcodeai/cli/kit";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpConnection } from "./connection.js";
import { mcpNamespace, mcpToolName } from "./names.js";

/** A server with more tools than this defaults to `deferred` exposure instead of `direct` (docs/mcp.md). */
export const DEFERRED_THRESHOLD = 15;

export interface McpToolDetails {
  server: string;
  tool: string;
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
      // callTool waits for a server still connecting and tries a failed one once more.
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
export function toToolResult(result: CallToolResult, details: McpToolDetails): ToolResult<McpToolDetails> {
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
  return {
    content,
    details,
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    ...(result.isError ? { isError: true } : {}),
  };
}

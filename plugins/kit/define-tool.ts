import type { TSchema } from "@sinclair/typebox";
import type { ToolDefinition } from "../../kernel/index.js";

/** Identity helper that keeps the parameter type inference of a tool definition. */
export function defineTool<TParams extends TSchema, TDetails = unknown>(
  tool: ToolDefinition<TParams, TDetails>,
): ToolDefinition<TParams, TDetails> {
  return tool;
}

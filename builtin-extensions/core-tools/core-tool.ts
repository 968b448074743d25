/** The shape every core tool factory returns. */
import type {
  ExtensionToolContext,
  ToolDefinition,
  ToolResult,
  ToolUpdateCallback,
} from "@knightcodeai/cli/kit";
import type { Static, TSchema } from "@sinclair/typebox";

/**
 * A `ToolDefinition` whose `execute` also runs without the trailing arguments: an extension that wraps a core tool
 * can call `tool.execute(id, params, signal, onUpdate)` (as extensions written for pi do) and the tool works in
 * the folder its factory was given.
 */
export type CoreTool<TParams extends TSchema, TDetails> = Omit<
  ToolDefinition<TParams, TDetails>,
  "execute"
> & {
  execute(
    toolCallId: string,
    params: Static<TParams>,
    signal?: AbortSignal,
    onUpdate?: ToolUpdateCallback<TDetails>,
    ctx?: ExtensionToolContext,
  ): Promise<ToolResult<TDetails>>;
};

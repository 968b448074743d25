/** The tool contract (extensions.md: Tools, Tool exposure). */
import type { Static, TSchema } from "@sinclair/typebox";
import type { ExtensionContext, ViewNode } from "./context.js";
import type { ImageContent, NestedCalls, TextContent, Usage } from "./messages.js";

export type ToolExposure = "direct" | "model-only" | "codemode" | "deferred" | "hidden";

/** MCP tool annotation hints. Missing hints take MCP's defaults: not read-only, may be destructive, open world. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolNamespace {
  name: string;
  aliases?: string[];
  description?: string;
  instructions?: string;
}

export interface ToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details: TDetails;
  structuredContent?: unknown;
  /** Report a failure that still carries data. */
  isError?: boolean;
  /** Skip the automatic follow-up request, if every result of the batch agrees. */
  terminate?: boolean;
  /** Usage of model calls the tool made itself. */
  usage?: Usage;
  nestedCalls?: NestedCalls;
  /**
   * A declarative view of the result, for clients that draw views (the app-server's `toolCall` item). Display only:
   * the model gets `content`. A view that is invalid or over 64 KiB as JSON is dropped and the text shows instead.
   */
  view?: ViewNode;
}

export type ToolUpdateCallback<TDetails = unknown> = (partial: ToolResult<TDetails>) => void;

export interface ExecuteToolOptions {
  signal?: AbortSignal;
  onUpdate?: ToolUpdateCallback;
}

/** What `ctx.tools` lists: the tools a tool may call through `ctx.executeTool()`. */
export interface CallableToolInfo {
  name: string;
  description: string;
  parameters: TSchema;
  outputSchema?: TSchema;
  namespace?: ToolNamespace;
  annotations?: ToolAnnotations;
}

/** The context a tool's `execute()` receives: the extension context plus nested tool calls. */
export interface ExtensionToolContext extends ExtensionContext {
  readonly tools: CallableToolInfo[];
  /** Never rejects: failures come back as results with `isError: true`. */
  executeTool(name: string, args: unknown, options?: ExecuteToolOptions): Promise<ToolResult>;
}

export interface ToolLoadoutEntry {
  name: string;
  description: string;
  /** The schemas, so an orchestrating tool can describe the tools it lists (codemode renders declarations). */
  parameters: TSchema;
  outputSchema?: TSchema;
  exposure: ToolExposure;
  namespace?: ToolNamespace;
  promptGuidelines?: string[];
}

export interface ToolLoadout {
  declared: ToolLoadoutEntry[];
  callable: ToolLoadoutEntry[];
  all: ToolLoadoutEntry[];
}

export interface ToolLoadoutResult {
  descriptions?: Record<string, string>;
  hiddenDeclarations?: string[];
}

export interface ToolDefinition<TParams extends TSchema = TSchema, TDetails = unknown> {
  name: string;
  /** Short human label for renderers. */
  label?: string;
  description: string;
  parameters: TParams;
  outputSchema?: TSchema;
  /** One line for the system prompt's tool list. */
  promptSnippet?: string;
  promptGuidelines?: string[];
  exposure?: ToolExposure;
  defaultActive?: boolean;
  namespace?: ToolNamespace;
  annotations?: ToolAnnotations;
  executionMode?: "parallel" | "sequential";
  /** Compatibility shim run on raw arguments before validation. */
  prepareArguments?(raw: unknown): unknown;
  prepareLoadout?(loadout: ToolLoadout): ToolLoadoutResult | undefined;
  reachesTools?(input: Static<TParams>): "all" | string[];
  execute(
    toolCallId: string,
    params: Static<TParams>,
    signal: AbortSignal | undefined,
    onUpdate: ToolUpdateCallback<TDetails> | undefined,
    ctx: ExtensionToolContext,
  ): Promise<ToolResult<TDetails>>;
  renderCall?(args: Static<TParams>, options: ToolRenderOptions): unknown;
  renderResult?(result: ToolResult<TDetails>, options: ToolRenderOptions): unknown;
}

export interface ToolRenderOptions {
  expanded: boolean;
  isPartial: boolean;
  isError?: boolean;
  cwd: string;
  /**
   * What the host draws to: the terminal (absent or `"terminal"`), or an HTML export (`"html"`). For `"html"` a
   * renderer may return an {@link HtmlRendering}; a string is shown as escaped text, anything else falls back to
   * the exporter's own rendering.
   */
  target?: RenderTarget;
}

export type RenderTarget = "terminal" | "html";

/**
 * What a renderer returns for the `"html"` target: a fragment inserted into the export as it is. The renderer
 * escapes what it takes from the session itself (arguments, output), and the fragment must stay self-contained:
 * no scripts, no network references (the export is opened offline).
 */
export interface HtmlRendering {
  html: string;
}

export interface ToolRenderers {
  renderCall?(args: unknown, options: ToolRenderOptions): unknown;
  renderResult?(result: ToolResult, options: ToolRenderOptions): unknown;
}

/** `(toolName, next) => renderers`: `next()` asks the rest of the chain, then the tool itself. */
export type ToolRendererResolver = (
  toolName: string,
  next: () => ToolRenderers | undefined,
) => ToolRenderers | undefined;

/** What `getAllTools()` reports for each registered tool. */
export interface ToolInfo {
  name: string;
  description: string;
  parameters: TSchema;
  exposure: ToolExposure;
  namespace?: ToolNamespace;
  annotations?: ToolAnnotations;
  reachesTools: boolean;
  /** Owner id of the extension that registered it. */
  owner: string;
}

/**
 * Runs tool calls through the full pipeline: reachability, argument validation, the `tool_call` gate, execution,
 * `tool_result` patches, and the `tool_execution_*` events. Model-issued calls and nested `ctx.executeTool()`
 * calls share it; nested ones carry `parentToolCallId` and ids `<parent>/<n>`.
 */
import type {
  CallableToolInfo,
  ExtensionContext,
  ExtensionToolContext,
  HookBus,
  NestedCallRecord,
  ToolCall,
  ToolResult,
  ToolResultPatch,
  Usage,
} from "../../kernel/index.js";
import { errorMessage } from "../../kernel/index.js";
import { addUsage, emptyUsage as emptyUsageOf } from "../kit/usage.js";
import { toJsonSafe } from "../kit/util/safe-json.js";
import type { ToolRegistry } from "../tool-registry/tool-registry.js";

export interface ToolOutcome {
  toolCallId: string;
  toolName: string;
  result: ToolResult;
  isError: boolean;
  /** Set when the tool ran; absent for unknown, invalid and blocked calls. */
  durationMs?: number;
}

interface CallOptions {
  signal: AbortSignal | undefined;
  parentToolCallId?: string;
  onUpdate?: (partial: ToolResult) => void;
  /** Model calls may reach the declared (active) tools; nested calls reach the callable ones. */
  fromModel: boolean;
}

/** Bounds of the nested-call record kept on a tool result (extensions.md, Tools). */
export const NESTED_LIMITS = Object.freeze({
  callArgumentBytes: 8 * 1024,
  resultArgumentBytes: 32 * 1024,
  calls: 256,
});

interface NestedRecord {
  calls: NestedCallRecord[];
  argumentBytes: number;
  complete: boolean;
}

export class ToolRunner {
  private sequential: Promise<unknown> = Promise.resolve();
  private readonly nestedCounters = new Map<string, number>();
  /** Usage of finished nested calls, per calling tool call, added to that call's result. */
  private readonly nestedUsage = new Map<string, Usage>();
  /** The bounded record of nested calls at every depth, per model-issued tool call. */
  private readonly nestedRecords = new Map<string, NestedRecord>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly bus: HookBus,
    private readonly context: () => ExtensionContext,
  ) {}

  /** Runs one assistant message's calls: in parallel, except tools that ask for sequential execution. */
  runBatch(calls: readonly ToolCall[], signal: AbortSignal | undefined): Promise<ToolOutcome[]> {
    return Promise.all(
      calls.map((call) => this.run(call.id, call.name, call.arguments, { signal, fromModel: true })),
    );
  }

  /** What `ctx.tools` lists: tools other tools may call. */
  callableTools(): CallableToolInfo[] {
    return this.registry
      .getAllTools()
      .filter((t) => this.isCallable(t.name))
      .map((t) => {
        const definition = this.registry.get(t.name)!.definition;
        return {
          name: t.name,
          description: t.description,
          parameters: t.parameters,
          ...(definition.outputSchema ? { outputSchema: definition.outputSchema } : {}),
          ...(t.namespace ? { namespace: t.namespace } : {}),
          ...(t.annotations ? { annotations: t.annotations } : {}),
        };
      });
  }

  private isCallable(name: string): boolean {
    return this.registry.isCallable(name);
  }

  private isDeclared(name: string): boolean {
    return this.registry.isDeclared(name);
  }

  async run(toolCallId: string, toolName: string, args: unknown, options: CallOptions): Promise<ToolOutcome> {
    const parent = options.parentToolCallId ? { parentToolCallId: options.parentToolCallId } : {};
    await this.bus.emit("tool_execution_start", { toolCallId, toolName, args, ...parent }, this.context());
    const finish = async (
      result: ToolResult,
      isError: boolean,
      durationMs?: number,
    ): Promise<ToolOutcome> => {
      result = this.writable(toolName, result);
      const outcome: ToolOutcome = {
        toolCallId,
        toolName,
        result,
        isError,
        ...(durationMs !== undefined ? { durationMs } : {}),
      };
      await this.bus.emit(
        "tool_execution_end",
        {
          toolCallId,
          toolName,
          result,
          isError,
          ...(durationMs !== undefined ? { durationMs } : {}),
          ...parent,
        },
        this.context(),
      );
      return outcome;
    };
    const fail = (text: string) => finish({ content: [{ type: "text", text }], details: undefined }, true);

    const tool = this.registry.get(toolName);
    if (!tool) return fail(`Tool "${toolName}" does not exist.`);
    const reachable = options.fromModel ? this.isDeclared(toolName) : this.isCallable(toolName);
    if (!reachable) return fail(`Tool "${toolName}" is not available here.`);
    const checked = this.registry.checkArguments(toolName, args);
    if (!checked.ok) return fail(checked.error);
    const input = checked.value;

    const decision = await this.bus.gate(
      "tool_call",
      { toolCallId, toolName, input, ...parent },
      this.context(),
      {
        failClosed: (error, owner) => ({
          block: true,
          reason: `the tool_call handler of ${owner.id} failed (${errorMessage(error)})`,
        }),
        isDecision: (r) => r?.block === true,
      },
    );
    if (decision?.block) return fail(`Tool call blocked${decision.reason ? `: ${decision.reason}` : "."}`);
    if (options.signal?.aborted) return fail("Tool call skipped: the run was aborted.");

    const execute = async (): Promise<{ result: ToolResult; isError: boolean; durationMs: number }> => {
      const started = performance.now();
      try {
        const result = await this.failingOnFault(
          tool.owner.id,
          tool.definition.execute(
            toolCallId,
            input,
            options.signal,
            (partial) => this.update(toolCallId, toolName, input, partial, options),
            this.toolContext(toolCallId, options.signal),
          ),
        );
        const durationMs = performance.now() - started;
        if (!result || !Array.isArray(result.content)) {
          return {
            result: {
              content: [{ type: "text", text: `Tool "${toolName}" returned no content array.` }],
              details: undefined,
            },
            isError: true,
            durationMs,
          };
        }
        return { result, isError: result.isError === true, durationMs };
      } catch (error) {
        const text = errorMessage(error);
        return {
          result: { content: [{ type: "text", text }], details: undefined },
          isError: true,
          durationMs: performance.now() - started,
        };
      }
    };
    const ran =
      tool.definition.executionMode === "sequential" ? await this.inSequence(execute) : await execute();
    this.attachNested(toolCallId, ran.result, options.parentToolCallId === undefined);

    const patched = await this.bus.transform(
      "tool_result",
      { ...ran.result, isError: ran.isError },
      this.context(),
      {
        toEvent: (v) => ({
          toolCallId,
          toolName,
          input,
          content: v.content,
          details: v.details,
          ...(v.structuredContent !== undefined ? { structuredContent: v.structuredContent } : {}),
          isError: v.isError,
          ...parent,
        }),
        fold: applyPatch,
      },
    );
    const { isError, ...result } = patched;
    return finish(result, isError, ran.durationMs);
  }

  /**
   * The call's result, or its failure when the process-level handlers blame the tool's extension for an exception
   * outside the call (its timer threw) while the call runs: the call fails with that error, the run goes on.
   */
  private async failingOnFault<T>(owner: string, running: Promise<T>): Promise<T> {
    let stop: () => void = () => {};
    const fault = new Promise<never>((_, reject) => {
      stop = this.bus.watchFaults(owner, (error) =>
        reject(
          new Error(`${owner}, which provides this tool, failed outside the call: ${errorMessage(error)}`),
        ),
      );
    });
    try {
      return await Promise.race([running, fault]);
    } finally {
      stop();
    }
  }

  /**
   * The result with any `details` or `structuredContent` JSON cannot write (circular, a BigInt, a throwing getter)
   * replaced, reported against the tool's extension: the session file, the JSON stream and RPC all write it.
   */
  private writable(toolName: string, result: ToolResult): ToolResult {
    const details = toJsonSafe(result.details, "details");
    const structured = toJsonSafe(result.structuredContent, "structuredContent");
    const replaced = [...details.replaced, ...structured.replaced];
    if (replaced.length === 0) return result;
    const owner = this.registry.get(toolName)?.owner ?? { id: "unknown", order: Number.MAX_SAFE_INTEGER };
    this.bus.report(
      owner,
      `tool ${toolName}`,
      new Error(`the result of tool "${toolName}" cannot be written as JSON: ${replaced.join("; ")}`),
    );
    return {
      ...result,
      details: details.value,
      ...(result.structuredContent !== undefined ? { structuredContent: structured.value } : {}),
    };
  }

  private update(
    toolCallId: string,
    toolName: string,
    args: unknown,
    partialResult: ToolResult,
    options: CallOptions,
  ): void {
    options.onUpdate?.(partialResult);
    if (!this.bus.has("tool_execution_update")) return;
    const parent = options.parentToolCallId ? { parentToolCallId: options.parentToolCallId } : {};
    void this.bus.emit(
      "tool_execution_update",
      { toolCallId, toolName, args, partialResult, ...parent },
      this.context(),
    );
  }

  private toolContext(toolCallId: string, signal: AbortSignal | undefined): ExtensionToolContext {
    const base = this.context();
    return Object.create(base, {
      tools: { get: () => this.callableTools(), enumerable: true },
      executeTool: {
        enumerable: true,
        value: (
          name: string,
          args: unknown,
          options: { signal?: AbortSignal; onUpdate?: (p: ToolResult) => void } = {},
        ) => {
          const n = (this.nestedCounters.get(toolCallId) ?? 0) + 1;
          this.nestedCounters.set(toolCallId, n);
          return this.run(`${toolCallId}/${n}`, name, args, {
            signal: options.signal ?? signal,
            parentToolCallId: toolCallId,
            ...(options.onUpdate ? { onUpdate: options.onUpdate } : {}),
            fromModel: false,
          }).then((outcome) => {
            this.recordNested(toolCallId, outcome, args);
            return { ...outcome.result, ...(outcome.isError ? { isError: true } : {}) };
          });
        },
      },
    }) as ExtensionToolContext;
  }

  /** A nested call finished: its usage goes to its caller, its record to the model-issued call at the root. */
  private recordNested(parentId: string, outcome: ToolOutcome, args: unknown): void {
    if (outcome.result.usage) {
      this.nestedUsage.set(
        parentId,
        addUsage(this.nestedUsage.get(parentId) ?? emptyUsageOf(), outcome.result.usage),
      );
    }
    const rootId = parentId.split("/")[0]!;
    const record = this.nestedRecords.get(rootId) ?? { calls: [], argumentBytes: 0, complete: true };
    this.nestedRecords.set(rootId, record);
    if (record.calls.length >= NESTED_LIMITS.calls) {
      record.complete = false;
      return;
    }
    const text = outcome.isError
      ? outcome.result.content.map((c) => (c.type === "text" ? c.text : "")).join("")
      : "";
    const entry: NestedCallRecord = {
      toolCallId: outcome.toolCallId,
      toolName: outcome.toolName,
      status:
        outcome.durationMs === undefined && outcome.isError ? "blocked" : outcome.isError ? "error" : "ok",
      ...(outcome.durationMs !== undefined ? { durationMs: outcome.durationMs } : {}),
      ...(outcome.isError ? { error: text.slice(0, 1000) } : {}),
    };
    const json = JSON.stringify(args ?? {});
    const size = Buffer.byteLength(json, "utf8");
    if (
      size <= NESTED_LIMITS.callArgumentBytes &&
      record.argumentBytes + size <= NESTED_LIMITS.resultArgumentBytes
    ) {
      entry.arguments = (args ?? {}) as Record<string, unknown>;
      record.argumentBytes += size;
    } else {
      record.complete = false;
    }
    record.calls.push(entry);
  }

  /** Adds nested usage to the call's own, and (for a model-issued call) the record of its nested calls. */
  private attachNested(toolCallId: string, result: ToolResult, isRoot: boolean): void {
    const usage = this.nestedUsage.get(toolCallId);
    this.nestedUsage.delete(toolCallId);
    this.nestedCounters.delete(toolCallId);
    if (usage) result.usage = addUsage(result.usage ?? emptyUsageOf(), usage);
    if (!isRoot) return;
    const record = this.nestedRecords.get(toolCallId);
    this.nestedRecords.delete(toolCallId);
    if (record) result.nestedCalls = { calls: record.calls, complete: record.complete };
  }

  private inSequence<T>(work: () => Promise<T>): Promise<T> {
    const run = this.sequential.then(work, work);
    this.sequential = run.catch(() => {});
    return run;
  }
}

/**
 * Folds one `tool_result` handler's patch. A patch that replaces `content` without giving `structuredContent`
 * drops the old structured data, so a redaction cannot leak through it.
 */
function applyPatch(
  value: ToolResult & { isError: boolean },
  patch: ToolResultPatch,
): ToolResult & { isError: boolean } {
  if (typeof patch !== "object" || patch === null) return value;
  const next = { ...value };
  if (patch.content !== undefined) {
    if (!Array.isArray(patch.content)) throw new TypeError("tool_result: `content` must be an array");
    next.content = patch.content;
    if (!("structuredContent" in patch)) delete next.structuredContent;
  }
  if ("details" in patch) next.details = patch.details;
  if ("structuredContent" in patch) next.structuredContent = patch.structuredContent;
  if (typeof patch.isError === "boolean") next.isError = patch.isError;
  return next;
}

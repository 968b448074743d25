/**
 * Runs tool calls through the full pipeline: reachability, argument validation, the `tool_call` gate, execution,
 * `tool_result` patches, and the `tool_execution_*` events. Model-issued calls and nested `ctx.executeTool()`
 * calls share it; nested ones carry `parentToolCallId` and ids `<parent>/<n>`.
 *
 * A stranger's code must not hold a run for ever: `tool_call` handlers have `gates.timeoutMs` to answer; after an
 * abort, a gate or tool that ignores its signal is given `ABORT_GRACE_MS`, then the call is recorded as aborted
 * and whatever it answers later is dropped. What a model-issued call's result sends to the model is capped at
 * `tools.maxResultBytes` (result-cap.ts).
 */
import type {
  CallableToolInfo,
  ExtensionContext,
  ExtensionToolContext,
  HookBus,
  NestedCallRecord,
  ToolCall,
  ToolCallEvent,
  ToolDefinition,
  ToolResult,
  ToolResultPatch,
  Usage,
} from "../../kernel/index.js";
import { errorMessage } from "../../kernel/index.js";
import { addUsage, emptyUsage as emptyUsageOf } from "../kit/usage.js";
import { toJsonSafe } from "../kit/util/safe-json.js";
import type { ToolRegistry } from "../tool-registry/tool-registry.js";
import { capResult } from "./result-cap.js";

/** How long a gate or tool may go on after an abort before its call is recorded as aborted without it. */
export const ABORT_GRACE_MS = 2_000;

/** Limits read at each call, so a settings change applies to the next one. */
export interface ToolRunnerLimits {
  /** `gates.timeoutMs`: time each `tool_call` handler has to answer (0: none). */
  gateTimeoutMs: number;
  /** `tools.maxResultBytes`: text a model-issued call's result may send to the model (0: no cap). */
  maxResultBytes: number;
}

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
  /** Tools executing now, by call id: what a run that cannot finish is waiting for. */
  private readonly executing = new Map<string, { toolName: string; owner: string }>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly bus: HookBus,
    private readonly context: () => ExtensionContext,
    private readonly limits: () => ToolRunnerLimits = () => ({ gateTimeoutMs: 0, maxResultBytes: 0 }),
  ) {}

  /** The tools executing now, as `the tool "name" of <owner>`. */
  pending(): string[] {
    return [...this.executing.values()].map((t) => `the tool "${t.toolName}" of ${t.owner}`);
  }

  /**
   * Runs one assistant message's calls: in parallel, unless one of them is a tool that asks for sequential
   * execution; then, as in the peer, the whole batch runs one call after another in the message's order, each
   * finished (its `tool_call` gate, execution, `tool_result` and `tool_execution_end`) before the next starts, so
   * a later call's gate sees what the earlier ones did.
   */
  async runBatch(calls: readonly ToolCall[], signal: AbortSignal | undefined): Promise<ToolOutcome[]> {
    const one = (call: ToolCall) => this.run(call.id, call.name, call.arguments, { signal, fromModel: true });
    const sequential = calls.some(
      (call) => this.registry.get(call.name)?.definition.executionMode === "sequential",
    );
    if (!sequential) return Promise.all(calls.map(one));
    const outcomes: ToolOutcome[] = [];
    for (const call of calls) outcomes.push(await one(call));
    return outcomes;
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

  /** What a reaching tool's call may reach; a `reachesTools` that throws counts as reaching everything. */
  private reachesOf(definition: ToolDefinition, input: unknown): "all" | string[] | undefined {
    if (typeof definition.reachesTools !== "function") return undefined;
    try {
      const reaches = definition.reachesTools(input);
      return reaches === "all" || Array.isArray(reaches) ? reaches : "all";
    } catch {
      return "all";
    }
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
    // The gate event outlives the gate: usage its handlers add (a classifier's) goes into the result.
    let gateEvent: ToolCallEvent | undefined;
    const finish = async (
      result: ToolResult,
      isError: boolean,
      durationMs?: number,
    ): Promise<ToolOutcome> => {
      if (gateEvent?.usage)
        result = { ...result, usage: addUsage(result.usage ?? emptyUsageOf(), gateEvent.usage) };
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
    const fail = (text: string, details?: unknown) =>
      finish({ content: [{ type: "text", text }], details }, true);

    const tool = this.registry.get(toolName);
    if (!tool) return fail(`Tool "${toolName}" does not exist.`);
    const reachable = options.fromModel ? this.isDeclared(toolName) : this.isCallable(toolName);
    if (!reachable) return fail(`Tool "${toolName}" is not available here.`);
    const checked = this.registry.checkArguments(toolName, args);
    if (!checked.ok) return fail(checked.error);
    const input = checked.value;

    const limits = this.limits();
    const reaches = this.reachesOf(tool.definition, input);
    gateEvent = { toolCallId, toolName, input, ...parent, ...(reaches ? { reaches } : {}) };
    const gated = await untilAbandoned(
      this.bus.gate("tool_call", gateEvent, this.context(), {
        failClosed: (error, owner) => ({
          block: true,
          reason: `the tool_call handler of ${owner.id} failed (${errorMessage(error)})`,
        }),
        isDecision: (r) => r?.block === true,
        timeoutMs: limits.gateTimeoutMs,
      }),
      options.signal,
    );
    if (gated.abandoned) {
      return fail(
        `Tool call aborted: its tool_call handlers had not answered ${ABORT_GRACE_MS} ms after the abort.`,
      );
    }
    const decision = gated.value;
    if (decision?.block)
      return fail(`Tool call blocked${decision.reason ? `: ${decision.reason}` : "."}`, decision.details);
    if (options.signal?.aborted) return fail("Tool call skipped: the run was aborted.");

    let abandoned = false;
    const execute = async (): Promise<{ result: ToolResult; isError: boolean; durationMs: number }> => {
      const started = monotonicMs();
      this.executing.set(toolCallId, { toolName, owner: tool.owner.id });
      try {
        const running = this.failingOnFault(
          tool.owner.id,
          this.bus.enter(() =>
            tool.definition.execute(
              toolCallId,
              input,
              options.signal,
              (partial) => {
                // Updates of a call already recorded as aborted would describe a result that is dropped.
                if (!abandoned) this.update(toolCallId, toolName, input, partial, options);
              },
              this.toolContext(toolCallId, options.signal),
            ),
          ),
        );
        const outcome = await untilAbandoned(Promise.resolve(running), options.signal);
        if (outcome.abandoned) {
          abandoned = true;
          return {
            result: {
              content: [
                {
                  type: "text",
                  text: `Tool call aborted: "${toolName}" had not stopped ${ABORT_GRACE_MS} ms after the abort; a result it sends later is dropped.`,
                },
              ],
              details: undefined,
            },
            isError: true,
            durationMs: monotonicMs() - started,
          };
        }
        const result = outcome.value;
        const durationMs = monotonicMs() - started;
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
          durationMs: monotonicMs() - started,
        };
      } finally {
        this.executing.delete(toolCallId);
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
    const { isError, ...patchedResult } = patched;
    // Only what reaches the model is capped: a nested call's result goes to the tool that made it.
    const result = options.fromModel
      ? await capResult(toolName, patchedResult, limits.maxResultBytes)
      : patchedResult;
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
 * `work`'s value, unless `signal` aborts and `work` has not settled `ABORT_GRACE_MS` later. The grace timer keeps
 * the process alive: the run is waiting for it.
 */
function untilAbandoned<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<{ abandoned: false; value: T } | { abandoned: true }> {
  const settled = work.then((value) => ({ abandoned: false as const, value }));
  if (!signal) return settled;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const grace = new Promise<{ abandoned: true }>((resolve) => {
    const start = () => {
      timer = setTimeout(() => resolve({ abandoned: true }), ABORT_GRACE_MS);
    };
    if (signal.aborted) start();
    else {
      onAbort = start;
      signal.addEventListener("abort", start, { once: true });
    }
  });
  return Promise.race([settled, grace]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
  });
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

/**
 * Milliseconds on a monotonic clock, for a call's duration. `performance.now()` would do as well, but Node makes the
 * `performance` global on first use by loading perf_hooks and a dozen modules with it, at the first tool call of
 * every run.
 */
function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

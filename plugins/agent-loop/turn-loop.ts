/**
 * The turn loop: one low-level agent run. `agent_start`, then turns: the pending messages enter the transcript, a
 * request is built from the active branch (`context` and `context_with_system` handlers may rewrite it), the
 * assistant's answer streams in, its tool calls run, and the `turn_end` boundary commits entries and may end the
 * run. Another turn follows for steering messages, for tool results (unless every result terminates) and for a
 * boundary's `continue` (at most `MAX_CONTINUATIONS` turns per session-level run are asked for by boundaries alone,
 * so a handler that always continues cannot drive requests for ever); follow-ups come last. Before another turn, the caller's `beforeNextTurn` may end the run
 * with an error (a tool call failing the same way again and again, a turn limit): the error is recorded as a failed
 * assistant message, so every host shows it where provider errors show. The loop keeps no state of its own: it
 * reads and writes the session only through its config, so a caller can wrap it (retries, compaction) or drive it
 * from another host.
 */
import type {
  AgentMessage,
  AssistantMessage,
  AssistantMessageStream,
  BoundaryState,
  ContextWithSystemEvent,
  ExtensionContext,
  HookBus,
  LlmMessage,
  ModelInfo,
  ThinkingLevel,
  ToolCall,
  ToolDeclaration,
  ToolResultMessage,
} from "../../kernel/index.js";
import { redactSecrets } from "../kit/provider/redact.js";
import { emptyUsage } from "../kit/usage.js";
import type { ModelRequest } from "../model-registry/model-service.js";
import { toLlmMessages } from "./convert.js";
import type { ToolOutcome } from "./tool-runner.js";
import type { Transcript } from "./transcript.js";

/** Bound on continuations requested by boundaries, so a handler that always continues cannot spin forever. */
export const MAX_CONTINUATIONS = 64;

/**
 * The continuations boundaries may still ask for in one session-level run: `turn_end`'s and
 * `agent_before_settle`'s draw on the same budget.
 */
export class ContinuationBudget {
  private used = 0;
  constructor(private readonly max = MAX_CONTINUATIONS) {}
  /** Whether one more continuation is allowed; counts it when it is. */
  take(): boolean {
    if (this.used >= this.max) return false;
    this.used++;
    return true;
  }
}

export interface TurnLoopConfig {
  bus: HookBus;
  context(): ExtensionContext;
  transcript: Transcript;
  /** Read per request, so a model, prompt or thinking change applies from the next request on. */
  model(): ModelInfo;
  systemPrompt(): string;
  /** The prompt the transcript records: the structured sections, also when a handler forced other text. */
  recordedSystemPrompt?(): string;
  thinkingLevel(): ThinkingLevel;
  tools(): ToolDeclaration[];
  stream(request: ModelRequest): AssistantMessageStream;
  /** Runs before each request is built, e.g. to compact a context that passed its threshold. */
  prepareRequest?(signal: AbortSignal): Promise<void>;
  /** Sees the system prompt and tool set of each request before it goes out (the transcript records them). */
  beforeRequest?(systemPrompt: string, tools: ToolDeclaration[]): void;
  runTools(calls: readonly ToolCall[], signal: AbortSignal): Promise<ToolOutcome[]>;
  hasSteering(): boolean;
  hasFollowUps(): boolean;
  takeSteering(): AgentMessage[];
  takeFollowUps(): AgentMessage[];
  /**
   * Asked once a turn is over and another will follow, with the turn's calls and outcomes: an error text ends
   * the run with that error instead (queued messages stay queued).
   */
  beforeNextTurn?(
    calls: readonly ToolCall[],
    outcomes: readonly ToolOutcome[],
    signal: AbortSignal,
  ): Promise<string | undefined>;
  /** Commits the entries a `turn_end` boundary proposed. */
  commit(state: BoundaryState): Promise<void>;
}

/**
 * How the run ended: `done` (nothing left to do), `end` (a boundary ended it), `error` (the answer failed; `error`
 * is that answer) or `aborted`. `messages` are the messages the run added, as recorded.
 */
export type TurnsOutcome =
  | { kind: "done" | "end" | "aborted"; messages: AgentMessage[] }
  | { kind: "error"; messages: AgentMessage[]; error: AssistantMessage };

export async function runTurns(
  input: readonly AgentMessage[],
  config: TurnLoopConfig,
  signal: AbortSignal,
  continuations: ContinuationBudget = new ContinuationBudget(),
): Promise<TurnsOutcome> {
  const { bus, context, transcript } = config;
  await bus.emit("agent_start", {}, context());
  const messages: AgentMessage[] = [];
  // As pi: steering queued while nothing ran (RPC `steer` while idle) joins the run's first request.
  let pending: readonly AgentMessage[] = [...input, ...config.takeSteering()];
  for (let turnIndex = 0; ; turnIndex++) {
    await bus.emit("turn_start", { turnIndex, timestamp: Date.now() }, context());
    for (const message of pending) messages.push(await transcript.add(message));

    await config.prepareRequest?.(signal);
    const assistant = await requestAssistant(config, signal);
    messages.push(assistant);
    const calls = assistant.content.filter((c): c is ToolCall => c.type === "toolCall");
    const failed = assistant.stopReason === "error" || assistant.stopReason === "aborted";
    const outcomes = failed || calls.length === 0 ? [] : await config.runTools(calls, signal);
    const toolResults: ToolResultMessage[] = [];
    for (const outcome of outcomes) {
      const result = (await transcript.add(toolResultMessage(outcome))) as ToolResultMessage;
      toolResults.push(result);
      messages.push(result);
    }
    const boundary = await bus.boundary(
      "turn_end",
      { turnIndex, message: assistant, toolResults },
      context(),
    );
    await config.commit(boundary);

    if (assistant.stopReason === "aborted" || signal.aborted) return { kind: "aborted", messages };
    if (assistant.stopReason === "error") return { kind: "error", messages, error: assistant };
    if (boundary.end) return { kind: "end", messages };
    const terminate = outcomes.length > 0 && outcomes.every((o) => o.result.terminate === true);
    const tools = outcomes.length > 0 && !terminate;
    // A turn only the boundary asks for draws on the budget; once it is spent, `continue` is not honoured.
    const toolsOrBoundary = tools || (boundary.continue === true && continuations.take());
    if (!toolsOrBoundary && !config.hasSteering() && !config.hasFollowUps())
      return { kind: "done", messages };
    const stop = await config.beforeNextTurn?.(calls, outcomes, signal);
    if (signal.aborted) return { kind: "aborted", messages };
    if (stop !== undefined) {
      const error = (await transcript.add(stoppedMessage(config.model(), stop))) as AssistantMessage;
      messages.push(error);
      return { kind: "error", messages, error };
    }
    pending = config.takeSteering();
    if (pending.length === 0 && !toolsOrBoundary) pending = config.takeFollowUps();
  }
}

/** The failed assistant message that records why the loop stopped the run (no provider was asked). */
export function stoppedMessage(model: ModelInfo, errorMessage: string): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: "error",
    errorMessage,
    timestamp: Date.now(),
  };
}

/** Builds the request from the active branch and streams the assistant's answer; returns it as recorded. */
async function requestAssistant(config: TurnLoopConfig, signal: AbortSignal): Promise<AssistantMessage> {
  const { bus, context } = config;
  const model = config.model();
  const branch = config.transcript.messages();
  let systemPrompt = config.systemPrompt();
  const recordedPrompt = config.recordedSystemPrompt?.() ?? systemPrompt;
  let llm: LlmMessage[];
  const rewritable = bus.has("context_with_system");
  if (bus.has("context") || rewritable) {
    // Handlers may change what they get; the copy keeps the session's messages as recorded. Without handlers
    // the request reads the branch as it is, which saves copying the whole conversation every turn.
    const { messages } = await bus.transform("context", { messages: structuredClone(branch) }, context(), {
      fold: (v, r) => (Array.isArray(r?.messages) ? { messages: r.messages } : v),
    });
    llm = toLlmMessages(messages);
  } else {
    llm = toLlmMessages(branch);
  }
  if (rewritable) {
    const transcript = await bus.transform(
      "context_with_system",
      {
        messages: [{ role: "system", content: systemPrompt, timestamp: Date.now() }, ...llm],
      } as ContextWithSystemEvent,
      context(),
      {
        fold: (_v, r) => {
          const first = r?.messages?.[0] as { role?: string } | undefined;
          if (!Array.isArray(r?.messages) || first?.role !== "system") {
            throw new TypeError("context_with_system must keep a system message at index 0");
          }
          return { messages: r.messages };
        },
      },
    );
    const [system, ...rest] = transcript.messages as [{ content: string }, ...AgentMessage[]];
    systemPrompt = system.content;
    llm = toLlmMessages(rest.filter((m) => (m as { role: string }).role !== "system"));
  }

  const tools = config.tools();
  config.beforeRequest?.(recordedPrompt, tools);
  const thinkingLevel = config.thinkingLevel();
  const stream = config.stream({
    model,
    systemPrompt,
    messages: llm,
    tools,
    ...(thinkingLevel !== "off" ? { thinkingLevel } : {}),
    signal,
  });
  let started = false;
  for await (const event of stream) {
    // done/error carry the final message, which result() returns; nothing to stream for them.
    if (event.type === "done" || event.type === "error") continue;
    if (!started) {
      started = true;
      await bus.emit("message_start", { message: structuredClone(event.partial) }, context());
    }
    if (event.type === "start") continue;
    if (bus.has("message_update")) {
      await bus.emit(
        "message_update",
        { message: event.partial, assistantMessageEvent: event, usage: event.partial.usage },
        context(),
      );
    }
  }
  const result = await stream.result();
  // Providers made with the kit redact their errors with the request's own secrets; this catches the rest (a
  // provider that builds its messages itself): URL passwords, credential fields and key-shaped strings.
  if (result.errorMessage) result.errorMessage = redactSecrets(result.errorMessage);
  if (!started) {
    await bus.emit(
      "message_start",
      { message: { ...result, content: [], stopReason: "pending" } },
      context(),
    );
  }
  return (await config.transcript.finish(result)) as AssistantMessage;
}

function toolResultMessage(outcome: ToolOutcome): ToolResultMessage {
  const { result } = outcome;
  return {
    role: "toolResult",
    toolCallId: outcome.toolCallId,
    toolName: outcome.toolName,
    content: result.content,
    ...(result.details !== undefined ? { details: result.details } : {}),
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    isError: outcome.isError,
    ...(result.usage ? { usage: result.usage } : {}),
    ...(result.nestedCalls ? { nestedCalls: result.nestedCalls } : {}),
    ...(result.view !== undefined ? { view: result.view } : {}),
    timestamp: Date.now(),
  };
}

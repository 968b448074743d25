/**
 * The agent loop of one session. A prompt adds a user message to the active branch; each turn builds a request
 * from the system prompt, the active branch and the active tools, streams the assistant's answer, runs its tool
 * calls and records everything, and the loop goes on while tool results, steering, follow-ups or boundary
 * handlers ask for another request. Events follow json.md and extensions.md in order and shape.
 */
import {
  type AgentMessage,
  type AssistantMessage,
  type BoundaryState,
  type ContextWithSystemEvent,
  type CustomMessage,
  type EntryDraft,
  type ExtensionContext,
  type ExtensionInfo,
  type ImageContent,
  KernelError,
  type ModelInfo,
  type SendMessageInput,
  type SendMessageOptions,
  type SessionEntry,
  type SessionRuntime,
  type SystemPromptOptions,
  type TextContent,
  type ThinkingLevel,
  type ToolCall,
  type ToolResultMessage,
  type UserMessage,
} from "../../kernel/index.js";
import { type ModelService, NO_MODEL_HELP } from "../model-registry/model-service.js";
import type { CacheWarmingSettings, RetrySettings } from "../settings/settings.js";
import type { ToolRegistry } from "../tool-registry/tool-registry.js";
import { messageText, toLlmMessages } from "./convert.js";
import type { SessionLog } from "./session-log.js";
import { type ToolOutcome, ToolRunner } from "./tool-runner.js";

export interface AgentSessionDeps {
  runtime: SessionRuntime;
  tools: ToolRegistry;
  models: ModelService;
  session: SessionLog;
  retry: () => RetrySettings;
  cacheWarming?: () => CacheWarmingSettings;
  /** Fresh default system prompt options for a run (base text, active tools, context files). */
  systemPromptOptions: (activeTools: string[]) => SystemPromptOptions;
  /** Renders options; with `original` (before `before_agent_start`), edits of the tool and guideline lists show. */
  renderSystemPrompt: (options: SystemPromptOptions, original?: SystemPromptOptions) => string;
  /** Runs `/name args` when a command of that name exists; returns false otherwise. */
  runCommand?: (name: string, args: string) => Promise<boolean>;
}

type Content = string | (TextContent | ImageContent)[];

interface QueuedMessage {
  message: UserMessage | CustomMessage;
}

/** Bound on automatic continuations requested by boundaries, so a handler that always continues cannot spin forever. */
const MAX_CONTINUATIONS = 64;
const RETRYABLE = new Set(["rate_limit", "overloaded", "network", "timeout"]);
/** Custom entry type of the recorded system prompt and tool set. */
export const SYSTEM_ENTRY = "knightcode.system";

export class AgentSession {
  model: ModelInfo | undefined;
  thinkingLevel: ThinkingLevel = "off";
  private readonly runner: ToolRunner;
  private steering: QueuedMessage[] = [];
  private followUps: QueuedMessage[] = [];
  private nextTurn: CustomMessage[] = [];
  private controller: AbortController | undefined;
  private busy = false;
  private idleWaiters: (() => void)[] = [];
  private lastSystemPrompt = "";
  private warmTimer: NodeJS.Timeout | undefined;
  private settledAt = 0;
  private refreshes = 0;

  constructor(private readonly deps: AgentSessionDeps) {
    // Model and thinking level are chosen by the host once extensions have registered their providers.
    this.runner = new ToolRunner(deps.tools, deps.runtime.bus, () => this.ctx());
  }

  private get bus() {
    return this.deps.runtime.bus;
  }

  private ctx(): ExtensionContext {
    return this.deps.runtime.context();
  }

  get signal(): AbortSignal | undefined {
    return this.controller?.signal;
  }

  isIdle(): boolean {
    return !this.busy;
  }

  hasPendingMessages(): boolean {
    return this.steering.length + this.followUps.length > 0;
  }

  get systemPrompt(): string {
    return this.lastSystemPrompt;
  }

  /** Resolves when the session has no run in progress. */
  waitForIdle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ---- prompting -----------------------------------------------------------------------------------

  /**
   * Submits input. `/name args` runs a registered command instead of reaching the model. While a run is in
   * progress the input must say how to enter it (`steer` or `followUp`). Resolves when the run settles (or once
   * the input is queued or handled).
   */
  async prompt(
    text: string,
    options: {
      images?: ImageContent[];
      source?: "interactive" | "rpc" | "extension" | "print" | "json" | "sdk";
      streamingBehavior?: "steer" | "followUp";
    } = {},
  ): Promise<void> {
    const command = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(text);
    if (
      command &&
      this.deps.runCommand &&
      (await this.deps.runCommand(command[1]!, command[2]?.trim() ?? ""))
    )
      return;
    this.deps.runtime.assertCanPrompt("prompt");

    const input = await this.bus.transform(
      "input",
      { text, ...(options.images ? { images: options.images } : {}) } as {
        text: string;
        images?: ImageContent[];
        handled?: boolean;
      },
      this.ctx(),
      {
        toEvent: (v) => ({ ...v, source: options.source ?? "sdk" }),
        fold: (v, r) =>
          r.action === "transform"
            ? { text: r.text, ...(r.images ? { images: r.images } : {}) }
            : r.action === "handled"
              ? { ...v, handled: true }
              : v,
        stop: (r) => r.action === "handled",
      },
    );
    if (input.handled) return;
    const message = userMessage(input.text, input.images);

    if (this.busy) {
      if (options.streamingBehavior === "steer") return this.enqueue("steering", message);
      if (options.streamingBehavior === "followUp") return this.enqueue("followUp", message);
      throw new KernelError(
        "KC_ERR_BUSY",
        "A run is in progress: send the message as a steering or follow-up message, or wait until it finishes.",
      );
    }
    return this.run({ kind: "user", message });
  }

  steer(text: string, images?: ImageContent[]): void {
    this.enqueue("steering", userMessage(text, images));
  }

  followUp(text: string, images?: ImageContent[]): void {
    this.enqueue("followUp", userMessage(text, images));
  }

  /** Stops the run, kills running tools through their signal, and hands back the queued messages. */
  abort(): { steering: string[]; followUp: string[] } {
    const returned = this.clearQueue();
    this.controller?.abort();
    return returned;
  }

  clearQueue(): { steering: string[]; followUp: string[] } {
    const returned = {
      steering: this.steering.map((q) => messageText(q.message)),
      followUp: this.followUps.map((q) => messageText(q.message)),
    };
    if (this.steering.length + this.followUps.length > 0) {
      this.steering = [];
      this.followUps = [];
      this.emitQueue();
    }
    return returned;
  }

  getQueue(): { steering: string[]; followUp: string[] } {
    return {
      steering: this.steering.map((q) => messageText(q.message)),
      followUp: this.followUps.map((q) => messageText(q.message)),
    };
  }

  private enqueue(queue: "steering" | "followUp", message: UserMessage | CustomMessage): void {
    (queue === "steering" ? this.steering : this.followUps).push({ message });
    this.emitQueue();
  }

  private emitQueue(): void {
    void this.bus.emit("queue_update", this.getQueue(), this.ctx());
  }

  // ---- ExtensionAPI: core.agent --------------------------------------------------------------------

  sendUserMessage(
    _owner: ExtensionInfo | undefined,
    content: Content,
    options: { deliverAs?: "steer" | "followUp" } = {},
  ): void {
    const message = userMessageFrom(content);
    if (this.busy) {
      if (!options.deliverAs) {
        throw new KernelError(
          "KC_ERR_BUSY",
          "sendUserMessage() during a run needs deliverAs: 'steer' or 'followUp'",
        );
      }
      this.enqueue(options.deliverAs === "steer" ? "steering" : "followUp", message);
      return;
    }
    this.deps.runtime.assertCanPrompt("prompt");
    void this.run({ kind: "user", message }).catch((error: unknown) => this.report("sendUserMessage", error));
  }

  sendMessage(
    owner: ExtensionInfo | undefined,
    input: SendMessageInput,
    options: SendMessageOptions = {},
  ): void {
    if (!input || typeof input.customType !== "string") {
      throw new KernelError(
        "KC_ERR_INVALID_MESSAGE",
        `${owner?.id ?? "sdk"}: sendMessage() needs a customType`,
      );
    }
    const message: CustomMessage = {
      role: "custom",
      customType: input.customType,
      content: input.content,
      display: input.display ?? true,
      ...(input.details !== undefined ? { details: input.details } : {}),
      timestamp: Date.now(),
    };
    if (options.deliverAs === "nextTurn") {
      this.nextTurn.push(message);
      return;
    }
    if (this.busy) {
      this.enqueue(options.deliverAs === "followUp" ? "followUp" : "steering", message);
      return;
    }
    if (options.triggerTurn) {
      this.deps.runtime.assertCanPrompt("prompt");
      void this.run({ kind: "custom", message }).catch((error: unknown) => this.report("sendMessage", error));
      return;
    }
    void this.addMessage(message).catch((error: unknown) => this.report("sendMessage", error));
  }

  appendEntry(_owner: ExtensionInfo | undefined, customType: string, data?: unknown): void {
    const entry = this.deps.session.appendCustomEntry(customType, data);
    void this.bus.emit("entry_appended", { entry }, this.ctx());
  }

  setSessionName(_owner: ExtensionInfo | undefined, name: string | undefined): void {
    this.deps.session.appendSessionInfo(name);
    void this.bus.emit("session_info_changed", name === undefined ? {} : { name }, this.ctx());
  }

  getSessionName(_owner?: ExtensionInfo): string | undefined {
    return this.deps.session.getSessionName();
  }

  setLabel(_owner: ExtensionInfo | undefined, entryId: string, label: string | undefined): void {
    this.deps.session.appendLabel(entryId, label);
  }

  async setModel(
    _owner: ExtensionInfo | undefined,
    model: ModelInfo,
    source: "set" | "cycle" | "restore" = "set",
  ): Promise<boolean> {
    const found = this.deps.models.find(model.provider, model.id);
    if (!found) return false;
    const previous = this.model;
    this.model = found;
    this.deps.session.appendModelChange(found.provider, found.id);
    await this.bus.emit("model_select", { model: found, previousModel: previous, source }, this.ctx());
    return true;
  }

  getThinkingLevel(_owner?: ExtensionInfo): ThinkingLevel {
    return this.thinkingLevel;
  }

  setThinkingLevel(_owner: ExtensionInfo | undefined, level: ThinkingLevel): void {
    const previous = this.thinkingLevel;
    if (previous === level) return;
    this.thinkingLevel = level;
    this.deps.session.appendThinkingLevelChange(level);
    void this.bus.emit("thinking_level_select", { level, previousLevel: previous }, this.ctx());
    void this.bus.emit("thinking_level_changed", { level }, this.ctx());
  }

  // ---- the run -------------------------------------------------------------------------------------

  private async run(
    start: { kind: "user"; message: UserMessage } | { kind: "custom"; message: CustomMessage },
  ): Promise<void> {
    const model = this.model;
    if (!model)
      throw new KernelError("KC_ERR_NO_MODEL", `No model is selected for this session. ${NO_MODEL_HELP}`);
    this.cancelCacheWarming();
    this.refreshes = 0;
    this.busy = true;
    this.controller = new AbortController();
    const signal = this.controller.signal;
    let aborted = false;
    try {
      const pending: AgentMessage[] = [...this.nextTurn.splice(0), start.message];
      const extra = await this.beforeAgentStart(start);
      if (extra) pending.push(extra);
      let continuations = 0;
      let retryAttempt = 0;
      let input = pending;
      for (;;) {
        const outcome = await this.lowLevelRun(input, signal);
        input = [];
        const retry = this.deps.retry();
        const failed = outcome.kind === "error" ? outcome.error : undefined;
        const willRetry =
          !!failed &&
          retry.enabled &&
          retryAttempt < retry.maxRetries &&
          RETRYABLE.has(failed.errorKind ?? "unknown") &&
          !signal.aborted;
        await this.bus.emit("agent_end", { messages: outcome.messages, willRetry }, this.ctx());
        if (outcome.kind === "aborted" || signal.aborted) {
          aborted = true;
          if (retryAttempt > 0) await this.emitRetryEnd(false, retryAttempt, "aborted");
          break;
        }
        if (willRetry) {
          retryAttempt++;
          const delayMs = Math.min(
            retry.maxDelayMs,
            Math.max(failed!.retryAfterMs ?? 0, retry.baseDelayMs * 2 ** (retryAttempt - 1)),
          );
          await this.bus.emit(
            "auto_retry_start",
            {
              attempt: retryAttempt,
              maxAttempts: retry.maxRetries,
              delayMs,
              errorMessage: failed!.errorMessage ?? "error",
            },
            this.ctx(),
          );
          if (!(await sleep(delayMs, signal))) {
            aborted = true;
            await this.emitRetryEnd(false, retryAttempt, "aborted");
            break;
          }
          continue;
        }
        if (retryAttempt > 0) {
          await this.emitRetryEnd(!failed, retryAttempt, failed?.errorMessage);
          retryAttempt = 0;
        }
        if (outcome.kind === "error" || outcome.kind === "end") break;
        const settle = await this.bus.boundary(
          "agent_before_settle",
          { messages: outcome.messages },
          this.ctx(),
        );
        await this.commitDrafts(settle);
        if (settle.end || !settle.continue || continuations >= MAX_CONTINUATIONS) break;
        continuations++;
      }
    } finally {
      this.controller = undefined;
      this.busy = false;
      await this.bus.emit("agent_settled", { aborted }, this.ctx());
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      if (!aborted) this.scheduleCacheWarming();
    }
  }

  // ---- idle prompt-cache refreshes -----------------------------------------------------------------

  /** Stops pending refreshes (a new run, or the session going away). */
  dispose(): void {
    this.cancelCacheWarming();
  }

  private cancelCacheWarming(): void {
    if (this.warmTimer) clearTimeout(this.warmTimer);
    this.warmTimer = undefined;
  }

  /**
   * While idle, a provider's prompt cache expires. A refresh re-sends the last request for one token so the next
   * prompt hits the cache. Each refresh asks `cache_warming_decision` handlers first (the last to answer wins);
   * without an answer the `cacheWarming` settings decide.
   */
  private scheduleCacheWarming(): void {
    const settings = this.deps.cacheWarming?.();
    if (!settings || !this.model || this.refreshes >= settings.maxRefreshes) return;
    this.settledAt = Date.now();
    this.warmTimer = setTimeout(() => void this.refreshCache(settings), settings.intervalMs);
    this.warmTimer.unref();
  }

  private async refreshCache(settings: CacheWarmingSettings): Promise<void> {
    this.warmTimer = undefined;
    if (this.busy || !this.model || this.deps.runtime.state !== "ready") return;
    const decision = await this.bus.lastWins(
      "cache_warming_decision",
      { idleMs: Date.now() - this.settledAt, model: this.model },
      this.ctx(),
    );
    const action = decision?.action ?? (settings.enabled ? "warm" : "stop");
    if (action !== "warm" || this.busy) return;
    this.refreshes++;
    const stream = this.deps.models.stream({
      model: this.model,
      systemPrompt: this.lastSystemPrompt,
      messages: toLlmMessages(this.deps.session.buildContext().messages),
      tools: this.deps.tools.declarations(),
      maxTokens: 1,
    });
    const result = await stream.result();
    if (this.deps.runtime.state !== "ready") return;
    this.deps.session.appendCustomEntry("knightcode.cacheWarming", {
      provider: result.provider,
      model: result.model,
      usage: result.usage,
      ...(result.errorMessage ? { error: result.errorMessage } : {}),
    });
    if (result.stopReason !== "error") this.scheduleCacheWarming();
  }

  private emitRetryEnd(success: boolean, attempt: number, finalError?: string): Promise<void> {
    return this.bus.emit(
      "auto_retry_end",
      { success, attempt, ...(success ? {} : { finalError: finalError ?? "error" }) },
      this.ctx(),
    );
  }

  /** One low-level agent run: `agent_start`, then turns until nothing asks for another request. */
  private async lowLevelRun(
    initial: AgentMessage[],
    signal: AbortSignal,
  ): Promise<{
    kind: "done" | "error" | "aborted" | "end";
    messages: AgentMessage[];
    error?: AssistantMessage;
  }> {
    await this.bus.emit("agent_start", {}, this.ctx());
    const messages: AgentMessage[] = [];
    let pending = initial;
    for (let turnIndex = 0; ; turnIndex++) {
      await this.bus.emit("turn_start", { turnIndex, timestamp: Date.now() }, this.ctx());
      for (const message of pending) messages.push(await this.addMessage(message));
      pending = [];

      const assistant = await this.requestAssistant(signal);
      messages.push(assistant);
      const calls = assistant.content.filter((c): c is ToolCall => c.type === "toolCall");
      const failed = assistant.stopReason === "error" || assistant.stopReason === "aborted";
      const outcomes = failed || calls.length === 0 ? [] : await this.runner.runBatch(calls, signal);
      const toolResults: ToolResultMessage[] = [];
      for (const outcome of outcomes) {
        const result = (await this.addMessage(toolResultMessage(outcome))) as ToolResultMessage;
        toolResults.push(result);
        messages.push(result);
      }
      const boundary = await this.bus.boundary(
        "turn_end",
        { turnIndex, message: assistant, toolResults },
        this.ctx(),
      );
      await this.commitDrafts(boundary);

      if (assistant.stopReason === "aborted" || signal.aborted) return { kind: "aborted", messages };
      if (assistant.stopReason === "error") return { kind: "error", messages, error: assistant };
      if (boundary.end) return { kind: "end", messages };
      pending = this.steering.splice(0).map((q) => q.message);
      if (pending.length > 0) {
        this.emitQueue();
        continue;
      }
      const terminate = outcomes.length > 0 && outcomes.every((o) => o.result.terminate === true);
      if (outcomes.length > 0 && !terminate) continue;
      if (boundary.continue) continue;
      pending = this.followUps.splice(0).map((q) => q.message);
      if (pending.length > 0) {
        this.emitQueue();
        continue;
      }
      return { kind: "done", messages };
    }
  }

  /** `before_agent_start`: handlers adjust the prompt options, add a message, or force a system prompt. */
  private async beforeAgentStart(
    start: { kind: "user"; message: UserMessage } | { kind: "custom"; message: CustomMessage },
  ): Promise<CustomMessage | undefined> {
    // Tools whose declarations a loadout hides stay out of the prompt's tool list too.
    const options = this.deps.systemPromptOptions(this.deps.tools.declarations().map((d) => d.name));
    const original = structuredClone(options);
    const added: CustomMessage[] = [];
    const state = {
      messageType: start.kind,
      ...(start.kind === "user"
        ? {
            prompt: messageText(start.message),
            ...(typeof start.message.content !== "string"
              ? { images: start.message.content.filter((c): c is ImageContent => c.type === "image") }
              : {}),
          }
        : { message: start.message }),
      systemPrompt: this.deps.renderSystemPrompt(options),
      systemPromptOptions: options,
      forced: undefined as string | undefined,
    };
    const result = await this.bus.transform("before_agent_start", state, this.ctx(), {
      toEvent: (v) => v,
      fold: (v, r: { message?: SendMessageInput; systemPrompt?: string; forceSystemPrompt?: boolean }) => {
        if (r.message) {
          added.push({
            role: "custom",
            customType: r.message.customType,
            content: r.message.content,
            display: r.message.display ?? true,
            ...(r.message.details !== undefined ? { details: r.message.details } : {}),
            timestamp: Date.now(),
          });
        }
        const forced =
          typeof r.systemPrompt === "string"
            ? r.systemPrompt
            : r.forceSystemPrompt
              ? v.systemPrompt
              : v.forced;
        return { ...v, forced };
      },
    });
    this.lastSystemPrompt =
      result.forced ?? this.deps.renderSystemPrompt(result.systemPromptOptions, original);
    // Several handlers may each add a message; they enter the run in order.
    if (added.length > 1) this.nextTurn.push(...added.slice(0, -1));
    return added.at(-1);
  }

  /** Emits `message_start`/`message_end` for a finished message and records it; returns the final message. */
  private async addMessage(message: AgentMessage): Promise<AgentMessage> {
    await this.bus.emit("message_start", { message }, this.ctx());
    const final = await this.finishMessage(message);
    return final;
  }

  /** `message_end` may replace the message (same role only); then it is recorded. */
  private async finishMessage(message: AgentMessage): Promise<AgentMessage> {
    const final = await this.bus.transform("message_end", message, this.ctx(), {
      toEvent: (m) => ({ message: m }),
      fold: (m, r) => {
        if (!r?.message) return m;
        if (r.message.role !== m.role) {
          throw new TypeError(`message_end may not change the role (${m.role} → ${r.message.role})`);
        }
        return r.message;
      },
    });
    if (final.role === "custom") {
      this.deps.session.appendCustomMessageEntry(
        final.customType,
        final.content,
        final.display,
        final.details,
      );
    } else {
      this.deps.session.appendMessage(final);
    }
    return final;
  }

  /** Builds the request from the active branch and streams the assistant's answer. */
  private async requestAssistant(signal: AbortSignal): Promise<AssistantMessage> {
    const model = this.model!;
    const branch = this.deps.session.buildContext().messages;
    const { messages } = await this.bus.transform(
      "context",
      { messages: structuredClone(branch) },
      this.ctx(),
      {
        fold: (v, r) => (Array.isArray(r?.messages) ? { messages: r.messages } : v),
      },
    );
    let systemPrompt = this.lastSystemPrompt;
    let llm = toLlmMessages(messages);
    if (this.bus.has("context_with_system")) {
      const transcript = await this.bus.transform(
        "context_with_system",
        {
          messages: [{ role: "system", content: systemPrompt, timestamp: Date.now() }, ...llm],
        } as ContextWithSystemEvent,
        this.ctx(),
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

    const tools = this.deps.tools.declarations();
    this.recordSystemState(this.lastSystemPrompt, tools);
    const stream = this.deps.models.stream({
      model,
      systemPrompt,
      messages: llm,
      tools,
      ...(this.thinkingLevel !== "off" ? { thinkingLevel: this.thinkingLevel } : {}),
      signal,
    });
    let started = false;
    for await (const event of stream) {
      // done/error carry the final message, which result() returns; nothing to stream for them.
      if (event.type === "done" || event.type === "error") continue;
      if (!started) {
        started = true;
        await this.bus.emit("message_start", { message: structuredClone(event.partial) }, this.ctx());
        if (event.type === "start") continue;
      }
      if (event.type === "start") continue;
      if (this.bus.has("message_update")) {
        await this.bus.emit(
          "message_update",
          { message: event.partial, assistantMessageEvent: event, usage: event.partial.usage },
          this.ctx(),
        );
      }
    }
    const result = await stream.result();
    if (!started) {
      await this.bus.emit(
        "message_start",
        { message: { ...result, content: [], stopReason: "pending" } },
        this.ctx(),
      );
    }
    return (await this.finishMessage(result)) as AssistantMessage;
  }

  /**
   * The transcript keeps the system prompt and the declared tool set: the first request records them, and a
   * change is recorded before the next request that uses it (a `knightcode.system` custom entry, not sent to the
   * model as such). Providers receive the complete current prompt and tools with every request, which is the
   * checkpoint form every supported API can represent.
   */
  private recordSystemState(systemPrompt: string, tools: { name: string; description: string }[]): void {
    const state = { systemPrompt, tools: tools.map((t) => ({ name: t.name, description: t.description })) };
    const branch = this.deps.session.getBranch();
    for (let i = branch.length - 1; i >= 0; i--) {
      const entry = branch[i]!;
      if (entry.type === "custom" && entry.customType === SYSTEM_ENTRY) {
        if (JSON.stringify(entry.data) === JSON.stringify(state)) return;
        break;
      }
    }
    this.deps.session.appendCustomEntry(SYSTEM_ENTRY, state);
  }

  /** Records the entries a boundary proposed. An invalid draft is reported and skipped; the others still land. */
  private async commitDrafts(state: BoundaryState): Promise<void> {
    for (const draft of state.entries) {
      try {
        await this.commitDraft(draft);
      } catch (error) {
        this.report("boundary entry", error);
      }
    }
  }

  private async commitDraft(draft: EntryDraft): Promise<SessionEntry | undefined> {
    const session = this.deps.session;
    switch (draft?.type) {
      case "custom": {
        const entry = session.appendCustomEntry(draft.customType, draft.data);
        await this.bus.emit("entry_appended", { entry }, this.ctx());
        return entry;
      }
      case "custom_message":
        await this.addMessage({
          role: "custom",
          customType: draft.customType,
          content: draft.content,
          display: draft.display ?? true,
          ...(draft.details !== undefined ? { details: draft.details } : {}),
          timestamp: Date.now(),
        });
        return undefined;
      case "context_edit":
        if (!session.getEntry(draft.targetId))
          throw new Error(`context_edit targets unknown entry ${draft.targetId}`);
        return session.appendContextEdit(draft.targetId, draft.replacement);
      case "compaction":
        return session.appendCompaction(
          draft.summary,
          draft.firstKeptEntryId,
          draft.tokensBefore,
          draft.details,
        );
      default:
        throw new Error(`unknown entry draft type ${JSON.stringify((draft as { type?: unknown })?.type)}`);
    }
  }

  private report(event: string, error: unknown): void {
    this.deps.runtime.handleError({
      owner: { id: "plugin:agent-loop", order: Number.MAX_SAFE_INTEGER },
      event,
      error,
    });
  }
}

function userMessage(text: string, images?: ImageContent[]): UserMessage {
  return {
    role: "user",
    content: images && images.length > 0 ? [{ type: "text", text }, ...images] : text,
    timestamp: Date.now(),
  };
}

function userMessageFrom(content: Content): UserMessage {
  return { role: "user", content, timestamp: Date.now() };
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
    timestamp: Date.now(),
  };
}

/** Waits, or returns false as soon as the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

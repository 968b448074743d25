/**
 * The agent of one session: what hosts (the SDK handle, `ctx`) and the ExtensionAPI (`core.agent`) call. A prompt
 * or message either starts a run, joins the run that is starting, or enters the one in progress through the
 * queues. A run is `before_agent_start`, then the turn loop wrapped in retries and the settle boundary
 * (`agent-run.ts`, `turn-loop.ts`), then `agent_settled`; the session only tracks whether a run is starting or in
 * progress and wires the collaborators to the session's services. Events follow json.md and extensions.md in order
 * and shape.
 */
import {
  type AgentMessage,
  type BoundaryState,
  type ExtensionContext,
  type ExtensionInfo,
  type ImageContent,
  KernelError,
  type ModelInfo,
  type SendMessageInput,
  type SendMessageOptions,
  type SessionRuntime,
  type ThinkingLevel,
} from "../../kernel/index.js";
import { Stalls, watchForStall } from "../../kernel/lifecycle/stall-watch.js";
import type { CommandRegistry } from "../command-registry/command-registry.js";
import { runCommand } from "../command-registry/run-command.js";
import type { ModelService } from "../model-registry/model-service.js";
import type {
  CacheWarmingSettings,
  CompactionSettings,
  DoomLoopSettings,
  GateSettings,
  RetrySettings,
  ToolResultSettings,
} from "../settings/settings.js";
import type { ToolRegistry } from "../tool-registry/tool-registry.js";
import { Admissions } from "./admissions.js";
import { type AgentRunConfig, runAgent } from "./agent-run.js";
import { type BeforeAgentStartConfig, beforeAgentStart, type RunStart } from "./before-agent-start.js";
import { commitDrafts, type DraftTarget } from "./boundary-drafts.js";
import { CacheWarmer } from "./cache-warming.js";
import { Compactor, type CompactRequest } from "./compaction.js";
import { customMessage, type MessageContent, promptMessage, toLlmMessages, userMessage } from "./convert.js";
import { LoopGuard } from "./loop-guard.js";
import { MessageQueues, type QueueMode, type QueueSnapshot } from "./message-queues.js";
import type { SessionLog } from "./session-log.js";
import { type PromptInputs, SystemPromptSource } from "./system-prompt-source.js";
import { recordSystemState } from "./system-state.js";
import { ToolRunner } from "./tool-runner.js";
import { Transcript } from "./transcript.js";
import { runTurns, stoppedMessage, type TurnLoopConfig } from "./turn-loop.js";

export interface AgentSessionDeps {
  runtime: SessionRuntime;
  tools: ToolRegistry;
  models: ModelService;
  session: SessionLog;
  retry: () => RetrySettings;
  /** Read before each request; without it the session never compacts on its own. */
  compaction?: () => CompactionSettings;
  cacheWarming?: () => CacheWarmingSettings;
  /** Read at the start of each run; without it the guard is off. */
  doomLoop?: () => DoomLoopSettings;
  /** Read at each tool call; without it `tool_call` handlers have no time limit. */
  gates?: () => GateSettings;
  /** Read at each tool call; without it tool results are not capped. */
  toolResults?: () => ToolResultSettings;
  /** Read at each turn; without it each queue delivers all its messages at once. */
  queueModes?: () => { steering: QueueMode; followUp: QueueMode };
  /** Turns after which a run that wants another ends with an error (`--max-turns`). */
  maxTurns?: number;
  /** What the default system prompt is made of besides the tools. */
  prompt: PromptInputs;
  /** The session's `/` commands: typed `/name args` runs one when it exists. */
  commands?: CommandRegistry;
}

/** Options of `prompt()`; `onAccepted` hears once that the input was taken (see `prompt()`). */
export interface AgentPromptOptions {
  images?: ImageContent[];
  source?: "interactive" | "rpc" | "extension" | "print" | "json" | "sdk";
  streamingBehavior?: "steer" | "followUp";
  /** pi's RPC steer/follow_up: queue the message even while idle (PromptOptions.queue). */
  queue?: boolean;
  /** `started`: the run started or was joined; `queued`: it went to a queue; `handled`: a command or handler took it. */
  onAccepted?: (disposition: PromptDisposition) => void;
}

export type PromptDisposition = "started" | "queued" | "handled";

/** Calls `fn` the first time only. */
function once<T>(fn: (value: T) => void): (value: T) => void {
  let called = false;
  return (value) => {
    if (called) return;
    called = true;
    fn(value);
  };
}

/** A run between its start and the moment it takes its input: messages sent meanwhile join it. */
interface StartingRun {
  joined: AgentMessage[];
  /** The run, settled when it is. */
  done: Promise<void>;
}

export class AgentSession {
  model: ModelInfo | undefined;
  thinkingLevel: ThinkingLevel = "off";
  private readonly queues: MessageQueues;
  private readonly transcript: Transcript;
  private readonly tools: ToolRunner;
  private readonly warmer: CacheWarmer;
  private readonly compactor: Compactor;
  private readonly startConfig: BeforeAgentStartConfig;
  private readonly runConfig: AgentRunConfig;
  private controller: AbortController | undefined;
  private compactionController: AbortController | undefined;
  /** Cancels the wait before the next automatic retry (`abortRetry`); a fresh one for each wait. */
  private retryWait: AbortController | undefined;
  private busy = false;
  private starting: StartingRun | undefined;
  /**
   * While a prompt's `/command` runs: that prompt's acceptance, which the command's first awaited
   * `ctx.sendUserMessage()` reports (extensions.md: the originating prompt hears the nested dispatch's acceptance
   * once, before settlement). Taken by the first dispatch; the prompt reports `handled` if nobody took it.
   */
  private commandAcceptance: ((disposition: PromptDisposition) => void) | undefined;
  /**
   * While a prompt template or skill command runs for a queued message (pi expands those in `steer` and
   * `followUp`): the queue its `ctx.sendUserMessage()` goes to, the images the message came with, and whether the
   * command sent anything.
   */
  private queuedExpansion:
    | { behavior: "steer" | "followUp"; images?: ImageContent[]; sent: boolean }
    | undefined;
  /** Watches the run in progress for a repeating failure and the turn limit. */
  private guard: LoopGuard | undefined;
  private readonly admissions = new Admissions();
  private idleWaiters: (() => void)[] = [];
  private lastSystemPrompt = "";
  /** The structured prompt of the last run, which the transcript records when a handler forced other text. */
  private recordedSystemPrompt = "";

  constructor(private readonly deps: AgentSessionDeps) {
    // Model and thinking level are chosen by the host once extensions have registered their providers.
    const bus = deps.runtime.bus;
    const context = () => this.ctx();
    this.queues = new MessageQueues(
      (snapshot) => void bus.emit("queue_update", snapshot, context()),
      deps.queueModes,
    );
    this.transcript = new Transcript(bus, context, deps.session);
    const tools = new ToolRunner(deps.tools, bus, context, () => ({
      gateTimeoutMs: deps.gates?.().timeoutMs ?? 0,
      maxResultBytes: deps.toolResults?.().maxBytes ?? 0,
    }));
    this.tools = tools;
    const drafts: DraftTarget = {
      log: deps.session,
      transcript: this.transcript,
      appended: (entry) => bus.emit("entry_appended", { entry }, context()),
      report: (error) => this.report("boundary entry", error),
    };
    const commit = (state: BoundaryState) => commitDrafts(state.entries, drafts);
    const compaction = deps.compaction;
    this.compactor = new Compactor({
      bus,
      context,
      log: deps.session,
      settings: () => compaction?.() ?? { enabled: false, reserveTokens: 0, keepRecentTokens: 0 },
      model: () => this.model,
    });
    // Tools whose declarations a loadout hides stay out of the prompt's tool list too.
    const prompt = new SystemPromptSource(deps.tools, deps.prompt);
    this.startConfig = {
      bus,
      context,
      systemPromptOptions: () => prompt.options(),
      renderSystemPrompt: (options, original) => prompt.render(options, original),
    };
    const turnLoop: TurnLoopConfig = {
      bus,
      context,
      transcript: this.transcript,
      model: () => this.requireModel(),
      systemPrompt: () => this.lastSystemPrompt,
      recordedSystemPrompt: () => this.recordedSystemPrompt,
      thinkingLevel: () => this.thinkingLevel,
      tools: () => deps.tools.declarations(),
      stream: (request) => deps.models.stream({ ...request, fromLoop: true }),
      prepareRequest: (signal) => this.compactor.beforeRequest(signal),
      beforeRequest: (systemPrompt, declared) => void recordSystemState(deps.session, systemPrompt, declared),
      runTools: (calls, signal) => tools.runBatch(calls, signal),
      hasSteering: () => this.queues.hasSteering(),
      hasFollowUps: () => this.queues.hasFollowUps(),
      takeSteering: () => this.queues.takeSteering(),
      takeFollowUps: () => this.queues.takeFollowUps(),
      beforeNextTurn: (calls, outcomes, signal) =>
        this.guard ? this.guard.beforeNextTurn(calls, outcomes, signal) : Promise.resolve(undefined),
      commit,
    };
    this.runConfig = {
      bus,
      context,
      retry: deps.retry,
      turns: (input, signal, budget) => runTurns(input, turnLoop, signal, budget),
      takeQueued: () => {
        const steering = this.queues.takeSteering();
        return steering.length > 0 ? steering : this.queues.takeFollowUps();
      },
      commit,
      recoverOverflow: (signal) => this.compactor.recoverOverflow(signal),
      retryCancel: () => {
        this.retryWait = new AbortController();
        return this.retryWait.signal;
      },
    };
    this.warmer = new CacheWarmer({
      bus,
      context,
      settings: () => deps.cacheWarming?.(),
      model: () => this.model,
      busy: () => this.busy,
      ready: () => deps.runtime.state === "ready",
      lastRequest: (model) => ({
        model,
        systemPrompt: this.lastSystemPrompt,
        messages: toLlmMessages(this.transcript.messages()),
        tools: deps.tools.declarations(),
      }),
      stream: (request) => deps.models.stream(request),
      record: (customType, data) => void deps.session.appendCustomEntry(customType, data),
    });
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

  /** False from the moment a prompt arrives until its run settles (a run that is starting counts as busy). */
  isIdle(): boolean {
    return !this.busy && !this.admissions.busy && !this.compactor.isCompacting;
  }

  get isCompacting(): boolean {
    return this.compactor.isCompacting;
  }

  /**
   * Compacts the session now (`ctx.compact()`, RPC `compact`, `/compact`): after the run in progress settles, and
   * before a run that starts meanwhile. Rejects with a CompactionError when no entry was written.
   */
  async compact(request: Omit<CompactRequest, "reason" | "signal"> = {}) {
    this.deps.runtime.assertCanPrompt("compact");
    await this.waitForIdle();
    // abort() stops a manual compaction as it stops a run.
    const controller = new AbortController();
    this.compactionController = controller;
    try {
      return await this.compactor.compact({ reason: "manual", ...request, signal: controller.signal });
    } finally {
      if (this.compactionController === controller) this.compactionController = undefined;
      this.releaseIfIdle();
    }
  }

  hasPendingMessages(): boolean {
    return this.queues.hasPending();
  }

  get systemPrompt(): string {
    return this.lastSystemPrompt;
  }

  /** Resolves when the session has no run in progress and no prompt on its way in. */
  waitForIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private releaseIfIdle(): void {
    if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Stops pending cache refreshes (the session is going away). */
  dispose(): void {
    this.warmer.cancel();
  }

  // ---- prompting -----------------------------------------------------------------------------------

  /**
   * Submits input. `/name args` runs a registered command instead of reaching the model. Other input passes the
   * `input` handlers in the order prompts arrived, then starts a run, or joins the run that is starting (or enters
   * the queue `streamingBehavior` names). While a run is past its start the input must say how to enter it (`steer`
   * or `followUp`). `onAccepted` is called once the input is taken: the run started or was joined, the message was
   * queued, or a command or handler took it; a prompt refused before that rejects without it. Resolves when the
   * run settles (or once the input is queued or handled).
   */
  async prompt(text: string, options: AgentPromptOptions = {}): Promise<void> {
    const accepted = once(options.onAccepted ?? (() => {}));
    if (options.queue) return this.queueInput(text, options, accepted);
    const command = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(text);
    if (command && options.streamingBehavior && this.busy) {
      // Sent to a running session's queue: a template or skill goes there expanded, as a queued steer does.
      const expanded = await this.expandIntoQueue(text, options.streamingBehavior, options.images);
      if (expanded) {
        accepted(expanded.sent ? "queued" : "handled");
        return;
      }
    }
    if (command && this.deps.commands) {
      const outer = this.commandAcceptance;
      this.commandAcceptance = accepted;
      let ran: { result: unknown } | undefined;
      try {
        ran = await runCommand(this.deps.runtime, this.deps.commands, command[1]!, command[2]?.trim() ?? "");
      } finally {
        this.commandAcceptance = outer;
      }
      if (ran) {
        accepted("handled");
        return;
      }
    }
    this.deps.runtime.assertCanPrompt("prompt");
    // An `input` handler waiting on nothing would leave the prompt pending while the process exits 0.
    const stalls = new Stalls();
    const unwatch = watchForStall(() => stalls.fire());
    try {
      const decided = await stalls.race(this.admissions.admit(() => this.admit(text, options, accepted)));
      if (decided === "stalled") {
        throw new KernelError("KC_ERR_STALLED", `The prompt could not be taken: it ${this.stallReason()}`);
      }
      await decided?.run;
    } finally {
      unwatch();
      this.releaseIfIdle();
    }
  }

  /**
   * pi's `steer`/`followUp`: an extension command is refused, the `input` handlers run (with the queue as
   * `streamingBehavior` while a run is going), and the message is queued, run or not.
   */
  private async queueInput(
    text: string,
    options: AgentPromptOptions,
    accepted: (disposition: PromptDisposition) => void,
  ): Promise<void> {
    const behavior = options.streamingBehavior ?? "steer";
    if (text.startsWith("/")) {
      const name = text.slice(1).split(/\s/, 1)[0]!;
      const command = this.deps.commands?.get(name);
      if (command && (command.source ?? "extension") === "extension") {
        throw new KernelError(
          "KC_ERR_BUSY",
          `Extension command "/${name}" cannot be queued. Use prompt() or execute the command when not streaming.`,
        );
      }
    }
    const input = await this.transformInput(text, options, this.busy ? behavior : undefined);
    if (input.handled) {
      accepted("handled");
      return;
    }
    const expanded = await this.expandIntoQueue(input.text, behavior, input.images);
    if (expanded) {
      accepted(expanded.sent ? "queued" : "handled");
      return;
    }
    this.queues.enqueue(queueOf(behavior), promptMessage(input.text, input.images));
    accepted("queued");
  }

  /**
   * A queued `/template args` or `/skill:name args`: runs the command, whose `ctx.sendUserMessage()` puts the
   * expanded text in the queue (with the message's images); whether it sent anything. Undefined when the text
   * names no such command.
   */
  private async expandIntoQueue(
    text: string,
    behavior: "steer" | "followUp",
    images: ImageContent[] | undefined,
  ): Promise<{ sent: boolean } | undefined> {
    const command = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(text);
    const source = command ? this.deps.commands?.get(command[1]!)?.source : undefined;
    if (!command || !this.deps.commands || (source !== "prompt" && source !== "skill")) return undefined;
    const outer = this.queuedExpansion;
    const expansion = { behavior, ...(images ? { images } : {}), sent: false };
    this.queuedExpansion = expansion;
    try {
      await runCommand(this.deps.runtime, this.deps.commands, command[1]!, command[2]?.trim() ?? "");
    } finally {
      this.queuedExpansion = outer;
    }
    return { sent: expansion.sent };
  }

  /** The `input` handlers' verdict on a message: its text and images, or handled. */
  private transformInput(
    text: string,
    options: AgentPromptOptions,
    streamingBehavior: "steer" | "followUp" | undefined,
  ): Promise<{ text: string; images?: ImageContent[]; handled?: boolean }> {
    return this.bus.transform(
      "input",
      { text, ...(options.images ? { images: options.images } : {}) } as {
        text: string;
        images?: ImageContent[];
        handled?: boolean;
      },
      this.ctx(),
      {
        toEvent: (v) => ({
          ...v,
          source: options.source ?? "sdk",
          ...(streamingBehavior ? { streamingBehavior } : {}),
        }),
        fold: (v, r) =>
          r.action === "transform"
            ? { text: r.text, ...(r.images ? { images: r.images } : {}) }
            : r.action === "handled"
              ? { ...v, handled: true }
              : v,
        stop: (r) => r.action === "handled",
      },
    );
  }

  /** Runs the input handlers and decides where the prompt goes; the run, when it joined or started one. */
  private async admit(
    text: string,
    options: AgentPromptOptions,
    accepted: (disposition: PromptDisposition) => void,
  ): Promise<{ run: Promise<void> } | undefined> {
    const input = await this.transformInput(
      text,
      options,
      options.streamingBehavior && this.busy ? options.streamingBehavior : undefined,
    );
    if (input.handled) {
      accepted("handled");
      return undefined;
    }
    const message = promptMessage(input.text, input.images);
    if (options.streamingBehavior && this.busy) {
      this.queues.enqueue(queueOf(options.streamingBehavior), message);
      accepted("queued");
      return undefined;
    }
    if (this.starting) {
      this.starting.joined.push(message);
      accepted("started");
      return { run: this.starting.done };
    }
    if (this.busy) {
      throw new KernelError(
        "KC_ERR_BUSY",
        "A run is in progress: send the message as a steering or follow-up message, or wait until it finishes.",
      );
    }
    // Refused, not accepted, without a model: the caller hears why.
    this.requireModel();
    const run = this.startRun({ kind: "user", message });
    accepted("started");
    return { run };
  }

  /**
   * The acceptance of the prompt whose `/command` is running, for the command's `ctx.sendUserMessage()` to report
   * its dispatch with; undefined once taken, so the originating prompt hears exactly one disposition.
   */
  takeCommandAcceptance(): ((disposition: PromptDisposition) => void) | undefined {
    const taken = this.commandAcceptance;
    this.commandAcceptance = undefined;
    return taken;
  }

  steer(text: string, images?: ImageContent[]): void {
    this.queues.enqueue("steering", promptMessage(text, images));
  }

  followUp(text: string, images?: ImageContent[]): void {
    this.queues.enqueue("followUp", promptMessage(text, images));
  }

  /** Stops the run, kills running tools through their signal, and hands back the queued messages. */
  abort(): QueueSnapshot {
    const returned = this.queues.clear();
    this.controller?.abort();
    this.compactionController?.abort();
    return returned;
  }

  /**
   * Cancels an automatic retry that is waiting for its delay: the run ends with the failure it retried
   * (`auto_retry_end` with `finalError: "Retry cancelled"`). Nothing happens when no retry is waiting.
   */
  abortRetry(): void {
    this.retryWait?.abort();
  }

  clearQueue(): QueueSnapshot {
    return this.queues.clear();
  }

  /**
   * While a prompt template or skill runs for a queued message (`expandIntoQueue`), what its command sends joins that
   * queue, with the message's images, instead of starting or joining a run: true when it did.
   */
  queueExpansion(content: MessageContent): boolean {
    const expansion = this.queuedExpansion;
    if (!expansion) return false;
    const images = expansion.images ?? [];
    const withImages: MessageContent =
      images.length === 0
        ? content
        : [
            ...(typeof content === "string" ? [{ type: "text" as const, text: content }] : content),
            ...images,
          ];
    this.queues.enqueue(queueOf(expansion.behavior), userMessage(withImages));
    expansion.sent = true;
    return true;
  }

  getQueue(): QueueSnapshot {
    return this.queues.snapshot();
  }

  // ---- ExtensionAPI: core.agent --------------------------------------------------------------------

  sendUserMessage(
    _owner: ExtensionInfo | undefined,
    content: MessageContent,
    options: { deliverAs?: "steer" | "followUp" } = {},
  ): void {
    if (!options.deliverAs && this.queueExpansion(content)) return;
    const message = userMessage(content);
    if (this.starting && !options.deliverAs) {
      this.starting.joined.push(message);
      return;
    }
    if (this.busy) {
      if (!options.deliverAs) {
        throw new KernelError(
          "KC_ERR_BUSY",
          "sendUserMessage() during a run needs deliverAs: 'steer' or 'followUp'",
        );
      }
      this.queues.enqueue(queueOf(options.deliverAs), message);
      return;
    }
    this.deps.runtime.assertCanPrompt("prompt");
    void this.startRun({ kind: "user", message }).catch((error: unknown) =>
      this.report("sendUserMessage", error),
    );
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
    const message = customMessage(input);
    if (options.deliverAs === "nextTurn") {
      this.queues.deferToNextTurn(message);
      return;
    }
    if (this.starting && !options.deliverAs) {
      this.starting.joined.push(message);
      return;
    }
    if (this.busy) {
      this.queues.enqueue(options.deliverAs === "followUp" ? "followUp" : "steering", message);
      return;
    }
    if (options.triggerTurn) {
      this.deps.runtime.assertCanPrompt("prompt");
      void this.startRun({ kind: "custom", message }).catch((error: unknown) =>
        this.report("sendMessage", error),
      );
      return;
    }
    void this.transcript.add(message).catch((error: unknown) => this.report("sendMessage", error));
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

  /** Starts a run; from here until it takes its input, messages sent without a queue join it. */
  private startRun(start: RunStart): Promise<void> {
    const starting: StartingRun = { joined: [], done: Promise.resolve() };
    starting.done = this.run(start, starting);
    return starting.done;
  }

  private async run(start: RunStart, starting: StartingRun): Promise<void> {
    this.requireModel();
    this.warmer.runStarted();
    this.busy = true;
    this.starting = starting;
    this.guard = new LoopGuard({
      doomLoop: () => this.deps.doomLoop?.() ?? { enabled: false, threshold: 0 },
      maxTurns: this.deps.maxTurns,
      context: () => this.ctx(),
    });
    this.controller = new AbortController();
    const signal = this.controller.signal;
    // A run waiting on something that can never settle ends with an error instead of a silent exit (stall-watch.ts).
    const stalls = new Stalls();
    const unwatch = watchForStall(() => stalls.fire());
    let aborted = false;
    try {
      const ran = await stalls.race(this.runToEnd(start, starting, signal));
      if (ran === "stalled") await stalls.race(this.recordStall());
      else aborted = ran.aborted;
    } finally {
      this.starting = undefined;
      this.guard = undefined;
      this.controller = undefined;
      this.busy = false;
      await stalls.race(this.bus.emit("agent_settled", { aborted }, this.ctx()));
      unwatch();
      this.releaseIfIdle();
      if (!aborted) this.warmer.idle();
    }
  }

  private async runToEnd(start: RunStart, starting: StartingRun, signal: AbortSignal) {
    // Taken before the handlers run: a message they defer is for the run after this one.
    const deferred: AgentMessage[] = this.queues.takeNextTurn();
    let prepared: Awaited<ReturnType<typeof beforeAgentStart>>;
    try {
      // A manual compaction that began before this run finishes first: the run reads the compacted context.
      await this.compactor.settled();
      this.compactor.runStarted();
      prepared = await beforeAgentStart(start, this.startConfig);
      this.lastSystemPrompt = prepared.systemPrompt;
      this.recordedSystemPrompt = prepared.recorded;
    } catch (error) {
      // The prompts that started or joined this run were answered as accepted: they reach the session, with the
      // reason the run could not start, instead of vanishing.
      await this.admissions.drained();
      this.starting = undefined;
      await this.recordFailedStart([...deferred, start.message, ...starting.joined], error);
      return { aborted: false };
    }
    await this.admissions.drained();
    this.starting = undefined;
    return runAgent(
      [...deferred, start.message, ...prepared.messages, ...starting.joined],
      this.runConfig,
      signal,
    );
  }

  private async recordFailedStart(messages: AgentMessage[], error: unknown): Promise<void> {
    for (const message of messages) await this.transcript.add(message);
    const reason = error instanceof Error ? error.message : String(error);
    await this.transcript.add(stoppedMessage(this.requireModel(), `The run could not start: ${reason}`));
  }

  /**
   * The run waits for something that has nothing left to settle it: it ends with an error naming what. The stuck
   * work is left as it is (it can never go on), so nothing it would do reaches the session after this record.
   */
  private async recordStall(): Promise<void> {
    const text = `The run cannot finish: it ${this.stallReason()}`;
    await this.transcript.add(stoppedMessage(this.requireModel(), text));
  }

  /** What the session waits for when the process has nothing left to do, for the error that says so. */
  private stallReason(): string {
    const waiting = [
      ...this.tools.pending(),
      ...this.bus.pending().map((h) => `the ${h.event} handler of ${h.owner.id}`),
    ];
    const what = waiting.length > 0 ? [...new Set(waiting)].join(", ") : "work";
    return `waits for ${what}, which never settled and has nothing left that could settle it (a promise that is never resolved).`;
  }

  private requireModel(): ModelInfo {
    if (!this.model)
      throw new KernelError(
        "KC_ERR_NO_MODEL",
        `No model is selected for this session. ${this.deps.models.noModelHelp()}`,
      );
    return this.model;
  }

  private report(event: string, error: unknown): void {
    this.deps.runtime.handleError({
      owner: { id: "plugin:agent-loop", order: Number.MAX_SAFE_INTEGER },
      event,
      error,
    });
  }
}

function queueOf(behaviour: "steer" | "followUp"): "steering" | "followUp" {
  return behaviour === "steer" ? "steering" : "followUp";
}

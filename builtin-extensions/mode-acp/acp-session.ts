/**
 * One ACP session: a KnightCode session (opened through `ModeContext.openSession`) and what the client sees of it.
 * Session events become `session/update` notifications, sent in order through one outbox; the session's own
 * extension (`extension()`) connects the client's MCP servers, routes the core tools through the client's file
 * system and terminals, and applies the session mode to each tool call; its UI asks the client for permission and
 * answers.
 */
import { readFile, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import {
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  type McpServer,
  RequestError,
  type RequestPermissionResponse,
  type SessionConfigOption,
  type SessionModeState,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
} from "@agentclientprotocol/sdk";
import {
  type AssistantMessageEvent,
  type DialogOptions,
  type ExtensionAPI,
  type ExtensionFactory,
  errorMessage,
  type ImageContent,
  type McpServerConfig,
  type ModeContext,
  type ModelInfo,
  type NotifyLevel,
  type PlanMode,
  type PlanModeState,
  planModeService,
  type SessionController,
  type SessionStreamEvent,
  type ThinkingLevel,
  type ToolCallResult,
  type ToolResult,
  toolOperationsService,
} from "@knightcodeai/cli/kit";
import { AcpUI } from "./acp-ui.js";
import { clientToolOperations, type OpsSession } from "./client-ops.js";
import { resultContent, toolKind, toolLocations, toolPath, toolTitle } from "./tool-display.js";

export const MODES = [
  {
    id: "default",
    name: "Default",
    description: "Tools run as your settings and the permission gate decide",
  },
  {
    id: "ask",
    name: "Ask",
    description: "Asks you before every tool call that can change something",
  },
  {
    id: "read-only",
    name: "Read-only",
    description: "Only tools that change nothing run; the others are refused",
  },
] as const;

/** Offered while plan mode (builtin:plan-mode, or what replaces it) is there: it enters and leaves plan mode. */
export const PLAN_MODE = {
  id: "plan",
  name: "Plan",
  description: "Read-only tools while the agent plans; you approve the plan before anything changes",
} as const;

type ModeId = (typeof MODES)[number]["id"] | typeof PLAN_MODE.id;

const LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

export const ALLOW_ONCE = "allow_once";
export const ALLOW_ALWAYS = "allow_always";
export const REJECT_ONCE = "reject_once";

const READ_ONLY_REFUSAL =
  "the session is in read-only mode: only tools that change nothing may run. Say what you would change instead, or ask the user to switch the mode.";
const DECLINED =
  "the user declined this call. Do not retry it; find another way or ask the user what they want.";
export const NO_FORMS =
  "No one can answer: the ACP client offers no forms (it did not advertise elicitation.form), so questions cannot reach the user. Decide yourself and say what you assumed, or end your turn with the question in your reply.";

/** Files larger than this get no diff (their text would be sent whole twice). */
const DIFF_MAX_BYTES = 1024 * 1024;

export interface AcpSessionOptions {
  ctx: ModeContext;
  client: AgentContext;
  caps: ClientCapabilities;
  permissionTimeoutMs: number;
  cwd: string;
  mcpServers: readonly McpServer[];
  /** Opens this stored session instead of a new one. */
  sessionFile?: string;
  log(message: string): void;
}

interface OpenCall {
  id: string;
  toolName: string;
  args: Record<string, unknown>;
  title: string;
  path?: string;
  /** The file's text before an edit or write, for the diff. */
  before?: Promise<string | undefined>;
  terminalId?: string;
}

export class AcpSession implements OpsSession {
  controller!: SessionController;
  /** The ACP session id: the KnightCode session's id when it opened (kept if a command replaces the session). */
  sessionId = "";
  private mode: ModeId = "default";
  /** The mode to return to when plan mode ends. */
  private beforePlan: ModeId = "default";
  /** Plan mode's service, while an extension provides it. */
  private plan: PlanMode | undefined;
  private unwatchPlan: () => void = () => {};
  private readonly calls = new Map<string, OpenCall>();
  /** Calls whose `tool_call` gate is running, latest last: a confirmation asks about the latest. */
  private readonly inGate: string[] = [];
  /** Calls the person allowed in the ask mode: the permission gate does not ask about them again. */
  private readonly approved = new Set<string>();
  /** Tools the person chose "always allow" for, in this session. */
  private readonly alwaysAllowed = new Set<string>();
  /** Open requests to the client (permissions, forms): cancelled by session/cancel and close. */
  private readonly waiting = new Set<AbortController>();
  private outbox: Promise<void> = Promise.resolve();
  private turn: { cancelled: boolean } | undefined;
  private unsubscribe: () => void = () => {};
  private requests = 0;

  private constructor(private readonly options: AcpSessionOptions) {}

  static async open(options: AcpSessionOptions): Promise<AcpSession> {
    const session = new AcpSession(options);
    const ui = new AcpUI({
      permission: (title, message, opts) => session.askPermission(title, message, opts),
      form: (message, properties, required, opts) => session.form(message, properties, required, opts),
      notify: (message, level) => session.notify(message, level),
      setTitle: () => {},
    });
    session.controller = await options.ctx.openSession!({
      cwd: options.cwd,
      ...(options.sessionFile ? { sessionFile: options.sessionFile } : {}),
      ui,
      extensions: [session.extension()],
      warn: options.log,
    });
    session.sessionId = session.controller.getState().sessionId;
    session.unsubscribe = session.controller.subscribe((event) => session.onEvent(event));
    return session;
  }

  /** The session's own extension (origin `sdk`, loaded after every other). */
  private extension(): ExtensionFactory {
    const { client, caps, cwd, mcpServers } = this.options;
    return (knightcode: ExtensionAPI) => {
      // A server the client describes badly is skipped with an error, never at the cost of the gate below.
      for (const server of mcpServers) {
        try {
          knightcode.registerMcpServer(server.name, mcpConfig(server, cwd));
        } catch (error) {
          knightcode.log.error(
            `MCP server "${server.name}" from the ACP client is skipped: ${errorMessage(error)}`,
          );
        }
      }
      const ops = clientToolOperations(client, caps, this);
      if (ops) knightcode.services.provide(toolOperationsService, () => ops);
      knightcode.on("tool_call", (event) => this.gate(event.toolCallId, event.toolName, knightcode));
      let stopListening: () => void = () => {};
      this.unwatchPlan = knightcode.services.watch(planModeService, (plan) => {
        stopListening();
        this.plan = plan;
        stopListening = plan ? plan.onChange((state) => this.onPlan(state)) : () => {};
        if (plan && plan.state().phase === "planning") this.mode = PLAN_MODE.id;
      });
    };
  }

  // ---- what the client asks ----------------------------------------------------------------------

  async prompt(blocks: readonly ContentBlock[]): Promise<StopReason> {
    if (this.turn || !this.controller.isIdle()) {
      throw RequestError.invalidRequest(
        undefined,
        "a prompt is already running in this session: wait for its answer, or send session/cancel",
      );
    }
    const input = promptInput(blocks);
    const turn = { cancelled: false };
    this.turn = turn;
    const start = this.controller.sessionManager.getBranch().length;
    try {
      await this.controller.prompt(input.text, input.images.length > 0 ? { images: input.images } : {});
    } catch (error) {
      if (!turn.cancelled) {
        await this.flush();
        throw new RequestError(-32603, errorMessage(error));
      }
    } finally {
      this.turn = undefined;
    }
    this.sendUsage();
    await this.flush();
    if (turn.cancelled) return "cancelled";
    const last = this.controller.sessionManager
      .getBranch()
      .slice(start)
      .flatMap((entry) =>
        entry.type === "message" && entry.message.role === "assistant" ? [entry.message] : [],
      )
      .at(-1);
    switch (last?.stopReason) {
      case "aborted":
        return "cancelled";
      case "length":
        return "max_tokens";
      case "error":
        throw new RequestError(-32603, last.errorMessage ?? "the model request failed");
      default:
        return "end_turn";
    }
  }

  /** session/cancel: the run stops, and open permission requests and forms are withdrawn. */
  cancel(): void {
    if (this.turn) this.turn.cancelled = true;
    for (const request of this.waiting) request.abort();
    this.controller.abort();
  }

  /** The session modes: the three tool policies, and plan mode while something provides it. */
  private modes(): readonly { id: ModeId; name: string; description: string }[] {
    return this.plan ? [...MODES, PLAN_MODE] : MODES;
  }

  modeState(): SessionModeState {
    return {
      currentModeId: this.mode,
      availableModes: this.modes().map((m) => ({ id: m.id, name: m.name, description: m.description })),
    };
  }

  setMode(modeId: string): void {
    const mode = this.modes().find((m) => m.id === modeId);
    if (!mode) {
      throw RequestError.invalidParams(
        undefined,
        `unknown mode "${modeId}"; the modes are ${this.modes()
          .map((m) => m.id)
          .join(", ")}`,
      );
    }
    if (mode.id === PLAN_MODE.id) {
      // Plan mode's state change reports the new mode (onPlan).
      if (this.mode !== PLAN_MODE.id) this.beforePlan = this.mode;
      this.plan?.enter();
      return;
    }
    const wasPlanning = this.mode === PLAN_MODE.id;
    this.mode = mode.id;
    this.beforePlan = mode.id;
    if (wasPlanning && this.plan?.state().phase === "planning") this.plan.leave();
    this.modeChanged();
  }

  private modeChanged(): void {
    this.send({ sessionUpdate: "current_mode_update", currentModeId: this.mode });
    this.send({ sessionUpdate: "config_option_update", configOptions: this.configOptions() });
  }

  /** Plan mode's state: the session mode follows it, and its steps go to the client as a `plan`. */
  private onPlan(state: PlanModeState): void {
    // While the session opens (--plan), the client does not know it yet: session/new's result says the mode.
    const known = this.sessionId !== "";
    if (state.phase === "planning" && this.mode !== PLAN_MODE.id) {
      this.beforePlan = this.mode;
      this.mode = PLAN_MODE.id;
      if (known) this.modeChanged();
    } else if (state.phase !== "planning" && this.mode === PLAN_MODE.id) {
      this.mode = this.beforePlan;
      if (known) this.modeChanged();
    }
    if (known && state.steps.length > 0) {
      this.send({
        sessionUpdate: "plan",
        entries: state.steps.map((s) => ({ content: s.step, priority: "medium", status: s.status })),
      });
    }
  }

  configOptions(): SessionConfigOption[] {
    const options: SessionConfigOption[] = [
      {
        id: "mode",
        name: "Mode",
        category: "mode",
        type: "select",
        currentValue: this.mode,
        options: this.modes().map((m) => ({ value: m.id, name: m.name, description: m.description })),
      },
    ];
    // The models that can be used now (not every catalogue entry), and the one in use.
    const models = this.controller.getUsableModels().map((u) => u.model);
    const current = this.controller.getState().model;
    if (current && !models.some((m) => modelKey(m) === modelKey(current))) models.unshift(current);
    if (models.length > 0) {
      options.push({
        id: "model",
        name: "Model",
        category: "model",
        type: "select",
        currentValue: modelKey(current ?? models[0]!),
        options: models.map((m) => ({ value: modelKey(m), name: m.name ?? m.id, description: m.provider })),
      });
    }
    if (current?.reasoning) {
      options.push({
        id: "thinking",
        name: "Thinking",
        category: "thought_level",
        type: "select",
        currentValue: this.controller.getThinkingLevel(),
        options: LEVELS.map((level) => ({ value: level, name: level })),
      });
    }
    return options;
  }

  async setConfigOption(configId: string, value: unknown): Promise<SessionConfigOption[]> {
    if (typeof value !== "string") {
      throw RequestError.invalidParams(undefined, `"${configId}" takes the value of one of its options`);
    }
    switch (configId) {
      case "mode":
        this.setMode(value);
        break;
      case "model": {
        const slash = value.indexOf("/");
        const ok =
          slash > 0 && (await this.controller.setModel(value.slice(0, slash), value.slice(slash + 1)));
        if (!ok) {
          throw RequestError.invalidParams(
            undefined,
            `no available model "${value}" (give provider/model, one of the options of "model")`,
          );
        }
        break;
      }
      case "thinking": {
        const level = LEVELS.find((l) => l === value);
        if (!level) throw RequestError.invalidParams(undefined, `thinking is one of ${LEVELS.join(", ")}`);
        this.controller.setThinkingLevel(level);
        break;
      }
      default:
        throw RequestError.invalidParams(
          undefined,
          `unknown configuration option "${configId}" (the options are mode, model and thinking)`,
        );
    }
    return this.configOptions();
  }

  /** The slash commands, for `available_commands_update`. */
  sendCommands(): void {
    this.send({
      sessionUpdate: "available_commands_update",
      availableCommands: this.controller.getCommands().map((c) => ({
        name: c.name,
        description: c.description ?? `${c.source} command`,
      })),
    });
  }

  /** Sends the stored conversation as updates (session/load), and waits until they are written. */
  async replay(): Promise<void> {
    const { cwd } = this.options;
    for (const entry of this.controller.sessionManager.getBranch()) {
      if (entry.type !== "message") continue;
      const message = entry.message;
      if (message.role === "user") {
        const parts =
          typeof message.content === "string"
            ? [{ type: "text" as const, text: message.content }]
            : message.content;
        for (const part of parts) {
          this.send({
            sessionUpdate: "user_message_chunk",
            content:
              part.type === "text"
                ? { type: "text", text: part.text }
                : { type: "image", data: part.data, mimeType: part.mimeType },
          });
        }
      } else if (message.role === "assistant") {
        for (const part of message.content) {
          if (part.type === "text" && part.text) {
            this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: part.text } });
          } else if (part.type === "thinking" && part.thinking && !part.redacted) {
            this.send({
              sessionUpdate: "agent_thought_chunk",
              content: { type: "text", text: part.thinking },
            });
          } else if (part.type === "toolCall") {
            this.send({
              sessionUpdate: "tool_call",
              toolCallId: part.id,
              title: toolTitle(part.name, part.arguments),
              kind: toolKind(part.name),
              status: "in_progress",
              locations: toolLocations(part.name, cwd, part.arguments),
              rawInput: part.arguments,
            });
          }
        }
      } else if (message.role === "toolResult") {
        this.send({
          sessionUpdate: "tool_call_update",
          toolCallId: message.toolCallId,
          status: message.isError ? "failed" : "completed",
          content: resultContent(message),
        });
      }
    }
    await this.flush();
  }

  async close(): Promise<void> {
    this.cancel();
    this.unsubscribe();
    this.unwatchPlan();
    await this.flush();
    await this.controller.dispose();
  }

  // ---- session events → updates ------------------------------------------------------------------

  private onEvent(event: SessionStreamEvent): void {
    switch (event.type) {
      case "message_update": {
        const e = event.assistantMessageEvent as AssistantMessageEvent;
        if (e.type === "text_delta") {
          this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.delta } });
        } else if (e.type === "thinking_delta") {
          this.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: e.delta } });
        }
        break;
      }
      case "tool_execution_start":
        this.toolStarted(
          event.toolCallId as string,
          event.toolName as string,
          (event.args ?? {}) as Record<string, unknown>,
        );
        break;
      case "tool_execution_update":
        this.toolUpdated(event.toolCallId as string, event.partialResult as ToolResult | undefined);
        break;
      case "tool_execution_end":
        this.toolEnded(event.toolCallId as string, event.result as ToolResult, event.isError === true);
        break;
      case "session_info_changed":
        this.send({
          sessionUpdate: "session_info_update",
          title: (event.name as string | undefined) ?? null,
        });
        break;
      case "thinking_level_changed":
        this.send({ sessionUpdate: "config_option_update", configOptions: this.configOptions() });
        break;
    }
  }

  private toolStarted(id: string, toolName: string, args: Record<string, unknown>): void {
    const { cwd } = this.options;
    const path = toolPath(cwd, args);
    const call: OpenCall = {
      id,
      toolName,
      args,
      title: toolTitle(toolName, args),
      ...(path ? { path } : {}),
    };
    if (path && (toolName === "edit" || toolName === "write")) call.before = this.readForDiff(path);
    this.calls.set(id, call);
    this.send({
      sessionUpdate: "tool_call",
      toolCallId: id,
      title: call.title,
      kind: toolKind(toolName),
      status: "in_progress",
      locations: toolLocations(toolName, cwd, args),
      rawInput: args,
    });
  }

  private toolUpdated(id: string, partial: ToolResult | undefined): void {
    const call = this.calls.get(id);
    if (call?.terminalId) return; // the client shows the terminal itself
    const content = resultContent(partial);
    if (content.length > 0) this.send({ sessionUpdate: "tool_call_update", toolCallId: id, content });
  }

  private toolEnded(id: string, result: ToolResult, isError: boolean): void {
    const call = this.calls.get(id);
    this.calls.delete(id);
    this.approved.delete(id);
    const at = this.inGate.indexOf(id);
    if (at >= 0) this.inGate.splice(at, 1);
    this.enqueue(async () => {
      let content: ToolCallContent[] = resultContent(result);
      if (call?.terminalId)
        content = [{ type: "terminal", terminalId: call.terminalId }, ...(isError ? content : [])];
      else if (!isError && call?.path && (call.toolName === "edit" || call.toolName === "write")) {
        const oldText = await call.before;
        const newText =
          call.toolName === "write" && typeof call.args.content === "string"
            ? call.args.content
            : await this.readForDiff(call.path);
        if (newText !== undefined)
          content = [{ type: "diff", path: call.path, oldText: oldText ?? null, newText }];
      }
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: id,
        status: isError ? "failed" : "completed",
        content,
      };
    });
  }

  /** The file's text as the tools see it (the client's buffer when it reads for them); undefined if none. */
  private async readForDiff(path: string): Promise<string | undefined> {
    try {
      if (this.options.caps.fs?.readTextFile) {
        const { content } = await this.options.client.request("fs/read_text_file", {
          sessionId: this.sessionId,
          path,
        });
        return content.length > DIFF_MAX_BYTES ? undefined : content;
      }
      if ((await stat(path)).size > DIFF_MAX_BYTES) return undefined;
      return (await readFile(path)).toString("utf8");
    } catch {
      return undefined;
    }
  }

  /** OpsSession: a bash call's client terminal, embedded in its tool call before the command runs on. */
  async attachTerminal(command: string, terminalId: string): Promise<void> {
    const call = [...this.calls.values()].find(
      (c) =>
        c.toolName === "bash" &&
        !c.terminalId &&
        typeof c.args.command === "string" &&
        command.endsWith(c.args.command),
    );
    if (!call) return;
    call.terminalId = terminalId;
    this.send({
      sessionUpdate: "tool_call_update",
      toolCallId: call.id,
      content: [{ type: "terminal", terminalId }],
    });
    await this.flush();
  }

  private sendUsage(): void {
    const usage = this.controller.getSessionStats().contextUsage;
    if (usage?.tokens == null) return;
    this.send({ sessionUpdate: "usage_update", used: usage.tokens, size: usage.contextWindow });
  }

  // ---- the mode and permissions -------------------------------------------------------------------

  /** The session's `tool_call` handler: runs before the permission gate (which subscribes as a fallback). */
  private async gate(
    toolCallId: string,
    toolName: string,
    knightcode: ExtensionAPI,
  ): Promise<ToolCallResult | undefined> {
    this.inGate.push(toolCallId);
    // In plan mode, plan mode's own handler refuses what may not run.
    if (this.mode === "default" || this.mode === PLAN_MODE.id) return undefined;
    const info = knightcode.getAllTools().find((t) => t.name === toolName);
    if (info?.annotations?.readOnlyHint === true) return undefined;
    if (this.mode === "read-only") return { block: true, reason: READ_ONLY_REFUSAL };
    if ((await this.askPermission(`Allow ${toolName}?`, undefined, undefined)) === undefined) {
      return { block: true, reason: DECLINED };
    }
    this.approved.add(toolCallId);
    return undefined;
  }

  /**
   * `session/request_permission` about the call being gated (or, for a confirmation outside a tool call, about
   * itself). Fails closed: no answer within the timeout, an error, a cancelled request or a rejection is false.
   */
  private async askPermission(
    title: string,
    message: string | undefined,
    opts: DialogOptions | undefined,
  ): Promise<"once" | "always" | undefined> {
    if (!this.sessionId) {
      this.unaskable(title);
      return undefined;
    }
    const callId = [...this.inGate].reverse().find((id) => this.calls.has(id));
    const call = callId ? this.calls.get(callId) : undefined;
    if (call && (this.approved.has(call.id) || this.alwaysAllowed.has(call.toolName))) return "once";
    if (opts?.signal?.aborted) return undefined;
    const details: ToolCallContent[] = message
      ? [{ type: "content", content: { type: "text", text: message } }]
      : [];
    const toolCall = call
      ? { toolCallId: call.id, title: call.title, kind: toolKind(call.toolName), content: details }
      : { toolCallId: `permission-${++this.requests}`, title, content: details };
    const options = [
      { optionId: ALLOW_ONCE, name: "Allow", kind: "allow_once" as const },
      {
        optionId: ALLOW_ALWAYS,
        name: call ? `Always allow ${call.toolName} in this session` : "Always allow",
        kind: "allow_always" as const,
      },
      { optionId: REJECT_ONCE, name: "Reject", kind: "reject_once" as const },
    ];
    // The client learns of the call before it is asked about it.
    await this.flush();
    const request = new AbortController();
    this.waiting.add(request);
    const timer = setTimeout(() => request.abort("timeout"), this.options.permissionTimeoutMs);
    const onAbort = () => request.abort("aborted");
    opts?.signal?.addEventListener("abort", onAbort, { once: true });
    if (opts?.timeout !== undefined && opts.timeout > 0) setTimeout(onAbort, opts.timeout).unref();
    try {
      const answer: RequestPermissionResponse = await this.options.client.request(
        "session/request_permission",
        { sessionId: this.sessionId, toolCall, options },
        { cancellationSignal: request.signal, stopWaitingOnCancel: true },
      );
      if (answer.outcome.outcome !== "selected") return undefined;
      const chosen = answer.outcome.optionId;
      if (chosen === ALLOW_ALWAYS && call) this.alwaysAllowed.add(call.toolName);
      return chosen === ALLOW_ALWAYS ? "always" : chosen === ALLOW_ONCE ? "once" : undefined;
    } catch (error) {
      if (request.signal.reason === "timeout") {
        this.options.log(
          `the client did not answer the permission request "${toolCall.title}" within ${this.options.permissionTimeoutMs / 1000} s; the call is refused`,
        );
      } else if (!request.signal.aborted) {
        this.options.log(
          `the permission request "${toolCall.title}" failed (${errorMessage(error)}); the call is refused`,
        );
      }
      return undefined;
    } finally {
      clearTimeout(timer);
      opts?.signal?.removeEventListener("abort", onAbort);
      this.waiting.delete(request);
    }
  }

  /** An `elicitation/create` form; undefined when declined or cancelled. Without form support, no one can answer. */
  private async form(
    message: string,
    properties: Record<string, Record<string, unknown>>,
    required: string[],
    opts: DialogOptions | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    if (!this.sessionId) {
      this.unaskable(message);
      return undefined;
    }
    if (!this.options.caps.elicitation?.form) throw new Error(NO_FORMS);
    if (opts?.signal?.aborted) return undefined;
    await this.flush();
    const request = new AbortController();
    this.waiting.add(request);
    const onAbort = () => request.abort("aborted");
    opts?.signal?.addEventListener("abort", onAbort, { once: true });
    const timer =
      opts?.timeout !== undefined && opts.timeout > 0 ? setTimeout(onAbort, opts.timeout) : undefined;
    try {
      const answer = await this.options.client.request(
        "elicitation/create",
        {
          mode: "form",
          sessionId: this.sessionId,
          message,
          requestedSchema: { type: "object", properties, ...(required.length > 0 ? { required } : {}) },
        } as Parameters<AgentContext["request"]>[1] as never,
        { cancellationSignal: request.signal, stopWaitingOnCancel: true },
      );
      const reply = answer as { action: string; content?: Record<string, unknown> };
      return reply.action === "accept" ? (reply.content ?? {}) : undefined;
    } catch (error) {
      if (!request.signal.aborted)
        this.options.log(`the question "${message}" failed: ${errorMessage(error)}`);
      return undefined;
    } finally {
      if (timer) clearTimeout(timer);
      opts?.signal?.removeEventListener("abort", onAbort);
      this.waiting.delete(request);
    }
  }

  /**
   * A question while the session is still opening (project trust, a `session_start` handler's dialog): the client
   * does not know the session yet, so no one can be asked and the answer is no.
   */
  private unaskable(title: string): false {
    this.options.log(
      `"${title}" was asked while the session was opening, before the ACP client knows it; answered no (for project trust, start knightcode acp with --approve)`,
    );
    return false;
  }

  private notify(message: string, level: NotifyLevel): void {
    if (this.options.caps.session?.notices) {
      this.send({ sessionUpdate: "notice", severity: level, title: message });
    } else this.options.log(`${level}: ${message}`);
  }

  // ---- the outbox ---------------------------------------------------------------------------------

  private send(update: SessionUpdate): void {
    this.enqueue(async () => update);
  }

  /** Updates go out in the order they were made, even those that wait for something first (a diff). */
  private enqueue(make: () => Promise<SessionUpdate | undefined>): void {
    const { client, log } = this.options;
    this.outbox = this.outbox.then(async () => {
      try {
        const update = await make();
        if (update) await client.notify("session/update", { sessionId: this.sessionId, update });
      } catch (error) {
        log(`a session/update could not be sent: ${errorMessage(error)}`);
      }
    });
  }

  /** Settles once every update made so far is written. */
  flush(): Promise<void> {
    return this.outbox;
  }
}

function modelKey(model: ModelInfo): string {
  return `${model.provider}/${model.id}`;
}

/** An ACP MCP server as KnightCode's server configuration. */
function mcpConfig(server: McpServer, cwd: string): McpServerConfig {
  if ("url" in server) {
    return {
      url: server.url,
      headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])),
      description: "given by the ACP client",
    };
  }
  return {
    command: server.command,
    args: server.args,
    env: Object.fromEntries(server.env.map((e) => [e.name, e.value])),
    cwd,
    description: "given by the ACP client",
  };
}

/** A prompt's content blocks as KnightCode's prompt text and images. */
export function promptInput(blocks: readonly ContentBlock[]): { text: string; images: ImageContent[] } {
  const parts: string[] = [];
  const images: ImageContent[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "image":
        images.push({ type: "image", data: block.data, mimeType: block.mimeType });
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) {
          parts.push(`<context uri="${resource.uri}">\n${resource.text}\n</context>`);
        } else if (resource.mimeType?.startsWith("image/")) {
          images.push({ type: "image", data: resource.blob, mimeType: resource.mimeType });
        } else {
          throw RequestError.invalidParams(
            undefined,
            `the embedded resource ${resource.uri} is binary (${resource.mimeType ?? "no MIME type"}); KnightCode takes text resources and images`,
          );
        }
        break;
      }
      case "resource_link":
        parts.push(`[${block.name}](${linkTarget(block.uri)})`);
        break;
      case "audio":
        throw RequestError.invalidParams(
          undefined,
          "KnightCode does not take audio in prompts (its promptCapabilities.audio is false)",
        );
      default:
        throw RequestError.invalidParams(
          undefined,
          `unknown content block type "${(block as { type: string }).type}"`,
        );
    }
  }
  if (parts.length === 0 && images.length === 0) {
    throw RequestError.invalidParams(undefined, "the prompt is empty: give at least one content block");
  }
  return { text: parts.join("\n"), images };
}

/** A file link as its path (the tools read paths), any other link as it is. */
function linkTarget(uri: string): string {
  try {
    return uri.startsWith("file:") ? fileURLToPath(uri) : uri;
  } catch {
    return uri;
  }
}

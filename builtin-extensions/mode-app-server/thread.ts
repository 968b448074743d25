/**
 * A loaded thread: one session of its own (its own extension instances), its subscribers, its running turn, its
 * queue of inputs and its extension UI. Session events become turn and item notifications for every subscriber.
 *
 * Turns: `turn/start` (or a queued input once the thread is idle) runs one `prompt`; its events are items, and
 * the prompt settling ends the turn (`completed`, `interrupted` after an abort, `failed` when the model's reply
 * failed or the prompt was refused). Queued inputs are this thread's own queue, each a turn of its own; steers go
 * to the session and are delivered inside the running turn.
 *
 * Dialogs go to the most recent initiating subscriber (the last to start, resume or send a turn) and move to the
 * next one when it disconnects or unsubscribes; with nobody left they are cancelled.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import type {
  AgentMessage,
  DialogOptions,
  ExtensionAPI,
  ExtensionContext,
  ImageContent,
  ModelInfo,
  ModelRuntime,
  SessionController,
  SessionStreamEvent,
  ThinkingLevel,
} from "@knightcodeai/cli/kit";
import { checkComments, composePrompt, type ReviewComment } from "./comments.js";
import type { Connection } from "./connection.js";
import { AppServerError, invalidParams } from "./errors.js";
import {
  type History,
  history,
  type Item,
  itemView,
  limitItem,
  PayloadStore,
  type ToolCallItem,
  TURN_END,
  TURN_MARKER,
  type Turn,
  type TurnEnd,
  type TurnMarker,
  textOf,
  typedContent,
  userContent,
} from "./items.js";
import { checkEffort, modelRef, pickModel } from "./models.js";
import type {
  QueueSnapshotWire,
  ThreadStatusWire,
  ThreadWire,
  ThreadWorkspaceWire,
  TokenUsageWire,
  UserInputWire,
  WarningWire,
} from "./protocol.js";
import { finishToolItem, outputDelta, startToolItem, type ToolRun } from "./tool-items.js";
import { cleanText, ThreadUi } from "./ui.js";
import { turnRecordSince } from "./workspace.js";

export type ThreadStatus = ThreadStatusWire;
export type UserInput = UserInputWire;

interface QueuedInput {
  id: string;
  text: string;
  images: ImageContent[];
  comments: ReviewComment[];
  clientMessageId?: string;
  attachments: number;
}

interface LiveTurn extends Turn {
  clientMessageId?: string;
  /** Notifications wait until the turn is announced (a queued input that has not been taken yet). */
  announced: boolean;
  held: [string, Record<string, unknown>][];
  /** Open items by content key (`<message>:<index>`) or tool call id. */
  open: Map<string, Item>;
  /** Keys of the items already completed. */
  done: Set<string>;
  /** Running tool calls by call id: what their items need when they end. */
  toolRuns: Map<string, ToolRun>;
  /** The id the turn's first user message item gets (live and read back). */
  userItemId: string;
  /** Review comments sent with the input: the user item shows the typed text and these, not the composed prompt. */
  typed?: { text: string; comments: ReviewComment[] };
  messageSeq: number;
  interrupted: boolean;
  /** The session's leaf when the turn began: the turn's own entries come after it. */
  startLeaf: string | null;
  /** What the user typed (without review comments). */
  inputText: string;
  /** Its marker was written: its end is recorded too, so history reads it back as it ended. */
  marked?: boolean;
}

interface PendingDialog {
  method: "ui/dialog" | "item/toolCall/requestUserInput";
  fields: Record<string, unknown>;
  asked?: { connection: Connection; requestId: string };
  finish(reply: Record<string, unknown> | undefined): void;
}

export interface ThreadHost {
  log(message: string): void;
  /** The thread has no subscriber and nothing running: the server may unload it. */
  idleWithoutSubscribers(thread: LoadedThread): void;
  /** `Thread.workspace` for the thread's cwd. */
  describeWorkspace(cwd: string): ThreadWorkspaceWire;
}

export function splitInput(input: readonly UserInput[]): { text: string; images: ImageContent[] } {
  const text = input.flatMap((i) => (i.type === "text" ? [i.text] : [])).join("\n");
  const images: ImageContent[] = input.flatMap((i): ImageContent[] =>
    i.type === "image" ? [{ type: "image", data: i.data, mimeType: i.mimeType }] : [],
  );
  return { text, images };
}

export class LoadedThread {
  readonly id: string;
  readonly ui: ThreadUi;
  readonly payloads = new PayloadStore();
  /** Initiating order: the last is asked first. */
  private subscribers: Connection[] = [];
  private running: LiveTurn | undefined;
  private readonly queue: QueuedInput[] = [];
  private steering: string[] = [];
  private readonly dialogs = new Set<PendingDialog>();
  private status: ThreadStatus = { type: "idle" };
  /** Why the thread cannot work (its extensions failed to restart): `systemError` until a reload succeeds. */
  private systemError: string | undefined;
  private unsubscribeSession: (() => void) | undefined;
  session!: SessionController;
  forkedFromId: string | undefined;
  disposed = false;
  /** Why turns may not start now (a handoff moving the thread); queued inputs wait. */
  private holdReason: string | undefined;
  /** This load's turn ids by the id of their turn record entry (history turns are named by entry ids). */
  readonly liveTurnIds = new Map<string, string>();
  /** Set while the session opens: what goes wrong meanwhile is reported in the result. */
  loadWarnings: WarningWire[] | undefined;

  constructor(
    id: string,
    private readonly host: ThreadHost,
  ) {
    this.id = id;
    this.ui = new ThreadUi({
      dialog: (method, fields, opts) => this.dialog(method, fields, opts),
      notify: (method, params) => this.broadcast(method, params),
      warn: (message) => {
        // While the thread loads, its warnings go in the start or resume result.
        if (this.loadWarnings) this.loadWarnings.push({ message, source: "extension" });
        else this.broadcast("warning", { message, source: "extension" });
      },
      log: (message) => host.log(`thread ${this.id}: ${message}`),
    });
  }

  /** The thread's own extension API in its session (re-bound when `/reload` runs the factories again). */
  private api: ExtensionAPI | undefined;

  /** The thread session's own context, from its `session_start` (again after each `/reload`). */
  private context: ExtensionContext | undefined;

  bindApi(api: ExtensionAPI): void {
    this.api = api;
    api.on("session_start", (_event, ctx) => {
      this.context = ctx;
    });
  }

  /** The thread session's own model runtime (its providers and keys), for calls outside the conversation. */
  modelRuntime(): ModelRuntime | undefined {
    return this.context?.modelRegistry;
  }

  /** The thread's own extension API (its services: the MCP client of this thread), once its session started. */
  extensionApi(): ExtensionAPI | undefined {
    return this.api;
  }

  /**
   * Changes the model and the thinking level from the next model request on (`fallback`: the model a new thread
   * gets). Subscribers get `thread/settings/updated` when either changed.
   */
  async updateSettings(
    change: { model?: string; effort?: ThinkingLevel },
    fallback: ModelInfo | undefined,
  ): Promise<{ model?: string; effort: ThinkingLevel }> {
    const before = this.settingsSnapshot();
    const runtime = this.modelRuntime();
    const model = this.session.getState().model;
    let picked: ModelInfo | undefined;
    if (change.model !== undefined) {
      if (!runtime) throw new AppServerError("internal", "The thread's models are not ready yet");
      picked = await pickModel(runtime, change.model, model, fallback);
    }
    // Both are checked before either changes: a refusal changes nothing.
    if (change.effort !== undefined) checkEffort(runtime, picked ?? model, change.effort);
    if (picked && !(await this.session.setModel(picked.provider, picked.id)))
      throw invalidParams(`The model ${modelRef(picked)} cannot be selected`, { reason: "model" });
    if (change.effort !== undefined) this.session.setThinkingLevel(change.effort);
    const after = this.settingsSnapshot();
    if (JSON.stringify(after) !== JSON.stringify(before)) this.broadcast("thread/settings/updated", after);
    return after;
  }

  private settingsSnapshot(): { model?: string; effort: ThinkingLevel } {
    const state = this.session.getState();
    return { ...(state.model ? { model: modelRef(state.model) } : {}), effort: state.thinkingLevel };
  }

  attach(session: SessionController): void {
    this.session = session;
    // Opened, but an extension refused to start it: it cannot prompt until a reload succeeds.
    this.systemError = session.startupFailure()?.message;
    if (this.systemError !== undefined) this.status = { type: "systemError", message: this.systemError };
    this.unsubscribeSession = session.subscribe((event) => this.onEvent(event));
  }

  // ---- subscribers -------------------------------------------------------------------------------

  /** Subscribes `connection` as the most recent initiator. */
  subscribe(connection: Connection): void {
    const known = this.subscribers.includes(connection);
    this.subscribers = [...this.subscribers.filter((c) => c !== connection), connection];
    if (!known) connection.onClose.push(() => this.unsubscribe(connection));
  }

  isSubscribed(connection: Connection): boolean {
    return this.subscribers.includes(connection);
  }

  subscriberCount(): number {
    return this.subscribers.length;
  }

  unsubscribe(connection: Connection): boolean {
    if (!this.subscribers.includes(connection)) return false;
    this.subscribers = this.subscribers.filter((c) => c !== connection);
    // Dialogs asked of it move to the next subscriber (or are cancelled).
    for (const dialog of this.dialogs)
      if (dialog.asked?.connection === connection) this.ask(dialog, connection);
    this.checkIdle();
    return true;
  }

  broadcast(method: string, params: Record<string, unknown>): void {
    const message = { threadId: this.id, ...params };
    for (const connection of this.subscribers) connection.notify(method, message);
  }

  /** A notification of the running turn: held until the turn is announced. */
  private turnEvent(turn: LiveTurn, method: string, params: Record<string, unknown>): void {
    const message = { turnId: turn.id, ...params };
    if (turn.announced) this.broadcast(method, message);
    else turn.held.push([method, message]);
  }

  /** Unloads later if nobody uses the thread (after a load that subscribed nobody, say). */
  checkIdle(): void {
    if (this.subscribers.length === 0 && !this.running && this.dialogs.size === 0 && this.queue.length === 0)
      this.host.idleWithoutSubscribers(this);
  }

  // ---- status ------------------------------------------------------------------------------------

  getStatus(): ThreadStatus {
    return this.status;
  }

  private updateStatus(): void {
    const next: ThreadStatus = this.running
      ? { type: "active", waitingOn: this.dialogs.size > 0 ? ["dialog"] : [] }
      : this.systemError !== undefined
        ? { type: "systemError", message: this.systemError }
        : { type: "idle" };
    if (JSON.stringify(next) === JSON.stringify(this.status)) return;
    this.status = next;
    this.broadcast("thread/status/changed", { status: next });
  }

  // ---- snapshots ---------------------------------------------------------------------------------

  runningTurn(): Turn | undefined {
    const turn = this.running;
    if (!turn?.announced) return undefined;
    return {
      id: turn.id,
      status: turn.status,
      items: turn.items.map((i) => ({ ...limitItem(i, this.payloads) })),
    };
  }

  queueSnapshot(): QueueSnapshotWire {
    return {
      steering: [...this.steering],
      followUp: this.queue.map((q) => ({
        id: q.id,
        text: q.text,
        ...(q.attachments > 0 ? { attachments: q.attachments } : {}),
      })),
    };
  }

  /**
   * A value computed from the session's entries, kept until `key` changes. Entries are only ever appended (each
   * append, branch switch or compaction moves the leaf), so keys built on the leaf id tell when to compute again;
   * without this every history page re-read the whole file (message entries are read back from disk).
   */
  private memo<T>(name: string, key: string, compute: () => T): T {
    const held = this.memos.get(name);
    if (held && held.key === key) return held.value as T;
    const value = compute();
    this.memos.set(name, { key, value });
    return value;
  }

  private readonly memos = new Map<string, { key: string; value: unknown }>();

  private leafKey(): string {
    return String(this.session.sessionManager.getLeafId());
  }

  usage(): TokenUsageWire {
    const model = this.session.getState().model;
    return this.memo("usage", `${this.leafKey()}|${model?.provider}/${model?.id}`, () => this.computeUsage());
  }

  private computeUsage(): TokenUsageWire {
    const stats = this.session.getSessionStats();
    const t = stats.tokens;
    return {
      input: t.input,
      output: t.output,
      cacheRead: t.cacheRead,
      cacheWrite: t.cacheWrite,
      total: t.totalTokens,
      ...(stats.contextUsage?.tokens != null ? { contextTokens: stats.contextUsage.tokens } : {}),
      ...(stats.contextUsage ? { contextWindow: stats.contextUsage.contextWindow } : {}),
    };
  }

  /** The history as turns, built once per state of the session: a page of it costs the same wherever it is. */
  history(): History {
    const running = this.running?.id;
    return this.memo("history", `${this.leafKey()}|${running}`, () =>
      history(this.session.sessionManager.getBranch(), this.payloads, running),
    );
  }

  info(): ThreadWire {
    const manager = this.session.sessionManager;
    const header = manager.getHeader();
    const state = this.session.getState();
    const { preview, updated } = this.memo("info", this.leafKey(), () => {
      let preview = "";
      let updated = Date.parse(header.timestamp);
      for (const entry of manager.getEntries()) {
        const at = Date.parse(entry.timestamp);
        if (at > updated) updated = at;
        if (!preview && entry.type === "message" && entry.message.role === "user")
          preview = cleanText(textOf(entry.message.content));
      }
      return { preview, updated };
    });
    // A new session's file is written with its first entry; until then the thread has none to name.
    const file = state.sessionFile && existsSync(state.sessionFile) ? state.sessionFile : undefined;
    return {
      id: this.id,
      ...(state.sessionName ? { name: state.sessionName } : {}),
      preview,
      cwd: manager.getCwd(),
      createdAt: Date.parse(header.timestamp),
      updatedAt: updated,
      status: this.status,
      ...(this.forkedFromId ? { forkedFromId: this.forkedFromId } : {}),
      ...(file ? { sessionFile: file } : {}),
      ...(state.model ? { model: `${state.model.provider}/${state.model.id}` } : {}),
      effort: state.thinkingLevel,
      workspace: this.host.describeWorkspace(manager.getCwd()),
    };
  }

  // ---- turns -------------------------------------------------------------------------------------

  isBusy(): boolean {
    return this.running !== undefined || !this.session.isIdle();
  }

  /** Until `release`, turn starts answer `turnInProgress` with `reason` and queued inputs wait. */
  hold(reason: string): void {
    this.holdReason = reason;
  }

  release(): void {
    this.holdReason = undefined;
    this.next();
  }

  private checkHeld(): void {
    if (this.holdReason !== undefined) throw new AppServerError("turnInProgress", this.holdReason);
  }

  /** Starts a turn now (the response carries it); call `announce` once the response is written. */
  startTurn(
    input: readonly UserInput[],
    clientMessageId: string | undefined,
    comments: readonly ReviewComment[] = [],
  ): { turn: Turn; announce(): void } {
    if (this.isBusy())
      throw new AppServerError(
        "turnInProgress",
        "A turn is running on this thread; steer it, queue the input or interrupt it",
        {
          turnId: this.running?.id,
        },
      );
    this.checkHeld();
    checkComments(comments, this.session.cwd);
    const { text, images } = splitInput(input);
    const turn = this.newTurn(clientMessageId, true, text, comments);
    this.running = turn;
    return {
      turn: { id: turn.id, status: "inProgress", items: [] },
      // After the response: the status change and the turn's notifications follow it.
      announce: () => {
        this.updateStatus();
        this.broadcast("turn/started", { turn: { id: turn.id, status: "inProgress", items: [] } });
        this.run(turn, this.prompt(text, comments), images, undefined);
      },
    };
  }

  /** The text the model reads: the user's, with the review comments quoted after it. */
  private prompt(text: string, comments: readonly ReviewComment[]): string {
    return composePrompt(text, comments, this.session.cwd);
  }

  private newTurn(
    clientMessageId: string | undefined,
    announced: boolean,
    text: string,
    comments: readonly ReviewComment[],
  ): LiveTurn {
    return {
      id: randomUUID(),
      status: "inProgress",
      items: [],
      ...(clientMessageId !== undefined ? { clientMessageId } : {}),
      announced,
      held: [],
      open: new Map(),
      done: new Set(),
      toolRuns: new Map(),
      userItemId: randomUUID(),
      inputText: text,
      ...(comments.length > 0 ? { typed: { text, comments: [...comments] } } : {}),
      messageSeq: 0,
      interrupted: false,
      startLeaf: this.session.sessionManager.getLeafId(),
    };
  }

  private run(turn: LiveTurn, text: string, images: ImageContent[], queued: QueuedInput | undefined): void {
    if (text.trim() === "/reload") {
      this.reload(turn);
      return;
    }
    // The turn's ids go into the session just before its prompt, so history reads the turn back under them.
    // The typed text too: a turn killed before its first step was saved reads back from the marker alone.
    const marker: TurnMarker = {
      turnId: turn.id,
      userItemId: turn.userItemId,
      ...(turn.inputText !== "" ? { text: turn.inputText } : {}),
      ...turn.typed,
      ...(turn.clientMessageId !== undefined ? { clientMessageId: turn.clientMessageId } : {}),
    };
    this.api?.appendEntry(TURN_MARKER, marker);
    turn.marked = this.api !== undefined;
    let accepted = turn.announced;
    const onAccepted = () => {
      if (accepted) return;
      accepted = true;
      turn.announced = true;
      this.broadcast("turn/started", { turn: { id: turn.id, status: "inProgress", items: [] } });
      for (const [method, params] of turn.held.splice(0)) this.broadcast(method, params);
    };
    this.session.prompt(text, { ...(images.length > 0 ? { images } : {}), onAccepted }).then(
      () => this.finishTurn(turn, undefined),
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        if (!accepted && queued) {
          // A queued input that cannot start is dropped, and says so; history shows no turn for it.
          this.running = undefined;
          if (this.api) this.recordEnd(turn, true);
          this.broadcast("error", {
            error: { message },
            willRetry: false,
            ...(queued.clientMessageId !== undefined ? { clientMessageId: queued.clientMessageId } : {}),
          });
          this.updateStatus();
          this.next();
          return;
        }
        onAccepted();
        this.finishTurn(turn, message);
      },
    );
  }

  /**
   * `/reload`, as in the terminal: the thread's extensions restart. What the old ones showed is cleared first (one
   * `ui/state`, a removal per widget), so the new ones start from nothing.
   */
  private reload(turn: LiveTurn): void {
    if (!turn.announced) {
      turn.announced = true;
      this.broadcast("turn/started", { turn: { id: turn.id, status: "inProgress", items: [] } });
    }
    this.ui.clear();
    this.session.reload().then(
      () => {
        this.systemError = this.session.startupFailure()?.message;
        this.finishTurn(turn, this.systemError);
      },
      (error: unknown) => {
        this.systemError = error instanceof Error ? error.message : String(error);
        this.finishTurn(turn, this.systemError);
      },
    );
  }

  private finishTurn(turn: LiveTurn, failure: string | undefined): void {
    for (const item of turn.open.values()) {
      if (item.type === "toolCall" || item.type === "contextCompaction") item.status = "failed";
      this.turnEvent(turn, "item/completed", { item });
    }
    turn.open.clear();
    if (failure !== undefined) {
      turn.status = "failed";
      turn.error = { message: failure };
      this.turnEvent(turn, "error", { error: { message: failure }, willRetry: false });
    } else if (turn.status === "inProgress") turn.status = turn.interrupted ? "interrupted" : "completed";
    this.running = undefined;
    this.steering = [];
    if (turn.marked) this.recordEnd(turn);
    const recorded = turnRecordSince(this.session, turn.startLeaf);
    if (recorded) this.liveTurnIds.set(recorded.entryId, turn.id);
    this.turnEvent(turn, "turn/completed", {
      turn: {
        id: turn.id,
        status: turn.status,
        items: turn.items,
        ...(turn.error ? { error: turn.error } : {}),
        ...(recorded ? { files: recorded.files } : {}),
      },
    });
    if (recorded) this.turnEvent(turn, "turn/diff/updated", { files: recorded.files });
    this.updateStatus();
    this.next();
  }

  /** How the turn ended, in the session: a turn whose end is not there reads back `interrupted`. */
  private recordEnd(turn: LiveTurn, dropped = false): void {
    const status = turn.status === "failed" || turn.status === "interrupted" ? turn.status : "completed";
    const end: TurnEnd = {
      turnId: turn.id,
      status,
      ...(dropped ? { dropped } : {}),
      ...(status === "failed" && turn.error ? { error: turn.error.message } : {}),
    };
    try {
      this.api?.appendEntry(TURN_END, end);
    } catch (error) {
      this.host.log(
        `thread ${this.id}: recording the end of turn ${turn.id} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** The oldest queued input starts once the thread is idle. */
  private next(): void {
    if (this.running || this.disposed || this.holdReason !== undefined) {
      return;
    }
    const queued = this.queue.shift();
    if (!queued) {
      this.checkIdle();
      return;
    }
    this.sendQueue();
    const turn = this.newTurn(queued.clientMessageId, false, queued.text, queued.comments);
    this.running = turn;
    this.updateStatus();
    this.run(turn, this.prompt(queued.text, queued.comments), queued.images, queued);
  }

  steer(input: readonly UserInput[], expectedTurnId: string | undefined): string {
    const turn = this.running;
    if (!turn)
      throw new AppServerError("noActiveTurn", "No turn is running on this thread; start one instead");
    if (expectedTurnId !== undefined && expectedTurnId !== turn.id)
      throw new AppServerError("turnMismatch", `The running turn is ${turn.id}, not ${expectedTurnId}`, {
        turnId: turn.id,
      });
    const { text } = splitInput(input);
    this.session.steer(text);
    return turn.id;
  }

  interrupt(turnId: string | undefined): void {
    const turn = this.running;
    if (turnId !== undefined && turn?.id !== turnId)
      throw new AppServerError(
        "turnMismatch",
        turn ? `The running turn is ${turn.id}, not ${turnId}` : `Turn ${turnId} is not running`,
        turn ? { turnId: turn.id } : {},
      );
    if (!turn) return;
    turn.interrupted = true;
    // Steers not yet delivered go with the turn; queued inputs stay queued.
    this.session.abort();
  }

  enqueue(
    input: readonly UserInput[],
    clientMessageId: string | undefined,
    comments: readonly ReviewComment[] = [],
  ): string {
    checkComments(comments, this.session.cwd);
    const { text, images } = splitInput(input);
    const id = randomUUID();
    this.queue.push({
      id,
      text,
      images,
      comments: [...comments],
      ...(clientMessageId !== undefined ? { clientMessageId } : {}),
      attachments: images.length + comments.length,
    });
    this.sendQueue();
    // On an idle thread it starts at once, after the response is written.
    queueMicrotask(() => this.next());
    return id;
  }

  dequeue(id: string): boolean {
    const index = this.queue.findIndex((q) => q.id === id);
    if (index < 0) return false;
    this.queue.splice(index, 1);
    this.sendQueue();
    return true;
  }

  queuedCount(): number {
    return this.queue.length;
  }

  private sendQueue(): void {
    this.broadcast("turn/queue/updated", this.queueSnapshot());
  }

  // ---- session events ----------------------------------------------------------------------------

  private onEvent(event: SessionStreamEvent): void {
    if (event.type === "queue_update") {
      this.steering = [...((event.steering as string[] | undefined) ?? [])];
      this.sendQueue();
      return;
    }
    if (event.type === "session_info_changed") {
      this.broadcast("thread/name/updated", typeof event.name === "string" ? { name: event.name } : {});
      return;
    }
    const turn = this.running;
    if (!turn) return;
    switch (event.type) {
      case "message_start":
        this.messageStart(turn, event.message as AgentMessage);
        return;
      case "message_update":
        this.messageUpdate(turn, event.assistantMessageEvent as Record<string, unknown>);
        return;
      case "message_end":
        this.messageEnd(turn, event.message as AgentMessage);
        return;
      case "tool_execution_start":
        this.toolStart(turn, event);
        return;
      case "tool_execution_update":
        this.toolUpdate(turn, event);
        return;
      case "tool_execution_end":
        this.toolEnd(turn, event);
        return;
      case "compaction_start":
        this.compactionStart(turn);
        return;
      case "compaction_end":
        this.compactionEnd(turn, event);
        return;
      case "turn_end":
        // The session's figures include the response once its turn ended.
        this.turnEvent(turn, "thread/tokenUsage/updated", { usage: this.usage() });
        return;
      default:
        return;
    }
  }

  private startItem(turn: LiveTurn, key: string, item: Item): void {
    turn.open.set(key, item);
    turn.items.push(item);
    this.turnEvent(turn, "item/started", { item: { ...limitItem(item, this.payloads) } });
  }

  private completeItem(turn: LiveTurn, key: string): void {
    const item = turn.open.get(key);
    if (!item) return;
    turn.open.delete(key);
    turn.done.add(key);
    // Done growing: a text over the inline limit is kept by reference from now on.
    Object.assign(item, limitItem(item, this.payloads));
    this.turnEvent(turn, "item/completed", { item });
  }

  private messageStart(turn: LiveTurn, message: AgentMessage): void {
    turn.messageSeq++;
    if (message.role === "user") {
      const first = !turn.items.some((i) => i.type === "userMessage");
      const item: Item = {
        type: "userMessage",
        id: first ? turn.userItemId : randomUUID(),
        content: userContent(message.content),
      };
      if (first && turn.typed) {
        item.content = typedContent(turn.typed.text, message.content);
        item.comments = turn.typed.comments;
      }
      if (first && turn.clientMessageId !== undefined) item.clientMessageId = turn.clientMessageId;
      this.startItem(turn, "user", item);
      this.completeItem(turn, "user");
    } else if (message.role === "custom" && message.display) {
      const item: Item = {
        type: "extensionMessage",
        id: randomUUID(),
        customType: message.customType,
        text: textOf(message.content),
      };
      const view = itemView(message.view);
      if (view) item.view = view;
      this.startItem(turn, "custom", item);
      this.completeItem(turn, "custom");
    }
  }

  private messageUpdate(turn: LiveTurn, event: Record<string, unknown>): void {
    const index = typeof event.contentIndex === "number" ? event.contentIndex : 0;
    const key = `m${turn.messageSeq}:${index}`;
    switch (event.type) {
      case "text_start":
        this.startItem(turn, key, { type: "agentMessage", id: randomUUID(), text: "" });
        return;
      case "thinking_start":
        this.startItem(turn, key, { type: "reasoning", id: randomUUID(), text: "" });
        return;
      case "text_delta":
      case "thinking_delta": {
        const item = turn.open.get(key);
        const delta = typeof event.delta === "string" ? event.delta : "";
        if (!item || delta === "" || (item.type !== "agentMessage" && item.type !== "reasoning")) return;
        // A live item keeps its whole text; it becomes a reference only once it is complete (completeItem).
        item.text = `${typeof item.text === "string" ? item.text : ""}${delta}`;
        const method = item.type === "reasoning" ? "item/reasoning/delta" : "item/agentMessage/delta";
        this.turnEvent(turn, method, { itemId: item.id, delta });
        return;
      }
      case "text_end":
      case "thinking_end": {
        const item = turn.open.get(key);
        if (
          (item?.type === "agentMessage" || item?.type === "reasoning") &&
          typeof event.content === "string"
        )
          item.text = event.content;
        this.completeItem(turn, key);
        return;
      }
      default:
        return;
    }
  }

  private messageEnd(turn: LiveTurn, message: AgentMessage): void {
    if (message.role !== "assistant") return;
    // Blocks a provider sent without streaming events still become items.
    message.content.forEach((block, index) => {
      const key = `m${turn.messageSeq}:${index}`;
      if (block.type === "text" || block.type === "thinking") {
        const text = block.type === "text" ? block.text : block.thinking;
        const seen =
          turn.open.has(key) ||
          turn.done.has(key) ||
          turn.items.some(
            (i) =>
              (i.type === "agentMessage" || i.type === "reasoning" || i.type === "extensionMessage") &&
              i.text === text,
          );
        if (!seen) {
          if (text === "") return;
          this.startItem(turn, key, {
            type: block.type === "text" ? "agentMessage" : "reasoning",
            id: randomUUID(),
            text,
          });
        }
        this.completeItem(turn, key);
      }
    });
    if (message.stopReason === "error") {
      turn.status = "failed";
      turn.error = { message: message.errorMessage ?? "The model request failed" };
      this.turnEvent(turn, "error", { error: turn.error, willRetry: false });
    } else if (message.stopReason === "aborted") turn.interrupted = true;
  }

  private toolStart(turn: LiveTurn, event: SessionStreamEvent): void {
    if (event.parentToolCallId !== undefined) return;
    const id = String(event.toolCallId);
    const item: ToolCallItem = {
      type: "toolCall",
      id,
      name: String(event.toolName),
      arguments: event.args ?? {},
      status: "inProgress",
    };
    turn.toolRuns.set(id, startToolItem(item, this.session.cwd));
    this.startItem(turn, `tool:${id}`, item);
  }

  private toolUpdate(turn: LiveTurn, event: SessionStreamEvent): void {
    const id = String(event.toolCallId);
    const item = turn.open.get(`tool:${id}`);
    const run = turn.toolRuns.get(id);
    if (!item || !run) return;
    const partial = event.partialResult as
      | { content?: { type: string; text?: string }[]; details?: { outputStart?: unknown } }
      | undefined;
    const start = partial?.details?.outputStart;
    const next = { text: textOf(partial?.content), ...(typeof start === "number" ? { start } : {}) };
    const change = outputDelta(run.shown, next);
    run.shown = next;
    if (!change) return;
    // A replaced output is sent as its end only, as before.
    const delta = change.reset ? change.delta.slice(-16_384) : change.delta;
    this.turnEvent(turn, "item/toolCall/outputDelta", {
      itemId: item.id,
      delta,
      ...(change.reset ? { reset: true } : {}),
    });
  }

  private toolEnd(turn: LiveTurn, event: SessionStreamEvent): void {
    const id = String(event.toolCallId);
    const key = `tool:${id}`;
    const item = turn.open.get(key);
    if (item?.type !== "toolCall") return;
    const result = event.result as
      | { content?: { type: string; text?: string }[]; details?: unknown; view?: unknown }
      | undefined;
    item.status = event.isError === true ? "failed" : "completed";
    item.result = this.payloads.inline(textOf(result?.content));
    const run = turn.toolRuns.get(id);
    turn.toolRuns.delete(id);
    if (run) finishToolItem(item, run, result?.details, this.session.cwd);
    const view = itemView(result?.view);
    if (view) item.view = view;
    this.completeItem(turn, key);
  }

  private compactionStart(turn: LiveTurn): void {
    this.startItem(turn, "compaction", { type: "contextCompaction", id: randomUUID(), status: "inProgress" });
  }

  private compactionEnd(turn: LiveTurn, event: SessionStreamEvent): void {
    const item = turn.open.get("compaction");
    if (item?.type !== "contextCompaction") return;
    const result = event.result as { summary?: string } | undefined;
    item.status = result ? "completed" : "failed";
    if (result?.summary) item.summary = result.summary;
    this.completeItem(turn, "compaction");
  }

  // ---- dialogs -----------------------------------------------------------------------------------

  private dialog(
    method: PendingDialog["method"],
    fields: Record<string, unknown>,
    opts: DialogOptions | undefined,
  ): Promise<Record<string, unknown> | undefined> {
    if (opts?.signal?.aborted || this.disposed) return Promise.resolve(undefined);
    const turnId = this.running?.id;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const dialog: PendingDialog = {
        method,
        fields: {
          ...(method === "item/toolCall/requestUserInput" && turnId !== undefined ? { turnId } : {}),
          ...fields,
          ...(opts?.timeout !== undefined && method === "ui/dialog" ? { timeoutMs: opts.timeout } : {}),
        },
        finish: (reply) => {
          if (!this.dialogs.delete(dialog)) return;
          if (timer) clearTimeout(timer);
          opts?.signal?.removeEventListener("abort", onAbort);
          this.updateStatus();
          resolve(reply);
          this.checkIdle();
        },
      };
      const withdraw = () => {
        if (dialog.asked) dialog.asked.connection.withdraw(dialog.asked.requestId, this.id);
        dialog.finish(undefined);
      };
      const onAbort = () => withdraw();
      this.dialogs.add(dialog);
      this.updateStatus();
      if (opts?.timeout !== undefined && opts.timeout > 0) timer = setTimeout(withdraw, opts.timeout);
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
      this.ask(dialog, undefined);
    });
  }

  /** Asks the most recent initiating subscriber (other than the one that left); nobody left cancels. */
  private ask(dialog: PendingDialog, leaving: Connection | undefined): void {
    if (dialog.asked && dialog.asked.connection !== leaving) return;
    const target = [...this.subscribers].reverse().find((c) => c !== leaving && !c.closed);
    if (leaving && dialog.asked && !leaving.closed) leaving.withdraw(dialog.asked.requestId, this.id);
    dialog.asked = undefined;
    if (!target) {
      dialog.finish(undefined);
      return;
    }
    const requestId = target.request(dialog.method, { threadId: this.id, ...dialog.fields }, ({ result }) => {
      const reply = result && typeof result === "object" ? (result as Record<string, unknown>) : undefined;
      dialog.finish(reply && Object.keys(reply).length > 0 ? reply : undefined);
    });
    dialog.asked = { connection: target, requestId };
  }

  // ---- replacement -------------------------------------------------------------------------------

  /**
   * Hands subscribers and queued inputs to `next`, the same thread reloaded elsewhere (a handoff, a restore):
   * each subscriber gets `thread/replaced`, then the queue starts there.
   */
  handOver(next: LoadedThread): void {
    const subscribers = this.subscribers;
    this.subscribers = [];
    for (const connection of subscribers) next.subscribe(connection);
    next.queue.push(...this.queue.splice(0));
    next.broadcast("thread/replaced", { thread: next.info() });
    if (next.queue.length > 0) next.sendQueue();
    next.next();
  }

  // ---- unload ------------------------------------------------------------------------------------

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const dialog of [...this.dialogs]) {
      if (dialog.asked) dialog.asked.connection.withdraw(dialog.asked.requestId, this.id);
      dialog.finish(undefined);
    }
    this.unsubscribeSession?.();
    if (this.running) this.session.abort();
    await this.session.dispose();
  }
}

/**
 * Turns and items: built from a session's active branch for history (`thread/resume`, `thread/read`), and the
 * helpers the live turn uses for the same shapes. A turn starts at each user message; a history turn's id is the
 * id the live turn had (from the marker entry the thread wrote before its prompt), else that message's entry id;
 * its other items' ids are the entry id plus the block's index.
 *
 * Limits (UTF-8 bytes): an inline item holds at most 64 KiB; a larger tool result or message text is kept by the
 * thread's payload store and sent as `{ref, bytes}`, read back in 48 KiB chunks with `thread/payload/read`. A history
 * response holds at most 1 MiB (with room for the envelope); older turns come a page at a time by cursor.
 */
import { randomUUID } from "node:crypto";
import { type AgentMessage, type SessionEntry, type ViewNode, viewProblem } from "@knightcodeai/cli/kit";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import {
  type ItemWire,
  ReviewComment,
  type ReviewCommentWire,
  type TurnWire,
  type UserInputWire,
} from "./protocol.js";
import { turnFilesOfEntry } from "./workspace.js";

export const ITEM_INLINE_BYTES = 64 * 1024;
export const PAYLOAD_CHUNK_BYTES = 48 * 1024;
export const RESPONSE_BYTES = 1024 * 1024;
/** What a response envelope (ids, the thread, snapshots) may take beside the turns. */
export const ENVELOPE_RESERVE_BYTES = 64 * 1024;

/** An item as the protocol sends it (`ThreadItem`). */
export type Item = ItemWire;
export type ToolCallItem = Extract<Item, { type: "toolCall" }>;
/** A turn as the protocol sends it; `files` are from its `worktrees.turn` record. */
export type Turn = TurnWire;

/** Values sent by reference, per thread; kept while the thread is loaded. */
export class PayloadStore {
  private readonly values = new Map<string, Buffer>();

  /** The text itself when small enough, else a reference to it. */
  inline(text: string): string | { ref: string; bytes: number } {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes <= ITEM_INLINE_BYTES) return text;
    const ref = randomUUID();
    this.values.set(ref, Buffer.from(text, "utf8"));
    return { ref, bytes };
  }

  read(
    ref: string,
    offset: number,
  ): { data: string; offset: number; total: number; done: boolean } | undefined {
    const value = this.values.get(ref);
    if (!value) return undefined;
    const end = Math.min(value.length, offset + PAYLOAD_CHUNK_BYTES);
    return {
      data: value.subarray(offset, end).toString("base64"),
      offset,
      total: value.length,
      done: end >= value.length,
    };
  }
}

/** The item as sent: a text field over the inline limit becomes a reference (the item itself keeps the text). */
export function limitItem(item: Item, payloads: PayloadStore): Item {
  if (item.type !== "agentMessage" && item.type !== "reasoning" && item.type !== "extensionMessage")
    return item;
  if (typeof item.text !== "string" || Buffer.byteLength(item.text, "utf8") <= ITEM_INLINE_BYTES) return item;
  return { ...item, text: payloads.inline(item.text) };
}

export function textOf(content: string | readonly { type: string; text?: string }[] | undefined): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("");
}

export function userContent(content: AgentMessage["content"]): UserInputWire[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.flatMap((c): UserInputWire[] =>
    c.type === "text"
      ? [{ type: "text", text: c.text }]
      : c.type === "image"
        ? [{ type: "image", data: c.data, mimeType: c.mimeType }]
        : [],
  );
}

/** A user item's content when review comments came with it: the typed text and the message's images. */
export function typedContent(text: string, content: AgentMessage["content"]): UserInputWire[] {
  const images = userContent(content).filter((c) => c.type === "image");
  const typed: UserInputWire[] = text !== "" ? [{ type: "text", text }] : [];
  return [...typed, ...images];
}

/** Items of one message, as history shows them (tool results are merged into their calls by the caller). */
export function messageItems(id: string, message: AgentMessage, payloads: PayloadStore): Item[] {
  switch (message.role) {
    case "user":
      return [{ type: "userMessage", id, content: userContent(message.content) }];
    case "custom":
      return message.display
        ? [
            {
              type: "extensionMessage",
              id,
              customType: message.customType,
              text: payloads.inline(textOf(message.content)),
              ...viewOf(message.view),
            },
          ]
        : [];
    case "assistant":
      return message.content.flatMap((block, index): Item[] => {
        if (block.type === "text")
          return [{ type: "agentMessage", id: `${id}:${index}`, text: payloads.inline(block.text) }];
        if (block.type === "thinking")
          return [{ type: "reasoning", id: `${id}:${index}`, text: payloads.inline(block.thinking) }];
        if (block.type === "toolCall") {
          const command =
            block.name === "bash" ? (block.arguments as { command?: unknown })?.command : undefined;
          return [
            {
              type: "toolCall",
              id: block.id,
              name: block.name,
              arguments: block.arguments,
              status: "inProgress",
              ...(typeof command === "string" ? { command } : {}),
            },
          ];
        }
        return [];
      });
    default:
      return [];
  }
}

/**
 * What a tool's saved result tells about its item read back: bash's exit code, the file `write` or `edit` changed
 * (edit's diff; a `write` read back has no diff, as the file before it is not kept).
 */
function readBackDetails(call: ToolCallItem, details: unknown): void {
  if (!details || typeof details !== "object") return;
  const d = details as Record<string, unknown>;
  if (call.name === "bash" && (typeof d.exitCode === "number" || d.exitCode === null))
    call.exitCode = d.exitCode;
  if (call.status !== "completed" || typeof d.path !== "string") return;
  if (call.name === "edit")
    call.changes = [
      { path: d.path, kind: "update", ...(typeof d.diff === "string" ? { diff: d.diff } : {}) },
    ];
  else if (call.name === "write")
    call.changes = [{ path: d.path, kind: d.created === true ? "add" : "update" }];
}

/**
 * The custom entry a thread writes just before a turn's prompt: it carries the ids the live turn was given, so the
 * turn read back from history has the same turn id and user item id. Only the entry right before the user message
 * counts; one a command or a refused prompt left behind is ignored.
 */
export const TURN_MARKER = "app-server.turn";

export interface TurnMarker {
  turnId: string;
  userItemId: string;
  /** What the user typed (with review comments, the session holds the prompt composed with them). */
  text?: string;
  comments?: ReviewCommentWire[];
  /** The client's id of the input, which the turn's user item carries when read back. */
  clientMessageId?: string;
}

const Comments = Type.Array(ReviewComment);

/** The most a view on an item may take as serialized JSON (a larger one is dropped, the text shows). */
export const ITEM_VIEW_MAX_BYTES = 64 * 1024;

/** `{view}` for an item's fields when the view passes `itemView`, else nothing. */
function viewOf(view: unknown): { view?: ViewNode } {
  const checked = itemView(view);
  return checked ? { view: checked } : {};
}

/** A tool's or an extension's view as an item carries it: a valid view within the limit, or nothing. */
export function itemView(view: unknown): ViewNode | undefined {
  if (view === undefined || viewProblem(view) !== undefined) return undefined;
  return Buffer.byteLength(JSON.stringify(view)) <= ITEM_VIEW_MAX_BYTES ? (view as ViewNode) : undefined;
}

function markerOf(entry: SessionEntry): TurnMarker | undefined {
  if (entry.type !== "custom" || entry.customType !== TURN_MARKER) return undefined;
  const data = entry.data as Partial<TurnMarker> | undefined;
  if (typeof data?.turnId !== "string" || typeof data.userItemId !== "string") return undefined;
  return {
    turnId: data.turnId,
    userItemId: data.userItemId,
    ...(typeof data.text === "string" ? { text: data.text } : {}),
    ...(Value.Check(Comments, data.comments) ? { comments: data.comments } : {}),
    ...(typeof data.clientMessageId === "string" ? { clientMessageId: data.clientMessageId } : {}),
  };
}

/**
 * The custom entry a thread writes once a turn it marked has ended, with how it ended. A turn that has a user
 * message but neither this record nor a final answer (an assistant message that stopped by itself) did not finish:
 * the process died under it, and it reads back `interrupted`, never `completed`.
 */
export const TURN_END = "app-server.turn.end";

export interface TurnEnd {
  turnId: string;
  status: "completed" | "interrupted" | "failed";
  error?: string;
  /** A queued input that never started: no turn. */
  dropped?: boolean;
}

function turnEndOf(entry: SessionEntry): TurnEnd | undefined {
  if (entry.type !== "custom" || entry.customType !== TURN_END) return undefined;
  const data = entry.data as Partial<TurnEnd> | undefined;
  if (typeof data?.turnId !== "string") return undefined;
  if (data.status !== "completed" && data.status !== "interrupted" && data.status !== "failed")
    return undefined;
  return {
    turnId: data.turnId,
    status: data.status,
    ...(typeof data.error === "string" ? { error: data.error } : {}),
    ...(data.dropped === true ? { dropped: true } : {}),
  };
}

/** Whether a message ends a turn: an answer that stopped by itself (no tool call left to run), or one that failed. */
function endsTurn(message: AgentMessage): boolean {
  return message.role === "assistant" && message.stopReason !== "toolUse" && message.stopReason !== "pending";
}

/** Turns with where each starts on the branch: the position of the entry that opened it (0 is the root). */
export interface History {
  turns: Turn[];
  starts: number[];
  /** How many entries the branch has: a cursor is a position on it, at most this. */
  length: number;
  /** Whether the turns begin at the branch's root; when not, older turns were left out (see `historyTail`). */
  complete: boolean;
}

/**
 * The active branch as turns, oldest first. `runningTurnId` is the turn running now in this process (it reads
 * back `inProgress`); any other turn that did not end reads back `interrupted`.
 */
export function historyTurns(
  branch: readonly SessionEntry[],
  payloads: PayloadStore,
  runningTurnId?: string,
): Turn[] {
  return history(branch, payloads, runningTurnId).turns;
}

/**
 * The turns of `branch`, whose first entry is at position `base` of the whole branch of `length` entries. When
 * `base` is not 0, the first turn may have begun before `branch` does and is left out.
 */
export function history(
  branch: readonly SessionEntry[],
  payloads: PayloadStore,
  runningTurnId?: string,
  base = 0,
  length = base + branch.length,
): History {
  const turns: Turn[] = [];
  /** Each turn's position on the branch, by turn. */
  const startOf = new Map<Turn, number>();
  let position = base - 1;
  let markerPosition = -1;
  let current: Turn | undefined;
  const calls = new Map<string, ToolCallItem>();
  let marker: TurnMarker | undefined;
  /** Turns that have a user message, and whether their last message ended them. */
  const prompted = new Map<Turn, boolean>();
  const ends = new Map<string, TurnEnd>();
  /** Turns opened by a thread's marker; a turn opened by a bare user message may continue the one before it. */
  const marked = new Set<Turn>();
  const open = (id: string, at = position): Turn => {
    current = { id, status: "completed", items: [] };
    turns.push(current);
    startOf.set(current, at);
    return current;
  };
  /** Turns known only by their marker: the process died before the turn's first step was saved. */
  const unsaved = new Set<Turn>();
  const leftBehind = (lost: TurnMarker, at: number) => {
    const turn: Turn = { id: lost.turnId, status: "interrupted", items: [] };
    startOf.set(turn, at);
    if (lost.text !== undefined)
      turn.items.push({
        type: "userMessage",
        id: lost.userItemId,
        content: [{ type: "text", text: lost.text }],
        ...(lost.comments ? { comments: lost.comments } : {}),
        ...(lost.clientMessageId !== undefined ? { clientMessageId: lost.clientMessageId } : {}),
      });
    turns.push(turn);
    unsaved.add(turn);
  };
  for (const entry of branch) {
    position++;
    const previous = marker;
    const previousPosition = markerPosition;
    marker = markerOf(entry);
    if (previous && !(entry.type === "message" && entry.message.role === "user"))
      leftBehind(previous, previousPosition);
    if (marker) {
      markerPosition = position;
      continue;
    }
    if (entry.type === "custom") {
      const end = turnEndOf(entry);
      if (end) {
        ends.set(end.turnId, end);
        continue;
      }
      const files = current ? turnFilesOfEntry(entry) : undefined;
      if (current && files) current.files = files;
      continue;
    }
    if (entry.type === "compaction") {
      (current ?? open(entry.id)).items.push({
        type: "contextCompaction",
        id: entry.id,
        status: "completed",
        summary: entry.summary,
      });
      continue;
    }
    if (entry.type === "custom_message") {
      if (entry.display)
        (current ?? open(entry.id)).items.push({
          type: "extensionMessage",
          id: entry.id,
          customType: entry.customType,
          text: payloads.inline(textOf(entry.content)),
          ...viewOf(entry.view),
        });
      continue;
    }
    if (entry.type !== "message") continue;
    const message = entry.message;
    // A marker always opens the turn it names.
    const opensTurn =
      message.role === "user" &&
      (previous !== undefined || !current || current.items.some((i) => i.type !== "userMessage"));
    if (opensTurn) {
      open(previous?.turnId ?? entry.id, previous ? previousPosition : position);
      if (previous && current) marked.add(current);
    }
    const turn = current ?? open(entry.id);
    // What an extension posts (a custom message) neither starts nor ends the model's work.
    if (
      message.role === "user" ||
      (prompted.has(turn) && (message.role === "assistant" || message.role === "toolResult"))
    )
      prompted.set(turn, endsTurn(message));
    if (message.role === "toolResult") {
      const call = calls.get(message.toolCallId);
      if (call) {
        call.status = message.isError ? "failed" : "completed";
        call.result = payloads.inline(textOf(message.content));
        readBackDetails(call, message.details);
        const view = itemView(message.view);
        if (view) call.view = view;
      }
      continue;
    }
    if (message.role === "assistant") {
      if (message.stopReason === "error") {
        turn.status = "failed";
        turn.error = { message: message.errorMessage ?? "The model request failed" };
      } else if (message.stopReason === "aborted") turn.status = "interrupted";
    }
    const id = opensTurn && previous ? previous.userItemId : entry.id;
    for (const item of messageItems(id, message, payloads)) {
      if (item.type === "toolCall") calls.set(item.id, item);
      if (opensTurn && previous?.comments && message.role === "user" && item.type === "userMessage") {
        item.content = typedContent(previous.text ?? "", message.content);
        item.comments = previous.comments;
      }
      if (opensTurn && previous?.clientMessageId !== undefined && item.type === "userMessage")
        item.clientMessageId = previous.clientMessageId;
      turn.items.push(item);
    }
  }
  if (marker) leftBehind(marker, markerPosition);
  // A marker whose turn recorded an end (a command, a refused prompt, a dropped input) saved nothing to show.
  for (const turn of unsaved) {
    if (!ends.has(turn.id) && turn.id !== runningTurnId) continue;
    turns.splice(turns.indexOf(turn), 1);
  }
  const running = runningTurnId === undefined ? -1 : turns.findIndex((t) => t.id === runningTurnId);
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i]!;
    if (running >= 0 && i >= running) {
      // The running turn, and what was steered into it.
      turn.status = "inProgress";
      continue;
    }
    const end = ends.get(turn.id);
    if (end) {
      // How the live turn ended is authoritative (a tool may end a turn without a final answer).
      turn.status = end.status;
      if (end.status === "failed" && !turn.error) turn.error = { message: end.error ?? "The turn failed" };
      if (end.status !== "failed") delete turn.error;
      continue;
    }
    if (turn.status !== "completed" || prompted.get(turn) !== false) continue;
    // It stopped mid-way. Went on by a bare user message (a steer), it ends as that continuation ends;
    // otherwise nothing finished it.
    const next = turns[i + 1];
    turn.status = next && !marked.has(next) && prompted.has(next) ? next.status : "interrupted";
  }
  // Without the root, the first turn may be the end of one that began before the branch given.
  if (base > 0 && turns.length > 0) turns.shift();
  return { turns, starts: turns.map((turn) => startOf.get(turn)!), length, complete: base === 0 };
}

/**
 * The newest turns that fit one response, and the cursor for the older ones. A cursor is a position on the branch
 * (as a decimal string): the page holds the turns that start before it. Undefined for an invalid cursor.
 */
export function pageTurns(
  history: History,
  cursor: string | undefined,
  budget = RESPONSE_BYTES - ENVELOPE_RESERVE_BYTES,
): { turns: Turn[]; nextCursor?: string } | undefined {
  const { turns, starts } = history;
  let end = turns.length;
  if (cursor !== undefined) {
    if (!/^\d+$/.test(cursor)) return undefined;
    const before = Number(cursor);
    if (before > history.length) return undefined;
    while (end > 0 && starts[end - 1]! >= before) end--;
  }
  let used = 0;
  let start = end;
  while (start > 0) {
    const size = Buffer.byteLength(JSON.stringify(turns[start - 1]), "utf8") + 1;
    if (used + size > budget && start < end) break;
    used += size;
    start--;
  }
  const older = start > 0 || !history.complete;
  const next = start < turns.length ? starts[start]! : history.length;
  return { turns: turns.slice(start, end), ...(older && next > 0 ? { nextCursor: String(next) } : {}) };
}

/**
 * Whether `history` (the end of a branch) holds the newest page in full: a turn left out of the page, or the whole
 * branch. Otherwise a longer tail is needed.
 */
export function holdsNewestPage(history: History, budget = RESPONSE_BYTES - ENVELOPE_RESERVE_BYTES): boolean {
  if (history.complete) return true;
  const page = pageTurns(history, undefined, budget)!;
  return page.turns.length < history.turns.length;
}

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
import type { AgentMessage, SessionEntry } from "@knightcodeai/cli/kit";
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
            },
          ]
        : [];
    case "assistant":
      return message.content.flatMap((block, index): Item[] => {
        if (block.type === "text")
          return [{ type: "agentMessage", id: `${id}:${index}`, text: payloads.inline(block.text) }];
        if (block.type === "thinking")
          return [{ type: "reasoning", id: `${id}:${index}`, text: payloads.inline(block.thinking) }];
        if (block.type === "toolCall")
          return [
            {
              type: "toolCall",
              id: block.id,
              name: block.name,
              arguments: block.arguments,
              status: "inProgress",
            },
          ];
        return [];
      });
    default:
      return [];
  }
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
  /** With review comments: what the user typed (the session holds the prompt composed with the comments). */
  text?: string;
  comments?: ReviewCommentWire[];
}

const Comments = Type.Array(ReviewComment);

function markerOf(entry: SessionEntry): TurnMarker | undefined {
  if (entry.type !== "custom" || entry.customType !== TURN_MARKER) return undefined;
  const data = entry.data as Partial<TurnMarker> | undefined;
  if (typeof data?.turnId !== "string" || typeof data.userItemId !== "string") return undefined;
  return {
    turnId: data.turnId,
    userItemId: data.userItemId,
    ...(typeof data.text === "string" && Value.Check(Comments, data.comments)
      ? { text: data.text, comments: data.comments }
      : {}),
  };
}

/** The active branch as turns, oldest first. */
export function historyTurns(branch: readonly SessionEntry[], payloads: PayloadStore): Turn[] {
  const turns: Turn[] = [];
  let current: Turn | undefined;
  const calls = new Map<string, ToolCallItem>();
  let marker: TurnMarker | undefined;
  const open = (id: string): Turn => {
    current = { id, status: "completed", items: [] };
    turns.push(current);
    return current;
  };
  for (const entry of branch) {
    const previous = marker;
    marker = markerOf(entry);
    if (marker) continue;
    if (entry.type === "custom") {
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
        });
      continue;
    }
    if (entry.type !== "message") continue;
    const message = entry.message;
    const opensTurn =
      message.role === "user" && (!current || current.items.some((i) => i.type !== "userMessage"));
    if (opensTurn) open(previous?.turnId ?? entry.id);
    const turn = current ?? open(entry.id);
    if (message.role === "toolResult") {
      const call = calls.get(message.toolCallId);
      if (call) {
        call.status = message.isError ? "failed" : "completed";
        call.result = payloads.inline(textOf(message.content));
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
      turn.items.push(item);
    }
  }
  return turns;
}

/**
 * The newest turns that fit one response, and the cursor for the older ones. `cursor` is the index (into
 * `turns`) the page ends before; an invalid cursor answers undefined.
 */
export function pageTurns(
  turns: readonly Turn[],
  cursor: string | undefined,
  budget = RESPONSE_BYTES - ENVELOPE_RESERVE_BYTES,
): { turns: Turn[]; nextCursor?: string } | undefined {
  let end = turns.length;
  if (cursor !== undefined) {
    if (!/^\d+$/.test(cursor)) return undefined;
    end = Number(cursor);
    if (end > turns.length) return undefined;
  }
  let used = 0;
  let start = end;
  while (start > 0) {
    const size = Buffer.byteLength(JSON.stringify(turns[start - 1]), "utf8") + 1;
    if (used + size > budget && start < end) break;
    used += size;
    start--;
  }
  return { turns: turns.slice(start, end), ...(start > 0 ? { nextCursor: String(start) } : {}) };
}

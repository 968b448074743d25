/**
 * Model context from the active branch: a pure function of the branch's entries (root first), so it can be
 * tested without files and reused by anything that holds entries.
 *
 * Summaries (compaction, branch summary) become `CustomMessage`s (role "custom", customType "compactionSummary"
 * / "branchSummary"), not user messages: the transcript then still knows what they are (a UI can render them as
 * summaries), and the step that converts custom messages to user messages for the provider sends their content,
 * which already carries the fixed prefix and the `<summary>` wrapper.
 */
import type {
  AgentMessage,
  BranchSummaryEntry,
  CompactionEntry,
  ContextEditEntry,
  CustomMessage,
  MessageEntry,
  ModelChangeEntry,
  SessionEntry,
  ThinkingLevel,
  ThinkingLevelChangeEntry,
} from "../../kernel/index.js";

export interface SessionContext {
  messages: AgentMessage[];
  /** The last model_change or assistant message on the branch, whichever came later. */
  model?: { provider: string; modelId: string };
  /** The last thinking_level_change on the branch. */
  thinkingLevel?: ThinkingLevel;
}

export const COMPACTION_SUMMARY_TYPE = "compactionSummary";
export const BRANCH_SUMMARY_TYPE = "branchSummary";

/** Tells the model that what follows replaces earlier turns it can no longer see. */
export const COMPACTION_SUMMARY_PREFIX =
  "Earlier turns of this conversation were compacted to save space. This summary stands in for them:";
/** Tells the model that it is back at an earlier point and what the abandoned branch did. */
export const BRANCH_SUMMARY_PREFIX =
  "The conversation explored another branch from here and then came back. Summary of that branch:";

export function summaryContent(prefix: string, summary: string): string {
  return `${prefix}\n\n<summary>\n${summary}\n</summary>`;
}

/**
 * A branch (root first) whose entries are read only when asked for: the store keeps a long session's messages on
 * disk, and a context needs only those after the last compaction.
 */
export interface BranchView {
  readonly length: number;
  type(index: number): string;
  id(index: number): string;
  entry(index: number): SessionEntry;
}

/**
 * Builds the context from `branch` (root first, e.g. `SessionManager.getBranch()`):
 * - with a compaction on the branch (the last one counts): its summary first, then the entries from its
 *   `firstKeptEntryId` up to the compaction, then everything after it;
 * - `message` entries give their message, `custom_message` a CustomMessage, `branch_summary` a summary;
 * - a `context_edit` on the branch replaces (or with `null` drops) its target's message, for context only;
 * - every other entry type (including ones this version does not know) gives no message.
 * Returned messages are the entries' own objects: treat them as read-only. Of a `BranchView`, only the entries
 * that give a message, the edits, the last compaction, thinking level and model are read.
 */
export function buildSessionContext(branch: readonly SessionEntry[] | BranchView): SessionContext {
  const view = asView(branch);
  let thinkingLevel: ThinkingLevel | undefined;
  for (let i = 0; i < view.length; i++) {
    if (view.type(i) === "thinking_level_change") {
      thinkingLevel = (view.entry(i) as ThinkingLevelChangeEntry).thinkingLevel;
    }
  }

  // The last model_change or answering assistant, whichever came later: the model that actually answered counts
  // too (e.g. a session whose model was set by flag, not entry). Searched from the end, so few entries are read.
  let model: SessionContext["model"];
  for (let i = view.length - 1; i >= 0 && !model; i--) {
    const type = view.type(i);
    if (type === "model_change") {
      const change = view.entry(i) as ModelChangeEntry;
      model = { provider: change.provider, modelId: change.modelId };
    } else if (type === "message") {
      const message = (view.entry(i) as MessageEntry).message;
      if (message?.role === "assistant") model = { provider: message.provider, modelId: message.model };
    }
  }

  const context: SessionContext = { messages: contextEntries(view).map((item) => item.message) };
  if (model) context.model = model;
  if (thinkingLevel) context.thinkingLevel = thinkingLevel;
  return context;
}

/** One message of the context with the entry it came from and that entry's position on the branch. */
export interface ContextItem {
  entry: SessionEntry;
  index: number;
  message: AgentMessage;
}

/**
 * The context's messages with their entries, in context order (see buildSessionContext, which takes its messages
 * from here): what compaction measures and cuts, since a cut must name the entry the kept part starts at.
 */
export function contextEntries(branch: readonly SessionEntry[] | BranchView): ContextItem[] {
  const view = asView(branch);
  let compactionIndex = -1;
  const edits = new Map<string, AgentMessage | null>();
  for (let i = 0; i < view.length; i++) {
    const type = view.type(i);
    if (type === "compaction") compactionIndex = i;
    else if (type === "context_edit") {
      // The later edit of the same target wins.
      const edit = view.entry(i) as ContextEditEntry;
      edits.set(edit.targetId, edit.replacement);
    }
  }

  const items: ContextItem[] = [];
  const push = (index: number, entry: SessionEntry, message: AgentMessage | undefined) => {
    if (message === undefined) return;
    if (edits.has(entry.id)) {
      const replacement = edits.get(entry.id);
      if (replacement) items.push({ entry, index, message: replacement });
      return;
    }
    items.push({ entry, index, message });
  };
  const emit = (index: number) => {
    if (!GIVES_MESSAGE.has(view.type(index))) return;
    const entry = view.entry(index);
    push(index, entry, messageOf(entry));
  };

  if (compactionIndex < 0) {
    for (let i = 0; i < view.length; i++) emit(i);
    return items;
  }
  const compaction = view.entry(compactionIndex) as CompactionEntry;
  push(compactionIndex, compaction, compactionSummaryMessage(compaction));
  // Only a kept entry before the compaction counts; an id elsewhere keeps nothing from before it.
  let firstKept = -1;
  for (let i = 0; i < compactionIndex; i++) {
    if (view.id(i) === compaction.firstKeptEntryId) {
      firstKept = i;
      break;
    }
  }
  if (firstKept >= 0) for (let i = firstKept; i < compactionIndex; i++) emit(i);
  for (let i = compactionIndex + 1; i < view.length; i++) emit(i);
  return items;
}

/** The entry types `messageOf` gives a message for; the others are not read to find out. */
const GIVES_MESSAGE: ReadonlySet<string> = new Set(["message", "custom_message", "branch_summary"]);

function asView(branch: readonly SessionEntry[] | BranchView): BranchView {
  if (!Array.isArray(branch)) return branch as BranchView;
  const entries = branch as readonly SessionEntry[];
  return {
    length: entries.length,
    type: (i) => entries[i]!.type,
    id: (i) => entries[i]!.id,
    entry: (i) => entries[i]!,
  };
}

/** The message an entry contributes outside of compaction handling, if any. */
function messageOf(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return entry.message;
    case "custom_message": {
      const message: CustomMessage = {
        role: "custom",
        customType: entry.customType,
        content: entry.content,
        display: entry.display,
        timestamp: timeOf(entry),
      };
      if (entry.details !== undefined) message.details = entry.details;
      if (entry.view !== undefined) message.view = entry.view;
      return message;
    }
    case "branch_summary":
      return branchSummaryMessage(entry);
    default:
      return undefined;
  }
}

export function compactionSummaryMessage(entry: CompactionEntry): CustomMessage {
  return {
    role: "custom",
    customType: COMPACTION_SUMMARY_TYPE,
    content: summaryContent(COMPACTION_SUMMARY_PREFIX, entry.summary),
    display: true,
    details: { tokensBefore: entry.tokensBefore, firstKeptEntryId: entry.firstKeptEntryId },
    timestamp: timeOf(entry),
  };
}

export function branchSummaryMessage(entry: BranchSummaryEntry): CustomMessage {
  return {
    role: "custom",
    customType: BRANCH_SUMMARY_TYPE,
    content: summaryContent(BRANCH_SUMMARY_PREFIX, entry.summary),
    display: true,
    details: { fromId: entry.fromId },
    timestamp: timeOf(entry),
  };
}

function timeOf(entry: SessionEntry): number {
  const time = Date.parse(entry.timestamp);
  return Number.isNaN(time) ? 0 : time;
}

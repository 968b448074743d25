/** Session file format (JSONL, version 3): a header line, then entries that form a tree. */
import type { ViewNode } from "./context.js";
import type { AgentMessage, ImageContent, TextContent, ThinkingLevel, Usage } from "./messages.js";

export interface SessionHeader {
  type: "session";
  version: 3;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
}

interface EntryBase {
  id: string;
  /** `null` for a root entry. */
  parentId: string | null;
  timestamp: string;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}
export interface ModelChangeEntry extends EntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}
export interface ThinkingLevelChangeEntry extends EntryBase {
  type: "thinking_level_change";
  thinkingLevel: ThinkingLevel;
}
export interface CompactionEntry extends EntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  usage?: Usage;
  fromHook?: boolean;
}
export interface BranchSummaryEntry extends EntryBase {
  type: "branch_summary";
  fromId: string;
  summary: string;
  details?: unknown;
  fromHook?: boolean;
}
/** Extension data that is not sent to the model. */
export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}
/** Extension content that is sent to the model as a user-role message. */
export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
  view?: ViewNode;
}
export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  label?: string;
}
export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
}
/** Branch-relative edit of future model context: replace (or drop, with `null`) an earlier entry's message. */
export interface ContextEditEntry extends EntryBase {
  type: "context_edit";
  targetId: string;
  replacement: AgentMessage | null;
}

export type SessionEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry
  | ContextEditEntry;

/** An entry proposed by a boundary handler (`turn_end`, `agent_before_settle`): no id or parent yet. */
export type EntryDraft =
  | { type: "custom"; customType: string; data?: unknown }
  | {
      type: "custom_message";
      customType: string;
      content: string | (TextContent | ImageContent)[];
      display?: boolean;
      details?: unknown;
    }
  | { type: "context_edit"; targetId: string; replacement: AgentMessage | null }
  | {
      type: "compaction";
      summary: string;
      firstKeptEntryId: string;
      tokensBefore: number;
      details?: unknown;
    };

export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
}

/** Read-only view of the session that extensions get as `ctx.sessionManager`. */
export interface ReadonlySessionManager {
  getHeader(): SessionHeader;
  getSessionId(): string;
  /** Absent for in-memory sessions (`--no-session`). */
  getSessionFile(): string | undefined;
  getCwd(): string;
  getLeafId(): string | null;
  getEntry(id: string): SessionEntry | undefined;
  getEntries(): SessionEntry[];
  /** Entries on the active branch, root first. */
  getBranch(fromId?: string): SessionEntry[];
  getTree(): SessionTreeNode[];
  getChildren(id: string): SessionEntry[];
  getLabel(id: string): string | undefined;
  getSessionName(): string | undefined;
}

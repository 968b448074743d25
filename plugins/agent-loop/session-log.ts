/** What the agent loop needs from the session store (plugins/session-store implements it). */
import type {
  AgentMessage,
  ImageContent,
  ReadonlySessionManager,
  SessionEntry,
  TextContent,
  ThinkingLevel,
  Usage,
  ViewNode,
} from "../../kernel/index.js";

export interface SessionContext {
  messages: AgentMessage[];
  model?: { provider: string; modelId: string };
  thinkingLevel?: ThinkingLevel;
}

export interface SessionLog extends ReadonlySessionManager {
  appendMessage(message: AgentMessage): SessionEntry;
  appendModelChange(provider: string, modelId: string): SessionEntry;
  appendThinkingLevelChange(level: ThinkingLevel): SessionEntry;
  appendCustomEntry(customType: string, data?: unknown): SessionEntry;
  appendCustomMessageEntry(
    customType: string,
    content: string | (TextContent | ImageContent)[],
    display: boolean,
    details?: unknown,
    view?: ViewNode,
  ): SessionEntry;
  appendSessionInfo(name?: string): SessionEntry;
  appendLabel(targetId: string, label?: string): SessionEntry;
  appendContextEdit(targetId: string, replacement: AgentMessage | null): SessionEntry;
  appendCompaction(
    summary: string,
    firstKeptEntryId: string,
    tokensBefore: number,
    details?: unknown,
    usage?: Usage,
  ): SessionEntry;
  appendBranchSummary(fromId: string, summary: string, details?: unknown, fromHook?: boolean): SessionEntry;
  branch(entryId: string): void;
  /** The active branch from the leaf back, only entries of `types`, each read as reached (stop early). */
  branchBackwards<T extends SessionEntry["type"]>(
    types: readonly T[],
  ): Iterable<Extract<SessionEntry, { type: T }>>;
  buildContext(): SessionContext;
  /** The messages of buildContext() with the entries they came from and their positions on the active branch. */
  contextEntries(): { entry: SessionEntry; index: number; message: AgentMessage }[];
}

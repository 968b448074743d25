/**
 * Commits the entries an actionable boundary (`turn_end`, `agent_before_settle`) proposed, in the order its
 * handlers left them, once every handler has run. An invalid draft is reported and skipped; the others still land.
 */
import type { EntryDraft, SessionEntry } from "../../kernel/index.js";
import { customMessage } from "./convert.js";
import type { SessionLog } from "./session-log.js";
import type { Transcript } from "./transcript.js";

export interface DraftTarget {
  log: Pick<SessionLog, "appendCustomEntry" | "getEntry" | "appendContextEdit" | "appendCompaction">;
  /** Custom messages enter through the transcript, so `message_start`/`message_end` handlers see them. */
  transcript: Pick<Transcript, "add">;
  /** Announces an appended custom entry (`entry_appended`). */
  appended(entry: SessionEntry): Promise<void>;
  report(error: unknown): void;
}

export async function commitDrafts(drafts: readonly EntryDraft[], target: DraftTarget): Promise<void> {
  for (const draft of drafts) {
    try {
      await commitDraft(draft, target);
    } catch (error) {
      target.report(error);
    }
  }
}

async function commitDraft(draft: EntryDraft, target: DraftTarget): Promise<void> {
  const { log } = target;
  switch (draft?.type) {
    case "custom":
      await target.appended(log.appendCustomEntry(draft.customType, draft.data));
      return;
    case "custom_message":
      await target.transcript.add(customMessage(draft));
      return;
    case "context_edit":
      if (!log.getEntry(draft.targetId))
        throw new Error(`context_edit targets unknown entry ${draft.targetId}`);
      log.appendContextEdit(draft.targetId, draft.replacement);
      return;
    case "compaction":
      log.appendCompaction(draft.summary, draft.firstKeptEntryId, draft.tokensBefore, draft.details);
      return;
    default:
      throw new Error(`unknown entry draft type ${JSON.stringify((draft as { type?: unknown })?.type)}`);
  }
}

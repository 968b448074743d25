/**
 * Session replacement (new, resume, fork, clone): the old session's `session_before_*` gate may cancel it; the new
 * log is opened (and `setup` writes its first entries) before the old runtime shuts down, so a failure leaves the
 * old session in place; then the new session opens and `withSession` runs with its command context.
 */
import { resolve } from "node:path";
import type { NewSessionOptions, SessionStartEvent } from "../../kernel/index.js";
import type { SessionManager } from "../../plugins/session-store/session-manager.js";
import { serviceTokens } from "../../plugins/tokens.js";
import type { CarriedSelection, OpenSession } from "./session-open.js";

export interface ReplaceTarget {
  reason: "new" | "resume" | "fork";
  /** The file a resume opens. */
  target?: string;
  entryId?: string;
  position?: "before" | "at";
}

const CANCEL_CLOSED = {
  failClosed: () => ({ cancel: true }),
  isDecision: (r?: { cancel?: boolean }) => r?.cancel === true,
};

/**
 * Replaces `old` with the session `openLog` gives; `reopen` shuts nothing down and starts the new one (the handle's
 * open). Resolves `{cancelled: true}` when a handler cancelled, before anything changed.
 */
export async function replaceSession(
  old: OpenSession,
  target: ReplaceTarget,
  openLog: () => SessionManager,
  options: Pick<NewSessionOptions, "withSession" | "setup" | "preserveModel">,
  reopen: (log: SessionManager, start: SessionStartEvent, carried?: CarriedSelection) => Promise<OpenSession>,
): Promise<{ cancelled: boolean }> {
  const agent = old.runtime.scope.resolve(serviceTokens.agent);
  await agent.waitForIdle();
  const ctx = old.runtime.context();
  const cancel =
    target.reason === "fork"
      ? await old.runtime.bus.gate(
          "session_before_fork",
          { entryId: target.entryId!, position: target.position },
          ctx,
          CANCEL_CLOSED,
        )
      : await old.runtime.bus.gate(
          "session_before_switch",
          { reason: target.reason, ...(target.target ? { targetSessionFile: target.target } : {}) },
          ctx,
          CANCEL_CLOSED,
        );
  if (cancel?.cancel) return { cancelled: true };
  const previousSessionFile = old.log.getSessionFile();
  // Re-opening the file this session holds needs its lock released first.
  const sameFile = target.target !== undefined && previousSessionFile === resolve(target.target);
  if (sameFile) old.log.close();
  const log = openLog();
  if (options.setup) {
    try {
      await options.setup(log);
    } catch (error) {
      if (log !== old.log) log.close();
      throw error;
    }
  }
  const carried = options.preserveModel
    ? { model: agent.model, thinkingLevel: agent.thinkingLevel }
    : undefined;
  await old.runtime.shutdown({
    reason: target.reason,
    ...(log.getSessionFile() ? { targetSessionFile: log.getSessionFile()! } : {}),
  });
  if (old.log !== log) old.log.close();
  const opened = await reopen(
    log,
    { reason: target.reason, ...(previousSessionFile ? { previousSessionFile } : {}) },
    carried,
  );
  if (options.withSession) await options.withSession(opened.runtime.commandContext());
  return { cancelled: false };
}

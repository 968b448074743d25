/**
 * The transcript keeps the system prompt and the declared tool set: the first request records them, and a change
 * is recorded before the next request that uses it (a `knightcode.system` custom entry, not sent to the model as
 * such). Providers receive the complete current prompt and tools with every request, which is the checkpoint
 * form every supported API can represent.
 */
import type { SessionEntry } from "../../kernel/index.js";
import type { SessionLog } from "./session-log.js";

/** Custom entry type of the recorded system prompt and tool set. */
export const SYSTEM_ENTRY = "knightcode.system";

export interface SystemState {
  systemPrompt: string;
  tools: { name: string; description: string }[];
}

/**
 * Appends the state unless the latest system entry on the active branch already holds it (so navigating to an
 * older branch records the state again where it differs). Returns the appended entry.
 */
export function recordSystemState(
  log: Pick<SessionLog, "branchBackwards" | "appendCustomEntry">,
  systemPrompt: string,
  tools: readonly { name: string; description: string }[],
): SessionEntry | undefined {
  const state: SystemState = {
    systemPrompt,
    tools: tools.map((t) => ({ name: t.name, description: t.description })),
  };
  for (const entry of log.branchBackwards(["custom"])) {
    if (entry.customType === SYSTEM_ENTRY) {
      if (JSON.stringify(entry.data) === JSON.stringify(state)) return undefined;
      break;
    }
  }
  return log.appendCustomEntry(SYSTEM_ENTRY, state);
}

/**
 * How a message enters the session: `message_start`, then `message_end`, whose handlers may replace the message
 * with one of the same role, then the final message is recorded on the active branch. The loop, `sendMessage()`
 * and boundary drafts all go through here, so every recorded message was seen by the same handlers.
 */
import type { AgentMessage, ExtensionContext, HookBus } from "../../kernel/index.js";
import type { SessionLog } from "./session-log.js";

export type TranscriptLog = Pick<SessionLog, "appendMessage" | "appendCustomMessageEntry" | "buildContext">;

export class Transcript {
  constructor(
    private readonly bus: HookBus,
    private readonly context: () => ExtensionContext,
    private readonly log: TranscriptLog,
  ) {}

  /** Adds a finished message; returns it as recorded. */
  async add(message: AgentMessage): Promise<AgentMessage> {
    await this.bus.emit("message_start", { message }, this.context());
    return this.finish(message);
  }

  /** Ends a message whose `message_start` already went out (a streamed answer); returns it as recorded. */
  async finish(message: AgentMessage): Promise<AgentMessage> {
    const final = await this.bus.transform("message_end", message, this.context(), {
      toEvent: (m) => ({ message: m }),
      fold: (m, r) => {
        if (!r?.message) return m;
        if (r.message.role !== m.role) {
          throw new TypeError(`message_end may not change the role (${m.role} → ${r.message.role})`);
        }
        return r.message;
      },
    });
    if (final.role === "custom") {
      this.log.appendCustomMessageEntry(
        final.customType,
        final.content,
        final.display,
        final.details,
        final.view,
      );
    } else {
      this.log.appendMessage(final);
    }
    return final;
  }

  /** The active branch as the model sees it: compactions and context edits applied. */
  messages(): AgentMessage[] {
    return this.log.buildContext().messages;
  }
}

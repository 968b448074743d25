/**
 * `before_agent_start`, the first step of a run: handlers see the prompt and the structured system prompt options,
 * and may edit the options, add a message to the run, or force the whole prompt text. Edits of the options are
 * rendered against the original, so the prompt's tool and guideline lists show what changed.
 */
import type {
  CustomMessage,
  ExtensionContext,
  HookBus,
  ImageContent,
  SendMessageInput,
  SystemPromptOptions,
  UserMessage,
} from "../../kernel/index.js";
import { customMessage, messageText } from "./convert.js";

/** What started a run: a prompt (or `sendUserMessage`), or a custom message with `triggerTurn`. */
export type RunStart = { kind: "user"; message: UserMessage } | { kind: "custom"; message: CustomMessage };

export interface BeforeAgentStartConfig {
  bus: HookBus;
  context(): ExtensionContext;
  /** Fresh default options for this run. */
  systemPromptOptions(): SystemPromptOptions;
  /** Renders options; with `original`, edits of the tool and guideline lists show. */
  renderSystemPrompt(options: SystemPromptOptions, original?: SystemPromptOptions): string;
}

interface BeforeAgentStartResult {
  message?: SendMessageInput;
  systemPrompt?: string;
  forceSystemPrompt?: boolean;
}

/**
 * Resolves the run's system prompt and the messages handlers added, in handler order. `recorded` is the prompt the
 * structured sections render to: the transcript keeps it even when a handler forces other text for the requests.
 */
export async function beforeAgentStart(
  start: RunStart,
  config: BeforeAgentStartConfig,
): Promise<{ systemPrompt: string; recorded: string; messages: CustomMessage[] }> {
  const options = config.systemPromptOptions();
  const original = structuredClone(options);
  const added: CustomMessage[] = [];
  const state = {
    messageType: start.kind,
    ...(start.kind === "user"
      ? {
          prompt: messageText(start.message),
          ...(typeof start.message.content !== "string"
            ? { images: start.message.content.filter((c): c is ImageContent => c.type === "image") }
            : {}),
        }
      : { message: start.message }),
    systemPrompt: config.renderSystemPrompt(options),
    systemPromptOptions: options,
    forced: undefined as string | undefined,
  };
  // The prompt the handler being called was shown: what `forceSystemPrompt` keeps.
  let shown = state.systemPrompt;
  const result = await config.bus.transform("before_agent_start", state, config.context(), {
    // Each handler sees the prompt as it stands: the text an earlier handler returned, or else the options with
    // every earlier in-place edit rendered (builtin:skills adds its section that way), so the common
    // `{ systemPrompt: event.systemPrompt + "..." }` keeps what the handlers before it contributed.
    toEvent: (v) => {
      shown = v.forced ?? config.renderSystemPrompt(v.systemPromptOptions, original);
      return { ...v, systemPrompt: shown };
    },
    fold: (v, r: BeforeAgentStartResult) => {
      if (r.message) added.push(customMessage(r.message));
      const forced =
        typeof r.systemPrompt === "string" ? r.systemPrompt : r.forceSystemPrompt ? shown : v.forced;
      return { ...v, forced };
    },
  });
  const recorded = config.renderSystemPrompt(result.systemPromptOptions, original);
  return {
    systemPrompt: result.forced ?? recorded,
    recorded,
    messages: added,
  };
}

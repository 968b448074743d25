/**
 * builtin:compaction — the default summariser and the `/compact [instructions]` command.
 *
 * It also writes branch summaries: when `navigateTree(..., { summarize: true })` leaves a branch and no other
 * extension answered `session_before_tree`, it summarises the entries being left (the same fallback rule).
 *
 * KnightCode decides when to compact and what to keep (plugins/agent-loop/compaction.ts); this extension writes the
 * summary by answering `session_before_compact` with the session's model. It subscribes with `{ fallback: true }`,
 * so any other extension's handler runs first: one that returns `{compaction}` or `{cancel}` decides, and this one
 * only answers when nobody did. Disabling it (`-builtin:compaction`) leaves compaction to other extensions; without
 * any, a compaction fails with a message that says so.
 */
import type {
  AgentMessage,
  AssistantMessage,
  ExtensionAPI,
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionBeforeCompactResult,
  SessionBeforeTreeEvent,
  SessionBeforeTreeResult,
} from "@knightcodeai/cli/kit";
import { errorMessage, serializeConversation } from "@knightcodeai/cli/kit";

/** Tool output is the bulk of a conversation and the part a summary needs least; each result is cut to this. */
export const TOOL_RESULT_CHARS = 2000;

const SYSTEM_PROMPT =
  "You condense coding-assistant conversations into a summary another assistant continues from without seeing " +
  "the original. Answer with the summary only.";

const INSTRUCTIONS = `Summarise the conversation above so the work can continue from the summary alone. Use these sections:

## Goal
What the user wants, with constraints and preferences they stated.

## Progress
What is done, what is in progress, and decisions taken with their reasons.

## Key facts
File paths, function names, commands, error messages and values that later work needs, quoted exactly.

## Next steps
What remains, in order.

Be concise; leave out what no longer matters. If the conversation starts with an earlier summary, fold it in.`;

const BRANCH_INSTRUCTIONS = `The conversation above is a branch the user is leaving to continue from an earlier point. Summarise what
was tried and learned on it, so the work that continues elsewhere keeps it: what was attempted, what worked, what did
not and why, and file paths, names and values that matter, quoted exactly. Be concise.`;

export default function compaction(knightcode: ExtensionAPI): void {
  knightcode.on("session_before_compact", (event, ctx) => summarise(knightcode, event, ctx), {
    fallback: true,
  });

  knightcode.on("session_before_tree", (event, ctx) => summariseBranch(event, ctx), { fallback: true });

  knightcode.registerCommand("compact", {
    description: "Summarise older turns to free context (optional: what the summary should focus on)",
    handler: async (args, ctx) => {
      try {
        const result = await new Promise<{ tokensBefore: number; estimatedTokensAfter?: number }>(
          (resolve, reject) =>
            ctx.compact({
              ...(args.trim() ? { customInstructions: args.trim() } : {}),
              onComplete: resolve,
              onError: reject,
            }),
        );
        const after =
          result.estimatedTokensAfter !== undefined ? ` → about ${result.estimatedTokensAfter}` : "";
        ctx.ui.notify(`Compacted: ${result.tokensBefore}${after} tokens`, "info");
      } catch (error) {
        ctx.ui.notify(`Compaction did not run: ${errorMessage(error)}`, "error");
      }
    },
  });
}

async function summarise(
  knightcode: ExtensionAPI,
  event: SessionBeforeCompactEvent,
  ctx: ExtensionContext,
): Promise<SessionBeforeCompactResult> {
  const model = ctx.model;
  if (!model) throw new Error("no model is selected to write the summary");
  const { preparation } = event;
  const conversation = serializeConversation(preparation.messagesToSummarize, {
    maxToolResultChars: TOOL_RESULT_CHARS,
  });
  const focus = event.customInstructions ? `\n\nFocus of this summary: ${event.customInstructions}` : "";
  const answer = await ctx.modelRegistry.summarize({
    model,
    source: "compaction",
    reason: event.reason,
    systemPrompt: SYSTEM_PROMPT,
    messages: [
      {
        role: "user",
        content: `<conversation>\n${conversation}\n</conversation>\n\n${INSTRUCTIONS}${focus}`,
        timestamp: Date.now(),
      },
    ],
    ...summaryBudget(knightcode),
    signal: event.signal,
  });
  const text = textOf(answer);
  if (!text) throw new Error("the model answered the summary request without text");
  return {
    compaction: {
      summary: text + fileLists(preparation.readFiles, preparation.modifiedFiles),
      firstKeptEntryId: preparation.firstKeptEntryId,
      tokensBefore: preparation.tokensBefore,
      usage: answer.usage,
      details: { readFiles: preparation.readFiles, modifiedFiles: preparation.modifiedFiles },
    },
  };
}

async function summariseBranch(
  event: SessionBeforeTreeEvent,
  ctx: ExtensionContext,
): Promise<SessionBeforeTreeResult | undefined> {
  const { preparation } = event;
  const messages = preparation.entriesToSummarize.flatMap((entry): AgentMessage[] =>
    entry.type === "message" ? [entry.message] : [],
  );
  if (!preparation.userWantsSummary || messages.length === 0) return undefined;
  const model = ctx.model;
  if (!model) throw new Error("no model is selected to write the branch summary");
  const conversation = serializeConversation(messages, { maxToolResultChars: TOOL_RESULT_CHARS });
  const custom = preparation.customInstructions;
  const instructions =
    custom && preparation.replaceInstructions
      ? custom
      : `${BRANCH_INSTRUCTIONS}${custom ? `\n\nFocus of this summary: ${custom}` : ""}`;
  const answer = await ctx.modelRegistry.summarize({
    model,
    source: "branchSummary",
    systemPrompt: SYSTEM_PROMPT,
    messages: [
      {
        role: "user",
        content: `<conversation>\n${conversation}\n</conversation>\n\n${instructions}`,
        timestamp: Date.now(),
      },
    ],
    signal: event.signal,
  });
  const text = textOf(answer);
  if (!text) throw new Error("the model answered the branch summary request without text");
  return { summary: { summary: text } };
}

/** The summary must fit in the room compaction keeps free for an answer. */
function summaryBudget(knightcode: ExtensionAPI): { maxTokens?: number } {
  const reserve = (knightcode.getSettings().compaction as { reserveTokens?: unknown } | undefined)
    ?.reserveTokens;
  return typeof reserve === "number" && reserve > 0 ? { maxTokens: Math.floor(reserve * 0.8) } : {};
}

function textOf(answer: AssistantMessage): string {
  return answer.content
    .filter((part) => part.type === "text")
    .map((part) => (part as { text: string }).text)
    .join("")
    .trim();
}

/** The files the summarised turns touched, so the model knows what to read again rather than guess. */
function fileLists(read: readonly string[], modified: readonly string[]): string {
  let out = "";
  if (read.length > 0) out += `\n\n<read-files>\n${read.join("\n")}\n</read-files>`;
  if (modified.length > 0) out += `\n\n<modified-files>\n${modified.join("\n")}\n</modified-files>`;
  return out;
}

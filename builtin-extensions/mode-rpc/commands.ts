/** The RPC commands: a TypeBox schema for the parameters and what each does. */
import {
  type AgentMessage,
  type ImageContent,
  type PromptDisposition,
  RPC_MAX_FRAME_BYTES,
  type SessionController,
  stringifySafely,
  type ThinkingLevel,
} from "@knightcodeai/cli/kit";
import { type TObject, type TProperties, Type } from "@sinclair/typebox";
import { Errors } from "@sinclair/typebox/errors";
import { Check } from "@sinclair/typebox/value";
import type { RpcRuntime } from "./rpc-mode.js";

interface Command {
  validate(message: Record<string, unknown>): string | undefined;
  run(message: Record<string, any>, rpc: RpcRuntime): Promise<unknown>;
}

/** pi's levels; `max` is taken where the model offers it, else it becomes the model's highest. */
const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
const Level = Type.Union(LEVELS.map((l) => Type.Literal(l)));
const Image = Type.Object({ type: Type.Literal("image"), data: Type.String(), mimeType: Type.String() });

/**
 * How many bytes of entries one `get_entries` response carries at most: half the frame cap, so the response line
 * (entries, `leafId`, the envelope) stays well under what an RPC reader accepts. Page on with `since`.
 */
export const ENTRIES_PAGE_BYTES = RPC_MAX_FRAME_BYTES / 2;

/** The entries from `start` that fit one response (always at least one), at most `limit` of them. */
function entriesPage<T>(entries: readonly T[], start: number, limit: number | undefined): T[] {
  const end = Math.min(entries.length, limit === undefined ? entries.length : start + limit);
  let used = 0;
  let i = start;
  for (; i < end; i++) {
    const bytes = Buffer.byteLength(stringifySafely(entries[i]).text, "utf8") + 1;
    if (used + bytes > ENTRIES_PAGE_BYTES && i > start) break;
    used += bytes;
  }
  return entries.slice(start, i);
}

/** A command whose parameters are checked against `properties` (plus `id` and `type`). */
function command(properties: TProperties, run: Command["run"]): Command {
  const schema: TObject = Type.Object({
    id: Type.Optional(Type.String()),
    type: Type.String(),
    ...properties,
  });
  return {
    validate(message) {
      if (Check(schema, message)) return undefined;
      const first = [...Errors(schema, message)][0];
      return `Invalid parameters: ${first ? `${first.path || "/"} ${first.message}` : "unknown problem"}`;
    },
    run,
  };
}

/**
 * Starts a prompt and resolves, with how it was taken, once the session has taken it (`onAccepted`: the run started
 * or was joined, the message was queued, or a command or handled input took it). A refusal before that (no model,
 * busy) rejects.
 */
async function accept(
  start: (onAccepted: (disposition: PromptDisposition) => void) => Promise<void>,
): Promise<PromptDisposition> {
  let onAccepted: (disposition: PromptDisposition) => void = () => {};
  const accepted = new Promise<PromptDisposition>((resolve) => {
    onAccepted = resolve;
  });
  const run = start(onAccepted);
  run.catch(() => {});
  const first = await Promise.race([accepted, run.then(() => undefined)]);
  // A run that settled first took the prompt too (a command's prompt, say); its disposition came with it.
  return first ?? (await Promise.race([accepted, Promise.resolve<PromptDisposition>("handled")]));
}

/**
 * As pi: a level the model does not take becomes the nearest one it does, looking up first (`high` on a model
 * without reasoning becomes `off`).
 */
function clampThinkingLevel(session: SessionController, level: (typeof LEVELS)[number]): void {
  // `max` is listed only by a routed model that offers it; the session then holds it as its level.
  const available = session.getAvailableThinkingLevels() as (typeof LEVELS)[number][];
  const set = (l: (typeof LEVELS)[number]) => session.setThinkingLevel(l as ThinkingLevel);
  if (available.includes(level)) {
    set(level);
    return;
  }
  const at = LEVELS.indexOf(level);
  const nearest =
    LEVELS.slice(at).find((l) => available.includes(l)) ??
    [...LEVELS.slice(0, at)].reverse().find((l) => available.includes(l)) ??
    available[0] ??
    "off";
  set(nearest);
}

/** pi's `steer` / `follow_up`: the message's disposition, `queued` or `handled` (by an `input` handler). */
function queueMessage(
  session: SessionController,
  text: string,
  images: ImageContent[] | undefined,
  behavior: "steer" | "followUp",
): Promise<PromptDisposition> {
  return accept((onAccepted) =>
    session.prompt(text, {
      ...(images ? { images } : {}),
      streamingBehavior: behavior,
      queue: true,
      onAccepted,
    }),
  );
}

const QueueModeParam = Type.Union([Type.Literal("all"), Type.Literal("one-at-a-time")]);

/** The text of a user message's text parts (what pi's fork hands back for the editor). */
function userText(message: AgentMessage): string {
  if (message.role !== "user") return "";
  const content = message.content as string | { type: string; text?: string }[];
  if (typeof content === "string") return content;
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("");
}

const messagesOf = (session: SessionController): AgentMessage[] =>
  session.sessionManager.getBranch().flatMap((e) => (e.type === "message" ? [e.message] : []));

export const commands: Record<string, Command> = {
  prompt: command(
    {
      message: Type.String(),
      images: Type.Optional(Type.Array(Image)),
      streamingBehavior: Type.Optional(Type.Union([Type.Literal("steer"), Type.Literal("followUp")])),
    },
    async (m, { ctx }) => {
      const disposition = await accept((onAccepted) =>
        ctx.session.prompt(m.message, {
          ...(m.images ? { images: m.images } : {}),
          ...(m.streamingBehavior ? { streamingBehavior: m.streamingBehavior } : {}),
          onAccepted,
        }),
      );
      return { disposition };
    },
  ),
  // As pi 1.6: queued after the input handlers, running or not; while idle the message waits for the next run.
  steer: command(
    { message: Type.String(), images: Type.Optional(Type.Array(Image)) },
    async (m, { ctx }) => ({
      disposition: await queueMessage(ctx.session, m.message, m.images, "steer"),
    }),
  ),
  follow_up: command(
    { message: Type.String(), images: Type.Optional(Type.Array(Image)) },
    async (m, { ctx }) => ({
      disposition: await queueMessage(ctx.session, m.message, m.images, "followUp"),
    }),
  ),
  abort: command({}, async (_m, { ctx }) => ctx.session.abort()),
  new_session: command({ parentSession: Type.Optional(Type.String()) }, async (m, { ctx }) =>
    ctx.session.newSession(m.parentSession !== undefined ? { parentSession: m.parentSession } : {}),
  ),
  get_state: command({}, async (_m, { ctx }) => ctx.session.getState()),
  set_model: command({ provider: Type.String(), modelId: Type.String() }, async (m, { ctx }) => {
    if (!(await ctx.session.setModel(m.provider, m.modelId))) {
      throw new Error(`No model ${m.provider}/${m.modelId} is available (see get_available_models)`);
    }
    clampThinkingLevel(ctx.session, ctx.session.getThinkingLevel());
    return ctx.session.getState().model;
  }),
  // pi's shape: null when there is no other model to move to.
  cycle_model: command({}, async (_m, { ctx }) => {
    const current = ctx.session.getState().model;
    const model = await ctx.session.cycleModel();
    if (!model || (current && model.provider === current.provider && model.id === current.id)) return null;
    clampThinkingLevel(ctx.session, ctx.session.getThinkingLevel());
    return { model, thinkingLevel: ctx.session.getThinkingLevel(), isScoped: ctx.session.isModelScoped() };
  }),
  // As pi: the models that can be used now (a key, a sign-in, a server that takes none), not every catalogue
  // entry; the model in use is listed even when it needs nothing (the scripted test model).
  get_available_models: command({}, async (_m, { ctx }) => {
    const models = ctx.session.getUsableModels().map((u) => u.model);
    const current = ctx.session.getState().model;
    if (current && !models.some((m) => m.provider === current.provider && m.id === current.id))
      models.unshift(current);
    return { models };
  }),
  set_thinking_level: command({ level: Level }, async (m, { ctx }) => {
    clampThinkingLevel(ctx.session, m.level);
  }),
  cycle_thinking_level: command({}, async (_m, { ctx }) => {
    const level = ctx.session.cycleThinkingLevel();
    return level === undefined ? null : { level };
  }),
  get_available_thinking_levels: command({}, async (_m, { ctx }) => ({
    levels: ctx.session.getAvailableThinkingLevels(),
  })),
  set_steering_mode: command({ mode: QueueModeParam }, async (m, { ctx }) => {
    ctx.session.setQueueMode("steering", m.mode);
  }),
  set_follow_up_mode: command({ mode: QueueModeParam }, async (m, { ctx }) => {
    ctx.session.setQueueMode("followUp", m.mode);
  }),
  set_auto_compaction: command({ enabled: Type.Boolean() }, async (m, { ctx }) => {
    ctx.session.setAutoCompactionEnabled(m.enabled);
  }),
  set_auto_retry: command({ enabled: Type.Boolean() }, async (m, { ctx }) => {
    ctx.session.setAutoRetryEnabled(m.enabled);
  }),
  abort_retry: command({}, async (_m, { ctx }) => {
    ctx.session.abortRetry();
  }),
  bash: command(
    { command: Type.String(), excludeFromContext: Type.Optional(Type.Boolean()) },
    async (m, rpc) => {
      if (rpc.bashController) throw new Error("A bash command is already running (abort_bash stops it)");
      const controller = new AbortController();
      rpc.bashController = controller;
      try {
        return await rpc.ctx.session.executeBash(m.command, {
          excludeFromContext: m.excludeFromContext === true,
          signal: controller.signal,
          // Each chunk reaches the wire as a bash_execution_update record through the session's events.
          ...(m.id ? { id: m.id } : {}),
        });
      } finally {
        rpc.bashController = undefined;
      }
    },
  ),
  abort_bash: command({}, async (_m, rpc) => {
    const running = rpc.bashController !== undefined;
    rpc.bashController?.abort();
    return { aborted: running };
  }),
  // `tokens.total` is pi's name for `totalTokens`.
  get_session_stats: command({}, async (_m, { ctx }) => {
    const stats = ctx.session.getSessionStats();
    return { ...stats, tokens: { ...stats.tokens, total: stats.tokens.totalTokens } };
  }),
  switch_session: command({ sessionPath: Type.String() }, async (m, { ctx }) =>
    ctx.session.switchSession(m.sessionPath),
  ),
  // As pi: the new session ends just before the chosen user message, whose text comes back for the editor.
  fork: command({ entryId: Type.String() }, async (m, { ctx }) => {
    const entry = ctx.session.sessionManager.getEntry(m.entryId);
    if (!entry) throw new Error(`No entry ${m.entryId} in this session`);
    if (entry.type !== "message" || entry.message.role !== "user") {
      throw new Error(
        `Entry ${m.entryId} is not a user message: fork starts from one (see get_fork_messages)`,
      );
    }
    const text = userText(entry.message);
    const { cancelled } = await ctx.session.fork(m.entryId, { position: "before" });
    return { text, cancelled };
  }),
  clone: command({}, async (_m, { ctx }) => ctx.session.clone()),
  get_fork_messages: command({}, async (_m, { ctx }) => ({
    messages: ctx.session.sessionManager.getEntries().flatMap((e) => {
      if (e.type !== "message" || e.message.role !== "user") return [];
      const text = userText(e.message);
      return text ? [{ entryId: e.id, text }] : [];
    }),
  })),
  get_messages: command({}, async (_m, { ctx }) => ({ messages: messagesOf(ctx.session) })),
  get_entries: command(
    { since: Type.Optional(Type.String()), limit: Type.Optional(Type.Integer({ minimum: 1 })) },
    async (m, { ctx }) => {
      const manager = ctx.session.sessionManager;
      const entries = manager.getEntries();
      let start = 0;
      if (m.since !== undefined) {
        const index = entries.findIndex((e) => e.id === m.since);
        if (index < 0) throw new Error(`No entry ${m.since} in this session`);
        start = index + 1;
      }
      const page = entriesPage(entries, start, m.limit);
      return {
        entries: page,
        leafId: manager.getLeafId(),
        ...(start + page.length < entries.length ? { hasMore: true } : {}),
      };
    },
  ),
  get_tree: command({}, async (_m, { ctx }) => ({
    tree: ctx.session.sessionManager.getTree(),
    leafId: ctx.session.sessionManager.getLeafId(),
  })),
  navigate_tree: command(
    {
      entryId: Type.String(),
      summarize: Type.Optional(Type.Boolean()),
      customInstructions: Type.Optional(Type.String()),
      replaceInstructions: Type.Optional(Type.Boolean()),
      label: Type.Optional(Type.String()),
    },
    async (m, { ctx }) =>
      ctx.session.navigateTree(m.entryId, {
        ...(m.summarize !== undefined ? { summarize: m.summarize } : {}),
        ...(m.customInstructions !== undefined ? { customInstructions: m.customInstructions } : {}),
        ...(m.replaceInstructions !== undefined ? { replaceInstructions: m.replaceInstructions } : {}),
        ...(m.label !== undefined ? { label: m.label } : {}),
      }),
  ),
  set_label: command({ entryId: Type.String(), label: Type.Optional(Type.String()) }, async (m, { ctx }) => {
    if (!ctx.session.sessionManager.getEntry(m.entryId))
      throw new Error(`No entry ${m.entryId} in this session`);
    ctx.session.setLabel(m.entryId, m.label?.trim() ? m.label : undefined);
  }),
  get_commands: command({}, async (_m, { ctx }) => ({ commands: ctx.session.getCommands() })),
  clear_queue: command({}, async (_m, { ctx }) => ctx.session.clearQueue()),
  compact: command({ customInstructions: Type.Optional(Type.String()) }, async (m, { ctx }) =>
    ctx.session.compact(m.customInstructions),
  ),
  set_session_name: command({ name: Type.String() }, async (m, { ctx }) => {
    ctx.session.setSessionName(m.name.trim() === "" ? undefined : m.name);
  }),
  get_last_assistant_text: command({}, async (_m, { ctx }) => {
    const last = messagesOf(ctx.session)
      .filter((message) => message.role === "assistant")
      .at(-1);
    const text =
      last?.role === "assistant"
        ? last.content
            .filter((c) => c.type === "text")
            .map((c) => (c as { text: string }).text)
            .join("")
        : null;
    return { text };
  }),
  // The /export command of builtin:html-export (or of an extension that replaces it) does the work.
  // `outputPath` is pi's name for `path`.
  export_html: command(
    { path: Type.Optional(Type.String()), outputPath: Type.Optional(Type.String()) },
    async (m, { ctx }) => {
      if (m.path !== undefined && m.outputPath !== undefined && m.path !== m.outputPath) {
        throw new Error("Give the file as path or as outputPath, not two different ones");
      }
      const target: string = m.path ?? m.outputPath ?? "";
      const result = (await ctx.session.runCommand("export", target)) as { path?: unknown } | undefined;
      if (typeof result?.path !== "string")
        throw new Error("The /export command did not report the file it wrote");
      return { path: result.path };
    },
  ),
  reload: command({}, async (_m, { ctx }) => {
    await ctx.session.waitForIdle();
    await ctx.session.reload();
  }),
};

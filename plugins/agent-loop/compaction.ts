/**
 * Compaction: the older part of the active branch becomes one summary entry, so later requests send the summary and
 * the recent messages while the original entries stay in the tree. This module decides what to summarise (the cut)
 * and runs the protocol around it; the summary itself comes from a `session_before_compact` handler, by default the
 * `builtin:compaction` extension, so a user can replace or disable the summariser.
 *
 * Sequence: `compaction_start` → `session_before_compact` (a handler cancels or supplies `{compaction}`) → the
 * `compaction` entry → `session_compact` → `compaction_end`. A failure ends with `session_compact_failed` and
 * `compaction_end` carrying `errorMessage`; a cancel or abort with `aborted: true`.
 */
import {
  type AgentMessage,
  type CompactionPreparation,
  type CompactionReason,
  type CompactionResult,
  type ExtensionContext,
  errorMessage,
  type HookBus,
  KernelError,
  type ModelInfo,
  type SessionEntry,
} from "../../kernel/index.js";
import { type ContextItem, contextEntries } from "../session-store/context.js";
import type { CompactionSettings } from "../settings/settings.js";
import type { SessionLog } from "./session-log.js";

/** How far below the threshold an automatic compaction aims, as a share of the threshold. */
const THRESHOLD_MARGIN = 0.1;

/** The summary size expected before this session has seen one (the default summariser's are often larger). */
const FIRST_SUMMARY_TOKENS = 256;

/** The summariser KnightCode ships; a result from any other handler counts as `fromExtension`. */
export const DEFAULT_SUMMARIZER = "builtin:compaction";

/** Characters an image counts for (about 1,200 tokens), as the scripted provider estimates it. */
const IMAGE_CHARS = 4800;

/** About four characters a token: the estimate for messages no provider has measured yet. */
export function estimateTokens(message: AgentMessage): number {
  let chars = 0;
  const add = (content: string | readonly { type: string; [key: string]: unknown }[]) => {
    if (typeof content === "string") {
      chars += content.length;
      return;
    }
    for (const part of content) {
      if (part.type === "text") chars += String(part.text ?? "").length;
      else if (part.type === "thinking") chars += String(part.thinking ?? "").length;
      else if (part.type === "toolCall")
        chars += String(part.name).length + JSON.stringify(part.arguments ?? {}).length;
      else if (part.type === "image") chars += IMAGE_CHARS;
    }
  };
  add((message as { content: string | { type: string }[] }).content);
  return Math.ceil(chars / 4);
}

/** Tokens an answer's usage says its request and answer took, as `ctx.getContextUsage()` counts them. */
function usageTokens(message: AgentMessage): number | undefined {
  if (message.role !== "assistant" || message.stopReason === "error" || message.stopReason === "aborted")
    return undefined;
  const u = message.usage;
  const total = u.input + u.cacheRead + u.cacheWrite + u.output;
  return total > 0 ? total : undefined;
}

/**
 * The context's size: the usage the provider reported for the last answer, plus an estimate of what came after it.
 * Answers from before the last compaction reported the uncompacted context, so only later ones are trusted.
 */
export function estimateContextTokens(items: readonly ContextItem[]): number {
  const compaction = items.find((item) => item.entry.type === "compaction")?.index ?? -1;
  let estimate = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    const measured = item.index > compaction ? usageTokens(item.message) : undefined;
    if (measured !== undefined) return measured + estimate;
    estimate += estimateTokens(item.message);
  }
  return estimate;
}

/**
 * What a compaction of `branch` would summarise and keep, or undefined when there is nothing older than the most
 * recent `keepRecentTokens` to summarise. The kept part starts at the newest message that makes it reach
 * `keepRecentTokens`, moved back past tool results to the answer that made the calls. A compaction someone asked
 * for (`manual`: `/compact`, `ctx.compact()`, RPC `compact`) of a conversation that fits in `keepRecentTokens`
 * still compacts, as pi does on an explicit compact: it keeps the latest turn (from the last user message) and
 * summarises the turns before it; with a single turn there is nothing before it, and the result is undefined.
 */
export function prepareCompaction(
  branch: readonly SessionEntry[],
  keepRecentTokens: number,
  options: { manual?: boolean } = {},
): CompactionPreparation | undefined {
  return cutCompaction(branch, keepRecentTokens, undefined, options)?.preparation;
}

/** What the automatic triggers aim for: the context after the compaction below `targetTokens`. */
export interface CutPlan {
  /** The most the summary is expected to take (the summariser's budget). */
  summaryTokens: number;
  targetTokens: number;
}

export interface Cut {
  preparation: CompactionPreparation;
  /** Estimated tokens of the messages the summary replaces (an earlier summary among them). */
  summarisedTokens: number;
  /** The context's expected size after the compaction, with a summary of `plan.summaryTokens`. */
  expectedAfter: number;
}

/**
 * The cut of a compaction. With a plan, a cut at `keepRecentTokens` that would leave the context above the plan's
 * target moves to newer messages (keeping less than `keepRecentTokens`, at least one message) until the expected
 * size reaches the target, or as far as it can go.
 */
export function cutCompaction(
  branch: readonly SessionEntry[],
  keepRecentTokens: number,
  plan?: CutPlan,
  options: { manual?: boolean } = {},
): Cut | undefined {
  const items = contextEntries(branch);
  const sizes = items.map((item) => estimateTokens(item.message));
  let kept = 0;
  let cut = -1;
  for (let i = items.length - 1; i >= 0; i--) {
    kept += sizes[i]!;
    if (kept >= keepRecentTokens) {
      cut = i;
      break;
    }
  }
  if (cut === -1 && options.manual) cut = items.findLastIndex((item) => item.message.role === "user");
  while (cut > 0 && items[cut]!.message.role === "toolResult") cut--;
  const tokensBefore = estimateContextTokens(items);
  const summarised = (at: number) => sizes.slice(0, Math.max(at, 0)).reduce((a, b) => a + b, 0);
  const after = (at: number) => tokensBefore - summarised(at) + (plan?.summaryTokens ?? 0);
  if (plan) {
    if (cut < 0) cut = 0;
    let next = cut;
    while (after(cut) > plan.targetTokens) {
      next++;
      while (next < items.length && items[next]!.message.role === "toolResult") next++;
      if (next >= items.length) break;
      cut = next;
    }
  }
  // Nothing older to summarise: the kept part starts at the first message, or only an earlier summary precedes it.
  if (cut <= 0 || (cut === 1 && items[0]!.entry.type === "compaction")) return undefined;
  const messagesToSummarize = items.slice(0, cut).map((item) => item.message);
  const files = fileOperations(branch, messagesToSummarize);
  return {
    preparation: {
      firstKeptEntryId: items[cut]!.entry.id,
      messagesToSummarize,
      keptMessages: items.slice(cut).map((item) => item.message),
      tokensBefore,
      readFiles: [...files.read].filter((f) => !files.modified.has(f)).sort(),
      modifiedFiles: [...files.modified].sort(),
    },
    summarisedTokens: summarised(cut),
    expectedAfter: after(cut),
  };
}

/** Estimated tokens of the messages before `firstKeptEntryId` in the branch's context: what a summary replaces. */
function tokensBeforeEntry(branch: readonly SessionEntry[], firstKeptEntryId: string): number {
  let total = 0;
  for (const item of contextEntries(branch)) {
    if (item.entry.id === firstKeptEntryId) break;
    total += estimateTokens(item.message);
  }
  return total;
}

const READ_TOOLS = new Set(["read"]);
const WRITE_TOOLS = new Set(["write", "edit"]);

/** Paths the summarised messages read and changed (model calls and `nestedCalls`), and the previous compaction's. */
function fileOperations(
  branch: readonly SessionEntry[],
  messages: readonly AgentMessage[],
): { read: Set<string>; modified: Set<string> } {
  const read = new Set<string>();
  const modified = new Set<string>();
  const note = (name: string, args: unknown) => {
    const path = (args as { path?: unknown } | undefined)?.path;
    if (typeof path !== "string" || path === "") return;
    if (READ_TOOLS.has(name)) read.add(path);
    else if (WRITE_TOOLS.has(name)) modified.add(path);
  };
  const previous = branch.findLast((entry) => entry.type === "compaction");
  const details = previous?.type === "compaction" ? (previous.details as Record<string, unknown>) : undefined;
  for (const [key, set] of [
    ["readFiles", read],
    ["modifiedFiles", modified],
  ] as const) {
    const list = details?.[key];
    if (Array.isArray(list)) for (const f of list) if (typeof f === "string") set.add(f);
  }
  for (const message of messages) {
    if (message.role === "assistant") {
      for (const part of message.content) if (part.type === "toolCall") note(part.name, part.arguments);
    } else if (message.role === "toolResult") {
      for (const call of message.nestedCalls?.calls ?? []) note(call.toolName, call.arguments);
    }
  }
  return { read, modified };
}

export interface CompactionConfig {
  bus: HookBus;
  context(): ExtensionContext;
  log: SessionLog;
  /** Read at each check, so a settings change applies to the next request. */
  settings(): CompactionSettings;
  model(): ModelInfo | undefined;
}

export interface CompactRequest {
  reason: CompactionReason;
  customInstructions?: string;
  /** The request that overflowed is retried once this compaction succeeds. */
  willRetry?: boolean;
  signal?: AbortSignal;
  /** The automatic triggers' target, which may move the cut past `keepRecentTokens`. */
  plan?: CutPlan;
}

/** Why a compaction did not produce an entry; `aborted` when a handler cancelled it or its signal aborted. */
export class CompactionError extends KernelError {
  constructor(
    message: string,
    readonly aborted: boolean,
  ) {
    super(aborted ? "KC_ERR_COMPACTION_ABORTED" : "KC_ERR_COMPACTION_FAILED", message);
  }
}

export class Compactor {
  private running: Promise<unknown> | undefined;
  /** Set when a threshold compaction failed: the run goes on without more attempts, each of which would wait out
   * the summary's retries before its request. */
  private thresholdFailed = false;
  /** Set once the session was told that no compaction can bring the context under the threshold; cleared by a
   * compaction that succeeds. */
  private cannotSaid = false;
  /** Tokens of the last summary a handler returned, written or refused: what the next one is expected to take. */
  private lastSummaryTokens: number | undefined;

  constructor(private readonly config: CompactionConfig) {}

  get isCompacting(): boolean {
    return this.running !== undefined;
  }

  /** Resolves once no compaction is running. */
  async settled(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
  }

  /** Whether the context passed `contextWindow - reserveTokens`, so the next request should not go out as it is. */
  overThreshold(): boolean {
    const threshold = this.threshold();
    if (threshold === undefined) return false;
    return estimateContextTokens(this.config.log.contextEntries()) > threshold;
  }

  private threshold(): number | undefined {
    const settings = this.config.settings();
    const model = this.config.model();
    if (!settings.enabled || !model || model.contextWindow <= 0) return undefined;
    return model.contextWindow - settings.reserveTokens;
  }

  /**
   * The automatic triggers' plan: a summary as large as the last one this session wrote or refused (at first
   * `FIRST_SUMMARY_TOKENS`), within the summariser's budget (80% of `reserveTokens`); and the context after the
   * compaction at least `THRESHOLD_MARGIN` of the threshold below it, so the next requests do not compact again.
   */
  private plan(threshold: number): CutPlan {
    const budget = Math.floor(this.config.settings().reserveTokens * 0.8);
    const previous = this.config.log.getBranch().findLast((entry) => entry.type === "compaction");
    const known = Math.max(
      this.lastSummaryTokens ?? 0,
      previous?.type === "compaction" ? Math.ceil(previous.summary.length / 4) : 0,
    );
    const summaryTokens = Math.min(budget, known > 0 ? known : FIRST_SUMMARY_TOKENS);
    return { summaryTokens, targetTokens: Math.floor(threshold * (1 - THRESHOLD_MARGIN)) };
  }

  /** A new run may try the threshold again after a failure in an earlier one. */
  runStarted(): void {
    this.thresholdFailed = false;
  }

  /**
   * The check before a request: compacts when over the threshold and a compaction can bring the context back under
   * it. A failure is reported (`compaction_end`) and the request goes out; the rest of the run makes no further
   * threshold attempt. When no cut frees more than the summary would add, or none reaches below the threshold,
   * nothing is summarised and the session is told once (`compaction_end` with the reason) until a compaction
   * succeeds again.
   */
  async beforeRequest(signal: AbortSignal): Promise<void> {
    if (this.thresholdFailed || !this.overThreshold()) return;
    const threshold = this.threshold()!;
    const plan = this.plan(threshold);
    const cut = cutCompaction(this.config.log.getBranch(), this.config.settings().keepRecentTokens, plan);
    if (!cut) return;
    const reason = cannotCompact(cut, plan, threshold);
    if (reason) {
      if (this.cannotSaid) return;
      this.cannotSaid = true;
      await this.report("threshold", reason);
      return;
    }
    await this.compact({ reason: "threshold", signal, plan }).catch(() => {
      this.thresholdFailed = true;
    });
  }

  /** After a `context_overflow` answer: compacts so the request can be retried once. */
  async recoverOverflow(signal: AbortSignal): Promise<boolean> {
    if (!this.config.settings().enabled) return false;
    const threshold = this.threshold();
    try {
      await this.compact({
        reason: "overflow",
        willRetry: true,
        signal,
        ...(threshold !== undefined ? { plan: this.plan(threshold) } : {}),
      });
      return true;
    } catch {
      return false;
    }
  }

  /** A compaction that did not start, told as one that failed: `compaction_start`, `session_compact_failed`, `compaction_end`. */
  private async report(reason: CompactionReason, error: string): Promise<void> {
    const { bus } = this.config;
    const ctx = this.config.context();
    await bus.emit("compaction_start", { reason }, ctx);
    await bus.emit("session_compact_failed", { reason, error }, ctx);
    await bus.emit("compaction_end", { reason, aborted: false, willRetry: false, errorMessage: error }, ctx);
  }

  /** Runs one compaction; rejects with a CompactionError when no entry was written. */
  compact(request: CompactRequest): Promise<CompactionResult> {
    if (this.running) {
      return Promise.reject(new CompactionError("A compaction is already running", false));
    }
    const run = this.run(request);
    this.running = run;
    const clear = () => {
      if (this.running === run) this.running = undefined;
    };
    run.then(clear, clear);
    return run;
  }

  private async run(request: CompactRequest): Promise<CompactionResult> {
    const { bus, log } = this.config;
    const ctx = () => this.config.context();
    const { reason } = request;
    const controller = new AbortController();
    const abort = () => controller.abort();
    request.signal?.addEventListener("abort", abort, { once: true });
    if (request.signal?.aborted) controller.abort();
    await bus.emit("compaction_start", { reason }, ctx());
    try {
      const branch = log.getBranch();
      const manual = reason === "manual";
      const preparation = cutCompaction(branch, this.config.settings().keepRecentTokens, request.plan, {
        manual,
      })?.preparation;
      if (!preparation) {
        throw new CompactionError(
          manual
            ? "Nothing to compact: the conversation has no turn before the latest one (or only an earlier summary)"
            : "Nothing to compact: the conversation is within compaction.keepRecentTokens",
          false,
        );
      }
      let decidedBy: string | undefined;
      // A throwing summariser is that handler's failure, not a cancel: it ends the compaction with its message.
      let failure: { owner: string; error: unknown } | undefined;
      const decision = await bus.gate(
        "session_before_compact",
        {
          reason,
          preparation,
          branchEntries: branch,
          ...(request.customInstructions ? { customInstructions: request.customInstructions } : {}),
          signal: controller.signal,
        },
        ctx(),
        {
          failClosed: (error, owner) => {
            failure = { owner: owner.id, error };
            return { cancel: true };
          },
          isDecision: (r, owner) => {
            const decided = r.cancel === true || r.compaction !== undefined;
            if (decided) decidedBy = owner.id;
            return decided;
          },
        },
      );
      if (controller.signal.aborted) throw new CompactionError("Compaction was aborted", true);
      if (failure) {
        const message = errorMessage(failure.error);
        throw new CompactionError(`${failure.owner} could not summarise the conversation: ${message}`, false);
      }
      if (decision?.cancel) throw new CompactionError(`Compaction was cancelled by ${decidedBy}`, true);
      const supplied = decision?.compaction;
      if (!supplied) {
        throw new CompactionError(
          `No extension summarised the conversation: ${DEFAULT_SUMMARIZER} is disabled and no other session_before_compact handler supplied a compaction`,
          false,
        );
      }
      const checked = checkResult(supplied, branch, decidedBy);
      const replaced = tokensBeforeEntry(branch, checked.firstKeptEntryId);
      const summaryTokens = Math.ceil(checked.summary.length / 4);
      this.lastSummaryTokens = summaryTokens;
      if (summaryTokens >= replaced) {
        // Said now: the threshold check stays quiet about it until a compaction succeeds.
        this.cannotSaid = true;
        throw new CompactionError(
          `The compaction would free nothing: its summary (about ${summaryTokens} tokens) is not smaller than the ${replaced} tokens of messages it replaces, so it was not written`,
          false,
        );
      }
      const details = checked.details ?? {
        readFiles: preparation.readFiles,
        modifiedFiles: preparation.modifiedFiles,
      };
      const entry = log.appendCompaction(
        checked.summary,
        checked.firstKeptEntryId,
        checked.tokensBefore,
        details,
        checked.usage,
      );
      const result: CompactionResult = {
        summary: checked.summary,
        firstKeptEntryId: checked.firstKeptEntryId,
        tokensBefore: checked.tokensBefore,
        estimatedTokensAfter: estimateContextTokens(log.contextEntries()),
        ...(checked.usage ? { usage: checked.usage } : {}),
        details,
      };
      const willRetry = request.willRetry === true;
      this.cannotSaid = false;
      await bus.emit(
        "session_compact",
        {
          reason,
          compactionEntry: entry as Extract<SessionEntry, { type: "compaction" }>,
          fromExtension: decidedBy !== DEFAULT_SUMMARIZER,
          willRetry,
        },
        ctx(),
      );
      await bus.emit("compaction_end", { reason, result, aborted: false, willRetry }, ctx());
      return result;
    } catch (caught) {
      const aborted = controller.signal.aborted || (caught instanceof CompactionError && caught.aborted);
      const failed = errorMessage(caught);
      if (!aborted) await bus.emit("session_compact_failed", { reason, error: failed }, ctx());
      await bus.emit(
        "compaction_end",
        { reason, aborted, willRetry: false, ...(aborted ? {} : { errorMessage: failed }) },
        ctx(),
      );
      throw caught instanceof CompactionError ? caught : new CompactionError(failed, aborted);
    } finally {
      request.signal?.removeEventListener("abort", abort);
    }
  }
}

/** Why a threshold compaction with this cut would not help, or undefined when it would. */
function cannotCompact(cut: Cut, plan: CutPlan, threshold: number): string | undefined {
  if (cut.expectedAfter > threshold) {
    return `Not compacting: even a compaction that keeps only the newest messages leaves the context at about ${cut.expectedAfter} tokens, over the compaction threshold (${threshold} tokens): the system prompt, tools and recent messages take most of the window; use a model with a larger window, a smaller compaction.reserveTokens, or fewer tools`;
  }
  if (cut.summarisedTokens <= plan.summaryTokens) {
    return `Not compacting: the context is over the compaction threshold (${threshold} tokens), but the messages a compaction could summarise (about ${cut.summarisedTokens} tokens) are not more than a summary is expected to take (about ${plan.summaryTokens} tokens); it will try again once there is more to summarise`;
  }
  return undefined;
}

/** A handler's compaction, checked before it is written: a bad one fails the compaction with the handler named. */
function checkResult(
  result: CompactionResult,
  branch: readonly SessionEntry[],
  owner: string | undefined,
): CompactionResult {
  const fail = (problem: string) =>
    new CompactionError(`${owner ?? "A handler"} returned an invalid compaction: ${problem}`, false);
  if (typeof result !== "object" || result === null) throw fail("not an object");
  if (typeof result.summary !== "string" || result.summary.trim() === "") throw fail("summary is empty");
  if (!branch.some((entry) => entry.id === result.firstKeptEntryId))
    throw fail(`firstKeptEntryId ${JSON.stringify(result.firstKeptEntryId)} is not on the active branch`);
  if (typeof result.tokensBefore !== "number" || !(result.tokensBefore >= 0))
    throw fail("tokensBefore is not a number");
  return result;
}

/**
 * A session-level run around the turn loop. Each low-level run ends with `agent_end`; a failed one that the retry
 * policy allows is repeated after its delay (`willRetry: true`, `auto_retry_start`, and `auto_retry_end` once a
 * run succeeds, fails for good or is aborted). `auto_retry_start` numbers the retry (1 for the first);
 * `auto_retry_end` counts the attempts that ran, the first request included, so one retry that succeeds reports
 * `attempt: 2` as json.md's example does. A request the provider refused as too long (`context_overflow`) is compacted
 * and retried once per run (`agent_end.willRetry` says a recovery is attempted). A finished run meets the `agent_before_settle` boundary, which may
 * commit entries and ask for one more run; messages queued after the turn loop's last look start one too. `agent_settled` is the caller's, since only it knows when the session
 * is idle again.
 */
import type { AgentMessage, BoundaryState, ExtensionContext, HookBus } from "../../kernel/index.js";
import type { RetrySettings } from "../settings/settings.js";
import { planRetry, waitUnlessAborted } from "./retry-policy.js";
import { ContinuationBudget, type TurnsOutcome } from "./turn-loop.js";

export { MAX_CONTINUATIONS } from "./turn-loop.js";

export interface AgentRunConfig {
  bus: HookBus;
  context(): ExtensionContext;
  /** Read after each failed run, so a settings change applies to the next retry. */
  retry(): RetrySettings;
  /** One low-level run (the turn loop) starting with `input`; boundaries' continuations draw on `budget`. */
  turns(
    input: readonly AgentMessage[],
    signal: AbortSignal,
    budget: ContinuationBudget,
  ): Promise<TurnsOutcome>;
  /** Commits the entries an `agent_before_settle` boundary proposed. */
  commit(state: BoundaryState): Promise<void>;
  /**
   * Steering (else follow-up) messages queued since the turn loop last looked, taken from their queue: a run about
   * to settle delivers them first, since their sender was told they will be.
   */
  takeQueued?(): AgentMessage[];
  /** A signal that cancels the wait before the next retry (not the run); asked for at each wait. */
  retryCancel?(): AbortSignal;
  /** Compacts after a `context_overflow` answer; false when it could not (then the run ends with the error). */
  recoverOverflow?(signal: AbortSignal): Promise<boolean>;
}

/** Runs until nothing asks for another low-level run; resolves whether the run was aborted. */
export async function runAgent(
  input: readonly AgentMessage[],
  config: AgentRunConfig,
  signal: AbortSignal,
): Promise<{ aborted: boolean }> {
  const { bus, context } = config;
  const continuations = new ContinuationBudget();
  let retries = 0;
  let overflowRecovered = false;
  const retryEnd = (success: boolean, attempts: number, finalError?: string) =>
    bus.emit(
      "auto_retry_end",
      { success, attempt: attempts, ...(success ? {} : { finalError: finalError ?? "error" }) },
      context(),
    );
  let next = input;
  for (;;) {
    const outcome = await config.turns(next, signal, continuations);
    next = [];
    const failure = outcome.kind === "error" ? outcome.error : undefined;
    const retry = failure && !signal.aborted ? planRetry(config.retry(), failure, retries) : undefined;
    const overflow =
      failure?.errorKind === "context_overflow" &&
      !signal.aborted &&
      !overflowRecovered &&
      config.recoverOverflow !== undefined;
    await bus.emit(
      "agent_end",
      { messages: outcome.messages, willRetry: retry !== undefined || overflow },
      context(),
    );
    if (outcome.kind === "aborted" || signal.aborted) {
      if (retries > 0) await retryEnd(false, retries + 1, "aborted");
      return { aborted: true };
    }
    if (retry) {
      retries = retry.attempt;
      await bus.emit("auto_retry_start", { ...retry }, context());
      const cancel = config.retryCancel?.();
      if (!(await waitUnlessAborted(retry.delayMs, cancel ? AbortSignal.any([signal, cancel]) : signal))) {
        // The retry that was waiting never ran: the run was aborted, or only the retry was cancelled.
        const aborted = signal.aborted;
        await retryEnd(false, retries, aborted ? "aborted" : "Retry cancelled");
        return { aborted };
      }
      continue;
    }
    if (overflow) {
      overflowRecovered = true;
      if (await config.recoverOverflow!(signal)) continue;
    }
    if (retries > 0) {
      await retryEnd(!failure, retries + 1, failure?.errorMessage);
      retries = 0;
    }
    if (outcome.kind === "error" || outcome.kind === "end") return { aborted: false };
    const settle = await bus.boundary("agent_before_settle", { messages: outcome.messages }, context());
    await config.commit(settle);
    // Queued while `agent_end` and `agent_before_settle` handlers ran, after the turn loop's last look.
    const queued = settle.end ? [] : (config.takeQueued?.() ?? []);
    if (queued.length > 0) {
      next = queued;
      continue;
    }
    if (settle.end || !settle.continue || !continuations.take()) return { aborted: false };
  }
}

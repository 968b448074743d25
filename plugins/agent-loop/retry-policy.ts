/**
 * When a failed run is tried again: only after errors a later attempt can get past (rate limits, overload,
 * network failures, timeouts), at most `retry.maxRetries` times, after a delay that doubles from
 * `retry.baseDelayMs` per attempt, is never shorter than the server's retry-after and never longer than
 * `retry.maxDelayMs`. Pure, so any retrying step (a run, a summary) can share it.
 */
import type { AssistantMessage } from "../../kernel/index.js";
import type { RetrySettings } from "../settings/settings.js";

export const RETRYABLE_ERROR_KINDS: ReadonlySet<string> = new Set([
  "rate_limit",
  "overloaded",
  "network",
  "timeout",
]);

/** The next attempt: the fields of `auto_retry_start`. */
export interface RetryPlan {
  /** 1 for the first retry. */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  errorMessage: string;
}

type Failure = Pick<AssistantMessage, "errorKind" | "errorMessage" | "retryAfterMs">;

/** The retry after `failure` when `retriesSoFar` retries were made already, or undefined when there is none. */
export function planRetry(
  settings: RetrySettings,
  failure: Failure | undefined,
  retriesSoFar: number,
): RetryPlan | undefined {
  if (!failure || !settings.enabled || retriesSoFar >= settings.maxRetries) return undefined;
  if (!RETRYABLE_ERROR_KINDS.has(failure.errorKind ?? "unknown")) return undefined;
  const attempt = retriesSoFar + 1;
  return {
    attempt,
    maxAttempts: settings.maxRetries,
    delayMs: retryDelay(settings, attempt, failure.retryAfterMs),
    errorMessage: failure.errorMessage ?? "error",
  };
}

export function retryDelay(
  settings: Pick<RetrySettings, "baseDelayMs" | "maxDelayMs">,
  attempt: number,
  retryAfterMs = 0,
): number {
  return Math.min(settings.maxDelayMs, Math.max(retryAfterMs, settings.baseDelayMs * 2 ** (attempt - 1)));
}

/** Waits `ms`; resolves false as soon as the signal aborts (at once if it already has), true otherwise. */
export function waitUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

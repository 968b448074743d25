/** The retry policy: which failures retry, how often, and how long to wait. */

import { expect } from "chai";
import {
  planRetry,
  RETRYABLE_ERROR_KINDS,
  retryDelay,
  waitUnlessAborted,
} from "../../../plugins/agent-loop/retry-policy.js";
import type { RetrySettings } from "../../../plugins/settings/settings.js";

const settings: RetrySettings = { enabled: true, maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1_000 };

describe("retry policy", () => {
  it("retries rate limits, overload, network failures and timeouts, and nothing else", () => {
    const kinds = [
      "rate_limit",
      "overloaded",
      "network",
      "timeout",
      "auth",
      "bad_request",
      "context_overflow",
    ];
    const retried = kinds.filter((kind) => planRetry(settings, { errorKind: kind as never }, 0));
    expect(retried).to.deep.equal([...RETRYABLE_ERROR_KINDS]);
    expect(planRetry(settings, { errorMessage: "no kind" }, 0)).to.equal(undefined);
    expect(planRetry(settings, undefined, 0)).to.equal(undefined);
  });

  it("plans attempts up to maxRetries with the fields of auto_retry_start", () => {
    const failure = { errorKind: "overloaded" as const, errorMessage: "529 overloaded" };
    expect(planRetry(settings, failure, 0)).to.deep.equal({
      attempt: 1,
      maxAttempts: 3,
      delayMs: 100,
      errorMessage: "529 overloaded",
    });
    expect(planRetry(settings, failure, 2)?.attempt).to.equal(3);
    expect(planRetry(settings, failure, 3)).to.equal(undefined);
    expect(planRetry({ ...settings, enabled: false }, failure, 0)).to.equal(undefined);
    expect(planRetry(settings, { errorKind: "network" }, 0)?.errorMessage).to.equal("error");
  });

  it("doubles the delay per attempt up to maxDelayMs", () => {
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelay(settings, attempt))).to.deep.equal([
      100, 200, 400, 800, 1_000,
    ]);
  });

  it("waits at least the server's retry-after, still bounded by maxDelayMs", () => {
    expect(planRetry(settings, { errorKind: "rate_limit", retryAfterMs: 700 }, 0)?.delayMs).to.equal(700);
    expect(planRetry(settings, { errorKind: "rate_limit", retryAfterMs: 50 }, 1)?.delayMs).to.equal(200);
    expect(planRetry(settings, { errorKind: "rate_limit", retryAfterMs: 90_000 }, 0)?.delayMs).to.equal(
      1_000,
    );
  });

  it("waits out the delay unless the signal aborts", async () => {
    const controller = new AbortController();
    expect(await waitUnlessAborted(5, controller.signal)).to.equal(true);
    const started = Date.now();
    const waiting = waitUnlessAborted(10_000, controller.signal);
    setTimeout(() => controller.abort(), 5);
    expect(await waiting).to.equal(false);
    expect(Date.now() - started).to.be.lessThan(5_000);
    expect(await waitUnlessAborted(10_000, controller.signal)).to.equal(false);
  });
});

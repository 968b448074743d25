/**
 * Fails a suite that leaves a registration behind: every disposable created during a test must be disposed by
 * the time its afterEach runs (sessions shut down, unsubscribed handlers, reloaded runtimes).
 * Call it after the afterEach hook that shuts sessions down: mocha runs afterEach hooks in definition order.
 */
import { expect } from "chai";
import { type DisposableLeakTracker, trackDisposables } from "../../testing.js";

export function ensureNoDisposablesLeaked(): void {
  let tracker: DisposableLeakTracker | undefined;
  beforeEach(() => {
    tracker = trackDisposables();
  });
  afterEach(function () {
    const leaks = tracker?.stop() ?? [];
    tracker = undefined;
    if (this.currentTest?.state === "failed") return;
    expect(leaks, `registrations left behind by "${this.currentTest?.title}"`).to.deep.equal([]);
  });
}

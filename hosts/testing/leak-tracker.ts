import { type Disposable, setDisposableTracker } from "../../kernel/index.js";

export interface DisposableLeakTracker {
  /** Labels of disposables created since tracking began and not disposed. */
  leaks(): string[];
  /** Stops tracking and returns the leaks. */
  stop(): string[];
}

/**
 * Records every registration disposable created from now on. A suite calls it before each test and fails when
 * `stop()` returns anything after the test shut its sessions down.
 */
export function trackDisposables(): DisposableLeakTracker {
  const live = new Map<Disposable, string>();
  setDisposableTracker({
    onCreate: (disposable, label) => live.set(disposable, label),
    onDispose: (disposable) => live.delete(disposable),
  });
  return {
    leaks: () => [...live.values()],
    stop: () => {
      setDisposableTracker(undefined);
      return [...live.values()];
    },
  };
}

/** Disposables (VS Code style): every registration returns one, and an owner's store disposes them all. */

import type { Disposable } from "../api/services.js";

export type { Disposable };

/** Observes creation and disposal, so a test suite can fail when something is never disposed. */
export interface DisposableTracker {
  onCreate(disposable: Disposable, label: string): void;
  onDispose(disposable: Disposable): void;
}

let tracker: DisposableTracker | undefined;

export function setDisposableTracker(next: DisposableTracker | undefined): void {
  tracker = next;
}

/** Wraps a cleanup function into an idempotent disposable. */
export function toDisposable(fn: () => void | Promise<void>, label = "disposable"): Disposable {
  let done = false;
  const disposable: Disposable = {
    dispose() {
      if (done) return;
      done = true;
      tracker?.onDispose(disposable);
      return fn();
    },
  };
  tracker?.onCreate(disposable, label);
  return disposable;
}

/**
 * Holds disposables and disposes them last-in first-out. Every disposer runs even when one fails; the
 * failures are returned together so the caller can report them.
 */
export class DisposableStore implements Disposable {
  private items: Disposable[] = [];
  private disposed = false;

  get size(): number {
    return this.items.length;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  add<T extends Disposable>(item: T): T {
    if (this.disposed) {
      // A registration that arrives after its owner is gone must not outlive it.
      void Promise.resolve(item.dispose()).catch(() => {});
      return item;
    }
    this.items.push(item);
    return item;
  }

  delete(item: Disposable): void {
    const index = this.items.lastIndexOf(item);
    if (index >= 0) this.items.splice(index, 1);
  }

  async dispose(): Promise<void> {
    const errors = await this.disposeAll();
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} disposers failed`);
  }

  /** Disposes everything and returns the errors instead of throwing. */
  async disposeAll(): Promise<unknown[]> {
    this.disposed = true;
    const errors: unknown[] = [];
    while (this.items.length > 0) {
      const item = this.items.pop()!;
      try {
        await item.dispose();
      } catch (error) {
        errors.push(error);
      }
    }
    return errors;
  }
}

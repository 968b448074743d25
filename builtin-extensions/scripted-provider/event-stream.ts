/**
 * A push-based event stream: a producer pushes events and ends the stream with a result; consumers iterate the
 * events (each iteration sees every event from the first, however late it starts) and/or await `result()`.
 * Iterating is optional: `result()` resolves at the end either way. Nothing here ever rejects.
 */
export class EventStream<TEvent, TResult> implements AsyncIterable<TEvent> {
  readonly #events: TEvent[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #result: Promise<TResult>;
  #resolve!: (result: TResult) => void;
  #ended = false;

  constructor() {
    this.#result = new Promise<TResult>((resolve) => {
      this.#resolve = resolve;
    });
  }

  /** Whether `end()` was called. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Adds an event. Returns false (and drops it) when the stream has ended. */
  push(event: TEvent): boolean {
    if (this.#ended) return false;
    this.#events.push(event);
    this.#wake();
    return true;
  }

  /** Ends the stream; the first call wins, later ones are ignored. */
  end(result: TResult): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#resolve(result);
    this.#wake();
  }

  result(): Promise<TResult> {
    return this.#result;
  }

  [Symbol.asyncIterator](): AsyncIterator<TEvent> {
    let index = 0;
    let stopped = false;
    return {
      next: async (): Promise<IteratorResult<TEvent>> => {
        while (!stopped) {
          if (index < this.#events.length) return { done: false, value: this.#events[index++]! };
          if (this.#ended) break;
          await new Promise<void>((resolve) => {
            const waiter = () => {
              this.#waiters.delete(waiter);
              resolve();
            };
            this.#waiters.add(waiter);
          });
        }
        stopped = true;
        return { done: true, value: undefined };
      },
      return: async (): Promise<IteratorResult<TEvent>> => {
        stopped = true;
        return { done: true, value: undefined };
      },
    };
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

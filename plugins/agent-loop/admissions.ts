/**
 * Prompts on their way into the session. Each passes its `input` handlers only after the prompts that arrived
 * before it have been decided, so prompts reach the session in the order they were sent even when a handler takes
 * its time; a run that is starting waits until none is left on the way before it takes its input, so prompts sent
 * together (ten in one RPC write) all enter the run the first of them starts (extensions.md: "KnightCode counts as
 * busy while a run starts").
 */
export class Admissions {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  /**
   * Runs `decide` once every earlier admission is decided. What it resolves is handed back as is, so it must not
   * be a promise of the run itself: the next prompt would wait for the whole run.
   */
  admit<T extends object | undefined>(decide: () => Promise<T>): Promise<T> {
    this.pending++;
    const turn = this.tail.then(async () => {
      try {
        return await decide();
      } finally {
        this.pending--;
      }
    });
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  /** Whether a prompt is still on its way in. */
  get busy(): boolean {
    return this.pending > 0;
  }

  /** Resolves once no prompt is on its way in, counting the ones that arrive while it waits. */
  async drained(): Promise<void> {
    while (this.pending > 0) await this.tail;
  }
}

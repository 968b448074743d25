/**
 * Messages waiting to enter a run. Steering messages enter after the current turn, follow-ups once the agent would
 * otherwise stop, and next-turn messages with the first request of the next run. Hosts see the steering and
 * follow-up queues (`queue_update`, `getQueue()`) and get them back on abort; next-turn messages are an
 * extension's business (`sendMessage(..., { deliverAs: "nextTurn" })`), so clearing leaves them.
 */
import type { CustomMessage, UserMessage } from "../../kernel/index.js";
import { messageText } from "./convert.js";

export type QueuedMessage = UserMessage | CustomMessage;

/**
 * How a queue delivers: `all` hands every waiting message to the next turn at once, `one-at-a-time` one message
 * per turn (pi's `steeringMode` / `followUpMode`).
 */
export type QueueMode = "all" | "one-at-a-time";

/** The texts waiting in each visible queue, in delivery order. */
export interface QueueSnapshot {
  steering: string[];
  followUp: string[];
}

export class MessageQueues {
  private steering: QueuedMessage[] = [];
  private followUps: QueuedMessage[] = [];
  private nextTurn: CustomMessage[] = [];

  /**
   * `changed` hears every change of the visible queues, with their new content; `modes` is read at each take, so
   * a change applies to the next turn.
   */
  constructor(
    private readonly changed: (snapshot: QueueSnapshot) => void,
    private readonly modes: () => { steering: QueueMode; followUp: QueueMode } = () => ({
      steering: "all",
      followUp: "all",
    }),
  ) {}

  enqueue(queue: "steering" | "followUp", message: QueuedMessage): void {
    (queue === "steering" ? this.steering : this.followUps).push(message);
    this.changed(this.snapshot());
  }

  /** Steering messages, removed from the queue: they enter before the next request of the current run. */
  takeSteering(): QueuedMessage[] {
    if (this.steering.length === 0) return [];
    const taken = this.modes().steering === "all" ? this.steering.splice(0) : this.steering.splice(0, 1);
    this.changed(this.snapshot());
    return taken;
  }

  /** Follow-ups, removed from the queue: they enter when the run has nothing else to do. */
  takeFollowUps(): QueuedMessage[] {
    if (this.followUps.length === 0) return [];
    const taken = this.modes().followUp === "all" ? this.followUps.splice(0) : this.followUps.splice(0, 1);
    this.changed(this.snapshot());
    return taken;
  }

  deferToNextTurn(...messages: CustomMessage[]): void {
    this.nextTurn.push(...messages);
  }

  /** Next-turn messages, removed: a run starting now takes them ahead of its prompt. */
  takeNextTurn(): CustomMessage[] {
    if (this.nextTurn.length === 0) return [];
    const taken = this.nextTurn;
    this.nextTurn = [];
    return taken;
  }

  hasSteering(): boolean {
    return this.steering.length > 0;
  }

  hasFollowUps(): boolean {
    return this.followUps.length > 0;
  }

  hasPending(): boolean {
    return this.steering.length + this.followUps.length > 0;
  }

  snapshot(): QueueSnapshot {
    return { steering: this.steering.map(messageText), followUp: this.followUps.map(messageText) };
  }

  /** Empties the visible queues and returns what they held. */
  clear(): QueueSnapshot {
    const held = this.snapshot();
    if (this.hasPending()) {
      this.steering = [];
      this.followUps = [];
      this.changed(this.snapshot());
    }
    return held;
  }
}

/**
 * One client connection, whatever carries it (stdio, a WebSocket): the handshake state, the outbound queue and the
 * server requests waiting for this client's reply.
 *
 * Backpressure: a transport reports how many bytes it still holds for the client. Past `queueLimitBytes` a
 * request is answered at once with -32001 "overloaded" (retry later) instead of doing work whose output the client
 * cannot take; past four times that, the client is too slow to keep and the connection is closed, so one slow
 * client never holds memory or other clients hostage. Requests running at once are bounded the same way.
 */
import { stringifyMessage } from "./exact-id.js";

export interface Transport {
  readonly kind: "stdio" | "websocket";
  write(text: string): void;
  /** Bytes written but not yet taken by the client. */
  bufferedBytes(): number;
  close(reason: string): void;
}

export const DEFAULT_QUEUE_LIMIT_BYTES = 8 * 1024 * 1024;
export const MAX_IN_FLIGHT = 256;

type ReplyHandler = (reply: { result?: unknown; error?: unknown }) => void;

let nextConnection = 1;

export class Connection {
  readonly id = `c${nextConnection++}`;
  initialized = false;
  /** `initialize` answered, `initialized` not yet received. */
  handshaking = false;
  clientName = "";
  inFlight = 0;
  closed = false;
  private optOut = new Set<string>();
  private readonly replies = new Map<string, ReplyHandler>();
  private nextRequest = 1;
  readonly onClose: (() => void)[] = [];

  constructor(
    readonly transport: Transport,
    private readonly queueLimitBytes = DEFAULT_QUEUE_LIMIT_BYTES,
  ) {}

  setOptOut(methods: readonly string[]): void {
    this.optOut = new Set(methods);
  }

  overloaded(): boolean {
    return this.transport.bufferedBytes() > this.queueLimitBytes || this.inFlight >= MAX_IN_FLIGHT;
  }

  send(message: Record<string, unknown>): void {
    if (this.closed) return;
    if (this.transport.bufferedBytes() > this.queueLimitBytes * 4) {
      this.close("the client stopped reading; its queue passed the limit");
      return;
    }
    this.transport.write(stringifyMessage(message));
  }

  notify(method: string, params: Record<string, unknown>): void {
    if (this.optOut.has(method)) return;
    this.send({ method, params });
  }

  /** Sends a server request; `onReply` gets the client's answer. Returns the request id. */
  request(method: string, params: Record<string, unknown>, onReply: ReplyHandler): string {
    const id = `s${this.id}-${this.nextRequest++}`;
    this.replies.set(id, onReply);
    this.send({ id, method, params });
    return id;
  }

  /** Withdraws a server request: the reply, if one still comes, is ignored. */
  withdraw(id: string, threadId?: string): void {
    if (!this.replies.delete(id)) return;
    this.notify("serverRequest/cancelled", { requestId: id, ...(threadId ? { threadId } : {}) });
  }

  /** A reply to one of our requests; false when we asked nothing under that id. */
  reply(id: unknown, reply: { result?: unknown; error?: unknown }): boolean {
    const key = String(id);
    const handler = this.replies.get(key);
    if (!handler) return false;
    this.replies.delete(key);
    handler(reply);
    return true;
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.replies.clear();
    this.transport.close(reason);
    for (const listener of this.onClose.splice(0)) listener();
  }
}

/**
 * A local HTTP server for provider tests: binds 127.0.0.1 on an ephemeral port, records every request (method,
 * path, headers, parsed JSON body) and lets each test script the answer, usually an SSE stream in the provider's
 * real wire format. `close()` destroys open connections, so a test never leaves a socket behind.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export type Responder = (
  request: RecordedRequest,
  res: ServerResponse,
  index: number,
) => void | Promise<void>;

export interface TestServer {
  /** e.g. `http://127.0.0.1:54321` */
  url: string;
  requests: RecordedRequest[];
  /** Replaces the responder (one per test, or a queue via `respondInOrder`). */
  respond(responder: Responder): void;
  respondInOrder(...responders: Responder[]): void;
  close(): Promise<void>;
}

export async function startTestServer(): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let responder: Responder = (_req, res) => {
    res.writeHead(500).end("no responder");
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // keep the raw text
    }
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body,
    };
    requests.push(recorded);
    try {
      await responder(recorded, res, requests.length - 1);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond(next) {
      responder = next;
    },
    respondInOrder(...list) {
      responder = (req, res, index) => {
        const pick = list[Math.min(index, list.length - 1)]!;
        return pick(req, res, index);
      };
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface SseEvent {
  /** The `event:` line, when the API uses named events (Anthropic, OpenAI Responses). */
  event?: string;
  /** Serialised with JSON.stringify unless it is a string (e.g. `[DONE]` or a deliberately malformed line). */
  data: unknown;
}

/**
 * Writes an SSE stream. `delayMs` waits between events; `dropAfter` destroys the connection after that many events
 * (a dropped stream); `stallAfter` sends that many events and then nothing more, holding the connection open until
 * the client goes (a stream only an abort or a timeout can end); the stream ends normally otherwise.
 */
export async function writeSse(
  res: ServerResponse,
  events: SseEvent[],
  options: {
    delayMs?: number;
    dropAfter?: number;
    stallAfter?: number;
    status?: number;
    headers?: Record<string, string>;
  } = {},
): Promise<void> {
  res.writeHead(options.status ?? 200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    ...options.headers,
  });
  for (const [i, event] of events.entries()) {
    if (options.dropAfter !== undefined && i >= options.dropAfter) {
      res.socket?.destroy();
      return;
    }
    if (options.stallAfter !== undefined && i >= options.stallAfter) {
      if (!res.destroyed) await new Promise((resolve) => res.once("close", resolve));
      return;
    }
    const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
    res.write(`${event.event ? `event: ${event.event}\n` : ""}data: ${data}\n\n`);
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    if (res.destroyed) return;
  }
  res.end();
}

/** A JSON error answer, as providers send for 4xx/5xx. */
export function writeJsonError(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function writeEvents(res: ServerResponse, events: SseEvent[]): void {
  if (!res.headersSent)
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const event of events) {
    const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
    res.write(`${event.event ? `event: ${event.event}\n` : ""}data: ${data}\n\n`);
  }
}

/**
 * A fault: these events, then only keep-alive comments (`: ping`, as proxies and some servers send) every
 * `everyMs`, until the client goes away. A client that counts comments as progress never times out.
 */
export function writeCommentsForever(res: ServerResponse, events: SseEvent[], everyMs = 25): void {
  writeEvents(res, events);
  const timer = setInterval(() => {
    if (res.destroyed) clearInterval(timer);
    else res.write(": ping\n\n");
  }, everyMs);
  res.on("close", () => clearInterval(timer));
}

/**
 * A fault: these events, then one `data:` line of `megabytes` MB that never ends, then the connection closes. A
 * reader that copies or re-scans what it holds for every chunk spends minutes on it.
 */
export async function writeHugeLine(
  res: ServerResponse,
  events: SseEvent[],
  megabytes: number,
): Promise<void> {
  writeEvents(res, events);
  res.write('data: {"padding":"');
  const piece = Buffer.alloc(1024 * 1024, 0x61);
  for (let i = 0; i < megabytes && !res.destroyed; i++) {
    if (!res.write(piece)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done).off("close", done);
          resolve();
        };
        res.on("drain", done).on("close", done);
      });
    }
  }
  res.socket?.destroy();
}

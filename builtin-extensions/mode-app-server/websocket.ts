/**
 * `--listen ws://127.0.0.1:PORT`: a WebSocket listener on loopback, one JSON message per text frame, for several
 * clients at once (each its own connection and handshake). `GET /readyz` answers 200 once it listens. A request
 * with an `Origin` header is refused with 403: browsers send one, so a web page the user visits cannot drive the
 * server. Only loopback addresses are accepted, since the protocol has no authentication.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { AppServer } from "./server.js";

/** The most bytes one WebSocket message may have (the same cap as a stdio line). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

export async function listenWebSocket(
  server: AppServer,
  address: string,
  log: (message: string) => void,
): Promise<{ port: number; close(): Promise<void> }> {
  const match = /^ws:\/\/([^/:]+|\[[^\]]+\]):(\d+)\/?$/.exec(address);
  if (!match) throw new Error(`--listen takes ws://127.0.0.1:PORT, not "${address}"`);
  const host = match[1]!;
  if (!LOOPBACK.has(host))
    throw new Error(`--listen binds loopback only (127.0.0.1, localhost or [::1]), not ${host}`);
  const port = Number(match[2]);
  const http = createServer((req, res) => {
    if (req.headers.origin !== undefined) {
      res.writeHead(403).end("Requests with an Origin header are refused\n");
      return;
    }
    if (req.method === "GET" && (req.url === "/readyz" || req.url === "/healthz")) {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    res.writeHead(404).end();
  });
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
  });
  http.on("upgrade", (req: IncomingMessage, socket, head) => {
    if (req.headers.origin !== undefined) {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = server.connect({
        kind: "websocket",
        write: (text) => ws.send(text),
        bufferedBytes: () => ws.bufferedAmount,
        close: (reason) => ws.close(1000, reason.slice(0, 120)),
      });
      ws.on("message", (data, isBinary) => {
        if (isBinary) {
          connection.send({
            id: null,
            error: {
              code: -32600,
              message: "Invalid request: send text frames",
              data: { code: "invalidRequest" },
            },
          });
          return;
        }
        server.receive(connection, data.toString());
      });
      ws.on("close", () => connection.close("the client disconnected"));
      ws.on("error", (error) => log(`WebSocket ${connection.id}: ${error.message}`));
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    http.once("error", reject);
    http.listen(port, host.replace(/^\[|\]$/g, ""), () => resolveListen());
  });
  const bound = (http.address() as AddressInfo).port;
  log(`listening on ws://${host}:${bound}`);
  return {
    port: bound,
    close: () =>
      new Promise<void>((done) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        http.close(() => done());
        http.closeAllConnections();
      }),
  };
}

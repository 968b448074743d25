/**
 * The mode's run: an app-server on stdio (one JSON message per line), plus a WebSocket listener on loopback when
 * `--listen ws://127.0.0.1:PORT` asks for one. Ends when stdin ends (stdio only) or on a signal; every thread is
 * shut down in order before the process exits.
 */
import {
  type AppServerMethods,
  appServerService,
  type ExtensionContext,
  type ExtensionServices,
  errorMessage,
  JsonlReader,
  type ModeContext,
} from "@knightcodeai/cli/kit";
import { registerAccountMethods } from "./methods-account.js";
import { registerConfigMethods } from "./methods-config.js";
import { registerEditorMethods } from "./methods-editor.js";
import { registerGitMethods } from "./methods-git.js";
import { registerMcpMethods } from "./methods-mcp.js";
import { registerResourceMethods } from "./methods-resources.js";
import { AppServer } from "./server.js";

export async function runAppServer(
  ctx: ModeContext,
  services: ExtensionServices,
  hostContext: () => ExtensionContext | undefined = () => undefined,
): Promise<number> {
  const { openSession, agentDir, host } = ctx;
  if (!openSession || !agentDir || !host) {
    ctx.io.stderr.write(
      "knightcode: the app-server needs a host that can open sessions (run `knightcode app-server`)\n",
    );
    return 1;
  }
  const log = (message: string) => ctx.io.stderr.write(`knightcode app-server: ${message}\n`);
  const unload = Number(process.env.KNIGHTCODE_APP_SERVER_UNLOAD_MS);
  const queue = Number(process.env.KNIGHTCODE_APP_SERVER_QUEUE_BYTES);
  const server = new AppServer({
    openSession,
    agentDir,
    host,
    services,
    session: ctx.session,
    hostContext,
    log,
    ...(Number.isFinite(unload) && unload >= 0 && process.env.KNIGHTCODE_APP_SERVER_UNLOAD_MS
      ? { unloadDelayMs: unload }
      : {}),
    ...(Number.isFinite(queue) && queue > 0 ? { queueLimitBytes: queue } : {}),
  });
  registerConfigMethods(server);
  registerMcpMethods(server);
  registerGitMethods(server);
  registerResourceMethods(server);
  registerEditorMethods(server);
  registerAccountMethods(server);
  // Other extensions of this session add their methods once the service appears (and lose them when it goes).
  const methods: AppServerMethods = {
    register: (name, spec, handler) =>
      server.methods.register(name, spec, (params, call) =>
        handler(params, { connectionId: call.connection.id, afterResponse: call.afterResponse }),
      ),
    threadSession: (threadId) => server.loaded(threadId)?.session,
  };
  const stopProviding = services.provide(appServerService, () => methods);

  const stdout = ctx.io.stdout;
  const stdio = server.connect({
    kind: "stdio",
    write: (text) => {
      stdout.write(`${text}\n`);
    },
    bufferedBytes: () => (stdout as NodeJS.WritableStream & { writableLength?: number }).writableLength ?? 0,
    close: () => {},
  });
  let listener: { close(): Promise<void> } | undefined;
  if (ctx.options.listen) {
    try {
      const { listenWebSocket } = await import("./websocket.js");
      listener = await listenWebSocket(server, ctx.options.listen, log);
    } catch (error) {
      log(errorMessage(error));
      stopProviding();
      await server.close();
      return 2;
    }
  }
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  ctx.signal.addEventListener("abort", onSignal, { once: true });
  ctx.shutdown?.addEventListener("abort", onSignal, { once: true });
  try {
    for await (const item of new JsonlReader(ctx.io.stdin).lines(stop.signal)) {
      if ("tooLong" in item) {
        stdio.send({
          id: null,
          error: {
            code: -32700,
            message: `Parse error: a message of ${item.tooLong} bytes is too long`,
            data: { code: "parseError" },
          },
        });
        continue;
      }
      server.receive(stdio, item.line);
    }
    // stdin ended: the requests already sent are answered; with a WebSocket listener the server keeps serving
    // until a signal. Turns still running are stopped when their threads shut down.
    await server.drain();
    if (listener && !stop.signal.aborted)
      await new Promise<void>((resolve) =>
        stop.signal.addEventListener("abort", () => resolve(), { once: true }),
      );
  } finally {
    stopProviding();
    ctx.signal.removeEventListener("abort", onSignal);
    await listener?.close();
    stdio.close("end of input");
    await server.close();
  }
  return 0;
}

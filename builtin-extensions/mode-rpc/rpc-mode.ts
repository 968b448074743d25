/**
 * RPC mode (`knightcode --mode rpc`): JSONL commands on stdin, responses and session events on stdout.
 *
 * A command is `{"id"?: string, "type": "<command>", ...params}`; its response is
 * `{"id"?, "type": "response", "command", "success": true, "data"?}` or `{..., "success": false, "error"}`.
 * Events are the JSON stream's (json.md) plus `extension_error` and `bash_execution_update`; there is no session
 * header (use `get_state`). Each extension that failed to load is an `extension_error` record with `event: "load"`,
 * written when the connection opens (and during a reload, for the ones that fail then). Extension dialogs go out as `extension_ui_request` records and wait for an
 * `extension_ui_response`. Every frame's shape is checked before anything reads it: bad input (a line that is not
 * JSON, not an object, too long, with a `type` or `id` that is not a string) gets an error response and the process
 * keeps serving. End of input lets the work in progress finish, then the process exits 0.
 *
 * The connection (UI, event stream, input) opens before the session starts (the mode's `ui()`), so `session_start`
 * handlers can show status and open dialogs whose answers are read already; commands wait until `run`.
 */
import {
  type ExtensionUIContext,
  errorMessage,
  type JsonlItem,
  JsonlReader,
  type ModeContext,
  RPC_MAX_FRAME_BYTES,
  type SessionController,
  stringifySafely,
  toJsonEvent,
} from "@knightcodeai/cli/kit";
import { commands } from "./commands.js";
import { RpcUI } from "./ui.js";

export interface RpcRuntime {
  ctx: ModeContext;
  write(record: unknown): void;
  /** Aborts the running direct `bash` command, if any. */
  bashController: AbortController | undefined;
}

type Frame =
  | { kind: "command"; id: string | undefined; type: string; message: Record<string, unknown> }
  | { kind: "invalid"; response: ErrorResponse };

interface ErrorResponse {
  id?: string;
  type: "response";
  command: string;
  success: false;
  error: string;
}

const connections = new WeakMap<ExtensionUIContext, RpcConnection>();

/** The mode's `ui()`: opens the connection before the session starts and returns its UI for binding. */
export function connectRpc(ctx: Pick<ModeContext, "session" | "io">): ExtensionUIContext {
  const connection = new RpcConnection(ctx.session, ctx.io);
  connections.set(connection.ui, connection);
  return connection.ui;
}

export async function runRpc(ctx: ModeContext): Promise<number> {
  let connection = ctx.ui ? connections.get(ctx.ui) : undefined;
  if (!connection) {
    // A host that did not call ui() first: connect now (session_start handlers ran without the UI).
    connection = new RpcConnection(ctx.session, ctx.io);
    ctx.session.setUI(connection.ui, true);
  }
  return connection.serve(ctx);
}

class RpcConnection {
  readonly ui: RpcUI;
  private readonly write: (record: unknown) => void;
  private readonly unsubscribe: () => void;
  /** Stops reading stdin (a signal, or the mode ending). */
  private readonly stopReading = new AbortController();
  private readonly frames: Frame[] = [];
  private wake: (() => void) | undefined;
  private inputEnded = false;

  constructor(
    session: SessionController,
    private readonly io: ModeContext["io"],
  ) {
    this.write = (record) => io.stdout.write(`${stringifySafely(record).text}\n`);
    this.ui = new RpcUI(this.write);
    this.unsubscribe = session.subscribe((event) => {
      const record = toJsonEvent(event, { rpc: true });
      if (record) this.write(record);
    });
    // Extensions that failed to load did so before anything could listen: the client learns of them first.
    for (const failure of session.extensionLoadFailures())
      this.write({ type: "extension_error", ...failure });
    void this.read();
  }

  /** Reads stdin from the start: dialog answers are handled at once, everything else waits for `serve`. */
  private async read(): Promise<void> {
    try {
      for await (const item of new JsonlReader(this.io.stdin).lines(this.stopReading.signal)) {
        const frame = parseFrame(item);
        if (!frame) continue;
        if (frame.kind === "command" && frame.type === "extension_ui_response") {
          this.ui.answer(frame.message);
          continue;
        }
        this.frames.push(frame);
        this.wake?.();
      }
    } catch (error) {
      this.io.stderr.write(`knightcode: RPC input failed: ${errorMessage(error)}\n`);
    } finally {
      this.inputEnded = true;
      // No answer can come any more: open dialogs (even one from session_start) resolve as dismissed.
      this.ui.closeInput();
      this.wake?.();
    }
  }

  /** The next frame, or undefined at end of input (or when `stop` settles first). */
  private async next(stop: Promise<void>): Promise<Frame | undefined> {
    for (;;) {
      const frame = this.frames.shift();
      if (frame) return frame;
      if (this.inputEnded) return undefined;
      const arrived = new Promise<"frame">((resolve) => {
        this.wake = () => resolve("frame");
      });
      const outcome = await Promise.race([arrived, stop.then(() => "stop" as const)]);
      this.wake = undefined;
      if (outcome === "stop") return undefined;
    }
  }

  async serve(ctx: ModeContext): Promise<number> {
    const { session, signal } = ctx;
    const rpc: RpcRuntime = { ctx, write: this.write, bashController: undefined };
    const pending = new Set<Promise<void>>();
    const onAbort = () => {
      this.stopReading.abort();
      session.abort();
      rpc.bashController?.abort();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    // ctx.shutdown(): keep serving until the commands in progress have answered and the session is idle.
    const idleAfterShutdown = new Promise<void>((resolve) => {
      const settle = async () => {
        while (pending.size > 0) await Promise.allSettled([...pending]);
        await session.waitForIdle();
        resolve();
      };
      if (ctx.shutdown?.aborted) void settle();
      else ctx.shutdown?.addEventListener("abort", () => void settle(), { once: true });
    });
    const aborted = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    const stop = Promise.race([idleAfterShutdown, aborted]);
    try {
      for (;;) {
        const frame = await this.next(stop);
        if (!frame) break;
        if (frame.kind === "invalid") {
          this.write(frame.response);
          continue;
        }
        const work = this.dispatch(frame, rpc);
        if (!work) continue;
        const tracked = work.finally(() => pending.delete(tracked));
        pending.add(tracked);
      }
      // End of input, a signal or a shutdown request: no answer can come for open dialogs; the work in
      // progress finishes.
      this.stopReading.abort();
      this.ui.closeInput();
      await Promise.allSettled([...pending]);
      await session.waitForIdle();
      return 0;
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.unsubscribe();
    }
  }

  /** Runs one command; a problem with it (even a validator that throws) becomes its error response. */
  private dispatch(frame: Extract<Frame, { kind: "command" }>, rpc: RpcRuntime): Promise<void> | undefined {
    const { id, type, message } = frame;
    try {
      const command = Object.hasOwn(commands, type) ? commands[type] : undefined;
      if (!command) {
        this.write(errorResponse(id, type || "unknown", `Unknown command "${type}"`));
        return undefined;
      }
      const problem = command.validate(message);
      if (problem) {
        this.write(errorResponse(id, type, problem));
        return undefined;
      }
      return command.run(message, rpc).then(
        (data) => {
          this.write({
            ...(id !== undefined ? { id } : {}),
            type: "response",
            command: type,
            success: true,
            ...(data !== undefined ? { data } : {}),
          });
        },
        (error: unknown) => this.write(errorResponse(id, type, describe(error))),
      );
    } catch (error) {
      this.write(errorResponse(id, type, describe(error)));
      return undefined;
    }
  }
}

/** Checks a line's shape before anything reads its fields; undefined for a blank line. */
function parseFrame(item: JsonlItem): Frame | undefined {
  if ("tooLong" in item) {
    return invalid(
      undefined,
      "parse",
      `Line too long: ${item.tooLong} bytes; a line may have at most ${RPC_MAX_FRAME_BYTES} bytes. It was discarded`,
    );
  }
  if (item.line.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(item.line);
  } catch (error) {
    return invalid(undefined, "parse", `Malformed JSON: ${describe(error)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return invalid(undefined, "parse", "A command must be a JSON object");
  }
  const message = value as Record<string, unknown>;
  const rawId = Object.hasOwn(message, "id") ? message.id : undefined;
  const rawType = Object.hasOwn(message, "type") ? message.type : undefined;
  const id = typeof rawId === "string" ? rawId : undefined;
  const type = typeof rawType === "string" ? rawType : undefined;
  if (rawId !== undefined && id === undefined) {
    return invalid(undefined, type ?? "unknown", '"id" must be a string');
  }
  if (type === undefined) return invalid(id, "unknown", '"type" must be a string naming a command');
  return { kind: "command", id, type, message };
}

function invalid(id: string | undefined, command: string, error: string): Frame {
  return { kind: "invalid", response: errorResponse(id, command, error) };
}

function errorResponse(id: string | undefined, command: string, error: string): ErrorResponse {
  return { ...(id !== undefined ? { id } : {}), type: "response", command, success: false, error };
}

/** A thrown value as text, whatever was thrown (an object whose getters throw included). */
const describe = errorMessage;

/**
 * RPC mode (`knightcode --mode rpc`): JSONL commands on stdin, responses and session events on stdout.
 *
 * A command is `{"id"?: string, "type": "<command>", ...params}`; its response is
 * `{"id"?, "type": "response", "command", "success": true, "data"?}` or `{..., "success": false, "error"}`.
 * Events are the JSON stream's (json.md) plus `extension_error` and `bash_execution_update`; there is no session
 * header (use `get_state`). Extension dialogs go out as `extension_ui_request` records and wait for an
 * `extension_ui_response`. Bad input gets an error response and the process keeps serving; end of input lets the
 * work in progress finish, then the process exits 0.
 */
import { type ModeContext, toJsonEvent } from "@knightcodeai/cli/kit";
import { commands } from "./commands.js";
import { JsonlReader } from "./jsonl.js";
import { RpcUI } from "./ui.js";

export interface RpcRuntime {
  ctx: ModeContext;
  write(record: unknown): void;
  /** Aborts the running direct `bash` command, if any. */
  bashController: AbortController | undefined;
}

export async function runRpc(ctx: ModeContext): Promise<number> {
  const { session, io, signal } = ctx;
  const write = (record: unknown) => io.stdout.write(`${JSON.stringify(record)}\n`);
  const rpc: RpcRuntime = { ctx, write, bashController: undefined };
  const ui = new RpcUI(write);
  session.setUI(ui, true);
  const unsubscribe = session.subscribe((event) => {
    const record = toJsonEvent(event, { rpc: true });
    if (record) write(record);
  });
  const pending = new Set<Promise<void>>();
  const onAbort = () => {
    session.abort();
    rpc.bashController?.abort();
  };
  signal.addEventListener("abort", onAbort, { once: true });

  const reader = new JsonlReader(io.stdin);
  try {
    for await (const line of reader.lines(signal)) {
      if (line.trim() === "") continue;
      let message: { id?: unknown; type?: unknown; [key: string]: unknown };
      try {
        message = JSON.parse(line);
      } catch (error) {
        write(errorResponse(undefined, "parse", `Malformed JSON: ${(error as Error).message}`));
        continue;
      }
      if (typeof message !== "object" || message === null || Array.isArray(message)) {
        write(errorResponse(undefined, "parse", "A command must be a JSON object"));
        continue;
      }
      const id = typeof message.id === "string" ? message.id : undefined;
      if (message.id !== undefined && id === undefined) {
        write(errorResponse(undefined, String(message.type), '"id" must be a string'));
        continue;
      }
      if (message.type === "extension_ui_response") {
        ui.answer(message);
        continue;
      }
      const type = typeof message.type === "string" ? message.type : "";
      const command = Object.hasOwn(commands, type) ? commands[type] : undefined;
      if (!command) {
        write(errorResponse(id, type || "unknown", `Unknown command "${type}"`));
        continue;
      }
      const problem = command.validate(message);
      if (problem) {
        write(errorResponse(id, type, problem));
        continue;
      }
      const work = command
        .run(message, rpc)
        .then(
          (data) => {
            write({
              ...(id !== undefined ? { id } : {}),
              type: "response",
              command: type,
              success: true,
              ...(data !== undefined ? { data } : {}),
            });
          },
          (error: unknown) => {
            write(errorResponse(id, type, (error as Error)?.message ?? String(error)));
          },
        )
        .finally(() => pending.delete(work));
      pending.add(work);
    }
    // End of input (or a signal): no answer can come for open dialogs; the work in progress finishes.
    ui.closeInput();
    if (signal.aborted) onAbort();
    await Promise.allSettled([...pending]);
    await session.waitForIdle();
    return 0;
  } finally {
    signal.removeEventListener("abort", onAbort);
    unsubscribe();
  }
}

function errorResponse(id: string | undefined, command: string, error: string) {
  return { ...(id !== undefined ? { id } : {}), type: "response", command, success: false, error };
}

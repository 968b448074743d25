/**
 * JSON mode (`knightcode --mode json "..."`): the session header, then every session event as strict JSONL on
 * stdout (json.md), with an `extension_error` record (`event: "load"`) after the header for each extension that failed to
 * load, and one for each that fails when the session reloads. `message_update` records are delta-only: they carry the cumulative `usage` and the assistant
 * event without its `partial` snapshot, so the output grows linearly with the response. Records go through a
 * RecordWriter, which keeps what waits for a slow reader about as small as the content itself.
 */
import { type AssistantMessage, errorMessage, type ModeContext, toJsonEvent } from "@knightcodeai/cli/kit";
import { type JsonRecord, RecordWriter } from "./record-writer.js";

export async function runJson({ session, prompts, io, signal, shutdown }: ModeContext): Promise<number> {
  const writer = new RecordWriter(io.stdout);
  const write = (record: unknown) => writer.write(record as JsonRecord);
  write(session.sessionManager.getHeader());
  // Extensions that failed to load: after the header, before any event (the `extension_error` records JSON mode
  // writes, with those of a reload; handler errors stay on stderr, as json.md has it).
  for (const failure of session.extensionLoadFailures()) write({ type: "extension_error", ...failure });
  let failed = false;
  const unsubscribe = session.subscribe((event) => {
    if (event.type === "message_end") {
      const message = event.message as AssistantMessage;
      if (message.role === "assistant")
        failed = message.stopReason === "error" || message.stopReason === "aborted";
    }
    // A reload's load failures are written as the start's are (handler errors stay on stderr).
    if (event.type === "extension_error" && event.event === "load") {
      const { extensionPath, error } = event;
      write({ type: "extension_error", extensionPath, event: "load", error });
      return;
    }
    const record = toJsonEvent(event);
    if (record) write(record);
  });
  const onAbort = () => session.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (const prompt of prompts) {
      await session.prompt(prompt);
      // A command returns once it has started what it asked for: the runs it started (`sendUserMessage()`,
      // `sendMessage({triggerTurn: true})`) belong to this prompt, so the mode waits for them too.
      await session.waitForIdle();
      if (failed) break;
      // ctx.shutdown() from an extension: the run in progress was the last one.
      if (shutdown?.aborted) break;
    }
  } catch (error) {
    io.stderr.write(`knightcode: ${errorMessage(error)}\n`);
    return (error as { code?: string }).code === "KC_ERR_NO_MODEL" ? 2 : 1;
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
    await writer.flushed();
  }
  return failed ? 1 : 0;
}

/**
 * JSON mode (`knightcode --mode json "..."`): the session header, then every session event as strict JSONL on
 * stdout (json.md). `message_update` records are delta-only: they carry the cumulative `usage` and the assistant
 * event without its `partial` snapshot, so the output grows linearly with the response.
 */
import { type AssistantMessage, type ModeContext, stringifySafely, toJsonEvent } from "@knightcodeai/cli/kit";

export async function runJson({ session, prompts, io, signal, shutdown }: ModeContext): Promise<number> {
  const write = (record: unknown) => io.stdout.write(`${stringifySafely(record).text}\n`);
  write(session.sessionManager.getHeader());
  let failed = false;
  const unsubscribe = session.subscribe((event) => {
    if (event.type === "message_end") {
      const message = event.message as AssistantMessage;
      if (message.role === "assistant")
        failed = message.stopReason === "error" || message.stopReason === "aborted";
    }
    const record = toJsonEvent(event);
    if (record) write(record);
  });
  const onAbort = () => session.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (const prompt of prompts) {
      await session.prompt(prompt);
      if (failed) break;
      // ctx.shutdown() from an extension: the run in progress was the last one.
      if (shutdown?.aborted) break;
    }
  } catch (error) {
    io.stderr.write(`knightcode: ${(error as Error).message}\n`);
    return (error as { code?: string }).code === "KC_ERR_NO_MODEL" ? 2 : 1;
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
  }
  return failed ? 1 : 0;
}

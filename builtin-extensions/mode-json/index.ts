/**
 * JSON mode (`knightcode --mode json "..."`): the session header, then every session event as strict JSONL on
 * stdout (json.md). `message_update` records are delta-only: they carry the cumulative `usage` and the assistant
 * event without its `partial` snapshot, so the output grows linearly with the response.
 */
import type { AssistantMessage, ExtensionAPI, ModeContext, SessionStreamEvent } from "@knightcodeai/cli";

export default function (knightcode: ExtensionAPI): void {
  knightcode.registerMode("json", {
    description: "Write the session events as JSON lines",
    readsStdin: true,
    run: runJson,
  });
}

/** The wire form of an event (json.md): only `message_update` changes. */
export function toWireEvent(event: SessionStreamEvent): SessionStreamEvent {
  if (event.type !== "message_update") return event;
  const { partial, ...rest } = event.assistantMessageEvent as {
    type: string;
    contentIndex?: number;
    partial?: AssistantMessage;
  };
  const wire: Record<string, unknown> = { ...rest };
  if (rest.type === "toolcall_start" && partial && rest.contentIndex !== undefined) {
    const block = partial.content[rest.contentIndex];
    if (block?.type === "toolCall") {
      wire.id = block.id;
      wire.toolName = block.name;
    }
  }
  return { type: "message_update", usage: event.usage, assistantMessageEvent: wire };
}

export async function runJson({ session, prompts, io, signal }: ModeContext): Promise<number> {
  const write = (record: unknown) => io.stdout.write(`${JSON.stringify(record)}\n`);
  write(session.sessionManager.getHeader());
  let failed = false;
  const unsubscribe = session.subscribe((event) => {
    if (event.type === "message_end") {
      const message = event.message as AssistantMessage;
      if (message.role === "assistant")
        failed = message.stopReason === "error" || message.stopReason === "aborted";
    }
    write(toWireEvent(event));
  });
  const onAbort = () => session.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (const prompt of prompts) {
      await session.prompt(prompt);
      if (failed) break;
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

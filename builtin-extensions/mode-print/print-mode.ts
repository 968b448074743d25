/**
 * Print mode (`knightcode -p "..."`): runs the prompts in order and prints the final assistant text to stdout.
 * Diagnostics go to stderr. Exit code 0 on success, 1 when the run ended in a provider error or an abort, 2 on bad
 * usage (no prompt, no model).
 */
import type { AssistantMessage, ModeContext } from "@knightcodeai/cli/kit";
import { errorMessage } from "@knightcodeai/cli/kit";

export async function runPrint({ session, prompts, io, signal, shutdown }: ModeContext): Promise<number> {
  if (prompts.length === 0) {
    io.stderr.write('knightcode: print mode needs a prompt, e.g. knightcode -p "Explain this repository"\n');
    return 2;
  }
  // Written by the event listener, read after each prompt.
  const seen: { last?: AssistantMessage } = {};
  const unsubscribe = session.subscribe((event) => {
    if (event.type === "message_end" && (event.message as { role?: string }).role === "assistant") {
      seen.last = event.message as AssistantMessage;
    }
  });
  const onAbort = () => session.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (const prompt of prompts) {
      await session.prompt(prompt);
      // A command returns once it has started what it asked for: the runs it started (`sendUserMessage()`,
      // `sendMessage({triggerTurn: true})`) belong to this prompt, so the mode waits for them too.
      await session.waitForIdle();
      if (failed(seen.last)) break;
      // ctx.shutdown() from an extension: the run in progress was the last one.
      if (shutdown?.aborted) break;
    }
  } catch (error) {
    io.stderr.write(`knightcode: ${errorMessage(error)}\n`);
    return (error as { code?: string }).code === "KC_ERR_NO_MODEL" ? 2 : 1;
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
  }
  const last = seen.last;
  if (!last) return 0;
  if (failed(last)) {
    io.stderr.write(
      `knightcode: ${last.errorMessage ?? (last.stopReason === "aborted" ? "aborted" : "provider error")}\n`,
    );
    return 1;
  }
  const text = last.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("");
  io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  return 0;
}

function failed(message: AssistantMessage | undefined): boolean {
  return message?.stopReason === "error" || message?.stopReason === "aborted";
}

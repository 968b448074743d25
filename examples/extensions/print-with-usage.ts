/**
 * A replacement for the built-in print mode (`knightcode -p`): it runs the prompts and prints the final answer to
 * stdout as the built-in does, then a line of token and cost figures to stderr, so scripts keep reading the answer
 * alone. A mode is an extension like any other: it uses only the published API (`registerMode`, the
 * `SessionController` a mode gets), and registering the name `print` puts it in the built-in's place (the later
 * registration wins; switch the built-in off with `"extensions": ["-builtin:mode-print"]` to be explicit).
 *
 *   knightcode -e examples/extensions/print-with-usage.ts -p "Summarise this repository"
 */
import type { AssistantMessage, ExtensionAPI, ModeContext } from "@knightcodeai/cli/kit";

/** What goes on stderr after the answer, e.g. `usage: 12 in, 5 out, 0 cached; $0.000000`. */
export function usageLine(message: AssistantMessage): string {
  const u = message.usage;
  return `usage: ${u.input} in, ${u.output} out, ${u.cacheRead} cached; $${u.cost.total.toFixed(6)}`;
}

async function run({ session, prompts, io, signal }: ModeContext): Promise<number> {
  if (prompts.length === 0) {
    io.stderr.write("print-with-usage: give a prompt\n");
    return 2;
  }
  let last: AssistantMessage | undefined;
  const unsubscribe = session.subscribe((event) => {
    const message = event.message as AssistantMessage | undefined;
    if (event.type === "message_end" && message?.role === "assistant") last = message;
  });
  const stop = () => session.abort();
  signal.addEventListener("abort", stop, { once: true });
  try {
    for (const prompt of prompts) await session.prompt(prompt);
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", stop);
  }
  if (!last || last.stopReason === "error" || last.stopReason === "aborted") {
    io.stderr.write(`print-with-usage: ${last?.errorMessage ?? "no answer"}\n`);
    return 1;
  }
  const text = last.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
  io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  io.stderr.write(`${usageLine(last)}\n`);
  return 0;
}

export default function printWithUsage(knightcode: ExtensionAPI): void {
  knightcode.registerMode("print", {
    description: "Run the prompts, print the final answer, then its token and cost figures on stderr",
    readsStdin: true,
    run,
  });
}

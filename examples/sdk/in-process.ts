/**
 * Runs a KnightCode session inside this program with the scripted provider (no network, no key):
 *   npx tsx examples/sdk/in-process.ts
 */
import { createAgentSession } from "@knightcodeai/cli";

const session = await createAgentSession({
  provider: "scripted",
  model: "scripted",
  flags: { script: new URL("../scripts/hello.json", import.meta.url).pathname },
  session: { inMemory: true },
});

session.subscribe((event) => {
  if (event.type === "message_update") {
    const update = event.assistantMessageEvent as { type: string; delta?: string };
    if (update.type === "text_delta") process.stdout.write(update.delta ?? "");
  }
  if (event.type === "agent_settled") process.stdout.write("\n");
});

await session.prompt("Say hello");
await session.dispose();

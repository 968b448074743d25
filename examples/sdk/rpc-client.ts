/**
 * Drives `knightcode --mode rpc` in a child process with the typed client (build the package first):
 *   npx tsx examples/sdk/rpc-client.ts
 */
import { RpcClient } from "@knightcodeai/cli";

const client = RpcClient.start({
  args: [
    "--provider",
    "scripted",
    "--script",
    new URL("../scripts/hello.json", import.meta.url).pathname,
    "--no-session",
  ],
});
client.onEvent((event) => {
  if (event.type === "message_end") console.log(event.type, (event.message as { role: string }).role);
});
client.onUiRequest((request) => (request.method === "confirm" ? { confirmed: true } : { cancelled: true }));

await client.promptAndWait("Say hello");
console.log((await client.getLastAssistantText()).text);
console.log(await client.getState());
process.exitCode = (await client.close()) ?? 1;

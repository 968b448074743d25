/**
 * What a thread reads back after the server restarts (issue 32): the user item keeps the `clientMessageId` its
 * `turn/start` carried.
 */
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness } from "./harness.js";

describe("knightcode app-server: items read back", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  const tmp = useTempDir("kc-appserver-readback-");

  it("keeps the user item's clientMessageId in the history read by a new server", async () => {
    h = await harness(tmp.path);
    h.model.respond((_req, res) => writeSse(res, textStream("Hello")));
    const first = await h.start();
    await first.client.initialize();
    const { thread } = await first.client.request("thread/start", { cwd: h.project });
    const completed = first.client.waitFor("turn/completed");
    await first.client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Say hello" }],
      clientMessageId: "cm-kept",
    });
    await completed;
    await first.stop(5_000);

    const second = await h.start();
    await second.client.initialize();
    const read = await second.client.request("thread/read", { threadId: thread.id, includeTurns: true });
    const user = read.turns[0].items.find((i: { type: string }) => i.type === "userMessage");
    expect(user).to.deep.include({ type: "userMessage", clientMessageId: "cm-kept" });
  });
});

/**
 * What a thread reads back after the server restarts (issue 32): the user item keeps the `clientMessageId` its
 * `turn/start` carried; a tool's view reaches its `toolCall` item, and an extension message's view its
 * `extensionMessage` item, live and read back, within the 64 KiB limit.
 */
import { expect } from "chai";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness, notifications } from "./harness.js";

/** Two displayed messages added to each run: one with a view, one whose view is over 64 KiB. */
const NOTES = `export default (kc: any) => {
  kc.on("before_agent_start", () => ({ message: { customType: "note", content: "plain note", display: true,
    view: { type: "list", items: [{ type: "text", text: "noted" }] } } }));
  kc.on("before_agent_start", () => ({ message: { customType: "note", content: "big note", display: true,
    view: { type: "text", text: "y".repeat(70 * 1024) } } }));
};`;

/** A tool whose result carries a view: a small one, one over 64 KiB, or one that is not a view. */
const VIEWY = `import { Type } from "@sinclair/typebox";
export default (kc: any) => kc.registerTool({
  name: "viewy", label: "Viewy", description: "Answers with a view", parameters: Type.Object({ kind: Type.String() }),
  execute: async (_id: string, p: { kind: string }) => ({
    content: [{ type: "text", text: "plain " + p.kind }], details: undefined,
    view: p.kind === "small"
      ? { type: "stack", children: [{ type: "text", text: "Build passed", tone: "success" }] }
      : p.kind === "big"
        ? { type: "text", text: "x".repeat(70 * 1024) }
        : { type: "blink", text: "no such node" },
  }),
});`;

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
    const user = read.turns![0]!.items.find((i: { type: string }) => i.type === "userMessage");
    expect(user).to.deep.include({ type: "userMessage", clientMessageId: "cm-kept" });
  });

  it("puts a tool's view on its toolCall item, live and read back; an invalid or oversized view is dropped", async () => {
    h = await harness(tmp.path, { "viewy.ts": VIEWY });
    h.model.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_small", "viewy", { kind: "small" })),
      (_req, res) => writeSse(res, toolCallStream("call_big", "viewy", { kind: "big" })),
      (_req, res) => writeSse(res, toolCallStream("call_bad", "viewy", { kind: "bad" })),
      (_req, res) => writeSse(res, textStream("done")),
    );
    const first = await h.start();
    await first.client.initialize();
    const { thread } = await first.client.request("thread/start", { cwd: h.project });
    const completed = first.client.waitFor("turn/completed");
    await first.client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "go" }] });
    await completed;
    const small = { type: "stack", children: [{ type: "text", text: "Build passed", tone: "success" }] };
    const live = notifications(first, "item/completed")
      .map((n) => n.item)
      .filter((i) => i.type === "toolCall");
    expect(live.map((i) => i.result)).to.deep.equal(["plain small", "plain big", "plain bad"]);
    expect(live[0].view).to.deep.equal(small);
    expect(live[1]).to.not.have.property("view");
    expect(live[2]).to.not.have.property("view");
    await first.stop(5_000);

    const second = await h.start();
    await second.client.initialize();
    const read = await second.client.request("thread/read", { threadId: thread.id, includeTurns: true });
    const calls = read.turns![0]!.items.filter((i) => i.type === "toolCall") as { view?: unknown }[];
    expect(calls[0].view).to.deep.equal(small);
    expect(calls[1]).to.not.have.property("view");
    expect(calls[2]).to.not.have.property("view");
  });

  it("puts an extension message's view on its extensionMessage item, live and read back", async () => {
    h = await harness(tmp.path, { "notes.ts": NOTES });
    h.model.respond((_req, res) => writeSse(res, textStream("ok")));
    const first = await h.start();
    await first.client.initialize();
    const { thread } = await first.client.request("thread/start", { cwd: h.project });
    const completed = first.client.waitFor("turn/completed");
    await first.client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "go" }] });
    await completed;
    const noted = { type: "list", items: [{ type: "text", text: "noted" }] };
    const live = notifications(first, "item/completed")
      .map((n) => n.item)
      .filter((i) => i.type === "extensionMessage");
    expect(live.map((i) => i.text)).to.deep.equal(["plain note", "big note"]);
    expect(live[0].view).to.deep.equal(noted);
    expect(live[1]).to.not.have.property("view");
    await first.stop(5_000);

    const second = await h.start();
    await second.client.initialize();
    const read = await second.client.request("thread/read", { threadId: thread.id, includeTurns: true });
    const notes = read.turns![0]!.items.filter((i) => i.type === "extensionMessage") as { view?: unknown }[];
    expect(notes).to.have.length(2);
    expect(notes[0]!.view).to.deep.equal(noted);
    expect(notes[1]).to.not.have.property("view");
  });
});

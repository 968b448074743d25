/**
 * Turns over `knightcode app-server` against a scripted local model: a text turn and a tool turn with their items
 * in order, token usage, steer, interrupt with and without a turn id, the queue, and a failed turn.
 */
import { writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import {
  DONE,
  finishChunk,
  roleChunk,
  textChunks,
  textStream,
  toolCallStream,
  usageChunk,
} from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeJsonError, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness, notifications } from "./harness.js";

const ECHO = `import { Type } from "@sinclair/typebox";
export default (kc: any) => kc.registerTool({
  name: "echo", label: "Echo", description: "Echo the text", parameters: Type.Object({ text: Type.String() }),
  execute: async (_id: string, p: { text: string }) => ({ content: [{ type: "text", text: "echo:" + p.text }], details: undefined }),
});`;

/** Writes a text answer whose chunks trickle until the client goes away or `ms` passes. */
function slowText(res: ServerResponse, pieces: number, everyMs: number): Promise<void> {
  return writeSse(
    res,
    [
      roleChunk(),
      ...textChunks(...Array.from({ length: pieces }, (_, i) => `w${i} `)),
      finishChunk("stop"),
      usageChunk(5, 5),
      DONE,
    ],
    {
      delayMs: everyMs,
    },
  );
}

describe("knightcode app-server: turns", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-turns-");

  it("runs a text turn: response, turn/started, items with deltas, usage, turn/completed, in order", async () => {
    h = await harness(tmp.path);
    h.model.respond((_req, res) => writeSse(res, textStream("Hello there, friend")));
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    expect(thread.status).to.deep.equal({ type: "idle" });
    const completed = client.waitFor("turn/completed");
    const { turn } = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Say hello" }],
      clientMessageId: "cm-1",
    });
    expect(turn.status).to.equal("inProgress");
    const done = await completed;
    expect(done.turn.id).to.equal(turn.id);
    expect(done.turn.status).to.equal("completed");
    // The thread turns idle right after turn/completed, possibly in the next chunk of the stream.
    await client.waitFor(
      "thread/status/changed",
      (n) => n.threadId === thread.id && n.status.type === "idle",
    );
    const methods = notifications(server)
      .filter((n) => n.threadId === thread.id && n.method !== "thread/status/changed")
      .map((n) => (n.item ? `${n.method}:${n.item.type}` : n.method));
    const deltas = methods.filter((m) => m === "item/agentMessage/delta").length;
    expect(deltas).to.be.greaterThan(1);
    expect(methods.filter((m) => m !== "item/agentMessage/delta")).to.deep.equal([
      "turn/started",
      "item/started:userMessage",
      "item/completed:userMessage",
      "item/started:agentMessage",
      "item/completed:agentMessage",
      "thread/tokenUsage/updated",
      "turn/completed",
    ]);
    const items = notifications(server, "item/completed").map((n) => n.item);
    expect(items[0]).to.deep.include({ type: "userMessage", clientMessageId: "cm-1" });
    expect(items[0].content).to.deep.equal([{ type: "text", text: "Say hello" }]);
    expect(items[1]).to.deep.include({ type: "agentMessage", text: "Hello there, friend" });
    const text = notifications(server, "item/agentMessage/delta")
      .map((n) => n.delta)
      .join("");
    expect(text).to.equal("Hello there, friend");
    const usage = notifications(server, "thread/tokenUsage/updated")[0]!.usage;
    expect(usage).to.include({ input: 12, output: 5 });
    const statuses = notifications(server, "thread/status/changed").map((n) => n.status.type);
    expect(statuses).to.deep.equal(["active", "idle"]);
    // The response to turn/start came before turn/started.
    const order = client.received.map((m) => (m.method as string) ?? `response:${String(m.id)}`);
    const responseAt = client.received.findIndex((m) => (m.result as any)?.turn?.id === turn.id);
    expect(responseAt).to.be.lessThan(order.indexOf("turn/started"));
    // What the model received.
    expect(JSON.stringify(h.model.requests[0]!.body.messages)).to.contain("Say hello");
  });

  it("runs a tool turn: the toolCall item starts, completes with its result, then the answer", async () => {
    h = await harness(tmp.path, { "echo.ts": ECHO });
    h.model.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_1", "echo", { text: "hi" })),
      (_req, res) => writeSse(res, textStream("The tool said echo:hi")),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const completed = client.waitFor("turn/completed");
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "Use echo" }] });
    expect((await completed).turn.status).to.equal("completed");
    const items = notifications(server)
      .filter((n) => n.method === "item/started" || n.method === "item/completed")
      .map((n) => `${n.method}:${n.item.type}`);
    expect(items).to.deep.equal([
      "item/started:userMessage",
      "item/completed:userMessage",
      "item/started:toolCall",
      "item/completed:toolCall",
      "item/started:agentMessage",
      "item/completed:agentMessage",
    ]);
    const call = notifications(server, "item/completed").find((n) => n.item.type === "toolCall")!.item;
    expect(call).to.deep.include({ id: "call_1", name: "echo", status: "completed", result: "echo:hi" });
    expect(call.arguments).to.deep.equal({ text: "hi" });
    expect(JSON.stringify(h.model.requests[1]!.body.messages)).to.contain("echo:hi");
  });

  it("reads a turn cut by kill -9 back as interrupted, and a turn a tool ended as completed", async () => {
    const tools = `import { Type } from "@sinclair/typebox";
    export default (kc: any) => {
      kc.registerTool({
        name: "finish", label: "Finish", description: "Ends the turn", parameters: Type.Object({}),
        execute: async () => ({ content: [{ type: "text", text: "done" }], details: undefined, terminate: true }),
      });
      kc.registerTool({
        name: "block", label: "Block", description: "Never returns", parameters: Type.Object({}),
        execute: (_id: string, _p: unknown, signal: AbortSignal) =>
          new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted")))),
      });
    };`;
    h = await harness(tmp.path, { "tools.ts": tools });
    // Each prompt gets its answer, whatever came before it.
    h.model.respond((req, res) => {
      const last = JSON.stringify(req.body.messages.at(-1));
      if (last.includes("Finish")) return writeSse(res, toolCallStream("call_f", "finish", {}));
      if (last.includes("Block")) return writeSse(res, toolCallStream("call_b", "block", {}));
      if (last.includes("Talk")) return slowText(res, 400, 20);
      return writeSse(res, textStream("After the restart"));
    });
    const first = await h.start();
    await first.client.initialize();
    const { thread } = await first.client.request("thread/start", { cwd: h.project });
    const ended = first.client.waitFor("turn/completed");
    await first.client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Finish" }],
    });
    expect((await ended).turn.status).to.equal("completed");
    // The second turn is killed while its tool runs.
    const blocking = first.client.waitFor("item/started", (p) => p.item.id === "call_b");
    const { turn: cut } = await first.client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Block" }],
    });
    await blocking;
    const exited = new Promise((resolve) => first.child.once("exit", resolve));
    first.child.kill("SIGKILL");
    await exited;

    const second = await h.start();
    await second.client.initialize();
    // Streaming: a third turn is killed while the model answers.
    const resumed = await second.client.request("thread/resume", { threadId: thread.id });
    expect(resumed.turns.map((t) => t.status)).to.deep.equal(["completed", "interrupted"]);
    const streaming = second.client.waitFor("item/agentMessage/delta");
    const { turn: cut2 } = await second.client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Talk" }],
    });
    await streaming;
    // While it runs, history never shows it done.
    const live = await second.client.request("thread/read", { threadId: thread.id, includeTurns: true });
    expect(live.turns!.slice(0, 2).map((t) => t.status)).to.deep.equal(["completed", "interrupted"]);
    expect(live.turns!.find((t) => t.id === cut2.id)?.status ?? "inProgress").to.equal("inProgress");
    const exited2 = new Promise((resolve) => second.child.once("exit", resolve));
    second.child.kill("SIGKILL");
    await exited2;

    const third = await h.start();
    await third.client.initialize();
    const read = await third.client.request("thread/read", { threadId: thread.id, includeTurns: true });
    expect(read.turns!.map((t) => [t.id === cut.id || t.id === cut2.id, t.status])).to.deep.equal([
      [false, "completed"],
      [true, "interrupted"],
      [true, "interrupted"],
    ]);
    // What the user typed is still there.
    expect(read.turns![2]!.items[0]).to.deep.include({
      type: "userMessage",
      content: [{ type: "text", text: "Talk" }],
    });
    // A turn after the restart finishes as usual; the cut ones stay interrupted.
    await third.client.request("thread/resume", { threadId: thread.id });
    const done = third.client.waitFor("turn/completed");
    await third.client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Again" }],
    });
    expect((await done).turn.status).to.equal("completed");
    const after = await third.client.request("thread/read", { threadId: thread.id, includeTurns: true });
    expect(after.turns!.map((t) => t.status)).to.deep.equal([
      "completed",
      "interrupted",
      "interrupted",
      "completed",
    ]);
  });

  it("reads a turn back under its live ids, and sends an answer over 64 KiB by reference", async () => {
    h = await harness(tmp.path);
    const long = "abcdefgh".repeat(10 * 1024); // 80 KiB
    h.model.respondInOrder(
      (_req, res) => writeSse(res, textStream("Short answer")),
      (_req, res) =>
        writeSse(res, [
          roleChunk(),
          ...textChunks(...(long.match(/.{1,8192}/gs) ?? [])),
          finishChunk("stop"),
          usageChunk(5, 5),
          DONE,
        ]),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const first = client.waitFor("turn/completed");
    const started = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "One" }],
    });
    const live = (await first).turn;
    expect(live.id).to.equal(started.turn.id);
    const second = client.waitFor("turn/completed", (p) => p.turn.id !== live.id);
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "Two" }] });
    const big = (await second).turn;
    const answer = big.items.find((i) => i.type === "agentMessage")!;
    expect(answer.text).to.deep.equal({ ref: (answer.text as { ref: string }).ref, bytes: long.length });
    const completed = notifications(server, "item/completed").find(
      (n) => n.item.type === "agentMessage" && n.turnId === big.id,
    )!;
    expect(JSON.stringify(completed).length).to.be.lessThan(2048);
    expect(
      (await client.resolveTurn(thread.id, big)).items.find((i) => i.type === "agentMessage")!.text,
    ).to.equal(long);

    // Read back, the turns and their user items carry the ids they had live, loaded or not.
    const check = (turns: { id: string; items: { type: string; id: string }[] }[]) => {
      expect(turns.map((t) => t.id)).to.deep.equal([live.id, big.id]);
      expect(turns[0]!.items[0]).to.deep.include({ type: "userMessage", id: live.items[0]!.id });
      expect(turns[1]!.items[0]!.id).to.equal(big.items[0]!.id);
    };
    const read = await client.request("thread/read", { threadId: thread.id, includeTurns: true });
    check(read.turns!);
    const text = read.turns![1]!.items.find((i) => i.type === "agentMessage")!.text as { ref: string };
    expect(await client.readPayload(thread.id, text.ref)).to.equal(long);
    const restarted = await h.start();
    await restarted.client.initialize();
    const unloaded = await restarted.client.request("thread/read", {
      threadId: thread.id,
      includeTurns: true,
    });
    check(unloaded.turns!);
    // Read while not loaded there, the reference still reads back.
    const unloadedRef = unloaded.turns![1]!.items.find((i) => i.type === "agentMessage")!.text as {
      ref: string;
    };
    expect(await restarted.client.readPayload(thread.id, unloadedRef.ref)).to.equal(long);
    const unknown = await restarted.client
      .request("thread/payload/read", { threadId: thread.id, ref: "nope" })
      .catch((e) => e);
    expect(unknown.data).to.deep.include({ code: "invalidParams", reason: "ref" });
  });

  it("quotes review comments into the prompt; the user item keeps the typed text and lists the comments", async () => {
    h = await harness(tmp.path);
    writeFileSync(join(h.project, "a.ts"), "const one = 1;\nconst two = 2;\nconst three = 3;\n");
    h.model.respond((_req, res) => writeSse(res, textStream("Noted")));
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const comments = [
      { path: "a.ts", line: 2, endLine: 3, body: "Rename these" },
      { path: "b.ts", line: 7, body: "Why removed?", quote: ["-const gone = true;"] },
    ];
    const outside = await client
      .request("turn/start", {
        threadId: thread.id,
        input: [{ type: "text", text: "x" }],
        comments: [{ path: "../etc/passwd", line: 1, body: "no" }],
      })
      .catch((e) => e);
    expect(outside.data).to.deep.include({ code: "invalidParams", reason: "comments" });
    const completed = client.waitFor("turn/completed");
    await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Please address my review" }],
      comments,
    });
    const { turn } = await completed;
    const prompt = JSON.stringify(h.model.requests[0]!.body.messages);
    for (const piece of [
      "Please address my review",
      "a.ts:2-3",
      "> const two = 2;",
      "> const three = 3;",
      "Rename these",
      "b.ts:7",
      "> -const gone = true;",
      "Why removed?",
    ])
      expect(prompt).to.contain(piece);
    expect(prompt).not.to.contain("const one");
    const user = turn.items[0]!;
    expect(user).to.deep.include({ type: "userMessage", comments });
    expect((user as { content: unknown }).content).to.deep.equal([
      { type: "text", text: "Please address my review" },
    ]);
    const read = await client.request("thread/read", { threadId: thread.id, includeTurns: true });
    expect(read.turns![0]!.items[0]).to.deep.equal(user);
    // The preview is the prompt's start: the typed text comes first.
    expect(read.thread.preview.startsWith("Please address my review Review comments")).to.equal(true);
  });

  it("fails a turn whose model request fails: an error notification and a failed turn, not a JSON-RPC error", async () => {
    h = await harness(tmp.path);
    h.model.respond((_req, res) =>
      writeJsonError(res, 400, { error: { message: "bad things", type: "invalid_request_error" } }),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const completed = client.waitFor("turn/completed");
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "Hi" }] });
    const done = await completed;
    expect(done.turn.status).to.equal("failed");
    expect(done.turn.error?.message).to.contain("bad things");
    const error = notifications(server, "error")[0]!;
    expect(error).to.deep.include({ threadId: thread.id, turnId: done.turn.id, willRetry: false });
  });

  it("steers a running turn, refuses a second turn/start, and interrupts with and without a turn id", async () => {
    h = await harness(tmp.path);
    h.model.respondInOrder(
      (_req, res) => slowText(res, 200, 20),
      (_req, res) => writeSse(res, textStream("steered answer")),
      (_req, res) => slowText(res, 200, 20),
      (_req, res) => slowText(res, 200, 20),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const firstDelta = client.waitFor("item/agentMessage/delta");
    const { turn } = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Go" }],
    });
    await firstDelta;
    const busy = await client
      .request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "Again" }] })
      .catch((e) => e);
    expect(busy.data?.code).to.equal("turnInProgress");
    const mismatch = await client
      .request("turn/steer", {
        threadId: thread.id,
        input: [{ type: "text", text: "x" }],
        expectedTurnId: "nope",
      })
      .catch((e) => e);
    expect(mismatch.data?.code).to.equal("turnMismatch");
    const steered = await client.request("turn/steer", {
      threadId: thread.id,
      input: [{ type: "text", text: "Also mention cats" }],
    });
    expect(steered.turnId).to.equal(turn.id);
    const first = await client.waitFor("turn/completed", (p) => p.turn.id === turn.id);
    expect(first.turn.status).to.equal("completed");
    expect(JSON.stringify(h.model.requests[1]!.body.messages)).to.contain("Also mention cats");

    // Interrupt with a stale id, then with the right one.
    const second = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Long one" }],
    });
    await client.waitFor("item/agentMessage/delta", (p) => p.turnId === second.turn.id);
    const stale = await client
      .request("turn/interrupt", { threadId: thread.id, turnId: turn.id })
      .catch((e) => e);
    expect(stale.data?.code).to.equal("turnMismatch");
    await client.request("turn/interrupt", { threadId: thread.id, turnId: second.turn.id });
    const interrupted = await client.waitFor("turn/completed", (p) => p.turn.id === second.turn.id);
    expect(interrupted.turn.status).to.equal("interrupted");

    // Without a turn id: the current turn.
    const third = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Another" }],
    });
    await client.waitFor("item/agentMessage/delta", (p) => p.turnId === third.turn.id);
    await client.request("turn/interrupt", { threadId: thread.id });
    expect((await client.waitFor("turn/completed", (p) => p.turn.id === third.turn.id)).turn.status).to.equal(
      "interrupted",
    );
  });

  it("queues inputs: snapshots, removal, each its own turn once idle, and a dropped input's error", async () => {
    h = await harness(tmp.path);
    h.model.respondInOrder(
      (_req, res) => slowText(res, 30, 100),
      (_req, res) => writeSse(res, textStream("second answer")),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const { turn } = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "First" }],
    });
    const a = await client.request("turn/queue/add", {
      threadId: thread.id,
      input: [{ type: "text", text: "Queued A" }],
      clientMessageId: "qa",
    });
    const b = await client.request("turn/queue/add", {
      threadId: thread.id,
      input: [
        { type: "text", text: "Queued B" },
        { type: "image", data: "aGk=", mimeType: "image/png" },
      ],
    });
    const snapshots = notifications(server, "turn/queue/updated");
    expect(snapshots.at(-1)!.followUp).to.deep.equal([
      { id: a.id, text: "Queued A" },
      { id: b.id, text: "Queued B", attachments: 1 },
    ]);
    expect(await client.request("turn/queue/remove", { threadId: thread.id, id: b.id })).to.deep.equal({
      removed: true,
    });
    expect(await client.request("turn/queue/remove", { threadId: thread.id, id: b.id })).to.deep.equal({
      removed: false,
    });
    await client.waitFor("turn/completed", (p) => p.turn.id === turn.id);
    const next = await client.waitFor("turn/completed", (p) => p.turn.id !== turn.id);
    expect(next.turn.status).to.equal("completed");
    const user = notifications(server, "item/completed")
      .filter((n) => n.item.type === "userMessage")
      .map((n) => n.item);
    expect(user.map((i) => i.content[0].text)).to.deep.equal(["First", "Queued A"]);
    expect(user[1].clientMessageId).to.equal("qa");
    expect(h.model.requests).to.have.length(2);
    expect(notifications(server, "turn/queue/updated").at(-1)!.followUp).to.deep.equal([]);
  });
});

/**
 * Threads over `knightcode app-server`: start, resume (history and live snapshots), fork, list with a cursor,
 * read, name, unsubscribe, archive/unarchive/delete, idle unload, ownership between two servers, and values over
 * the inline limit sent by reference.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cwdSessionDir, sessionFileName } from "../../../plugins/session-store/paths.js";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness, notifications } from "./harness.js";

const BIG = `import { Type } from "@sinclair/typebox";
export default (kc: any) => kc.registerTool({
  name: "big", label: "Big", description: "A large output", parameters: Type.Object({}),
  execute: async () => ({ content: [{ type: "text", text: "x".repeat(80 * 1024) + "END" }], details: undefined }),
});`;

const REFUSE = `import { ExtensionStartupError } from "@knightcodeai/cli";
import { existsSync } from "node:fs";
import { join } from "node:path";
export default (kc: any) => kc.on("session_start", (_e: any, ctx: any) => {
  if (existsSync(join(ctx.cwd, "refuse"))) throw new ExtensionStartupError("refused: a refuse file is here");
});`;

describe("knightcode app-server: threads", function () {
  this.timeout(90_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-threads-");

  it("starts, resumes with history from another client, forks, lists, reads, names, archives and deletes", async () => {
    h = await harness(tmp.path);
    h.model.respond((_req, res) => writeSse(res, textStream("An answer")));
    const server = await h.start({ KNIGHTCODE_APP_SERVER_UNLOAD_MS: "200" });
    const { client } = server;
    await client.initialize();
    const started = await client.request("thread/start", { cwd: h.project, name: "First thread" });
    const id = started.thread.id;
    expect(started.thread).to.deep.include({ name: "First thread", cwd: h.project });
    expect(started.ui).to.deep.equal({ statuses: [], workingVisible: true, widgets: [] });
    await client.waitFor("thread/started");
    const done = client.waitFor("turn/completed");
    await client.request("turn/start", { threadId: id, input: [{ type: "text", text: "Question one" }] });
    await done;

    // thread/read without subscribing, with the history as turns.
    const read = await client.request("thread/read", { threadId: id, includeTurns: true });
    expect(read.thread.preview).to.equal("Question one");
    expect(read.thread.sessionFile).to.be.a("string");
    expect(read.turns).to.have.length(1);
    expect(read.turns![0]!.items.map((i) => i.type)).to.deep.equal(["userMessage", "agentMessage"]);

    // A second connection (a second process would hold the lock: the same server, so a new client on stdio is
    // simulated by unsubscribing and resuming).
    expect(await client.request("thread/unsubscribe", { threadId: id })).to.deep.equal({
      status: "unsubscribed",
    });
    expect(await client.request("thread/unsubscribe", { threadId: id })).to.deep.equal({
      status: "notSubscribed",
    });
    const bad = await client.request("thread/resume", { threadId: id, cursor: "x" }).catch((e) => e);
    expect(bad.data?.code).to.equal("invalidParams");
    const resumed = await client.request("thread/resume", { threadId: id });
    expect(resumed.turns.map((t) => t.items.map((i) => i.type))).to.deep.equal([
      ["userMessage", "agentMessage"],
    ]);
    expect(resumed.queue).to.deep.equal({ steering: [], followUp: [] });
    expect(resumed.usage.output).to.equal(5);
    expect(resumed.runningTurn).to.equal(undefined);

    // Fork: a new thread named after its source, with the history and forkedFromId.
    const fork = await client.request("thread/fork", { threadId: id });
    expect(fork.thread.name).to.equal("First thread (fork)");
    expect(fork.thread.forkedFromId).to.equal(id);
    expect(fork.thread.id).to.not.equal(id);
    const forkRead = await client.request("thread/read", { threadId: fork.thread.id, includeTurns: true });
    expect(forkRead.turns![0]!.items[0]).to.deep.include({ type: "userMessage" });

    // List: both, newest first, with a cursor.
    await client.request("thread/name/set", { threadId: id, name: "Renamed" });
    const page1 = await client.request("thread/list", { limit: 1 });
    expect(page1.data).to.have.length(1);
    expect(page1.nextCursor).to.be.a("string");
    const page2 = await client.request("thread/list", { limit: 1, cursor: page1.nextCursor! });
    expect(page2.data).to.have.length(1);
    expect(page2.nextCursor).to.equal(undefined);
    const all = [...page1.data, ...page2.data];
    expect(all.map((t) => t.id).sort()).to.deep.equal([id, fork.thread.id].sort());
    const source = all.find((t) => t.id === id)!;
    expect(source).to.deep.include({ name: "Renamed", preview: "Question one", status: { type: "idle" } });
    expect(all.find((t) => t.id === fork.thread.id)!.forkedFromId).to.equal(id);
    expect(source.createdAt).to.be.a("number");
    const bogus = await client.request("thread/list", { cursor: "###" }).catch((e) => e);
    expect(bogus.data?.code).to.equal("invalidParams");

    // Archive: gone from the list, in the archived list; delete needs an archived thread.
    const notArchived = await client.request("thread/delete", { threadId: fork.thread.id }).catch((e) => e);
    expect(notArchived.data?.code).to.equal("invalidParams");
    await client.request("thread/archive", { threadId: fork.thread.id });
    expect((await client.request("thread/list", {})).data.map((t) => t.id)).to.deep.equal([id]);
    expect((await client.request("thread/list", { archived: true })).data.map((t) => t.id)).to.deep.equal([
      fork.thread.id,
    ]);
    const back = await client.request("thread/unarchive", { threadId: fork.thread.id });
    expect(back.thread.id).to.equal(fork.thread.id);
    await client.request("thread/archive", { threadId: fork.thread.id });
    const archivedFile = (await client.request("thread/read", { threadId: fork.thread.id })).thread
      .sessionFile!;
    await client.request("thread/delete", { threadId: fork.thread.id });
    expect(existsSync(archivedFile)).to.equal(false);
    const gone = await client.request("thread/read", { threadId: fork.thread.id }).catch((e) => e);
    expect(gone.data?.code).to.equal("threadNotFound");

    // With no subscriber and nothing running, the thread unloads after the idle delay.
    await client.request("thread/unsubscribe", { threadId: id });
    const deadline = Date.now() + 10_000;
    let status = "";
    while (Date.now() < deadline) {
      status = (await client.request("thread/read", { threadId: id })).thread.status.type;
      if (status === "notLoaded") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).to.equal("notLoaded");
  });

  it("pages a long history: every turn once, in order, whichever page is asked, and a new turn shows", async () => {
    h = await harness(tmp.path);
    h.model.respond((_req, res) => writeSse(res, textStream("The newest answer")));
    // 6,000 entries, a user message and an answer per turn: several 1 MiB pages.
    const folder = cwdSessionDir(join(h.agentDir, "sessions"), h.project);
    mkdirSync(folder, { recursive: true });
    const id = "00000000-0000-4000-8000-00000000beef";
    const timestamp = new Date(0).toISOString();
    const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp, cwd: h.project })];
    const turnIds: string[] = [];
    let parent: string | null = null;
    for (let i = 0; i < 6_000; i++) {
      const entryId = `m${i}`;
      const message =
        i % 2 === 0
          ? { role: "user", content: `Question ${i}`, timestamp: i }
          : {
              role: "assistant",
              content: [{ type: "text", text: `Answer ${i} ${"y".repeat(900)}` }],
              api: "openai-completions",
              provider: "local",
              model: "m",
              usage: {
                input: 1,
                output: 1,
                cacheRead: 0,
                cacheWrite: 0,
                totalTokens: 2,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
              },
              stopReason: "stop",
              timestamp: i,
            };
      if (i % 2 === 0) turnIds.push(entryId);
      lines.push(JSON.stringify({ type: "message", id: entryId, parentId: parent, timestamp, message }));
      parent = entryId;
    }
    // A compaction at the end: the entries before what it kept are read back from the file.
    lines.push(
      JSON.stringify({
        type: "compaction",
        id: "compact",
        parentId: parent,
        timestamp,
        summary: "So far",
        firstKeptEntryId: "m5990",
        tokensBefore: 1000,
      }),
    );
    writeFileSync(join(folder, sessionFileName(timestamp, id)), `${lines.join("\n")}\n`);
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    // Unloaded, twice (the second from the file's cached turns): the newest page.
    const read = await client.request("thread/read", { threadId: id, includeTurns: true });
    const again = await client.request("thread/read", { threadId: id, includeTurns: true });
    expect(again.turns).to.deep.equal(read.turns);
    expect(read.turns!.at(-1)!.id).to.equal(turnIds.at(-1));
    // The cursor each page was asked with (the newest first, without one).
    const cursors: (string | undefined)[] = [];
    const collect = async () => {
      const pages: string[][] = [];
      cursors.length = 0;
      let cursor: string | undefined;
      do {
        cursors.unshift(cursor);
        const page = await client.request("thread/resume", { threadId: id, ...(cursor ? { cursor } : {}) });
        pages.unshift(page.turns.map((t) => t.id));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return pages;
    };
    const pages = await collect();
    expect(pages.length).to.be.greaterThan(3);
    expect(pages.flat()).to.deep.equal(turnIds);
    expect(pages.at(-1)).to.deep.equal(read.turns!.map((t) => t.id));
    // The unloaded read's cursor is the loaded thread's cursor for the same page.
    expect(read.nextCursor).to.equal(cursors.at(-2));
    // A page asked again, out of order, is the same page.
    const middle = cursors[Math.floor(cursors.length / 2)]!;
    const m1 = await client.request("thread/resume", { threadId: id, cursor: middle });
    await client.request("thread/resume", { threadId: id, cursor: cursors[1]! });
    const m2 = await client.request("thread/resume", { threadId: id, cursor: middle });
    expect(m2.turns).to.deep.equal(m1.turns);
    expect(m1.turns.map((t) => t.id)).to.deep.equal(pages[Math.floor(cursors.length / 2)]);
    // A cursor past the end of the branch is refused.
    const past = await client
      .request("thread/resume", { threadId: id, cursor: "99999999" })
      .catch((e: unknown) => e);
    expect((past as { code?: number }).code).to.equal(-32602);
    // A turn added since shows on the next read.
    const done = client.waitFor("turn/completed");
    const { turn } = await client.request("turn/start", {
      threadId: id,
      input: [{ type: "text", text: "More" }],
    });
    await done;
    const after = await collect();
    expect(after.flat()).to.deep.equal([...turnIds, turn.id]);
  });

  it("lets one process own a session file: a second server gets threadLocked", async () => {
    h = await harness(tmp.path);
    h.model.respond((_req, res) => writeSse(res, textStream("Saved")));
    const a = await h.start();
    await a.client.initialize();
    const { thread } = await a.client.request("thread/start", { cwd: h.project });
    const done = a.client.waitFor("turn/completed");
    await a.client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "Save me" }] });
    await done;
    const b = await h.start();
    await b.client.initialize();
    const locked = await b.client.request("thread/resume", { threadId: thread.id }).catch((e) => e);
    expect(locked.data?.code).to.equal("threadLocked");
    expect(locked.message).to.match(/lock|owned|in use/i);
    // The listing still works from the second server, and the file is intact for the owner.
    expect((await b.client.request("thread/list", {})).data.map((t) => t.id)).to.deep.equal([thread.id]);
    const read = await a.client.request("thread/read", { threadId: thread.id, includeTurns: true });
    expect(read.turns).to.have.length(1);
  });

  it("sends a tool result over 64 KiB by reference and reads it back in chunks", async () => {
    h = await harness(tmp.path, { "big.ts": BIG });
    h.model.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_big", "big", {})),
      (_req, res) => writeSse(res, textStream("done")),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const done = client.waitFor("turn/completed");
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "big" }] });
    const turn = (await done).turn;
    const call = turn.items.find((i) => i.type === "toolCall")! as Record<string, any>;
    expect(call.result).to.have.keys(["ref", "bytes"]);
    expect(call.result.bytes).to.equal(80 * 1024 + 3);
    const resolved = (await client.resolveTurn(thread.id, turn)).items.find(
      (i) => i.type === "toolCall",
    ) as Record<string, any>;
    expect(resolved.result).to.have.length(80 * 1024 + 3);
    expect(resolved.result.endsWith("END")).to.equal(true);
    const chunk = await client.request("thread/payload/read", {
      threadId: thread.id,
      ref: String(call.result.ref),
    });
    expect(Buffer.from(chunk.data, "base64").length).to.equal(48 * 1024);
    expect(chunk.done).to.equal(false);
    for (const line of client.received) expect(JSON.stringify(line).length).to.be.below(70 * 1024);
    expect(notifications(server, "item/completed").length).to.be.greaterThan(0);
  });

  it("reports systemError for a thread whose extensions refuse to start, until a load succeeds", async () => {
    h = await harness(tmp.path, { "refuse.ts": REFUSE });
    h.model.respond((_req, res) => writeSse(res, textStream("ok")));
    const server = await h.start({ KNIGHTCODE_APP_SERVER_UNLOAD_MS: "50" });
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const first = client.waitFor("turn/completed");
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "Hi" }] });
    const seen = new Set<string>([(await first).turn.id]);
    const refuse = join(h.project, "refuse");
    // The status a turn leaves comes after its turn/completed, maybe in a later chunk: wait for it.
    const statusAfter = async (turnId: string) => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const mark = client.received.findIndex(
          (m) => m.method === "turn/completed" && (m.params as any).turn.id === turnId,
        );
        const found = client.received
          .slice(mark)
          .find((m) => m.method === "thread/status/changed" && (m.params as any).status.type !== "active");
        if (found) return (found.params as any).status as { type: string; message?: string };
        expect(Date.now()).to.be.lessThan(deadline);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const reload = async () => {
      const done = client.waitFor("turn/completed", (p) => !seen.has(p.turn.id));
      await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "/reload" }] });
      const { turn } = await done;
      seen.add(turn.id);
      return turn;
    };

    // A reload the extensions refuse leaves the loaded thread in systemError; a good one clears it.
    writeFileSync(refuse, "");
    const failed = await reload();
    expect(failed.status).to.equal("failed");
    const broken = await statusAfter(failed.id);
    expect(broken.type).to.equal("systemError");
    expect(broken.message).to.contain("refused: a refuse file is here");
    expect((await client.request("thread/read", { threadId: thread.id })).thread.status.type).to.equal(
      "systemError",
    );
    rmSync(refuse);
    const good = await reload();
    expect(good.status).to.equal("completed");
    expect(await statusAfter(good.id)).to.deep.equal({ type: "idle" });

    // A load that fails marks the listed thread until a load succeeds.
    await client.request("thread/unsubscribe", { threadId: thread.id });
    const deadline = Date.now() + 10_000;
    while ((await client.request("server/diagnostics", {})).threads.length > 0) {
      expect(Date.now()).to.be.lessThan(deadline);
      await new Promise((r) => setTimeout(r, 25));
    }
    // Loaded while an extension refuses: the thread opens (its warnings say why) in systemError, and so it lists.
    writeFileSync(refuse, "");
    const refused = await client.request("thread/resume", { threadId: thread.id });
    expect(refused.thread.status.type).to.equal("systemError");
    expect(refused.warnings.map((w) => w.message).join("\n")).to.contain("refused: a refuse file is here");
    const listed = (await client.request("thread/list", {})).data.find((t) => t.id === thread.id)!;
    expect(listed.status.type).to.equal("systemError");
    expect((listed.status as { message?: string }).message).to.contain("refused");
    const noTurn = client.waitFor("turn/completed", (p) => !seen.has(p.turn.id));
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "Hi" }] });
    const failedTurn = (await noTurn).turn;
    expect(failedTurn.status).to.equal("failed");
    seen.add(failedTurn.id);
    // A queued input that cannot start is dropped with an error carrying its clientMessageId, and no turn.
    const turnsBefore = notifications(server, "turn/started").length;
    const dropped = client.waitFor("error", (p) => p.clientMessageId === "q-1");
    await client.request("turn/queue/add", {
      threadId: thread.id,
      input: [{ type: "text", text: "Queued" }],
      clientMessageId: "q-1",
    });
    expect((await dropped).error.message).to.contain("refused");
    await client.waitFor("turn/queue/updated", (p) => p.threadId === thread.id && p.followUp.length === 0);
    expect(notifications(server, "turn/started")).to.have.length(turnsBefore);
    await client.request("thread/unsubscribe", { threadId: thread.id });
    while ((await client.request("server/diagnostics", {})).threads.length > 0) {
      expect(Date.now()).to.be.lessThan(deadline);
      await new Promise((r) => setTimeout(r, 25));
    }
    rmSync(refuse);
    const resumed = await client.request("thread/resume", { threadId: thread.id });
    expect(resumed.thread.status).to.deep.equal({ type: "idle" });
    expect(
      (await client.request("thread/list", {})).data.find((t) => t.id === thread.id)!.status,
    ).to.deep.equal({
      type: "idle",
    });
  });
});

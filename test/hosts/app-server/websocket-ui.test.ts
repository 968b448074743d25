/**
 * The WebSocket listener and what crosses between clients: `GET /readyz`, refusal of requests with an `Origin`
 * header, two clients on one thread, an extension's dialog asked of the most recent initiating subscriber and
 * moved to the other when it unsubscribes or disconnects, and the thread's extension UI across a resume.
 */
import { request } from "node:http";
import { expect } from "chai";
import {
  type AppServerClient,
  connectAppServer,
  type SpawnedAppServer,
} from "../../../hosts/sdk/app-server-client.js";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness } from "./harness.js";
import { protocolCheck } from "./protocol-check.js";

const ASK = `import { Type } from "@sinclair/typebox";
export default (kc: any) => {
  kc.registerTool({
    name: "ask", label: "Ask", description: "Ask the user", parameters: Type.Object({}),
    execute: async (_id: string, _p: unknown, _s: unknown, _u: unknown, ctx: any) => {
      const choice = await ctx.ui.select("Pick \\u001b[1mone\\u001b[0m", ["red", "blue"]);
      return { content: [{ type: "text", text: "picked:" + choice }], details: undefined };
    },
  });
  kc.on("session_start", (_e: any, ctx: any) => {
    ctx.ui.setStatus("zeta", "last");
    ctx.ui.setStatus("alpha", "\\u001b[31mfirst\\u001b[0m\\nline");
    ctx.ui.setWidget("below", ["  indented"], { placement: "belowEditor" });
    ctx.ui.setWidget("above", ["top"]);
    ctx.ui.setTitle("Working title");
    ctx.ui.setWidget("drawn", () => ({ render: () => ["x"] }));
  });
  kc.registerCommand("more", { handler: async (_a: string, ctx: any) => {
    ctx.ui.setStatus("mid", "middle");
    ctx.ui.setWidget("above", ["top again"]);
    ctx.ui.setWidget("below", undefined);
    ctx.ui.notify("Downloaded model", "warning");
  } });
};`;

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

async function listening(server: SpawnedAppServer): Promise<number> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const match = /listening on ws:\/\/127\.0\.0\.1:(\d+)/.exec(server.stderr());
    if (match) return Number(match[1]);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the server did not listen\n${server.stderr()}`);
}

describe("knightcode app-server: WebSocket, dialogs and extension UI", function () {
  this.timeout(90_000);
  let h: Harness;
  const clients: AppServerClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await h?.close();
  });
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-ws-");

  async function connect(port: number, name: string): Promise<AppServerClient> {
    const client = await connectAppServer(`ws://127.0.0.1:${port}`, {
      timeoutMs: 20_000,
      check: protocolCheck,
    });
    clients.push(client);
    await client.initialize(name, "1");
    return client;
  }

  it("serves /readyz, refuses an Origin header, and runs two clients with their own handshakes", async () => {
    h = await harness(tmp.path);
    const server = await h.start({}, ["app-server", "--listen", "ws://127.0.0.1:0"]);
    const port = await listening(server);
    expect(await get(port, "/readyz")).to.equal(200);
    expect(await get(port, "/readyz", { origin: "http://evil.example" })).to.equal(403);
    const a = await connect(port, "a");
    const raw = await connectAppServer(`ws://127.0.0.1:${port}`);
    clients.push(raw);
    const early = await raw.request("thread/list", {}).catch((e) => e);
    expect(early.data?.code).to.equal("notInitialized");
    const { thread } = await a.request("thread/start", { cwd: h.project });
    const b = await connect(port, "b");
    const list = await b.request("thread/list", {});
    expect(list.data.map((t) => t.id)).to.deep.equal([thread.id]);
    const resumed = await b.request("thread/resume", { threadId: thread.id });
    expect(resumed.thread.id).to.equal(thread.id);
    const diag = await b.request("server/diagnostics", {});
    expect(diag.connections.filter((c) => c.transport === "websocket").length).to.equal(3);
    expect(diag.threads.find((t) => t.id === thread.id)!.subscribers).to.equal(2);
    // A socket opened with an Origin header (a browser page) is refused.
    const { default: WebSocket } = await import("ws");
    const blocked = await new Promise<string>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}`, { headers: { origin: "http://evil.example" } });
      ws.on("open", () => resolve("open"));
      ws.on("error", (e) => resolve(e.message));
    });
    expect(blocked).to.match(/403/);
  });

  it("asks the most recent initiator, moves the dialog on unsubscribe and on disconnect, and keeps UI across a resume", async () => {
    h = await harness(tmp.path, { "ask.ts": ASK });
    h.model.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_1", "ask", {})),
      (_req, res) => writeSse(res, textStream("first done")),
      (_req, res) => writeSse(res, toolCallStream("call_2", "ask", {})),
      (_req, res) => writeSse(res, textStream("second done")),
    );
    const server = await h.start({}, ["app-server", "--listen", "ws://127.0.0.1:0"]);
    const port = await listening(server);
    const a = await connect(port, "a");
    const started = await a.request("thread/start", { cwd: h.project });
    const id = started.thread.id;
    // The UI set in session_start, cleaned: sorted statuses, one line, no ANSI; widgets above first.
    expect(started.ui).to.deep.equal({
      statuses: [
        { key: "alpha", text: "first line" },
        { key: "zeta", text: "last" },
      ],
      title: "Working title",
      workingVisible: true,
      widgets: [
        { key: "above", placement: "aboveEditor", lines: ["top"] },
        { key: "below", placement: "belowEditor", lines: ["  indented"] },
      ],
    });
    // What only a terminal draws is logged (stderr arrives on its own pipe, so wait for it).
    const logDeadline = Date.now() + 10_000;
    while (!server.stderr().includes("setWidget(component)") && Date.now() < logDeadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(server.stderr()).to.contain("setWidget(component)");

    const b = await connect(port, "b");
    await b.request("thread/resume", { threadId: id });
    const askedB: string[] = [];
    const askedA: string[] = [];
    b.onRequest("ui/dialog", (params) => {
      askedB.push(params.title);
      return new Promise(() => {}); // never answers: it unsubscribes instead
    });
    a.onRequest("ui/dialog", (params) => {
      askedA.push(`${params.kind}:${params.title}:${params.options?.join("/")}`);
      return { value: "blue" };
    });
    const statusSeen = a.waitFor(
      "thread/status/changed",
      (p) => p.status.type === "active" && p.status.waitingOn.includes("dialog"),
    );
    // b initiates the turn, so b is asked first.
    const firstDone = a.waitFor("turn/completed");
    const cancelled = b.waitFor("serverRequest/cancelled");
    await b.request("turn/start", { threadId: id, input: [{ type: "text", text: "ask me" }] });
    await statusSeen;
    const deadline = Date.now() + 15_000;
    while (askedB.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(askedB).to.deep.equal(["Pick one"]);
    await b.request("thread/unsubscribe", { threadId: id });
    expect((await cancelled).threadId).to.equal(id);
    const first = await firstDone;
    expect(askedA).to.deep.equal(["select:Pick one:red/blue"]);
    const call = first.turn.items.find((i) => i.type === "toolCall") as Record<string, unknown>;
    expect(call.result).to.equal("picked:blue");

    // Disconnect: b resumes, starts the next turn, is asked, and goes away; a gets the dialog.
    await b.request("thread/resume", { threadId: id });
    askedA.length = 0;
    askedB.length = 0;
    const secondDone = a.waitFor("turn/completed", (p) => p.turn.id !== first.turn.id);
    await b.request("turn/start", { threadId: id, input: [{ type: "text", text: "ask again" }] });
    while (askedB.length === 0 && Date.now() < deadline + 15_000) await new Promise((r) => setTimeout(r, 20));
    b.close();
    const second = await secondDone;
    expect(askedA).to.have.length(1);
    expect((second.turn.items.find((i) => i.type === "toolCall") as Record<string, unknown>).result).to.equal(
      "picked:blue",
    );

    // UI changes reach subscribers; a late client resumes with the state as it stands.
    const state = a.waitFor("ui/state", (p) => p.statuses.some((s) => s.key === "mid"));
    const removed = a.waitFor("ui/widget", (p) => p.key === "below" && p.lines === undefined);
    const notified = a.waitFor("ui/notify");
    await a.request("turn/start", { threadId: id, input: [{ type: "text", text: "/more" }] });
    expect((await state).statuses.map((s) => s.key)).to.deep.equal(["alpha", "mid", "zeta"]);
    await removed;
    expect(await notified).to.deep.include({ threadId: id, message: "Downloaded model", level: "warning" });
    const c = await connect(port, "c");
    const late = await c.request("thread/resume", { threadId: id });
    expect(late.ui.widgets).to.deep.equal([{ key: "above", placement: "aboveEditor", lines: ["top again"] }]);
    expect(late.ui.statuses.map((s) => s.text)).to.deep.equal(["first line", "middle", "last"]);

    // /reload clears what the old extensions showed (one ui/state, a removal per widget), then the new ones start.
    const mark = c.received.length;
    const reloaded = c.waitFor(
      "turn/completed",
      (p) =>
        p.turn.id !== first.turn.id &&
        p.turn.id !== second.turn.id &&
        p.turn.status === "completed" &&
        c.received.length > mark,
    );
    await c.request("turn/start", { threadId: id, input: [{ type: "text", text: "/reload" }] });
    await reloaded;
    const after = c.received.slice(mark).filter((m) => m.method === "ui/state" || m.method === "ui/widget");
    expect(after[0]).to.deep.equal({
      method: "ui/state",
      params: { threadId: id, statuses: [], workingVisible: true },
    });
    expect(after[1]).to.deep.equal({ method: "ui/widget", params: { threadId: id, key: "above" } });
    const again = await c.request("thread/resume", { threadId: id });
    expect(again.ui.statuses.map((s) => s.key)).to.deep.equal(["alpha", "zeta"]);
    expect(again.ui.widgets.map((w) => w.key)).to.deep.equal(["above", "below"]);
  });
});

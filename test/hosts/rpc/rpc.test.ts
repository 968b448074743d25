/** RPC mode end to end: the built `knightcode --mode rpc` as a child process, driven through stdin/stdout. */

import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { RPC_MAX_FRAME_BYTES } from "../../../kit.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { writeLinearSession } from "../../helpers/session-file.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = join(root, "dist", "hosts", "cli", "main.js");

describe("RPC mode", () => {
  const tmp = useTempDir("kc-rpc-");
  const running: RpcProcess[] = [];
  afterEach(() => {
    for (const p of running.splice(0)) p.kill();
  });

  function start(steps: unknown[], extra: string[] = []): RpcProcess {
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps }));
    const child = spawn(
      process.execPath,
      [bin, "--mode", "rpc", "--provider", "scripted", "--script", script, "--no-session", ...extra],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }

  it("answers prompt, streams the events without a session header, and exits 0 at end of input", async () => {
    const p = start([{ text: "Hello over RPC" }]);
    const response = await p.request("1", "prompt", { message: "Hi" });
    expect(response).to.deep.include({ type: "response", command: "prompt", success: true });
    await p.waitFor((r) => r.type === "agent_settled");
    expect(p.records.some((r) => r.type === "session")).to.equal(false);
    const text = await p.request("2", "get_last_assistant_text");
    expect(text.data).to.deep.equal({ text: "Hello over RPC" });
    expect(await p.end()).to.equal(0);
  });

  it("lets queued work finish when stdin closes right after a prompt (echo ... | knightcode --mode rpc)", async () => {
    const p = start([{ text: "done after EOF", chunkDelayMs: 5 }]);
    p.send({ id: "1", type: "prompt", message: "go" });
    expect(await p.end()).to.equal(0);
    expect(p.records.some((r) => r.type === "agent_settled")).to.equal(true);
  });

  it("answers malformed lines, unknown commands and bad parameters with errors and keeps serving", async () => {
    const p = start([]);
    p.send("{not json");
    const parse = await p.waitFor((r) => r.type === "response" && r.command === "parse");
    expect(parse.success).to.equal(false);
    expect(String(parse.error)).to.contain("Malformed JSON");
    const unknown = await p.request("u", "make_coffee");
    expect(unknown).to.deep.include({ success: false, command: "make_coffee" });
    expect(String(unknown.error)).to.contain('Unknown command "make_coffee"');
    const bad = await p.request("b", "set_thinking_level", { level: "extreme" });
    expect(bad.success).to.equal(false);
    expect(String(bad.error)).to.contain("/level");
    const state = await p.request("s", "get_state");
    expect(state.success).to.equal(true);
    expect(await p.end()).to.equal(0);
  });

  it("serves the state, model, thinking, queue, name and session commands", async () => {
    const p = start([{ text: "one" }]);
    const state = await p.request("1", "get_state");
    expect((state.data as { model: { provider: string } }).model.provider).to.equal("scripted");
    const models = await p.request("2", "get_available_models");
    // Only what can be used: no key is set, so none of the catalogues' hundreds of models; the model in use is.
    expect(
      (models.data as { models: { provider: string; id: string }[] }).models.map(
        (m) => `${m.provider}/${m.id}`,
      ),
    ).to.deep.equal(["scripted/scripted"]);
    expect(
      (await p.request("3", "set_model", { provider: "scripted", modelId: "scripted" })).success,
    ).to.equal(true);
    expect((await p.request("3b", "set_model", { provider: "nope", modelId: "x" })).success).to.equal(false);
    expect((await p.request("4", "cycle_model")).success).to.equal(true);
    await p.request("5", "set_thinking_level", { level: "high" });
    await p.waitFor((r) => r.type === "thinking_level_changed");
    await p.request("6", "set_session_name", { name: "Project X" });
    await p.waitFor((r) => r.type === "session_info_changed" && r.name === "Project X");
    await p.request("7", "prompt", { message: "hi" });
    await p.waitFor((r) => r.type === "agent_settled");
    const messages = await p.request("8", "get_messages");
    expect((messages.data as { messages: { role: string }[] }).messages.map((m) => m.role)).to.deep.equal([
      "user",
      "assistant",
    ]);
    const entries = await p.request("9", "get_entries");
    const { entries: list, leafId } = entries.data as { entries: { id: string }[]; leafId: string };
    expect(list.at(-1)!.id).to.equal(leafId);
    const since = await p.request("10", "get_entries", { since: list.at(-2)!.id });
    expect((since.data as { entries: unknown[] }).entries).to.have.length(1);
    const tree = await p.request("11", "get_tree");
    expect((tree.data as { leafId: string }).leafId).to.equal(leafId);
    const stats = await p.request("12", "get_session_stats");
    expect(stats.data).to.deep.include({ userMessages: 1, assistantMessages: 1 });
    expect((await p.request("13", "get_commands")).success).to.equal(true);
    expect((await p.request("14", "clear_queue")).data).to.deep.equal({ steering: [], followUp: [] });
    expect((await p.request("15", "new_session")).data).to.deep.equal({ cancelled: false });
    const fresh = await p.request("16", "get_messages");
    expect((fresh.data as { messages: unknown[] }).messages).to.deep.equal([]);
    expect((await p.request("17", "reload")).success).to.equal(true);
    expect(await p.end()).to.equal(0);
  });

  it("pages get_entries of a large session: every frame under the cap, every entry once, in order", async function () {
    this.timeout(120_000);
    // 2,400 entries of about 10 KiB: some 24 MiB, more than one frame may hold.
    const file = join(tmp.path, "big.jsonl");
    const ids = writeLinearSession(file, { cwd: tmp.path, count: 2_400, messageChars: 10_000 });
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps: [] }));
    const child = spawn(
      process.execPath,
      [bin, "--mode", "rpc", "--provider", "scripted", "--script", script, "--session", file],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    let longest = 0;
    let partial = 0;
    child.stdout.on("data", (chunk: Buffer | string) => {
      for (const piece of chunk.toString().split("\n").slice(0, -1)) {
        longest = Math.max(longest, partial + Buffer.byteLength(piece));
        partial = 0;
      }
      const tail = chunk.toString().split("\n").at(-1)!;
      partial += Buffer.byteLength(tail);
    });
    const p = new RpcProcess(child);
    running.push(p);
    const seen: string[] = [];
    let since: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await p.request(`p${pages}`, "get_entries", since === undefined ? {} : { since }, 60_000);
      expect(page.success, JSON.stringify(page.error)).to.equal(true);
      const data = page.data as { entries: { id: string }[]; hasMore?: boolean; leafId: string };
      expect(data.entries.length).to.be.greaterThan(0);
      seen.push(...data.entries.map((e) => e.id));
      pages++;
      if (!data.hasMore) break;
      since = data.entries.at(-1)!.id;
    }
    expect(pages).to.be.greaterThan(2);
    // The file's entries in order (opening the session may add its own after them), none twice.
    expect(seen.slice(0, ids.length)).to.deep.equal(ids);
    expect(new Set(seen).size).to.equal(seen.length);
    expect(longest).to.be.lessThan(RPC_MAX_FRAME_BYTES);
    // `limit` bounds a page by count too.
    const limited = await p.request("l", "get_entries", { since: ids[9], limit: 5 });
    expect((limited.data as { entries: { id: string }[] }).entries.map((e) => e.id)).to.deep.equal(
      ids.slice(10, 15),
    );
    expect((limited.data as { hasMore?: boolean }).hasMore).to.equal(true);
  });

  it("forks, clones and switches sessions on disk", async () => {
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps: [{ text: "one" }, { text: "two" }] }));
    const child = spawn(
      process.execPath,
      [bin, "--mode", "rpc", "--provider", "scripted", "--script", script],
      {
        cwd: tmp.path,
        env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
      },
    );
    const p = new RpcProcess(child);
    running.push(p);
    await p.request("1", "prompt", { message: "first" });
    await p.waitFor((r) => r.type === "agent_settled");
    const first = (await p.request("2", "get_state")).data as { sessionFile: string };
    const entries = (
      (await p.request("3", "get_entries")).data as { entries: { id: string; type: string }[] }
    ).entries;
    const userEntry = entries.find((e) => e.type === "message")!;
    // As pi: the fork ends just before the chosen user message, whose text comes back for the editor.
    expect((await p.request("4", "fork", { entryId: userEntry.id })).data).to.deep.equal({
      text: "first",
      cancelled: false,
    });
    const forked = (await p.request("5", "get_state")).data as { sessionFile: string; messageCount: number };
    expect(forked.sessionFile).to.not.equal(first.sessionFile);
    expect(forked.messageCount).to.equal(0);
    expect((await p.request("6", "clone")).data).to.deep.equal({ cancelled: false });
    const cloned = (await p.request("7", "get_state")).data as { sessionFile: string };
    expect(cloned.sessionFile).to.not.equal(forked.sessionFile);
    const back = await p.request("8", "switch_session", { sessionPath: first.sessionFile });
    expect(back.data).to.deep.equal({ cancelled: false });
    expect(((await p.request("9", "get_state")).data as { sessionFile: string }).sessionFile).to.equal(
      first.sessionFile,
    );
    const bad = await p.request("10", "switch_session", { sessionPath: join(tmp.path, "missing.jsonl") });
    expect(bad.success).to.equal(false);
    expect(await p.end()).to.equal(0);
  });

  it("serves 1,000 prompts in one process with bounded memory growth", async function () {
    this.timeout(120_000);
    const p = start(Array.from({ length: 1000 }, (_, i) => ({ text: `answer ${i}` })));
    const rss = () => {
      const status = readFileSync(`/proc/${p.child.pid}/status`, "utf8");
      return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
    };
    // Count settled runs incrementally (the record list only grows).
    let seen = 0;
    let settledCount = 0;
    const waitSettled = async (n: number) => {
      const deadline = Date.now() + 10_000;
      while (settledCount < n) {
        for (; seen < p.records.length; seen++) if (p.records[seen]!.type === "agent_settled") settledCount++;
        if (settledCount >= n) break;
        if (Date.now() > deadline) throw new Error(`prompt ${n} did not settle`);
        await new Promise((r) => setTimeout(r, 1));
      }
    };
    let baseline = 0;
    for (let i = 0; i < 1000; i++) {
      p.send({ id: `p${i}`, type: "prompt", message: `question ${i}` });
      await waitSettled(i + 1);
      if (i === 99) baseline = rss();
    }
    const growth = rss() - baseline;
    // Stated bound: under 60 MB of resident memory growth from prompt 100 to 1,000 (an in-memory session keeps
    // every message, about 2 KB per prompt with its events' snapshots; the rest is what must not grow).
    expect(growth, `RSS grew ${growth.toFixed(1)} MB`).to.be.below(60);
    const last = await p.request("last", "get_last_assistant_text");
    expect(last.data).to.deep.equal({ text: "answer 999" });
    expect(await p.end()).to.equal(0);
  });

  it("queues steering and follow-up prompts during a run, and aborts", async () => {
    const p = start([
      { text: "a slow first answer that takes a while to stream", chunkDelayMs: 1000 },
      { text: "never" },
    ]);
    await p.request("1", "prompt", { message: "first" });
    await p.waitFor((r) => r.type === "message_update");
    const busy = await p.request("2", "prompt", { message: "second" });
    expect(busy.success).to.equal(false);
    expect(
      (await p.request("3", "prompt", { message: "later", streamingBehavior: "followUp" })).success,
    ).to.equal(true);
    const aborted = await p.request("4", "abort");
    expect(aborted.data).to.deep.equal({ steering: [], followUp: ["later"] });
    const settled = await p.waitFor((r) => r.type === "agent_settled");
    expect(settled.aborted).to.equal(true);
    expect(await p.end()).to.equal(0);
  });

  it("runs bash with streamed output events and records it for the next prompt", async () => {
    const p = start([{ text: "saw it" }]);
    const response = await p.request("b1", "bash", { command: "echo hello-from-bash; echo line-two" });
    expect(response.success).to.equal(true);
    expect((response.data as { output: string; exitCode: number }).exitCode).to.equal(0);
    const updates = p.records.filter((r) => r.type === "bash_execution_update" && r.id === "b1");
    expect(updates.map((u) => u.delta).join("")).to.contain("hello-from-bash");
    await p.request("2", "prompt", { message: "what did it print?" });
    const end = await p.waitFor((r) => r.type === "agent_settled");
    expect(end.aborted).to.equal(false);
    const last = await p.request("3", "get_last_assistant_text");
    expect(last.data).to.deep.equal({ text: "saw it" });
    // The command and its output entered the context with that prompt, before the user's message.
    const { entries } = (await p.request("4", "get_entries")).data as {
      entries: { type: string; customType?: string; content?: string; message?: { role: string } }[];
    };
    const bash = entries.findIndex((e) => e.type === "custom_message" && e.customType === "bashExecution");
    const user = entries.findIndex((e) => e.type === "message" && e.message?.role === "user");
    expect(bash).to.be.greaterThan(-1);
    expect(entries[bash]!.content).to.contain("hello-from-bash");
    expect(bash).to.be.lessThan(user);
    expect(await p.end()).to.equal(0);
  });

  it("aborts a running bash command with abort_bash", async () => {
    const p = start([]);
    p.send({ id: "b", type: "bash", command: "echo started; sleep 20" });
    // Aborted once it runs (its first output says so), however long a loaded machine takes to start it.
    await p.waitFor(
      (r) => r.type === "bash_execution_update" && r.id === "b" && String(r.delta).includes("started"),
    );
    expect((await p.request("a", "abort_bash")).data).to.deep.equal({ aborted: true });
    const response = await p.response("b");
    expect(response.success).to.equal(true);
    expect(await p.end()).to.equal(0);
  });

  it("forwards extension dialogs, and resolves one that times out", async () => {
    const ext = join(tmp.path, "ask.ts");
    writeFileSync(
      ext,
      `export default function (kc: any) {
        kc.registerCommand("ask", { handler: async (_args: string, ctx: any) => {
          const choice = await ctx.ui.select("Pick one", ["red", "blue"]);
          const sure = await ctx.ui.confirm("Sure?", "really", { timeout: 100 });
          ctx.ui.notify("picked " + choice + " " + sure, "info");
          ctx.ui.setStatus("mood", "calm");
        } });
      }`,
    );
    const p = start([], ["-e", ext]);
    p.send({ id: "c", type: "prompt", message: "/ask" });
    const select = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "select");
    expect(select).to.deep.include({ title: "Pick one", options: ["red", "blue"] });
    p.send({ type: "extension_ui_response", id: select.id, value: "blue" });
    const confirm = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "confirm");
    expect(confirm.timeout).to.equal(100);
    const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify");
    expect(note.message).to.equal("picked blue false");
    await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "setStatus");
    expect((await p.response("c")).success).to.equal(true);
    expect(await p.end()).to.equal(0);
  });

  it("reports a throwing extension handler as an extension_error event", async () => {
    const ext = join(tmp.path, "broken.ts");
    writeFileSync(
      ext,
      `export default (kc: any) => kc.on("agent_start", () => { throw new Error("handler broke"); });`,
    );
    const p = start([{ text: "still answered" }], ["-e", ext]);
    await p.request("1", "prompt", { message: "hi" });
    const error = await p.waitFor((r) => r.type === "extension_error");
    expect(error).to.deep.equal({
      type: "extension_error",
      extensionPath: ext,
      event: "agent_start",
      error: "handler broke",
    });
    await p.waitFor((r) => r.type === "agent_settled");
    expect(await p.end()).to.equal(0);
  });

  it("exits on SIGTERM while idle, with stdin still open", async () => {
    const p = start([]);
    await p.request("1", "get_state");
    p.child.kill("SIGTERM");
    const exited = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(-1), 10_000);
      p.child.on("close", (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(exited).to.equal(0);
  });

  it("aborts and exits on SIGTERM", async () => {
    const p = start([{ text: "a very slow answer indeed", chunkDelayMs: 200 }]);
    await p.request("1", "prompt", { message: "go" });
    p.child.kill("SIGTERM");
    const code = await p.end();
    expect(code).to.equal(0);
    expect(existsSync(join(tmp.path, "agent", "sessions"))).to.equal(false);
  });
});

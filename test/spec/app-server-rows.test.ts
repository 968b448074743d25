/**
 * Rows of the spec's app-server.md that KnightCode did but no test held (docs/spec-coverage.md), through the built
 * `knightcode app-server` with a local model server: the confirm, input and editor kinds of `ui/dialog` (with
 * `message`, `placeholder` and `prefill`, and `{}` cancelling), editor access doing nothing, `git/commit` with
 * `includeUnstaged: false`, `git/stage` taking a path literally, and `updatedAt` of listings and loaded threads.
 */

import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { GATE_CHOICES } from "../../builtin-extensions/classifier-gate/index.js";
import { textStream, toolCallStream } from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";
import { git, startGitServer, write } from "../hosts/app-server/git-harness.js";
import { type Harness, harness } from "../hosts/app-server/harness.js";

const DIALOGS = `export default (kc: any) => {
  kc.registerCommand("dialogs", { handler: async (_a: string, ctx: any) => {
    const sure = await ctx.ui.confirm("Delete it?", "The file goes for good");
    const name = await ctx.ui.input("Name", "a short name");
    const text = await ctx.ui.editor("Message", "prefilled text");
    const cancelled = await ctx.ui.input("Skipped", "nothing");
    ctx.ui.setEditorText("typed by the extension");
    ctx.ui.pasteToEditor(" and pasted");
    const editor = ctx.ui.getEditorText();
    ctx.ui.notify(JSON.stringify({ sure, name, text, cancelled: cancelled ?? null, editor }), "info");
  } });
};`;

const WORKING = `export default (kc: any) => {
  kc.registerCommand("working", { handler: async (_a: string, ctx: any) => {
    ctx.ui.setTitle("Indexing the project");
    ctx.ui.setWorkingMessage("Reading 40 files");
    ctx.ui.setWorkingVisible(false);
    ctx.ui.setTitle("");
    ctx.ui.setWorkingMessage(undefined);
    ctx.ui.notify("done", "info");
  } });
};`;

describe("spec rows: app-server (app-server.md)", function () {
  this.timeout(60_000);
  let h: Harness | undefined;
  // Registered before the temp folder's hook, so the servers stop before their folders go.
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  const tmp = useTempDir("kc-spec-appserver-");

  it("asks confirm, input and editor dialogs with their message, placeholder and prefill; {} cancels; editor access does nothing", async () => {
    h = await harness(tmp.path, { "dialogs.ts": DIALOGS });
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const asked: Record<string, unknown>[] = [];
    client.onRequest("ui/dialog", (params) => {
      const p = params as Record<string, unknown>;
      asked.push({ ...p });
      if (p.kind === "confirm") return { confirmed: true };
      if (p.title === "Skipped") return {};
      if (p.kind === "input") return { value: "kc" };
      return { value: `${p.prefill} edited` };
    });
    const notified = client.waitFor("ui/notify");
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "/dialogs" }] });
    const note = await notified;
    expect(asked.map((p) => p.kind)).to.deep.equal(["confirm", "input", "editor", "input"]);
    expect(asked[0]).to.deep.include({
      threadId: thread.id,
      title: "Delete it?",
      message: "The file goes for good",
    });
    expect(asked[1]).to.deep.include({ title: "Name", placeholder: "a short name" });
    expect(asked[2]).to.deep.include({ title: "Message", prefill: "prefilled text" });
    expect(JSON.parse(note.message)).to.deep.equal({
      sure: true,
      name: "kc",
      text: "prefilled text edited",
      cancelled: null,
      editor: "",
    });
  });

  it("commits only the staged changes with includeUnstaged: false, and stages a path literally", async () => {
    h = await harness(tmp.path);
    const { server } = await startGitServer(h);
    const { client } = server;
    const { thread } = await client.request("thread/start", { cwd: h.project });
    write(h.project, "*.txt", "a file named star\n");
    write(h.project, "x1.txt", "x1\n");
    write(h.project, "x2.txt", "x2\n");
    // "*.txt" is one file's name, not a glob: x1.txt and x2.txt stay untracked.
    await client.request("git/stage", { threadId: thread.id, path: "*.txt" });
    expect(git(h.project, ["diff", "--cached", "--name-only"]).trim()).to.equal("*.txt");
    await client.request("git/commit", {
      threadId: thread.id,
      message: "Add the star file",
      includeUnstaged: false,
    });
    expect(git(h.project, ["log", "-1", "--format=%s"]).trim()).to.equal("Add the star file");
    expect(git(h.project, ["show", "--name-only", "--format=", "HEAD"]).trim()).to.equal("*.txt");
    expect(git(h.project, ["status", "--porcelain"]).trim().split("\n").sort()).to.deep.equal([
      "?? x1.txt",
      "?? x2.txt",
    ]);
    // Without includeUnstaged: false, everything is staged first.
    await client.request("git/commit", { threadId: thread.id, message: "Add the rest" });
    expect(git(h.project, ["status", "--porcelain"]).trim()).to.equal("");
  });

  it("gives a listing the file's modification time as updatedAt, and a loaded thread its latest entry's time", async () => {
    h = await harness(tmp.path);
    h.model.respond((_request, res) => writeSse(res, textStream("noted", [10, 2])));
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const done = client.waitFor("turn/completed");
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "remember" }] });
    await done;
    const read = await client.request("thread/read", { threadId: thread.id, includeTurns: true });
    const file = read.thread.sessionFile!;
    // The loaded thread's updatedAt is its last entry's time, within the turn just run.
    const entries = readFileSync(file, "utf8").trim().split("\n");
    const lastEntryTime = Date.parse((JSON.parse(entries.at(-1)!) as { timestamp: string }).timestamp);
    expect(read.thread.updatedAt).to.be.closeTo(lastEntryTime, 50);
    // Touch the file later than any entry: the listing follows the file, the loaded thread its entries.
    const later = new Date(Date.now() + 60_000);
    utimesSync(file, later, later);
    const list = await client.request("thread/list", {});
    const summary = list.data.find((t) => t.id === thread.id)!;
    expect(summary.updatedAt).to.be.closeTo(statSync(file).mtimeMs, 1);
    expect(summary.updatedAt).to.be.greaterThan(lastEntryTime);
  });

  it("sends ui/state whole on each change: workingVisible false, the working message, and a cleared title or message left out", async () => {
    h = await harness(tmp.path, { "working.ts": WORKING });
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const states: Record<string, unknown>[] = [];
    client.onNotification("ui/state", (params) => void states.push({ ...(params as object) }));
    const notified = client.waitFor("ui/notify");
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "/working" }] });
    await notified;
    expect(states).to.deep.equal([
      { threadId: thread.id, statuses: [], title: "Indexing the project", workingVisible: true },
      {
        threadId: thread.id,
        statuses: [],
        title: "Indexing the project",
        workingMessage: "Reading 40 files",
        workingVisible: true,
      },
      {
        threadId: thread.id,
        statuses: [],
        title: "Indexing the project",
        workingMessage: "Reading 40 files",
        workingVisible: false,
      },
      { threadId: thread.id, statuses: [], workingMessage: "Reading 40 files", workingVisible: false },
      { threadId: thread.id, statuses: [], workingVisible: false },
    ]);
  });

  it("answers thread/diff/read for an unknown thread with threadNotFound and a committed read without commit with invalidParams", async () => {
    h = await harness(tmp.path);
    const { server } = await startGitServer(h);
    const { client } = server;
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const code = (error: unknown) => (error as { data?: { code?: string } }).data?.code;
    const missing = await client.request("thread/diff/read", { threadId: "no-such-thread" }).catch((e) => e);
    expect(code(missing)).to.equal("threadNotFound");
    const noCommit = await client
      .request("thread/diff/read", { threadId: thread.id, scope: "committed" })
      .catch((e) => e);
    expect(code(noCommit)).to.equal("invalidParams");
  });

  it("resolveItem gives back an item's value sent by reference", async () => {
    h = await harness(tmp.path);
    const long = "0123456789abcdef".repeat(5_000);
    h.model.respond((_request, res) => writeSse(res, textStream(long, [10, 2])));
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const done = client.waitFor("turn/completed");
    await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "a long answer" }],
    });
    const { turn } = await done;
    const item = turn.items.find((i) => i.type === "agentMessage") as Record<string, unknown>;
    expect(item.text, "sent by reference").to.not.be.a("string");
    const resolved = await client.resolveItem(thread.id, item);
    expect(resolved.text).to.equal(long);
  });

  it("asks the classifier gate's confirmation of a bash call as a ui/dialog select, the safe answer first", async () => {
    h = await harness(tmp.path);
    writeFileSync(
      join(h.agentDir, "tools.json"),
      JSON.stringify({ "classifier-gate": { enabled: true, ask: "bash" } }),
    );
    let n = 0;
    h.model.respond((request, res) => {
      const messages = (request.body as { messages: { role: string }[] }).messages;
      if (messages.at(-1)?.role === "tool") return writeSse(res, textStream("done"));
      n++;
      return writeSse(res, toolCallStream(`call_${n}`, "bash", { command: `touch gated-${n}.txt` }));
    });
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const asked: Record<string, unknown>[] = [];
    const answers = [GATE_CHOICES.once, GATE_CHOICES.block];
    client.onRequest("ui/dialog", (params) => {
      asked.push({ ...(params as object) });
      return { value: answers[asked.length - 1] };
    });
    for (const text of ["first", "second"]) {
      const { turn } = await client.request("turn/start", {
        threadId: thread.id,
        input: [{ type: "text", text }],
      });
      await client.waitFor("turn/completed", (p) => p.turn.id === turn.id);
    }
    expect(asked).to.have.length(2);
    expect(asked[0]).to.deep.include({ threadId: thread.id, kind: "select" });
    expect(String(asked[0]!.title)).to.match(/^Allow bash\?/);
    expect((asked[0]!.options as string[])[0]).to.equal(GATE_CHOICES.block);
    expect(existsSync(join(h.project, "gated-1.txt")), "allowed once").to.equal(true);
    expect(existsSync(join(h.project, "gated-2.txt")), "blocked").to.equal(false);
  });

  it("lists a server's MCP tools in tool/list only once a thread has connected it", async () => {
    h = await harness(tmp.path);
    const faultServer = fileURLToPath(
      new URL("../builtin-extensions/mcp/fixtures/fault-server.mjs", import.meta.url),
    );
    writeFileSync(
      join(h.agentDir, "mcp.json"),
      JSON.stringify({ mcpServers: { faults: { command: process.execPath, args: [faultServer] } } }),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const mcpTools = async () =>
      (await client.request("tool/list", { cwd: h!.project })).tools
        .map((t) => t.name)
        .filter((name) => name.startsWith("mcp__"));
    expect(await mcpTools(), "before any thread connected the server").to.deep.equal([]);
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { data } = await client.request("mcpServerStatus/list", { threadId: thread.id });
      if (data.some((s) => s.name === "faults" && s.state === "connected")) break;
      expect(Date.now(), "the thread connects the server").to.be.lessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = await mcpTools();
    expect(after.length).to.be.greaterThan(0);
    expect(after.every((name) => name.startsWith("mcp__faults__"))).to.equal(true);
  });

  it("leaves a loaded thread's MCP servers as they were after mcp/add until the thread loads again", async () => {
    h = await harness(tmp.path);
    const faultServer = fileURLToPath(
      new URL("../builtin-extensions/mcp/fixtures/fault-server.mjs", import.meta.url),
    );
    const server = await h.start({ KNIGHTCODE_APP_SERVER_UNLOAD_MS: "200" });
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const names = async () =>
      (await client.request("mcpServerStatus/list", { threadId: thread.id })).data.map((s) => s.name);
    expect(await names()).to.deep.equal([]);
    await client.request("mcp/add", {
      scope: "global",
      name: "faults",
      config: { command: process.execPath, args: [faultServer] },
    });
    expect(await names(), "the loaded thread keeps what it loaded with").to.deep.equal([]);
    // Unloaded (its last subscriber gone) and loaded again: the new server is there.
    await client.request("thread/unsubscribe", { threadId: thread.id });
    const deadline = Date.now() + 10_000;
    while ((await client.request("server/diagnostics", {})).threads.length > 0) {
      expect(Date.now(), "the thread unloads").to.be.lessThan(deadline);
      await new Promise((r) => setTimeout(r, 25));
    }
    await client.request("thread/resume", { threadId: thread.id });
    expect(await names()).to.deep.equal(["faults"]);
  });

  it("reads settings, versions and errors of config/read from the same read of each file, never a cached copy", async () => {
    h = await harness(tmp.path, {}, { theme: "light" });
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const file = join(h.agentDir, "settings.json");
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    const first = await client.request("config/read", {});
    expect(first.settings).to.deep.include({ theme: "light" });
    expect(first.versions.global).to.equal(sha(readFileSync(file, "utf8")));
    // Another program edits the file: the next read gives its settings with its version.
    const edited = JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), theme: "dark" });
    writeFileSync(file, edited);
    const second = await client.request("config/read", {});
    expect(second.settings).to.deep.include({ theme: "dark" });
    expect(second.versions.global).to.equal(sha(edited));
    // A broken file: its error, its version, and the defaults in place of its settings.
    writeFileSync(file, '{"theme": "dark",}');
    const third = await client.request("config/read", {});
    expect(third.versions.global).to.equal(sha('{"theme": "dark",}'));
    expect(third.errors).to.have.length(1);
    expect(third.errors[0]).to.deep.include({ source: "settings", path: file });
    expect(third.settings.theme).to.equal(third.defaults.theme);
  });
});

/**
 * What an editor extension needs from `knightcode app-server`, through the real process against a local model
 * server: model/list and changing the model and thinking level between turns, the thread/start warning without a
 * usable model, toolCall items an editor can draw (bash's command, cwd, exit code and timing, incremental output
 * deltas; write and edit with their diffs), fuzzyFileSearch over a real repository, and mcpServerStatus/list.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { git, rpcError } from "./git-harness.js";
import { type Harness, harness, notifications } from "./harness.js";

const faultServer = fileURLToPath(
  new URL("../../builtin-extensions/mcp/fixtures/fault-server.mjs", import.meta.url),
);

/** models.json: `local` (a plain and a reasoning model, key set) and `nokey` (its key variable unset). */
function writeModels(h: Harness): void {
  writeFileSync(
    join(h.agentDir, "models.json"),
    JSON.stringify({
      providers: {
        local: {
          api: "openai-completions",
          baseUrl: `${h.model.url}/v1`,
          apiKey: "LOCAL_KEY",
          models: [
            { id: "m", contextWindow: 32000, maxTokens: 1024 },
            { id: "r", name: "Reasoner", contextWindow: 64000, maxTokens: 4096, reasoning: true },
            // A model that offers some levels only (as catalogue models do through their level map).
            {
              id: "t",
              contextWindow: 64000,
              maxTokens: 4096,
              reasoning: true,
              thinkingLevelMap: { off: null, minimal: null, xhigh: "max" },
            },
          ],
        },
        nokey: {
          api: "openai-completions",
          baseUrl: `${h.model.url}/v1`,
          apiKey: "KC_TEST_UNSET_KEY",
          models: [{ id: "x", contextWindow: 8000, maxTokens: 512 }],
        },
      },
    }),
  );
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("knightcode app-server: what an editor needs", function () {
  this.timeout(90_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-editor-");

  it("model/list gives the usable models with limits and thinking levels; thread/settings/update and turn/start change them between turns", async () => {
    h = await harness(tmp.path);
    writeModels(h);
    h.model.respond((_req, res) => writeSse(res, textStream("ok")));
    const server = await h.start({ KC_TEST_UNSET_KEY: "" });
    const { client } = server;
    await client.initialize();

    const plain = await client.request("model/list", {});
    const ids = plain.data.map((m) => m.id);
    expect(ids).to.include.members(["local/m", "local/r"]);
    // No key: not offered; the scripted test double is not in use: not offered either.
    expect(ids).to.not.include("nokey/x");
    expect(ids.some((id) => id.startsWith("scripted/"))).to.equal(false);
    expect(plain.current).to.equal("local/m");
    const r = plain.data.find((m) => m.id === "local/r");
    expect(r).to.deep.include({
      provider: "local",
      model: "r",
      displayName: "Reasoner",
      contextWindow: 64000,
      maxTokens: 4096,
      reasoning: true,
      auth: "key",
      usable: true,
      isDefault: false,
    });
    expect(r?.supportedEfforts).to.deep.equal(["off", "minimal", "low", "medium", "high", "xhigh"]);
    expect(plain.data.find((m) => m.id === "local/m")?.supportedEfforts).to.deep.equal(["off"]);
    expect(plain.data.find((m) => m.id === "local/t")?.supportedEfforts).to.deep.equal([
      "low",
      "medium",
      "high",
      "xhigh",
    ]);
    const all = await client.request("model/list", { includeUnusable: true });
    expect(all.data.find((m) => m.id === "nokey/x")).to.deep.include({
      usable: false,
      auth: "missing",
      missingKey: "KC_TEST_UNSET_KEY",
    });

    const { thread } = await client.request("thread/start", { cwd: h.project });
    expect(thread.model).to.equal("local/m");
    const settings = await client.request("thread/settings/update", {
      threadId: thread.id,
      model: "local/r",
      effort: "high",
    });
    expect(settings).to.deep.equal({ model: "local/r", effort: "high" });
    const updated = await client.waitFor("thread/settings/updated", (n) => n.threadId === thread.id);
    expect(updated).to.deep.include({ model: "local/r", effort: "high" });
    expect((await client.request("model/list", { threadId: thread.id })).current).to.equal("local/r");
    const first = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "hi" }],
    });
    await client.waitFor("turn/completed", (n) => n.turn.id === first.turn.id);
    expect(h.model.requests.at(-1)?.body.model).to.equal("r");
    expect(h.model.requests.at(-1)?.body.reasoning_effort).to.equal("high");

    // turn/start's own model applies from that turn on.
    const second = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "again" }],
      model: "m",
    });
    await client.waitFor("turn/completed", (n) => n.turn.id === second.turn.id);
    expect(h.model.requests.at(-1)?.body.model).to.equal("m");
    expect((await client.request("thread/read", { threadId: thread.id })).thread.model).to.equal("local/m");

    // Refusals name what is wrong and change nothing.
    await rpcError(
      client.request("thread/settings/update", { threadId: thread.id, model: "local/nope" }),
      "invalidParams",
      "model",
    );
    const keyless = await rpcError(
      client.request("thread/settings/update", { threadId: thread.id, model: "nokey/x" }),
      "invalidParams",
      "model",
    );
    expect(keyless.message).to.contain("KC_TEST_UNSET_KEY");
    await rpcError(
      client.request("thread/settings/update", { threadId: thread.id, effort: "high" }),
      "invalidParams",
      "effort",
    );
    // A level the model's map leaves out is refused, naming the levels it takes.
    const unoffered = await rpcError(
      client.request("thread/settings/update", { threadId: thread.id, model: "local/t", effort: "minimal" }),
      "invalidParams",
      "effort",
    );
    expect(unoffered.message).to.contain("low, medium, high, xhigh");
    expect((await client.request("thread/read", { threadId: thread.id })).thread.model).to.equal("local/m");
  });

  it("thread/start answers at once with a warning naming what to configure when the thread has no usable model", async () => {
    h = await harness(tmp.path);
    writeModels(h);
    writeFileSync(
      join(h.agentDir, "settings.json"),
      JSON.stringify({ defaultProvider: "nokey", defaultModel: "x" }),
    );
    const server = await h.start({ KC_TEST_UNSET_KEY: "" });
    await server.client.initialize();
    const keyless = await server.client.request("thread/start", { cwd: h.project });
    const warning = keyless.warnings.find((w) => w.message.includes("KC_TEST_UNSET_KEY"));
    expect(warning?.message).to.contain("nokey/x");

    // Nothing configured at all: the warning says where to add one.
    writeFileSync(join(h.agentDir, "models.json"), JSON.stringify({ providers: {} }));
    writeFileSync(join(h.agentDir, "settings.json"), JSON.stringify({}));
    const bare = await h.start({ ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" });
    await bare.client.initialize();
    const none = await bare.client.request("thread/start", { cwd: h.project });
    expect(none.thread.model).to.equal(undefined);
    const help = none.warnings.find((w) => w.message.startsWith("No usable model"));
    expect(help?.message).to.contain(join(h.agentDir, "models.json"));
    expect(help?.message).to.contain("ANTHROPIC_API_KEY");

    // The scripted test double is offered once it is the configured model, and then a thread has no warning.
    writeFileSync(
      join(h.agentDir, "settings.json"),
      JSON.stringify({ defaultProvider: "scripted", defaultModel: "scripted" }),
    );
    const scripted = await h.start({ ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" });
    await scripted.client.initialize();
    const listed = await scripted.client.request("model/list", {});
    expect(listed.data.find((m) => m.id === "scripted/scripted")).to.deep.include({
      usable: true,
      isDefault: true,
      auth: "none",
    });
    const fine = await scripted.client.request("thread/start", { cwd: h.project });
    expect(fine.thread.model).to.equal("scripted/scripted");
    expect(fine.warnings.filter((w) => /model/i.test(w.message))).to.deep.equal([]);
  });

  it("a bash call's item carries command, cwd, exit code, start time and duration, and its output deltas carry only new text", async () => {
    h = await harness(tmp.path);
    const command = "for i in 1 2 3 4; do echo line$i; sleep 0.3; done; exit 3";
    h.model.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_b", "bash", { command })),
      (_req, res) => writeSse(res, textStream("done")),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const before = Date.now();
    const { turn } = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "run" }],
    });
    await client.waitFor("turn/completed", (n) => n.turn.id === turn.id);
    const started = notifications(server, "item/started").find((n) => n.item.id === "call_b")?.item;
    expect(started).to.deep.include({
      type: "toolCall",
      name: "bash",
      command,
      cwd: h.project,
      status: "inProgress",
    });
    expect(started.startedAt).to.be.within(before, Date.now());
    const done = notifications(server, "item/completed").find((n) => n.item.id === "call_b")?.item;
    expect(done).to.deep.include({ status: "completed", exitCode: 3, command, cwd: h.project });
    expect(done.startedAt).to.equal(started.startedAt);
    expect(done.durationMs).to.be.at.least(900);

    const deltas = notifications(server, "item/toolCall/outputDelta").filter((n) => n.itemId === "call_b");
    // Several partial updates, none repeating what came before, together exactly the output.
    expect(deltas.length).to.be.at.least(2);
    expect(deltas.every((d) => d.reset === undefined)).to.equal(true);
    expect(deltas.map((d) => d.delta).join("")).to.equal("line1\nline2\nline3\nline4");
    expect(deltas.filter((d) => d.delta.includes("line1"))).to.have.length(1);

    // Read back, the item keeps the command and the exit code.
    const read = await client.request("thread/read", { threadId: thread.id, includeTurns: true });
    const back = read.turns?.at(-1)?.items.find((i) => i.id === "call_b");
    expect(back).to.deep.include({ command, exitCode: 3 });
  });

  it("write and edit report the file they changed and a diff", async () => {
    h = await harness(tmp.path);
    writeFileSync(join(h.project, "old.txt"), "one\ntwo\nthree\n");
    h.model.respondInOrder(
      (_req, res) =>
        writeSse(
          res,
          toolCallStream("call_new", "write", { path: "src/new.txt", content: "hello\nworld\n" }),
        ),
      (_req, res) =>
        writeSse(
          res,
          toolCallStream("call_over", "write", { path: "old.txt", content: "one\nTWO\nthree\n" }),
        ),
      (_req, res) =>
        writeSse(
          res,
          toolCallStream("call_edit", "edit", {
            path: "old.txt",
            edits: [{ oldText: "three", newText: "3" }],
          }),
        ),
      (_req, res) => writeSse(res, textStream("done")),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const { turn } = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "edit" }],
    });
    await client.waitFor("turn/completed", (n) => n.turn.id === turn.id);
    const item = (id: string) => notifications(server, "item/completed").find((n) => n.item.id === id)?.item;

    const created = item("call_new");
    expect(created.status).to.equal("completed");
    expect(created.changes).to.deep.equal([
      {
        path: join(h.project, "src/new.txt"),
        kind: "add",
        diff: "--- /dev/null\n+++ b/src/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world",
      },
    ]);
    expect(item("call_over").changes).to.deep.equal([
      {
        path: join(h.project, "old.txt"),
        kind: "update",
        diff: "--- a/old.txt\n+++ b/old.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three",
      },
    ]);
    const edited = item("call_edit");
    expect(edited.status, JSON.stringify(edited.result)).to.equal("completed");
    expect(edited.changes[0]).to.include({ path: join(h.project, "old.txt"), kind: "update" });
    expect(edited.changes[0].diff).to.contain("-three").and.to.contain("+3");
  });

  it("fuzzyFileSearch finds files of the thread's workspace by a fuzzy query, leaves ignored ones out, and sees new files", async () => {
    h = await harness(tmp.path);
    git(h.project, ["init", "-q", "-b", "main"]);
    const files = {
      ".gitignore": "build/\n*.log\n",
      "src/components/Button.tsx": "x",
      "src/util/button-helpers.ts": "x",
      "src/about.md": "x",
      "build/Button.js": "x",
      "debug.log": "x",
      "notes/todo.md": "x",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(h.project, path, ".."), { recursive: true });
      writeFileSync(join(h.project, path), text);
    }
    git(h.project, ["add", "src", ".gitignore"]);
    git(h.project, ["commit", "-q", "-m", "files"]);
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });

    const button = await client.request("fuzzyFileSearch", { threadId: thread.id, query: "btn" });
    const paths = button.files.map((f) => f.path);
    expect(paths[0]).to.equal("src/components/Button.tsx");
    expect(paths).to.include("src/util/button-helpers.ts");
    expect(paths).to.not.include("build/Button.js");
    const first = button.files[0]!;
    expect(first).to.deep.include({ root: h.project, file_name: "Button.tsx", match_type: "file" });
    expect(first.indices.map((i) => first.path[i]?.toLowerCase()).join("")).to.equal("btn");

    // Untracked files count, ignored ones do not.
    const todo = await client.request("fuzzyFileSearch", { threadId: thread.id, query: "todo" });
    expect(todo.files.map((f) => f.path)).to.deep.equal(["notes/todo.md"]);
    expect(
      (await client.request("fuzzyFileSearch", { threadId: thread.id, query: "debuglog" })).files,
    ).to.deep.equal([]);

    // A file made after the list was taken is found once the list is two seconds old.
    writeFileSync(join(h.project, "src/zebra.ts"), "x");
    await until("the new file in the search", async () => {
      const found = await client.request("fuzzyFileSearch", { roots: [h.project], query: "zebra" });
      return found.files.length > 0 ? found : undefined;
    });
    await rpcError(client.request("fuzzyFileSearch", { query: "x" }), "invalidParams", "roots");

    // Codex's cancellation token: a second search with the same token, sent while the first still lists a folder
    // not listed before, leaves the first with no files.
    const src = join(h.project, "src");
    const [older, newer] = await Promise.all([
      client.request("fuzzyFileSearch", { roots: [src], query: "button", cancellationToken: "mention" }),
      client.request("fuzzyFileSearch", { roots: [src], query: "button", cancellationToken: "mention" }),
    ]);
    expect(older.files).to.deep.equal([]);
    expect(newer.files.map((f) => f.path)).to.include("components/Button.tsx");
  });

  it("mcpServerStatus/list gives each MCP server's state, tool count and error, for a thread", async () => {
    h = await harness(tmp.path);
    writeFileSync(
      join(h.agentDir, "mcp.json"),
      JSON.stringify({
        mcpServers: {
          faults: { command: process.execPath, args: [faultServer] },
          broken: { command: join(tmp.path, "no-such-server") },
        },
      }),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const settled = await until("both servers settled", async () => {
      const { data } = await client.request("mcpServerStatus/list", { threadId: thread.id });
      return data.length === 2 && data.every((s) => s.state !== "connecting") ? data : undefined;
    });
    const faults = settled.find((s) => s.name === "faults");
    expect(faults).to.deep.include({ state: "connected", tools: 7, transport: "stdio" });
    expect(faults?.source).to.deep.include({ kind: "file", scope: "global" });
    const broken = settled.find((s) => s.name === "broken");
    expect(broken?.state).to.equal("failed");
    expect(broken?.error).to.be.a("string").and.not.equal("");
    await rpcError(client.request("mcpServerStatus/list", { threadId: "no-such-thread" }), "threadNotFound");
  });
});

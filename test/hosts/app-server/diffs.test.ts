/**
 * Turn files, diffs and revert over `knightcode app-server`, on a real git repository in a temp dir, with a scripted
 * model whose turns write files: `turn/diff/updated` after `turn/completed` and `Turn.files`, the `lastTurn`
 * scope with undo (live and history turn ids) and reapply, hunk ids stable across reads and refused once stale,
 * `patchFailed`, a binary file, `turnInProgress`, and `notGitRepo` outside a repository.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  DONE,
  finishChunk,
  roleChunk,
  textChunks,
  usageChunk,
} from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { git, indexBytes, read, rpcError, runTurn, startGitServer, TEN, write } from "./git-harness.js";
import { type Harness, harness, notifications } from "./harness.js";

describe("knightcode app-server: turn files, diffs and revert", function () {
  this.timeout(90_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-diffs-");

  async function start() {
    h = await harness(tmp.path);
    const { server, model } = await startGitServer(h);
    const { thread } = await server.client.request("thread/start", { cwd: h.project });
    expect(thread.workspace).to.deep.equal({ mode: "local" });
    return { server, client: server.client, model, threadId: thread.id };
  }

  it("sends turn/diff/updated after turn/completed, keeps Turn.files, and undoes and reapplies the last turn", async () => {
    const { server, client, model, threadId } = await start();
    const indexBefore = indexBytes(h.project);
    model.turn({ "a.txt": TEN.replace("two", "TWO"), "b.txt": "new file\n" });
    const { turn, diff } = await runTurn(server, threadId, "edit");
    const files = [
      { path: "a.txt", additions: 1, deletions: 1 },
      { path: "b.txt", additions: 1, deletions: 0 },
    ];
    expect(diff.files).to.deep.equal(files);
    expect(turn.files).to.deep.equal(files);
    const order = notifications(server)
      .filter((n) => n.method === "turn/completed" || n.method === "turn/diff/updated")
      .map((n) => n.method);
    expect(order).to.deep.equal(["turn/completed", "turn/diff/updated"]);
    // The snapshots went through a temporary index: the user's is byte for byte the same.
    expect(indexBytes(h.project).equals(indexBefore)).to.equal(true);

    const read1 = await client.request("thread/read", { threadId, includeTurns: true });
    const history = read1.turns?.at(-1);
    expect(history?.files).to.deep.equal(files);

    const last = await client.request("thread/diff/read", { threadId, scope: "lastTurn" });
    expect(last.turnId).to.equal(turn.id);
    expect(last.stale).to.equal(false);
    expect(last.files.map((f) => [f.path, f.status])).to.deep.equal([
      ["a.txt", "modified"],
      ["b.txt", "added"],
    ]);

    // An Undo shown on another turn never reverts this one.
    await rpcError(
      client.request("thread/diff/revert", { threadId, scope: "lastTurn", turnId: "some-other-turn" }),
      "gitConflict",
      "diffChanged",
    );
    expect(read(h.project, "a.txt")).to.contain("TWO");

    const undone = await client.request("thread/diff/revert", {
      threadId,
      scope: "lastTurn",
      turnId: turn.id,
    });
    expect(undone.paths.sort()).to.deep.equal(["a.txt", "b.txt"]);
    expect(read(h.project, "a.txt")).to.equal(TEN);
    // Reverting an added file deletes it.
    expect(existsSync(join(h.project, "b.txt"))).to.equal(false);

    // The id of the turn as read back (thread/read) names the same turn.
    await client.request("thread/diff/revert", {
      threadId,
      scope: "lastTurn",
      turnId: history?.id ?? "",
      reapply: true,
    });
    expect(read(h.project, "a.txt")).to.contain("TWO");
    expect(read(h.project, "b.txt")).to.equal("new file\n");

    // Once the files moved on, the undo is refused and touches nothing.
    write(h.project, "b.txt", "edited by the user\n");
    const moved = await rpcError(
      client.request("thread/diff/revert", { threadId, scope: "lastTurn" }),
      "gitConflict",
      "diffChanged",
    );
    expect(moved.data?.paths).to.include("b.txt");
    expect(read(h.project, "a.txt")).to.contain("TWO");
    expect((await client.request("thread/diff/read", { threadId, scope: "lastTurn" })).stale).to.equal(true);
  });

  it("keeps hunk ids stable across reads, refuses a stale one with diffChanged and a hunk that no longer applies with patchFailed", async () => {
    const { server, client, model, threadId } = await start();
    write(h.project, "a.txt", TEN.replace("one", "ONE").replace("nine", "NINE"));
    write(h.project, "logo.bin", Buffer.from([0, 1, 2, 3, 255, 0, 7]));
    const first = await client.request("thread/diff/read", { threadId });
    const second = await client.request("thread/diff/read", { threadId });
    expect(first.scope).to.equal("uncommitted");
    expect(first.root).to.equal(h.project);
    const a = first.files.find((f) => f.path === "a.txt");
    expect(a?.hunks.map((x) => x.id)).to.have.length(2);
    expect(second.files.find((f) => f.path === "a.txt")?.hunks.map((x) => x.id)).to.deep.equal(
      a?.hunks.map((x) => x.id),
    );
    const binary = first.files.find((f) => f.path === "logo.bin");
    expect(binary).to.include({ binary: true, status: "added", additions: 0, deletions: 0 });
    expect(binary?.hunks).to.deep.equal([]);

    const [top, bottom] = a?.hunks ?? [];
    await client.request("thread/diff/revert", { threadId, path: "a.txt", hunkId: top?.id ?? "" });
    expect(read(h.project, "a.txt")).to.equal(TEN.replace("nine", "NINE"));
    // The file changed, so the other hunk's id from the earlier read is stale: refused, nothing touched.
    const stale = await rpcError(
      client.request("thread/diff/revert", { threadId, path: "a.txt", hunkId: bottom?.id ?? "" }),
      "gitConflict",
      "diffChanged",
    );
    expect(stale.data?.paths).to.deep.equal(["a.txt"]);
    expect(read(h.project, "a.txt")).to.equal(TEN.replace("nine", "NINE"));
    // An id from a context-0 read matches no action.
    const zero = await client.request("thread/diff/read", { threadId, context: 0 });
    await rpcError(
      client.request("thread/diff/revert", {
        threadId,
        path: "a.txt",
        hunkId: zero.files.find((f) => f.path === "a.txt")?.hunks[0]?.id ?? "",
        context: 0,
      }),
      "gitConflict",
      "diffChanged",
    );

    // A last-turn hunk whose lines the user edited since: the id still names it, but it no longer applies.
    git(h.project, ["checkout", "-q", "--", "a.txt"]);
    model.turn({ "a.txt": TEN.replace("five", "FIVE") });
    await runTurn(server, threadId, "edit five");
    write(h.project, "a.txt", TEN.replace("five", "five, edited by the user"));
    const last = await client.request("thread/diff/read", { threadId, scope: "lastTurn" });
    const hunk = last.files[0]?.hunks[0];
    await rpcError(
      client.request("thread/diff/revert", {
        threadId,
        scope: "lastTurn",
        path: "a.txt",
        hunkId: hunk?.id ?? "",
      }),
      "gitConflict",
      "patchFailed",
    );
    expect(read(h.project, "a.txt")).to.equal(TEN.replace("five", "five, edited by the user"));
    await rpcError(client.request("thread/diff/revert", { threadId, scope: "staged" }), "invalidParams");
    await rpcError(client.request("thread/diff/read", { threadId, scope: "committed" }), "invalidParams");
  });

  it("refuses a revert while a turn runs (turnInProgress) and answers notGitRepo outside a repository", async () => {
    const { client, threadId } = await start();
    write(h.project, "a.txt", "changed\n");
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The answer starts, then waits for the test: the turn runs meanwhile.
    h.model.respond(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (events: { data: unknown }[]) => {
        for (const e of events)
          res.write(`data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`);
      };
      send([roleChunk(), ...textChunks("thinking")]);
      await held;
      send([finishChunk("stop"), usageChunk(5, 5), DONE]);
      res.end();
    });
    const { turn } = await client.request("turn/start", {
      threadId,
      input: [{ type: "text", text: "slow" }],
    });
    await client.waitFor("item/agentMessage/delta", (n) => n.turnId === turn.id);
    await rpcError(client.request("thread/diff/revert", { threadId, path: "a.txt" }), "turnInProgress");
    expect(read(h.project, "a.txt")).to.equal("changed\n");
    // Reads take no lock: they answer while the turn runs.
    expect((await client.request("thread/diff/read", { threadId })).files).to.have.length(1);
    release();
    await client.waitFor("turn/completed", (n) => n.turn.id === turn.id);

    const plain = join(tmp.path, "plain");
    mkdirSync(plain);
    const other = await client.request("thread/start", { cwd: plain });
    await rpcError(client.request("thread/diff/read", { threadId: other.thread.id }), "notGitRepo");
    await rpcError(client.request("git/status", { threadId: other.thread.id }), "notGitRepo");
  });
});

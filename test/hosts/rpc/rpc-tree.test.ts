/**
 * The session tree over RPC, against the built `knightcode --mode rpc` as a child process with a session file:
 * `navigate_tree` with a summary an extension supplies, `set_label`, and what the model receives afterwards, also
 * after the session is continued with `-c` or opened with `--session <id prefix>`.
 */

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin, runCli } from "../../helpers/cli.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

interface TreeNode {
  entry: { id: string; type: string; message?: { role: string } };
  children: TreeNode[];
  label?: string;
}

/** Supplies a summary when asked for one, and writes each request's messages to requests.jsonl. */
const SUMMARISER = `import { appendFileSync } from "node:fs";
export default (kc: any) => {
  kc.on("session_before_tree", (event: any) =>
    event.preparation.userWantsSummary
      ? { summary: { summary: "left after " + event.preparation.entriesToSummarize.length + " entries" } }
      : undefined);
  kc.on("before_provider_request", (event: any) => {
    const texts = event.payload.messages.map((m: any) =>
      m.role + ": " + (typeof m.content === "string" ? m.content : m.content.filter((c: any) => c.type === "text").map((c: any) => c.text).join("")));
    appendFileSync(process.cwd() + "/requests.jsonl", JSON.stringify(texts) + "\\n");
  });
};
`;

describe("RPC navigate_tree and set_label", () => {
  const tmp = useTempDir("kc-rpc-tree-");
  let p: RpcProcess | undefined;
  afterEach(() => p?.kill());

  it("continues from an earlier entry with a supplied branch summary, labels entries, and the model sees the new branch", async () => {
    const script = tmp.write(
      "script.json",
      JSON.stringify({ steps: [{ text: "a" }, { text: "b" }, { text: "c" }] }),
    );
    const ext = tmp.write("summariser.ts", SUMMARISER);
    writeFileSync(join(tmp.path, "requests.jsonl"), "");
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--provider", "scripted", "--script", script, "-e", ext],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    p = new RpcProcess(child);
    const settled = async (id: string, message: string) => {
      const seen = p!.records.filter((r) => r.type === "agent_settled").length;
      await p!.request(id, "prompt", { message });
      await p!.waitFor(() => p!.records.filter((r) => r.type === "agent_settled").length > seen);
    };
    await settled("1", "one");
    await settled("2", "two");
    const before = (await p.request("t", "get_tree")).data as { tree: TreeNode[]; leafId: string };
    const firstAnswer = pathOf(before.tree).find((n) => n.entry.message?.role === "assistant")!.entry.id;

    const unknown = await p.request("x", "navigate_tree", { entryId: "nope" });
    expect(unknown.success).to.equal(false);
    expect(String(unknown.error)).to.contain("No entry nope");

    const moved = await p.request("n", "navigate_tree", { entryId: firstAnswer, summarize: true });
    expect(moved.success, String(moved.error)).to.equal(true);
    const data = moved.data as { cancelled: boolean; leafId: string; summaryEntry: Record<string, unknown> };
    expect(data.cancelled).to.equal(false);
    expect(data.summaryEntry).to.include({
      type: "branch_summary",
      parentId: firstAnswer,
      fromId: firstAnswer,
      summary: "left after 2 entries",
    });
    expect(data.leafId).to.equal(data.summaryEntry.id);

    expect(
      (await p.request("l", "set_label", { entryId: firstAnswer, label: "checkpoint" })).success,
    ).to.equal(true);
    expect((await p.request("l2", "set_label", { entryId: "nope", label: "x" })).success).to.equal(false);
    const after = (await p.request("t2", "get_tree")).data as { tree: TreeNode[] };
    const labelled = find(after.tree, firstAnswer)!;
    expect(labelled.label).to.equal("checkpoint");
    expect(labelled.children.map((c) => c.entry.type).sort()).to.deep.equal(["branch_summary", "message"]);

    await settled("3", "three");
    const requests = readFileSync(join(tmp.path, "requests.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as string[]);
    const last = requests.at(-1)!;
    expect(last[0]).to.equal("user: one");
    expect(last[1]).to.equal("assistant: a");
    expect(last.join("\n")).to.contain("left after 2 entries").and.not.contain("user: two");
    expect(last.at(-1)).to.equal("user: three");
    expect(await p.end()).to.equal(0);
  });

  it("keeps a labelled move when the session is continued with -c or opened with --session <id prefix>", async () => {
    const script = tmp.write(
      "script.json",
      JSON.stringify({ steps: [{ text: "a" }, { text: "b" }, { text: "d" }, { text: "e" }] }),
    );
    const ext = tmp.write("summariser.ts", SUMMARISER);
    writeFileSync(join(tmp.path, "requests.jsonl"), "");
    const env = { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") };
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--provider", "scripted", "--script", script, "-e", ext],
      { cwd: tmp.path, env },
    );
    p = new RpcProcess(child);
    for (const [id, message] of [
      ["1", "one"],
      ["2", "two"],
    ]) {
      const seen = p.records.filter((r) => r.type === "agent_settled").length;
      await p.request(id!, "prompt", { message });
      await p.waitFor(() => p!.records.filter((r) => r.type === "agent_settled").length > seen);
    }
    const tree = (await p.request("t", "get_tree")).data as { tree: TreeNode[] };
    const firstAnswer = pathOf(tree.tree).find((n) => n.entry.message?.role === "assistant")!.entry.id;
    const sessionId = ((await p.request("s", "get_state")).data as { sessionId: string }).sessionId;
    const moved = await p.request("n", "navigate_tree", { entryId: firstAnswer, label: "back here" });
    expect(moved.success, String(moved.error)).to.equal(true);
    expect(await p.end()).to.equal(0);

    // Each later run is its own process, answering with the steps after the ones already used.
    const later = (text: string) => tmp.write(`${text}.json`, JSON.stringify({ steps: [{ text }] }));
    const continued = await runCli(
      ["-c", "-p", "--provider", "scripted", "--script", later("d"), "-e", ext, "four"],
      {
        cwd: tmp.path,
        env,
      },
    );
    expect(continued.code, continued.stderr).to.equal(0);
    expect(continued.stdout).to.equal("d\n");
    const opened = await runCli(
      [
        "--session",
        sessionId.slice(0, 8),
        "-p",
        "--provider",
        "scripted",
        "--script",
        later("e"),
        "-e",
        ext,
        "five",
      ],
      { cwd: tmp.path, env },
    );
    expect(opened.code, opened.stderr).to.equal(0);
    const requests = readFileSync(join(tmp.path, "requests.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as string[]);
    expect(requests.slice(-2)).to.deep.equal([
      ["user: one", "assistant: a", "user: four"],
      ["user: one", "assistant: a", "user: four", "assistant: d", "user: five"],
    ]);
  });

  it("stops a navigate_tree waiting for its summary when abort arrives", async () => {
    const script = tmp.write("script.json", JSON.stringify({ steps: [{ text: "a" }, { text: "b" }] }));
    // A summariser that only answers once it is aborted.
    const ext = tmp.write(
      "slow.ts",
      `export default (kc: any) => kc.on("session_before_tree", (event: any, ctx: any) => {
        ctx.ui.notify("summarising");
        return new Promise((resolve) => event.signal.addEventListener("abort", () => resolve({ summary: { summary: "late" } })));
      });`,
    );
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--no-session", "--provider", "scripted", "--script", script, "-e", ext],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    p = new RpcProcess(child);
    for (const [id, message] of [
      ["1", "one"],
      ["2", "two"],
    ]) {
      const seen = p.records.filter((r) => r.type === "agent_settled").length;
      await p.request(id!, "prompt", { message });
      await p.waitFor(() => p!.records.filter((r) => r.type === "agent_settled").length > seen);
    }
    const tree = (await p.request("t", "get_tree")).data as { tree: TreeNode[]; leafId: string };
    const firstAnswer = pathOf(tree.tree).find((n) => n.entry.message?.role === "assistant")!.entry.id;
    p.send({ id: "n", type: "navigate_tree", entryId: firstAnswer, summarize: true });
    await p.waitFor((r) => r.type === "extension_ui_request" && r.message === "summarising");
    expect((await p.request("a", "abort")).success).to.equal(true);
    const moved = await p.response("n");
    expect(moved.data).to.deep.equal({ cancelled: true, leafId: tree.leafId });
    expect(((await p.request("t2", "get_tree")).data as { leafId: string }).leafId).to.equal(tree.leafId);
    expect(await p.end()).to.equal(0);
  });
});

/** The first path root → leaf, following first children. */
function pathOf(tree: TreeNode[]): TreeNode[] {
  const path: TreeNode[] = [];
  for (let node = tree[0]; node; node = node.children[0]) path.push(node);
  return path;
}

function find(tree: TreeNode[], id: string): TreeNode | undefined {
  const stack = [...tree];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.entry.id === id) return node;
    stack.push(...node.children);
  }
  return undefined;
}

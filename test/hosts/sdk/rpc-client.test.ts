/** The typed RPC client against a real `knightcode --mode rpc` child process. */

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { RpcClient } from "../../../hosts/sdk/rpc-client.js";
import { RPC_MAX_FRAME_BYTES } from "../../../kit.js";
import { writeLinearSession } from "../../helpers/session-file.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("RpcClient", () => {
  let client: RpcClient | undefined;
  afterEach(async () => {
    await client?.kill();
    client = undefined;
  });
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-rpc-client-");

  function start(steps: unknown[], extra: string[] = []): RpcClient {
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps }));
    client = RpcClient.start({
      args: ["--provider", "scripted", "--script", script, "--no-session", ...extra],
      cwd: tmp.path,
      env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
      commandTimeoutMs: 20_000,
    });
    return client;
  }

  it("prompts, streams events, and answers the state and text commands", async () => {
    const c = start([{ text: "Hello from the child" }]);
    const types: string[] = [];
    c.onEvent((e) => types.push(e.type));
    expect(await c.promptAndWait("Hi")).to.deep.equal({ aborted: false });
    expect(types[0]).to.equal("agent_start");
    expect(types.at(-1)).to.equal("agent_settled");
    expect((await c.getLastAssistantText()).text).to.equal("Hello from the child");
    expect((await c.getState()).model?.provider).to.equal("scripted");
    expect((await c.getMessages()).messages.map((m) => m.role)).to.deep.equal(["user", "assistant"]);
    expect(await c.close()).to.equal(0);
    client = undefined;
  });

  it("reads every entry of a session larger than one get_entries response", async function () {
    this.timeout(60_000);
    const file = join(tmp.path, "big.jsonl");
    const ids = writeLinearSession(file, { cwd: tmp.path, count: 1_800, messageChars: 10_000 });
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps: [] }));
    client = RpcClient.start({
      args: ["--provider", "scripted", "--script", script, "--session", file],
      cwd: tmp.path,
      env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
      commandTimeoutMs: 30_000,
    });
    const { entries } = await client.getEntries();
    expect(entries.map((e) => e.id).slice(0, ids.length)).to.deep.equal(ids);
    const later = await client.getEntries(ids[1_000]);
    expect(later.entries.map((e) => e.id).slice(0, 799)).to.deep.equal(ids.slice(1_001));
  });

  it("exports the session to HTML and answers the path", async () => {
    const c = start([{ text: "Exported <answer>" }]);
    await c.promptAndWait("Hi");
    const { path } = await c.exportHtml("page.html");
    expect(path).to.equal(join(tmp.path, "page.html"));
    expect(readFileSync(path, "utf8")).to.contain("Exported &lt;answer&gt;");
    expect(await c.close()).to.equal(0);
    client = undefined;
  });

  it("refuses to send a command longer than the RPC frame limit, and keeps working", async () => {
    const c = start([{ text: "still here" }]);
    let error: unknown;
    await c.prompt("x".repeat(RPC_MAX_FRAME_BYTES)).catch((e: unknown) => {
      error = e;
    });
    expect((error as Error)?.message).to.match(
      /^prompt is \d+ bytes as a JSON line; RPC mode reads at most 16777216/,
    );
    expect(await c.promptAndWait("Hi")).to.deep.equal({ aborted: false });
    expect((await c.getLastAssistantText()).text).to.equal("still here");
    expect(await c.close()).to.equal(0);
    client = undefined;
  });

  it("rejects a failing command with its error message", async () => {
    const c = start([]);
    let error: unknown;
    await c.setModel("nope", "x").catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).to.contain("No model nope/x");
  });

  it("answers extension dialogs through onUiRequest", async () => {
    const ext = join(tmp.path, "ask.ts");
    writeFileSync(
      ext,
      `export default (kc: any) => kc.registerCommand("ask", { handler: async (_a: string, ctx: any) => {
        const ok = await ctx.ui.confirm("Proceed?");
        kc.setSessionName(ok ? "approved" : "refused");
      } });`,
    );
    const c = start([], ["-e", ext]);
    const asked: string[] = [];
    c.onUiRequest((request) => {
      asked.push(`${request.method}:${request.title}`);
      return { confirmed: true };
    });
    await c.prompt("/ask");
    expect(asked).to.deep.equal(["confirm:Proceed?"]);
    expect((await c.getState()).sessionName).to.equal("approved");
  });
});

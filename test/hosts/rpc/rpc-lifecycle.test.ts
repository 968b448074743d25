/**
 * The RPC process's life, against the built `knightcode --mode rpc` as a child process: the UI is bound before
 * `session_start`, `ctx.shutdown()` ends the process at the next idle point, and the process exits once its work
 * is done even when an extension left a timer and a file watcher open.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** Leaves handles open the way careless extensions do, and records its shutdown in a file. */
const LEAKY = (marker: string) => `
import { watch, writeFileSync } from "node:fs";
export default function (kc: any) {
  setInterval(() => {}, 1000);
  watch(${JSON.stringify(join(marker, ".."))}, () => {});
  kc.on("session_shutdown", async () => {
    await new Promise((r) => setTimeout(r, 200));
    writeFileSync(${JSON.stringify(marker)}, "shut down");
  });
  kc.registerCommand("quit", { description: "end the process", handler: async (_args: string, ctx: any) => ctx.shutdown() });
}
`;

describe("RPC mode's life", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-rpc-life-");
  const running: RpcProcess[] = [];
  afterEach(() => {
    for (const p of running.splice(0)) p.kill();
  });

  function start(extensions: string[], steps: unknown[] = []): RpcProcess {
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps }));
    const child = spawn(
      process.execPath,
      [
        cliBin,
        "--mode",
        "rpc",
        "--provider",
        "scripted",
        "--script",
        script,
        "--no-session",
        ...extensions.flatMap((e) => ["-e", e]),
      ],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }

  it("binds the UI before session_start: status, title, widget, notify and a dialog reach the client", async () => {
    const ext = tmp.write(
      "greeter.ts",
      `export default function (kc: any) {
        kc.on("session_start", async (_event: any, ctx: any) => {
          ctx.ui.setStatus("ui", "hasUI " + ctx.hasUI);
          ctx.ui.setTitle("greeter");
          ctx.ui.setWidget("todo", ["first", "second"]);
          ctx.ui.notify("started", "info");
          const name = await ctx.ui.input("Your name?");
          ctx.ui.notify("hello " + name, "info");
        });
      }`,
    );
    const p = start([ext]);
    const status = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "setStatus");
    expect(status).to.deep.include({ statusKey: "ui", statusText: "hasUI true" });
    const input = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "input");
    // A command sent while session_start waits is served once the session has started.
    p.send({ id: "early", type: "get_state" });
    p.send({ type: "extension_ui_response", id: input.id, value: "Ada" });
    const hello = await p.waitFor((r) => r.method === "notify" && r.message === "hello Ada");
    const state = await p.response("early");
    expect(state.success).to.equal(true);
    expect(p.records.indexOf(hello)).to.be.below(p.records.indexOf(state));
    const methods = p.records.filter((r) => r.type === "extension_ui_request").map((r) => r.method);
    expect(methods).to.deep.equal(["setStatus", "setTitle", "setWidget", "notify", "input", "notify"]);
    expect(p.records.find((r) => r.method === "setWidget")).to.deep.include({
      widgetKey: "todo",
      widgetLines: ["first", "second"],
    });
    expect(await p.end()).to.equal(0);
  });

  it("dismisses a session_start dialog when input ends before an answer", async () => {
    const ext = tmp.write(
      "asker.ts",
      `export default (kc: any) => kc.on("session_start", async (_e: any, ctx: any) => {
        const ok = await ctx.ui.confirm("Go on?");
        ctx.ui.notify("answer " + ok, "info");
      });`,
    );
    const p = start([ext]);
    await p.waitFor((r) => r.method === "confirm");
    expect(await p.end()).to.equal(0);
    expect(p.records.some((r) => r.method === "notify" && r.message === "answer false")).to.equal(true);
  });

  it("ends the process at the next idle point when an extension calls ctx.shutdown(), handles left open", async () => {
    const marker = join(tmp.path, "shutdown.txt");
    const ext = tmp.write("leaky.ts", LEAKY(marker));
    const p = start([ext], [{ text: "one answer", chunkDelayMs: 20 }]);
    await p.request("1", "prompt", { message: "hi" });
    await p.waitFor((r) => r.type === "agent_settled");
    p.send({ id: "2", type: "prompt", message: "/quit" });
    // stdin stays open: the process ends by itself, after answering the command that asked for it.
    expect(await p.exit(15_000), p.stderr).to.equal(0);
    expect((await p.response("2")).success).to.equal(true);
    expect(readFileSync(marker, "utf8")).to.equal("shut down");
  });

  it("exits when stdin ends although an extension left a timer and a file watcher open", async () => {
    const marker = join(tmp.path, "shutdown.txt");
    const ext = tmp.write("leaky.ts", LEAKY(marker));
    const p = start([ext], [{ text: "done" }]);
    await p.request("1", "prompt", { message: "hi" });
    await p.waitFor((r) => r.type === "agent_settled");
    expect(await p.end(15_000), p.stderr).to.equal(0);
    expect(existsSync(marker), "session_shutdown handlers ran before the exit").to.equal(true);
  });

  it("gives a session_shutdown handler that never settles a bounded time, then exits", async () => {
    const ext = tmp.write(
      "stuck.ts",
      `export default (kc: any) => kc.on("session_shutdown", () => new Promise(() => {}));`,
    );
    const p = start([ext]);
    await p.request("1", "get_state");
    expect(await p.end(20_000)).to.equal(0);
    expect(p.stderr).to.contain("session_shutdown handlers did not finish within 5 s");
  });
});

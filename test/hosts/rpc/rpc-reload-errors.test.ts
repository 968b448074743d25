/**
 * Extension load failures of a reload reach an RPC client as `extension_error` records (`event: "load"`), as those
 * of the start do: through the built `knightcode --mode rpc` against a local OpenAI-compatible server, with files
 * edited between reloads.
 */

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("RPC mode: load failures after a reload", function () {
  this.timeout(40_000);
  const running: RpcProcess[] = [];
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
    server.respond((_req, res) => writeSse(res, [...textStream("ok")]));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.end(5_000)));
    await server.close();
  });
  const tmp = useTempDir("kc-rpc-reload-");

  it("reports each extension that fails on reload, once per reload, and none once it loads again", async () => {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "local-key",
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    const good = "export default (pi: any) => { pi.registerCommand('hi', { handler: async () => {} }); };";
    const thrower = tmp.write("thrower.ts", good);
    const broken = tmp.write("broken.ts", good);
    const child = spawn(
      process.execPath,
      [
        cliBin,
        "--mode",
        "rpc",
        "--provider",
        "local",
        "--model",
        "m1",
        "--no-session",
        "-e",
        thrower,
        "-e",
        broken,
      ],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir } },
    );
    const p = new RpcProcess(child);
    running.push(p);
    expect((await p.request("0", "get_state")).success).to.equal(true);
    expect(p.records.filter((r) => r.type === "extension_error")).to.deep.equal([]);

    writeFileSync(thrower, "export default () => { throw new Error('no config file'); };");
    writeFileSync(broken, "export default (pi: any) => { this is not typescript");
    expect((await p.request("1", "reload")).success).to.equal(true);
    const errors = () => p.records.filter((r) => r.type === "extension_error");
    await p.waitFor(() => errors().length >= 2);
    // A file that does not load comes first (it failed before any factory ran), then the factory that threw.
    const [first, second] = errors();
    expect(first).to.deep.include({ extensionPath: broken, event: "load" });
    expect(second).to.deep.include({ extensionPath: thrower, event: "load" });
    expect(String(second!.error)).to.contain("the factory threw: no config file");
    // Said before the reload's answer, so a client that waits for it has them.
    const answer = p.records.findIndex((r) => r.type === "response" && r.id === "1");
    expect(p.records.indexOf(second!)).to.be.lessThan(answer);

    // The session goes on without them; a prompt still runs.
    await p.request("2", "prompt", { message: "still there?" });
    await p.waitFor((r) => r.type === "agent_settled");
    expect(errors()).to.have.length(2);

    writeFileSync(thrower, good);
    writeFileSync(broken, good);
    expect((await p.request("3", "reload")).success).to.equal(true);
    expect(errors()).to.have.length(2);
    const commands = (await p.request("4", "get_commands")).data as { commands: { name: string }[] };
    expect(commands.commands.filter((c) => c.name.startsWith("hi"))).to.have.length(2);
  });

  it("JSON mode writes them too, after a reload an extension command asks for", async () => {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "local-key",
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    const victim = tmp.write("victim.ts", "export default () => {};");
    const reloader = tmp.write(
      "reloader.ts",
      `import { writeFileSync } from "node:fs";
export default (pi: any) => {
  pi.registerCommand("rl", {
    handler: async (_args: string, ctx: any) => {
      writeFileSync(${JSON.stringify(victim)}, "export default () => { throw new Error('gone wrong'); };");
      await ctx.reload();
    },
  });
};`,
    );
    const run = await runCli(
      [
        "--mode",
        "json",
        "--provider",
        "local",
        "--model",
        "m1",
        "--no-session",
        "-e",
        reloader,
        "-e",
        victim,
        "/rl",
      ],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agentDir } },
    );
    expect(run.code, run.stderr).to.equal(0);
    const records = run.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const errors = records.filter((r) => r.type === "extension_error");
    expect(errors).to.have.length(1);
    expect(errors[0]).to.deep.include({ extensionPath: victim, event: "load" });
    expect(errors[0].error).to.contain("the factory threw: gone wrong");
    expect(Object.keys(errors[0]).sort()).to.deep.equal(["error", "event", "extensionPath", "type"]);
  });
});

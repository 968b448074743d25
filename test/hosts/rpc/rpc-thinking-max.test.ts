/**
 * pi's `max` thinking level, through the built `knightcode` against a local OpenAI-compatible server: accepted by
 * `--thinking`, RPC `set_thinking_level` and the `defaultThinkingLevel` setting, it becomes the model's highest level
 * (`xhigh` for a reasoning model, which the Chat Completions wire sends as `high`; `off` without reasoning), and a
 * routed virtual model that offers `max` lists it and holds it.
 */

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin } from "../../helpers/cli.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("pi's max thinking level", function () {
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
  const tmp = useTempDir("kc-rpc-max-");
  const agentDir = () => join(tmp.path, "agent");

  function start(args: string[]): RpcProcess {
    writeFileSync(
      join(tmp.write("agent/.keep", ""), "..", "models.json"),
      JSON.stringify({
        providers: {
          local: {
            api: "openai-completions",
            baseUrl: `${server.url}/v1`,
            apiKey: "local-key",
            models: [
              { id: "thinker", reasoning: true, contextWindow: 32_000, maxTokens: 1024 },
              { id: "plain", contextWindow: 32_000, maxTokens: 1024 },
            ],
          },
        },
      }),
    );
    const child = spawn(process.execPath, [cliBin, "--mode", "rpc", "--no-session", ...args], {
      cwd: tmp.path,
      env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir() },
    });
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }
  const level = async (p: RpcProcess) =>
    ((await p.request(`s${p.records.length}`, "get_state")).data as { thinkingLevel: string }).thinkingLevel;

  it("--thinking max is a reasoning model's highest level, and the request carries the wire's highest effort", async () => {
    const p = start(["--model", "local/thinker", "--thinking", "max"]);
    expect(await level(p)).to.equal("xhigh");
    await p.request("1", "prompt", { message: "think hard" });
    await p.waitFor((r) => r.type === "agent_settled");
    expect(server.requests[0]!.body.reasoning_effort).to.equal("high");

    const plain = start(["--model", "local/plain", "--thinking", "max"]);
    expect(await level(plain)).to.equal("off");
  });

  it("set_thinking_level max is taken and clamped as pi clamps it; the setting accepts it too", async () => {
    const p = start(["--model", "local/thinker"]);
    const levels = (await p.request("1", "get_available_thinking_levels")).data as { levels: string[] };
    expect(levels.levels).to.not.include("max");
    expect((await p.request("2", "set_thinking_level", { level: "max" })).success).to.equal(true);
    expect(await level(p)).to.equal("xhigh");
    const wrong = await p.request("3", "set_thinking_level", { level: "maximum" });
    expect(wrong.success).to.equal(false);

    writeFileSync(join(agentDir(), "settings.json"), JSON.stringify({ defaultThinkingLevel: "max" }));
    const fromSettings = start(["--model", "local/thinker"]);
    expect(await level(fromSettings)).to.equal("xhigh");
    expect(fromSettings.stderr).to.not.contain("defaultThinkingLevel");
  });

  it("a routed model that offers max lists it, holds it, and routes it as the real model's highest", async () => {
    const ext = tmp.write(
      "router.ts",
      `export default (pi: any) => pi.registerVirtualModel({
  provider: "router", id: "auto", name: "Auto", thinkingLevels: ["off", "high", "max"],
  route: (request: any, ctx: any) => {
    require("node:fs").appendFileSync(${JSON.stringify(join(tmp.path, "levels.txt"))}, request.thinkingLevel + "\\n");
    return { model: ctx.modelRegistry.find("local", "thinker"), thinkingLevel: request.thinkingLevel };
  },
});`,
    );
    const p = start(["-e", ext, "--model", "router/auto", "--thinking", "max"]);
    expect((await p.request("1", "get_available_thinking_levels")).data).to.deep.equal({
      levels: ["off", "high", "max"],
    });
    expect(await level(p)).to.equal("max");
    await p.request("2", "prompt", { message: "go" });
    await p.waitFor((r) => r.type === "agent_settled");
    expect(readFileSync(join(tmp.path, "levels.txt"), "utf8")).to.equal("max\n");
    expect(server.requests[0]!.body.model).to.equal("thinker");
    expect(server.requests[0]!.body.reasoning_effort).to.equal("high");
    // Moving to a real model brings max down to that model's highest.
    expect((await p.request("3", "set_model", { provider: "local", modelId: "thinker" })).success).to.equal(
      true,
    );
    expect(await level(p)).to.equal("xhigh");
  });
});

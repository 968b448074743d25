/**
 * pi 1.6's object form of `registerVirtualModel` (a router), through the built `knightcode --mode rpc` against a
 * local OpenAI-compatible server: the router picks the real model of each request with pi's reasons, its state is
 * kept on the session branch (`pi.virtual-model-state` entries) and follows a fork, its thinking levels are the
 * session's, and a route to a model without credentials fails the request with pi's message.
 */

import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { writeLocalModels } from "../../helpers/local-models.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { startTestServer, type TestServer } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = join(root, "dist", "hosts", "cli", "main.js");

const sse = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
const chunk = (model: string, delta: Record<string, unknown>, finish: string | null = null) =>
  sse({
    id: "chatcmpl-router",
    object: "chat.completion.chunk",
    created: 1741570283,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

function answerText(res: ServerResponse, model: string, text: string): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(chunk(model, { role: "assistant", content: text }) + chunk(model, {}, "stop") + sse("[DONE]"));
}

function answerWrite(res: ServerResponse, model: string, path: string): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const args = JSON.stringify({ path, content: "planned\n" });
  res.end(
    chunk(model, { role: "assistant", content: null }) +
      chunk(model, {
        tool_calls: [
          { index: 0, id: "call_w", type: "function", function: { name: "write", arguments: args } },
        ],
      }) +
      chunk(model, {}, "tool_calls") +
      sse("[DONE]"),
  );
}

/**
 * The router, written as pi's jev-router example is: planning on `local/plan` until a successful write, then
 * `local/build` for the rest of the session. Every call is logged to `log` as one JSON line.
 */
function routerSource(log: string): string {
  return `
import { appendFileSync } from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.registerVirtualModel({
    provider: "router",
    id: "auto",
    name: "Auto (router)",
    thinkingLevels: ["off", "low", "high"],
    contextWindow: 100000,
    maxTokens: 4000,
    async route(request, ctx) {
      const messages = request.messages;
      const lastUser = messages.findLastIndex((m) => m.role === "user");
      const edited = messages.slice(lastUser + 1).some((m) => m.role === "toolResult" && m.toolName === "write" && !m.isError);
      let id = request.state?.model ?? "plan";
      let state;
      if (process.env.ROUTE_TO) id = process.env.ROUTE_TO;
      else if (!request.state) state = { phase: "planning", model: "plan" };
      else if (request.state.phase === "planning" && edited) {
        id = "build";
        state = { phase: "implementation", model: "build" };
      }
      appendFileSync(${JSON.stringify(log)}, JSON.stringify({
        reason: request.reason,
        state: request.state ?? null,
        previous: request.previous ? request.previous.model.provider + "/" + request.previous.model.id : null,
        thinkingLevel: request.thinkingLevel,
        selected: ctx.model ? ctx.model.provider + "/" + ctx.model.id : null,
        to: id,
      }) + "\\n");
      const [provider, modelId] = id.includes("/") ? id.split("/") : ["local", id];
      return { model: ctx.modelRegistry.find(provider, modelId) ?? { provider, id: modelId }, thinkingLevel: request.thinkingLevel, state };
    },
  });
}
`;
}

describe("RPC mode: pi's routed virtual models (registerVirtualModel({ provider, id, route }))", function () {
  this.timeout(40_000);
  const running: RpcProcess[] = [];
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.end(5_000)));
    await server.close();
  });
  const tmp = useTempDir("kc-rpc-router-");
  const agentDir = () => join(tmp.path, "agent");
  const routes = () =>
    existsSync(join(tmp.path, "routes.jsonl"))
      ? readFileSync(join(tmp.path, "routes.jsonl"), "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line))
      : [];

  function start(extra: string[] = [], env: Record<string, string> = {}): RpcProcess {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "local-key",
      models: [
        { id: "plan", contextWindow: 64_000, maxTokens: 2048 },
        { id: "build", contextWindow: 32_000, maxTokens: 1024 },
      ],
    });
    const ext = tmp.write("router.ts", routerSource(join(tmp.path, "routes.jsonl")));
    const child = spawn(
      process.execPath,
      [bin, "--mode", "rpc", "-e", ext, "--model", "router/auto", ...extra],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir(), ...env } },
    );
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }

  const settled = (p: RpcProcess, n: number) =>
    p.waitFor(() => p.records.filter((r) => r.type === "agent_settled").length >= n, 20_000);

  it("routes each request by reason, keeps its state on the branch, and a fork before it starts afresh", async () => {
    server.respond((request, res, index) => {
      const model = request.body.model as string;
      if (index === 0) answerWrite(res, model, join(tmp.path, "a.txt"));
      else answerText(res, model, `answer ${index} from ${model}`);
    });
    const p = start();
    const state = (await p.request("s", "get_state")).data as { model: { provider: string; id: string } };
    expect(state.model).to.deep.include({ provider: "router", id: "auto" });
    expect((await p.request("l", "get_available_thinking_levels")).data).to.deep.equal({
      levels: ["off", "low", "high"],
    });
    await p.request("t", "set_thinking_level", { level: "high" });

    await p.request("1", "prompt", { message: "plan and write it" });
    await settled(p, 1);
    await p.request("2", "prompt", { message: "and more" });
    await settled(p, 2);

    // The server saw the real models: planning, then the build model after the write, and on the next prompt.
    expect(server.requests.map((r) => r.body.model)).to.deep.equal(["plan", "build", "build"]);
    expect(readFileSync(join(tmp.path, "a.txt"), "utf8")).to.equal("planned\n");
    expect(routes()).to.deep.equal([
      {
        reason: "user",
        state: null,
        previous: null,
        thinkingLevel: "high",
        selected: "router/auto",
        to: "plan",
      },
      {
        reason: "continuation",
        state: { phase: "planning", model: "plan" },
        previous: "local/plan",
        thinkingLevel: "high",
        selected: "router/auto",
        to: "build",
      },
      {
        reason: "user",
        state: { phase: "implementation", model: "build" },
        previous: "local/build",
        thinkingLevel: "high",
        selected: "router/auto",
        to: "build",
      },
    ]);
    // Answers name the real model; the session keeps the router's state as pi's custom entries.
    const answers = p.records
      .filter((r) => r.type === "message_end" && (r.message as { role: string }).role === "assistant")
      .map((r) => (r.message as { provider: string; model: string }).model);
    expect(answers).to.deep.equal(["plan", "build", "build"]);
    const entries = (
      (await p.request("e", "get_entries")).data as {
        entries: { type: string; customType?: string; data?: unknown }[];
      }
    ).entries.filter((e) => e.type === "custom" && e.customType === "pi.virtual-model-state");
    expect(entries.map((e) => e.data)).to.deep.equal([
      { provider: "router", modelId: "auto", state: { phase: "planning", model: "plan" } },
      { provider: "router", modelId: "auto", state: { phase: "implementation", model: "build" } },
    ]);
    expect(
      p.records.filter(
        (r) =>
          r.type === "entry_appended" &&
          (r.entry as { customType?: string }).customType === "pi.virtual-model-state",
      ),
    ).to.have.length(2);

    // Forking before the first prompt leaves the state behind: the router starts over on the new branch.
    const forks = (await p.request("f", "get_fork_messages")).data as { messages: { entryId: string }[] };
    expect((await p.request("g", "fork", { entryId: forks.messages[0]!.entryId })).success).to.equal(true);
    await p.request("3", "prompt", { message: "again" });
    await settled(p, 3);
    expect(routes().at(-1)).to.deep.include({ reason: "user", state: null, previous: null, to: "plan" });
    expect(server.requests.at(-1)!.body.model).to.equal("plan");
  });

  it("fails the request with pi's message when the route names a model without credentials", async () => {
    server.respond((request, res) => answerText(res, request.body.model, "never"));
    const p = start(["--no-session"], { ROUTE_TO: "nowhere/missing" });
    await p.request("1", "prompt", { message: "hi" });
    await settled(p, 1);
    const end = p.records.find(
      (r) => r.type === "message_end" && (r.message as { role: string }).role === "assistant",
    )!.message as { stopReason: string; errorMessage: string };
    expect(end.stopReason).to.equal("error");
    expect(end.errorMessage).to.contain(
      "Virtual model router/auto routed to nowhere/missing, which is not a physical model.",
    );
    expect(server.requests).to.have.length(0);
  });

  it("refuses a routed model that takes the id of a real model of its provider", async () => {
    const ext = tmp.write(
      "clash.ts",
      `export default (pi: any) => pi.registerVirtualModel({ provider: "local", id: "plan", name: "x", route: () => { throw new Error("unused"); } });`,
    );
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "local-key",
      models: [{ id: "plan", contextWindow: 64_000, maxTokens: 2048 }],
    });
    const child = spawn(process.execPath, [bin, "--mode", "rpc", "--no-session", "-e", ext], {
      cwd: tmp.path,
      env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir() },
    });
    const p = new RpcProcess(child);
    running.push(p);
    const error = await p.waitFor((r) => r.type === "extension_error");
    expect(String(error.error)).to.contain("virtual model local/plan conflicts with a physical model");
  });
});

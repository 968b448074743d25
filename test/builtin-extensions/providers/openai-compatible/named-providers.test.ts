/**
 * builtin:openai-compatible's named providers (groq, openrouter, deepseek, zai, ...): the catalogue registered with
 * each provider's key variable, requests shaped by each provider's compat (thinking format, level map, reasoning
 * sent back), a models.json entry laid over a named provider, the real CLI's --list-models, and the generator.
 *
 * Each session points a named provider at a local Chat Completions server through a models.json entry that sets
 * only `baseUrl`, which keeps the provider's catalogue, key variable and compat.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionFactory, ThinkingLevel, ToolDefinition } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import { NAMED_PROVIDERS } from "../../../../builtin-extensions/providers/openai-compatible/catalogue.generated.js";
import openaiCompatible from "../../../../builtin-extensions/providers/openai-compatible/index.js";
import {
  type AgentSessionHandle,
  createAgentSession,
  createStandardKernel,
} from "../../../../hosts/sdk/create-agent-session.js";
import type { Kernel } from "../../../../kernel/index.js";
import { runCli } from "../../../helpers/cli.js";
import { runScript } from "../../../helpers/processes.js";
import { startTestServer, type TestServer, writeSse } from "../../../helpers/sse-server.js";
import { textAnswer } from "../anthropic/wire.js";
import { textChunks as geminiChunks, writeGemini } from "../google/wire.js";
import { ResponsesWire } from "../openai/responses-wire.js";
import { chunk, DONE, finishChunk, textStream, toolCallChunks, usageChunk } from "./fixtures.js";

/**
 * Every named provider's key variable and the variables Cloudflare's base URLs name, so a test sets exactly the ones
 * it means to.
 */
const KEY_VARIABLES = [
  ...NAMED_PROVIDERS.map((p) => p.apiKey),
  "CLOUDFLARE_ACCOUNT_ID",
  "CLOUDFLARE_GATEWAY_ID",
];

const lookupTool: ToolDefinition = {
  name: "lookup",
  description: "Look a key up",
  parameters: Type.Object({ key: Type.String() }),
  execute: async (_id: string, params: { key: string }) => ({
    content: [{ type: "text", text: `value of ${params.key} is 42` }],
    details: {},
  }),
} as ToolDefinition;
const withLookup: ExtensionFactory = (kc: ExtensionAPI) => {
  kc.registerTool(lookupTool);
};

/** A tool call preceded by thinking, as DeepSeek streams it. */
const thinkingToolCall = (thinking: string, field = "reasoning_content") => [
  chunk({ role: "assistant", content: null, [field]: thinking }),
  ...toolCallChunks(0, "call_1", "lookup", { key: "alpha" }).map((event, i) =>
    i === 0 ? chunk({ tool_calls: (event.data as any).choices[0].delta.tool_calls }) : event,
  ),
  finishChunk("tool_calls"),
  usageChunk(50, 10),
  DONE,
];

describe("builtin:openai-compatible named providers", () => {
  let server: TestServer;
  let dir: string;
  let kernel: Kernel | undefined;
  const handles: AgentSessionHandle[] = [];
  const savedEnv: Record<string, string | undefined> = {};
  let warnings: string[];

  const agentDir = () => join(dir, "agent");

  beforeEach(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "kc-named-"));
    mkdirSync(agentDir(), { recursive: true });
    warnings = [];
    for (const name of KEY_VARIABLES) {
      savedEnv[name] = process.env[name];
      delete process.env[name];
    }
  });

  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    await kernel?.dispose();
    kernel = undefined;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    for (const name of KEY_VARIABLES) {
      if (savedEnv[name] === undefined) delete process.env[name];
      else process.env[name] = savedEnv[name];
    }
  });

  function writeModelsJson(providers: Record<string, Record<string, unknown>>): void {
    writeFileSync(join(agentDir(), "models.json"), JSON.stringify({ providers }, null, 2));
  }

  /** models.json points `provider` at the local server and sets nothing else. */
  function pointAtServer(provider: string, extra: Record<string, unknown> = {}): void {
    writeModelsJson({ [provider]: { baseUrl: `${server.url}/v1`, ...extra } });
  }

  async function open(
    provider: string,
    model: string,
    thinkingLevel: ThinkingLevel | "max",
    extensions: ExtensionFactory[] = [],
  ): Promise<AgentSessionHandle> {
    kernel ??= await createStandardKernel({ agentDir: agentDir(), cacheDir: false });
    const handle = await createAgentSession({
      cwd: dir,
      agentDir: agentDir(),
      kernel,
      provider,
      model,
      thinkingLevel,
      session: { inMemory: true },
      settings: { retry: { enabled: false } },
      extensions: [openaiCompatible, ...extensions],
      warn: (message) => warnings.push(message),
    });
    handles.push(handle);
    return handle;
  }

  /** The catalogue's entry for a model (the test fails clearly when a regeneration dropped it). */
  function catalogued(provider: string, id: string) {
    const entry = NAMED_PROVIDERS.find((p) => p.name === provider);
    expect(entry, `${provider} in the catalogue`).to.not.equal(undefined);
    const model = entry!.models.find((m) => m.id === id);
    expect(model, `${provider}/${id} in the catalogue`).to.not.equal(undefined);
    return { provider: entry!, model: model! };
  }

  it("deepseek: the key from DEEPSEEK_API_KEY, thinking enabled with the mapped effort, reasoning_content sent back", async () => {
    catalogued("deepseek", "deepseek-v4-flash");
    process.env.DEEPSEEK_API_KEY = "sk-deepseek-from-env";
    pointAtServer("deepseek");
    server.respondInOrder(
      (_req, res) => writeSse(res, thinkingToolCall("I should look alpha up.")),
      (_req, res) => writeSse(res, textStream("alpha is 42.")),
      (_req, res) => writeSse(res, textStream("No thinking.")),
      (_req, res) => writeSse(res, textStream("Hardest.")),
    );
    const handle = await open("deepseek", "deepseek-v4-flash", "high", [withLookup]);
    // The model's level map: minimal and medium are not offered, max is.
    expect(handle.getAvailableThinkingLevels()).to.deep.equal(["off", "low", "high", "max"]);
    await handle.prompt("What is alpha?");

    const [first, second] = server.requests;
    expect(first!.path).to.equal("/v1/chat/completions");
    expect(first!.headers.authorization).to.equal("Bearer sk-deepseek-from-env");
    expect(first!.body.model).to.equal("deepseek-v4-flash");
    expect(first!.body.thinking).to.deep.equal({ type: "enabled" });
    expect(first!.body.reasoning_effort).to.equal("high");
    // The provider's compat: max_tokens, no store, no developer role.
    expect(first!.body.max_tokens).to.equal(384000);
    expect(first!.body).to.not.have.property("max_completion_tokens");
    expect(first!.body).to.not.have.property("store");
    expect(first!.body.messages[0].role).to.equal("system");
    // The tool-call turn's thinking goes back with it.
    const assistant = second!.body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant).to.deep.include({ reasoning_content: "I should look alpha up.", content: "" });
    expect(assistant.tool_calls[0].id).to.equal("call_1");

    // off: thinking disabled, no effort; xhigh: the model's highest mapped level, `max`.
    handle.setThinkingLevel("off");
    await handle.prompt("Quick one");
    expect(server.requests[2]!.body.thinking).to.deep.equal({ type: "disabled" });
    expect(server.requests[2]!.body).to.not.have.property("reasoning_effort");
    const history = server.requests[2]!.body.messages.filter((m: { role: string }) => m.role === "assistant");
    expect(history.map((m: { reasoning_content?: string }) => m.reasoning_content)).to.deep.equal([
      "I should look alpha up.",
      "",
    ]);
    handle.setThinkingLevel("xhigh");
    await handle.prompt("Hard one");
    expect(server.requests[3]!.body.thinking).to.deep.equal({ type: "enabled" });
    expect(server.requests[3]!.body.reasoning_effort).to.equal("max");
    expect(warnings).to.deep.equal([]);
  });

  it("openrouter: reasoning {effort} by level, effort none for off, and `reasoning` deltas read as thinking", async () => {
    catalogued("openrouter", "anthropic/claude-sonnet-4.5");
    process.env.OPENROUTER_API_KEY = "sk-or-from-env";
    pointAtServer("openrouter");
    server.respondInOrder(
      (_req, res) =>
        writeSse(res, [
          chunk({ role: "assistant", content: "", reasoning: "Thinking it over. " }),
          chunk({ reasoning: "Done." }),
          chunk({ content: "Hello." }),
          finishChunk("stop"),
          usageChunk(10, 5),
          DONE,
        ]),
      (_req, res) => writeSse(res, textStream("Plain.")),
    );
    const handle = await open("openrouter", "anthropic/claude-sonnet-4.5", "medium");
    const answers: any[] = [];
    handle.subscribe((event) => {
      if (event.type === "message_end" && (event.message as { role: string }).role === "assistant")
        answers.push(structuredClone(event.message));
    });
    await handle.prompt("hi");
    const first = server.requests[0]!;
    expect(first.headers.authorization).to.equal("Bearer sk-or-from-env");
    expect(first.body.model).to.equal("anthropic/claude-sonnet-4.5");
    expect(first.body.reasoning).to.deep.equal({ effort: "medium" });
    expect(first.body).to.not.have.property("reasoning_effort");
    // Claude on OpenRouter takes the developer role (the provider's other models do not).
    expect(first.body.messages[0].role).to.equal("developer");
    expect(answers[0].content).to.deep.equal([
      { type: "thinking", thinking: "Thinking it over. Done." },
      { type: "text", text: "Hello." },
    ]);

    handle.setThinkingLevel("off");
    await handle.prompt("again");
    expect(server.requests[1]!.body.reasoning).to.deep.equal({ effort: "none" });
    // OpenRouter's thinking is not sent back (the model does not require it).
    expect(JSON.stringify(server.requests[1]!.body.messages)).to.not.contain("Thinking it over");
  });

  it("zai: thinking enabled with clear_thinking false, tool_stream with tools, thinking disabled for off", async () => {
    catalogued("zai", "glm-4.7");
    process.env.ZAI_API_KEY = "zai-from-env";
    pointAtServer("zai");
    server.respondInOrder(
      (_req, res) => writeSse(res, textStream("GLM here.")),
      (_req, res) => writeSse(res, textStream("Off.")),
    );
    const handle = await open("zai", "glm-4.7", "high", [withLookup]);
    await handle.prompt("hi");
    const first = server.requests[0]!.body;
    expect(first.thinking).to.deep.equal({ type: "enabled", clear_thinking: false });
    expect(first.tool_stream).to.equal(true);
    // GLM-4.7 takes no reasoning_effort (its compat says so); max_tokens is Z.ai's field.
    expect(first).to.not.have.property("reasoning_effort");
    expect(first.max_tokens).to.equal(131072);
    handle.setThinkingLevel("off");
    await handle.prompt("again");
    expect(server.requests[1]!.body.thinking).to.deep.equal({ type: "disabled" });
  });

  it("groq: a level the model does not offer asks for the nearest one; off sends the map's value or nothing", async () => {
    catalogued("groq", "openai/gpt-oss-120b");
    catalogued("groq", "qwen/qwen3.6-27b");
    process.env.GROQ_API_KEY = "gsk-from-env";
    pointAtServer("groq");
    server.respond((_req, res) => writeSse(res, textStream("ok")));
    const oss = await open("groq", "openai/gpt-oss-120b", "minimal");
    await oss.prompt("hi");
    expect(server.requests[0]!.body.reasoning_effort, "minimal is not offered: low").to.equal("low");
    oss.setThinkingLevel("off");
    await oss.prompt("hi");
    expect(server.requests[1]!.body, "gpt-oss cannot stop thinking").to.not.have.property("reasoning_effort");
    // The session offers and cycles through the levels the model offers only.
    expect(oss.getAvailableThinkingLevels()).to.deep.equal(["low", "medium", "high"]);
    expect([oss.cycleThinkingLevel(), oss.cycleThinkingLevel(), oss.cycleThinkingLevel()]).to.deep.equal([
      "low",
      "medium",
      "high",
    ]);
    expect(oss.cycleThinkingLevel()).to.equal("low");
    oss.setThinkingLevel("off");
    const highest = await open("groq", "openai/gpt-oss-120b", "max");
    expect(highest.getThinkingLevel(), "max: the model's highest").to.equal("high");
    const qwen = await open("groq", "qwen/qwen3.6-27b", "medium");
    await qwen.prompt("hi");
    expect(
      server.requests[2]!.body.reasoning_effort,
      "medium is not offered: high, sent as default",
    ).to.equal("default");
    qwen.setThinkingLevel("off");
    await qwen.prompt("hi");
    expect(server.requests[3]!.body.reasoning_effort).to.equal("none");
    expect(server.requests[3]!.headers.authorization).to.equal("Bearer gsk-from-env");
  });

  it("xai: the Responses API of builtin:openai at xAI's address, the key from XAI_API_KEY", async () => {
    const { provider } = catalogued("xai", "grok-4.5");
    expect(provider).to.include({ api: "openai-responses", baseUrl: "https://api.x.ai/v1" });
    process.env.XAI_API_KEY = "xai-from-env";
    pointAtServer("xai");
    const wire = new ResponsesWire("resp_xai", "grok-4.5").created().text(["Grok ", "here."]).completed();
    server.respond((_req, res) => writeSse(res, wire.events));
    const handle = await open("xai", "grok-4.5", "low");
    expect(handle.getAvailableThinkingLevels()).to.deep.equal(["low", "medium", "high"]);
    await handle.prompt("hi");
    const request = server.requests[0]!;
    expect(request.path).to.equal("/v1/responses");
    expect(request.headers.authorization).to.equal("Bearer xai-from-env");
    expect(request.body.model).to.equal("grok-4.5");
    expect(request.body.reasoning).to.deep.include({ effort: "low" });
    expect(request.body).to.not.have.property("prompt_cache_key");
  });

  it("xai: a model's level map says what the Responses API sends (off as effort none, xhigh as xhigh)", async () => {
    process.env.XAI_API_KEY = "xai-from-env";
    pointAtServer("xai");
    server.respond((_req, res) =>
      writeSse(res, new ResponsesWire("resp_xai", "grok").created().text(["ok"]).completed().events),
    );
    // grok-4.6 maps xhigh to xAI's own "xhigh" (the classic mapping would send "high").
    const top = await open("xai", "grok-4.6", "xhigh");
    expect(top.getAvailableThinkingLevels()).to.deep.equal(["low", "medium", "high", "xhigh"]);
    await top.prompt("hi");
    expect(server.requests[0]!.body.reasoning).to.deep.include({ effort: "xhigh" });
    // grok-4.3 maps off to "none": thinking off is sent, not left to the model's default.
    const off = await open("xai", "grok-4.3", "off");
    await off.prompt("hi");
    expect(server.requests[1]!.body.model).to.equal("grok-4.3");
    expect(server.requests[1]!.body.reasoning).to.deep.include({ effort: "none" });
  });

  it("a models.json model's own thinkingLevelMap sets what Chat Completions sends, as the compat's does", async () => {
    writeModelsJson({
      mine: {
        api: "openai-completions",
        baseUrl: `${server.url}/v1`,
        apiKey: "sk-mine",
        models: [
          {
            id: "t",
            reasoning: true,
            thinkingLevelMap: { minimal: null, high: "max-effort" },
            maxTokens: 100,
          },
        ],
      },
    });
    server.respond((_req, res) => writeSse(res, textStream("ok")));
    const handle = await open("mine", "t", "high");
    expect(handle.getAvailableThinkingLevels()).to.deep.equal(["off", "low", "medium", "high"]);
    await handle.prompt("hi");
    expect(server.requests[0]!.body.reasoning_effort).to.equal("max-effort");
  });

  it("a models.json entry keeps overriding: its models replace the catalogue, its compat goes over the catalogue's", async () => {
    process.env.DEEPSEEK_API_KEY = "sk-deepseek-from-env";
    writeModelsJson({
      deepseek: {
        baseUrl: `${server.url}/v1`,
        apiKey: "sk-from-models-json",
        compat: { thinkingFormat: "openai" },
        models: [{ id: "deepseek-custom", reasoning: true, contextWindow: 64000, maxTokens: 1000 }],
      },
    });
    server.respond((_req, res) => writeSse(res, textStream("custom")));
    const handle = await open("deepseek", "deepseek-custom", "high");
    expect(
      handle
        .getAvailableModels()
        .filter((m) => m.provider === "deepseek")
        .map((m) => m.id),
    ).to.deep.equal(["deepseek-custom"]);
    expect(
      handle.getAvailableThinkingLevels(),
      "a model the catalogue does not map offers every level",
    ).to.have.length(6);
    await handle.prompt("hi");
    const request = server.requests[0]!;
    expect(request.headers.authorization).to.equal("Bearer sk-from-models-json");
    expect(request.body.model).to.equal("deepseek-custom");
    // The entry's thinkingFormat wins; the provider's other compat (max_tokens, no store) stays.
    expect(request.body).to.not.have.property("thinking");
    expect(request.body.reasoning_effort).to.equal("high");
    expect(request.body.max_tokens).to.equal(1000);
    expect(request.body).to.not.have.property("store");
  });

  it("qwen-token-plan: the key from QWEN_TOKEN_PLAN_API_KEY, enable_thinking by level, the map's effort, no developer role", async () => {
    catalogued("qwen-token-plan", "deepseek-v4-flash");
    process.env.QWEN_TOKEN_PLAN_API_KEY = "sk-qwen-plan";
    pointAtServer("qwen-token-plan");
    server.respond((_req, res) => writeSse(res, textStream("Qwen here.")));
    const handle = await open("qwen-token-plan", "deepseek-v4-flash", "xhigh");
    await handle.prompt("hi");
    const first = server.requests[0]!;
    expect(first.path).to.equal("/v1/chat/completions");
    expect(first.headers.authorization).to.equal("Bearer sk-qwen-plan");
    expect(first.body.model).to.equal("deepseek-v4-flash");
    expect(first.body.enable_thinking).to.equal(true);
    // xhigh is not offered; the nearest higher level is max, which the model's map names.
    expect(first.body.reasoning_effort).to.equal("max");
    expect(first.body).to.not.have.property("thinking");
    expect(first.body).to.not.have.property("store");
    expect(first.body.messages[0].role).to.equal("system");

    const v32 = await open("qwen-token-plan", "deepseek-v3.2", "off");
    await v32.prompt("hi");
    expect(server.requests[1]!.body.enable_thinking).to.equal(false);
    v32.setThinkingLevel("high");
    await v32.prompt("again");
    // This model's compat takes no reasoning_effort: only enable_thinking says it.
    expect(server.requests[2]!.body.enable_thinking).to.equal(true);
    expect(server.requests[2]!.body).to.not.have.property("reasoning_effort");
    expect(warnings).to.deep.equal([]);
  });

  it("ant-ling: reasoning {effort} while thinking, max_tokens, no reasoning_effort; the key from ANT_LING_API_KEY", async () => {
    catalogued("ant-ling", "Ring-2.6-1T");
    process.env.ANT_LING_API_KEY = "sk-ling";
    pointAtServer("ant-ling");
    server.respond((_req, res) => writeSse(res, textStream("Ring here.")));
    const handle = await open("ant-ling", "Ring-2.6-1T", "xhigh");
    expect(handle.getAvailableThinkingLevels()).to.deep.equal(["high", "xhigh"]);
    await handle.prompt("hi");
    const body = server.requests[0]!.body;
    expect(server.requests[0]!.headers.authorization).to.equal("Bearer sk-ling");
    expect(body.reasoning).to.deep.equal({ effort: "xhigh" });
    expect(body).to.not.have.property("reasoning_effort");
    expect(body.max_tokens).to.equal(65536);
  });

  it("cloudflare-workers-ai: {CLOUDFLARE_ACCOUNT_ID} in the base URL is filled from the variable", async () => {
    catalogued("cloudflare-workers-ai", "@cf/google/gemma-4-26b-a4b-it");
    expect(NAMED_PROVIDERS.find((p) => p.name === "cloudflare-workers-ai")!.baseUrl).to.equal(
      "https://api.cloudflare.com/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1",
    );
    process.env.CLOUDFLARE_API_KEY = "cf-key";
    process.env.CLOUDFLARE_ACCOUNT_ID = "acct-123";
    writeModelsJson({
      "cloudflare-workers-ai": { baseUrl: `${server.url}/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1` },
    });
    server.respond((_req, res) => writeSse(res, textStream("Workers AI.")));
    try {
      const handle = await open("cloudflare-workers-ai", "@cf/google/gemma-4-26b-a4b-it", "low");
      await handle.prompt("hi");
      const first = server.requests[0]!;
      expect(first.path).to.equal("/client/v4/accounts/acct-123/ai/v1/chat/completions");
      expect(first.headers.authorization).to.equal("Bearer cf-key");
      expect(first.body.model).to.equal("@cf/google/gemma-4-26b-a4b-it");
      expect(first.body.reasoning_effort).to.equal("low");
      expect(first.headers["x-session-affinity"]).to.be.a("string").and.not.equal("");
    } finally {
      delete process.env.CLOUDFLARE_ACCOUNT_ID;
    }
  });

  it("cloudflare-workers-ai: without CLOUDFLARE_ACCOUNT_ID the request fails naming the variable, and nothing is sent", async () => {
    process.env.CLOUDFLARE_API_KEY = "cf-key";
    delete process.env.CLOUDFLARE_ACCOUNT_ID;
    writeModelsJson({
      "cloudflare-workers-ai": { baseUrl: `${server.url}/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1` },
    });
    server.respond((_req, res) => writeSse(res, textStream("never")));
    const handle = await open("cloudflare-workers-ai", "@cf/google/gemma-4-26b-a4b-it", "off");
    const answers: any[] = [];
    handle.subscribe((event) => {
      if (event.type === "message_end" && (event.message as { role: string }).role === "assistant")
        answers.push(event.message);
    });
    await handle.prompt("hi");
    expect(server.requests).to.have.length(0);
    expect(answers.at(-1).stopReason).to.equal("error");
    expect(answers.at(-1).errorMessage).to.contain("CLOUDFLARE_ACCOUNT_ID");
  });

  it("an extension's registration of the same name wins over the built-in one", async () => {
    process.env.GROQ_API_KEY = "gsk-from-env";
    const mine: ExtensionFactory = (kc) => {
      kc.registerProvider("groq", {
        api: "openai-completions",
        baseUrl: `${server.url}/mine/v1`,
        apiKey: "GROQ_API_KEY",
        models: [{ id: "my-groq-model", contextWindow: 8000, maxTokens: 500 }],
      });
    };
    server.respond((_req, res) => writeSse(res, textStream("mine")));
    const handle = await open("groq", "my-groq-model", "off", [mine]);
    expect(
      handle
        .getAvailableModels()
        .filter((m) => m.provider === "groq")
        .map((m) => m.id),
    ).to.deep.equal(["my-groq-model"]);
    await handle.prompt("hi");
    expect(server.requests[0]!.path).to.equal("/mine/v1/chat/completions");
  });

  describe("through the built CLI", function () {
    this.timeout(60_000);
    const blankKeys = () => Object.fromEntries(KEY_VARIABLES.map((name) => [name, ""]));
    const cliEnv = (extra: Record<string, string>) => ({
      HOME: join(dir, "home"),
      KNIGHTCODE_AGENT_DIR: agentDir(),
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
      ...blankKeys(),
      ...extra,
    });

    it("--list-models shows groq's catalogue when GROQ_API_KEY is set, and not when it is unset", async () => {
      const groq = catalogued("groq", "llama-3.3-70b-versatile").provider;
      const withKey = await runCli(["--list-models"], {
        cwd: dir,
        env: cliEnv({ GROQ_API_KEY: "gsk-list" }),
      });
      expect(withKey.code, withKey.stderr).to.equal(0);
      const rows = withKey.stdout.split("\n").filter((line) => /^groq\s/.test(line));
      expect(rows).to.have.length(groq.models.length);
      expect(withKey.stdout).to.match(
        /^groq\s+llama-3\.3-70b-versatile\s+131k\s+33k\s+no\s+no\s+\$GROQ_API_KEY$/m,
      );
      expect(withKey.stdout).to.not.match(/^openrouter\s/m);

      const without = await runCli(["--list-models"], {
        cwd: dir,
        env: cliEnv({ ANTHROPIC_API_KEY: "sk-a" }),
      });
      expect(without.code, without.stderr).to.equal(0);
      expect(without.stdout)
        .to.match(/^anthropic\s/m)
        .and.not.match(/^groq\s/m);
    });

    it("answers --provider openrouter --model anthropic/claude-sonnet-4.5 with only the key and a baseUrl", async () => {
      pointAtServer("openrouter");
      server.respond((_req, res) => writeSse(res, textStream("Hi from the router.")));
      const run = await runCli(
        ["--provider", "openrouter", "--model", "anthropic/claude-sonnet-4.5", "--no-session", "-p", "hi"],
        { cwd: dir, env: cliEnv({ OPENROUTER_API_KEY: "sk-or-cli" }) },
      );
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.contain("Hi from the router.");
      expect(server.requests[0]!.headers.authorization).to.equal("Bearer sk-or-cli");
      expect(server.requests[0]!.body.model).to.equal("anthropic/claude-sonnet-4.5");
    });

    it("has none of them when builtin:openai-compatible is disabled", async () => {
      writeFileSync(
        join(agentDir(), "settings.json"),
        JSON.stringify({ extensions: ["-builtin:openai-compatible"] }),
      );
      const run = await runCli(["--list-models"], {
        cwd: dir,
        env: cliEnv({ GROQ_API_KEY: "gsk-list", ANTHROPIC_API_KEY: "sk-a" }),
      });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout)
        .to.match(/^anthropic\s/m)
        .and.not.match(/^groq\s/m);
    });
  });

  it("the generator's --check finds the catalogue current", async function () {
    this.timeout(60_000);
    const result = await runScript("gen-provider-catalogue.ts", ["--check"]);
    expect(result.code, result.out).to.equal(0);
    expect(result.out).to.contain(
      "the named providers' catalogues and their tables in docs/providers.md are current",
    );
  });
  describe("a provider whose models use several APIs (opencode)", () => {
    /** Answers each API at its own path, in its own wire format. */
    function answerEveryApi(): void {
      server.respond((req, res) => {
        if (req.path === "/v1/messages")
          return writeSse(res, textAnswer("claude-haiku-4-5", "from messages"));
        if (req.path === "/v1/chat/completions") return writeSse(res, textStream("from completions"));
        if (req.path === "/v1/responses") {
          const wire = new ResponsesWire("resp_oc", "gpt-5-nano")
            .created()
            .text(["from responses"])
            .completed();
          return writeSse(res, wire.events);
        }
        if (req.path.startsWith("/v1/models/gemini-3-flash:streamGenerateContent"))
          return writeGemini(res, geminiChunks(["from gemini"]));
        res.writeHead(404).end();
      });
    }

    it("the catalogue: one base URL, the Messages API without /v1, the others under it", () => {
      const { provider } = catalogued("opencode", "glm-5");
      expect(provider).to.include({ apiKey: "OPENCODE_API_KEY", baseUrl: "https://opencode.ai/zen" });
      expect(provider.apiPaths).to.deep.equal({
        "openai-completions": "/v1",
        "anthropic-messages": "",
        "google-generative-ai": "/v1",
        "openai-responses": "/v1",
      });
      expect(catalogued("opencode", "claude-haiku-4-5").model.api).to.equal("anthropic-messages");
      expect(catalogued("opencode", "gpt-5-nano").model.api).to.equal("openai-responses");
      expect(catalogued("opencode", "gemini-3-flash").model.api).to.equal("google-generative-ai");
      expect(catalogued("opencode-go", "kimi-k2.6").provider.baseUrl).to.equal("https://opencode.ai/zen/go");
    });

    it("each model goes to its API's path under a models.json baseUrl, with OPENCODE_API_KEY", async () => {
      process.env.OPENCODE_API_KEY = "oc-from-env";
      // The base without /v1: the models.json baseUrl moves every API's endpoint.
      writeModelsJson({ opencode: { baseUrl: server.url } });
      answerEveryApi();
      const expected: [string, string][] = [
        ["claude-haiku-4-5", "/v1/messages"],
        ["glm-5", "/v1/chat/completions"],
        ["gpt-5-nano", "/v1/responses"],
        ["gemini-3-flash", "/v1/models/gemini-3-flash:streamGenerateContent?alt=sse"],
      ];
      for (const [index, [model, path]] of expected.entries()) {
        const handle = await open("opencode", model, "off");
        await handle.prompt("hi");
        const request = server.requests[index]!;
        expect(request.path, model).to.equal(path);
        const key =
          request.headers["x-goog-api-key"] ?? request.headers["x-api-key"] ?? request.headers.authorization;
        expect(String(key), model).to.contain("oc-from-env");
      }
      // The Messages request sends the key as x-api-key too, as pi does.
      expect(server.requests[0]!.headers["x-api-key"]).to.equal("oc-from-env");
      // The Chat Completions request carries the model's catalogue compat (max_tokens, no store).
      expect(server.requests[1]!.body).to.have.property("max_tokens");
      expect(server.requests[1]!.body).to.not.have.property("store");
    });

    it("cloudflare-ai-gateway: each API under the gateway's URL, the key only as cf-aig-authorization", async () => {
      const gateway = NAMED_PROVIDERS.find((p) => p.name === "cloudflare-ai-gateway")!;
      expect(gateway.baseUrl).to.equal(
        "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}",
      );
      expect(gateway.apiPaths).to.deep.equal({
        "anthropic-messages": "/anthropic",
        "openai-responses": "/openai",
        "openai-completions": "/compat",
      });
      const firstOf = (api: string) => gateway.models.find((m) => (m.api ?? gateway.api) === api)!.id;
      const messagesModel = firstOf("anthropic-messages");
      const completionsModel = firstOf("openai-completions");
      const responsesModel = firstOf("openai-responses");
      process.env.CLOUDFLARE_API_KEY = "cf-key";
      process.env.CLOUDFLARE_ACCOUNT_ID = "acct";
      process.env.CLOUDFLARE_GATEWAY_ID = "gw";
      writeModelsJson({
        "cloudflare-ai-gateway": { baseUrl: `${server.url}/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}` },
      });
      server.respond((req, res) => {
        if (req.path === "/acct/gw/anthropic/v1/messages")
          return writeSse(res, textAnswer(messagesModel, "m"));
        if (req.path === "/acct/gw/compat/chat/completions") return writeSse(res, textStream("c"));
        if (req.path === "/acct/gw/openai/responses") {
          const wire = new ResponsesWire("resp_cf", responsesModel).created().text(["r"]).completed();
          return writeSse(res, wire.events);
        }
        res.writeHead(404).end();
      });
      const expected: [string, string][] = [
        [messagesModel, "/acct/gw/anthropic/v1/messages"],
        [completionsModel, "/acct/gw/compat/chat/completions"],
        [responsesModel, "/acct/gw/openai/responses"],
      ];
      for (const [index, [model, path]] of expected.entries()) {
        const handle = await open("cloudflare-ai-gateway", model, "off");
        await handle.prompt("hi");
        const request = server.requests[index]!;
        expect(request.path, model).to.equal(path);
        expect(request.headers["cf-aig-authorization"], model).to.equal("Bearer cf-key");
        expect(request.headers, model).to.not.have.property("authorization");
        expect(request.headers, model).to.not.have.property("x-api-key");
      }
    });

    it("cloudflare-ai-gateway: a request without CLOUDFLARE_GATEWAY_ID fails naming it, sending nothing", async () => {
      process.env.CLOUDFLARE_API_KEY = "cf-key";
      process.env.CLOUDFLARE_ACCOUNT_ID = "acct";
      delete process.env.CLOUDFLARE_GATEWAY_ID;
      writeModelsJson({
        "cloudflare-ai-gateway": { baseUrl: `${server.url}/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}` },
      });
      server.respond((_req, res) => writeSse(res, textStream("never")));
      const handle = await open("cloudflare-ai-gateway", "gpt-4o", "off");
      const answers: { stopReason?: string; errorMessage?: string }[] = [];
      handle.subscribe((event) => {
        if (event.type === "message_end" && (event.message as { role: string }).role === "assistant")
          answers.push(event.message as never);
      });
      await handle.prompt("hi");
      expect(server.requests).to.have.length(0);
      expect(answers.at(-1)?.stopReason).to.equal("error");
      expect(answers.at(-1)?.errorMessage).to.contain("CLOUDFLARE_GATEWAY_ID");
    });

    it("is usable only with OPENCODE_API_KEY", async () => {
      const handle = await open("opencode", "glm-5", "off");
      const usable = () =>
        handle
          .getUsableModels()
          .filter((u) => u.model.provider === "opencode")
          .map((u) => u.model.id);
      expect(usable()).to.deep.equal([]);
      process.env.OPENCODE_API_KEY = "oc-key";
      expect(usable()).to.include.members(["glm-5", "claude-haiku-4-5", "gpt-5-nano", "gemini-3-flash"]);
    });
  });
});

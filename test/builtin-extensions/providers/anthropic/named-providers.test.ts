/**
 * builtin:anthropic's named providers (kimi-coding, minimax, vercel-ai-gateway, ...): each registered with its key's
 * variable and its catalogue, and its models' pi compat shaping the Messages request. A models.json entry that sets
 * only `baseUrl` points the provider at a local server speaking the Messages API and keeps the rest.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentSessionHandle,
  createAgentSession,
  createStandardKernel,
  type ExtensionAPI,
  type ThinkingLevel,
  type ToolDefinition,
} from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import anthropicProvider, {
  ANTHROPIC_NAMED_PROVIDERS,
} from "../../../../builtin-extensions/providers/anthropic/index.js";
import { startTestServer, type TestServer, writeSse } from "../../../helpers/sse-server.js";
import { messageDelta, messageStart, messageStop, textAnswer, thinkingBlock, toolUseBlock } from "./wire.js";

type Kernel = Awaited<ReturnType<typeof createStandardKernel>>;

const lookupTool = {
  name: "lookup",
  description: "Look a key up",
  parameters: Type.Object({ key: Type.String() }),
  execute: async () => ({ content: [{ type: "text", text: "42" }], details: {} }),
} as unknown as ToolDefinition;

describe("builtin:anthropic named providers", () => {
  let server: TestServer;
  let dir: string;
  const opened: { handle: AgentSessionHandle; kernel: Kernel }[] = [];
  const keys = ANTHROPIC_NAMED_PROVIDERS.map((p) => p.apiKey);

  beforeEach(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "kc-anthropic-named-"));
    for (const key of keys) delete process.env[key];
  });

  afterEach(async () => {
    for (const { handle, kernel } of opened.splice(0)) {
      await handle.dispose();
      await kernel.dispose();
    }
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    for (const key of keys) delete process.env[key];
  });

  async function open(provider: string, model: string, thinkingLevel: ThinkingLevel) {
    const agentDir = join(dir, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({ providers: { [provider]: { baseUrl: server.url } } }),
    );
    const kernel = await createStandardKernel({ agentDir, cacheDir: false });
    const handle = await createAgentSession({
      cwd: dir,
      agentDir,
      kernel,
      provider,
      model,
      thinkingLevel,
      session: { inMemory: true },
      settings: { retry: { enabled: false } },
      extensions: [
        anthropicProvider,
        (kc: ExtensionAPI) => {
          kc.registerTool(lookupTool);
        },
      ],
    });
    opened.push({ handle, kernel });
    return handle;
  }

  /** A tool call after thinking the service streamed without a signature, as Kimi's endpoint does. */
  const unsignedThinkingToolCall = (model: string) => [
    messageStart(model),
    ...thinkingBlock(0, ["Look alpha up."], ""),
    ...toolUseBlock(1, "toolu_01", "lookup", ['{"key":"alpha"}']),
    messageDelta("tool_use"),
    messageStop(),
  ];

  it("kimi-coding: the key from KIMI_API_KEY, adaptive thinking with the level's effort, unsigned thinking sent back", async () => {
    const kimi = ANTHROPIC_NAMED_PROVIDERS.find((p) => p.name === "kimi-coding");
    expect(kimi?.baseUrl).to.equal("https://api.kimi.com/coding");
    expect(kimi?.apiKey).to.equal("KIMI_API_KEY");
    process.env.KIMI_API_KEY = "sk-kimi-from-env";
    server.respondInOrder(
      (_req, res) => writeSse(res, unsignedThinkingToolCall("k3")),
      (_req, res) => writeSse(res, textAnswer("k3", "alpha is 42")),
    );
    const handle = await open("kimi-coding", "k3", "high");
    // The model's level map: off, minimal and medium are not offered; max is.
    expect(handle.getAvailableThinkingLevels()).to.deep.equal(["low", "high", "max"]);
    await handle.prompt("What is alpha?");
    const [first, second] = server.requests;
    expect(first!.path).to.equal("/v1/messages");
    // How the Anthropic SDK (1.x) sends an API key.
    expect(first!.headers.authorization).to.equal("Bearer sk-kimi-from-env");
    // pi sends these services' keys as x-api-key: it goes too.
    expect(first!.headers["x-api-key"]).to.equal("sk-kimi-from-env");
    expect(first!.body.model).to.equal("k3");
    // forceAdaptiveThinking: a non-Claude id still gets adaptive thinking with an effort, not a budget.
    expect(first!.body.thinking).to.deep.equal({ type: "adaptive", display: "summarized" });
    expect(first!.body.output_config).to.deep.equal({ effort: "high" });
    // allowEmptySignature: the unsigned thinking goes back as a thinking block with an empty signature.
    const assistant = second!.body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content[0]).to.deep.equal({
      type: "thinking",
      thinking: "Look alpha up.",
      signature: "",
    });
  });

  it("kimi-coding k3-256k (without allowEmptySignature) leaves unsigned thinking out", async () => {
    process.env.KIMI_API_KEY = "sk-kimi";
    server.respondInOrder(
      (_req, res) => writeSse(res, unsignedThinkingToolCall("k3-256k")),
      (_req, res) => writeSse(res, textAnswer("k3-256k", "done")),
    );
    const handle = await open("kimi-coding", "k3-256k", "low");
    await handle.prompt("What is alpha?");
    expect(server.requests[0]!.body.output_config).to.deep.equal({ effort: "low" });
    const assistant = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content.map((b: { type: string }) => b.type)).to.deep.equal(["tool_use"]);
  });

  it("vercel-ai-gateway: AI_GATEWAY_API_KEY, adaptive thinking off as disabled for a model pi marks so", async () => {
    const vercel = ANTHROPIC_NAMED_PROVIDERS.find((p) => p.name === "vercel-ai-gateway")!;
    const model = vercel.models.find(
      (m) =>
        m.reasoning && (m.compat?.forceAdaptiveThinking ?? vercel.compat?.forceAdaptiveThinking) === true,
    )!;
    expect(model, "a vercel model with forceAdaptiveThinking").to.not.equal(undefined);
    process.env.AI_GATEWAY_API_KEY = "vck-from-env";
    server.respond((_req, res) => writeSse(res, textAnswer(model.id, "hi")));
    const handle = await open("vercel-ai-gateway", model.id, "off");
    await handle.prompt("hi");
    const first = server.requests[0]!;
    expect(first.headers.authorization).to.equal("Bearer vck-from-env");
    expect(first.body.model).to.equal(model.id);
    expect(first.body.thinking).to.deep.equal({ type: "disabled" });
  });

  it("without its key variable a named provider's models are not usable", async () => {
    const handle = await open("minimax", "MiniMax-M2.7", "off");
    const usable = () =>
      handle
        .getUsableModels()
        .filter((u) => u.model.provider === "minimax")
        .map((u) => u.model.id);
    expect(usable()).to.deep.equal([]);
    process.env.MINIMAX_API_KEY = "mm-key";
    expect(usable()).to.include("MiniMax-M2.7");
  });
});

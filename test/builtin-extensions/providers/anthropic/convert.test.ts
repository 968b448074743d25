/** The request body the Anthropic provider builds: messages, cache markers, tool choice, thinking, model traits. */

import type { AssistantMessage, LlmMessage, ModelInfo, ProviderStreamRequest } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import {
  ANTHROPIC_API,
  buildPayload,
  claudeTraits,
  convertMessages,
} from "../../../../builtin-extensions/providers/anthropic/index.js";

const model = (id: string, extra: Partial<ModelInfo> = {}): ModelInfo => ({
  provider: "anthropic",
  api: ANTHROPIC_API,
  id,
  contextWindow: 200_000,
  maxTokens: 64_000,
  reasoning: true,
  ...extra,
});

const noHooks = {
  payload: async (p: unknown) => p,
  headers: async (h: Record<string, string>) => h,
  response: async () => {},
  streamEvent: async () => {},
};

const req = (overrides: Partial<ProviderStreamRequest> = {}): ProviderStreamRequest => ({
  model: model("claude-haiku-4-5"),
  systemPrompt: "System.",
  messages: [{ role: "user", content: "Hi", timestamp: 1 }],
  tools: [],
  hooks: noHooks,
  ...overrides,
});

const usage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

const assistant = (
  content: AssistantMessage["content"],
  from: Partial<AssistantMessage> = {},
): AssistantMessage => ({
  role: "assistant",
  content,
  api: ANTHROPIC_API,
  provider: "anthropic",
  model: "claude-haiku-4-5",
  usage,
  stopReason: "toolUse",
  timestamp: 2,
  ...from,
});

const ANTHROPIC = { provider: "anthropic", api: ANTHROPIC_API };

describe("anthropic provider: request body", () => {
  describe("messages", () => {
    it("converts user text and images to blocks, and tool results to tool_result blocks merged into one message", () => {
      const messages: LlmMessage[] = [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture?" },
            { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          ],
          timestamp: 1,
        },
        assistant([
          { type: "text", text: "Let me check two things." },
          { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.txt" } },
          { type: "toolCall", id: "toolu_2", name: "read", arguments: { path: "b.txt" } },
        ]),
        {
          role: "toolResult",
          toolCallId: "toolu_1",
          toolName: "read",
          content: [{ type: "text", text: "alpha" }],
          isError: false,
          timestamp: 3,
        },
        {
          role: "toolResult",
          toolCallId: "toolu_2",
          toolName: "read",
          content: [
            { type: "text", text: "ENOENT: b.txt" },
            { type: "image", data: "R0lGOD==", mimeType: "image/gif" },
          ],
          isError: true,
          timestamp: 4,
        },
        { role: "user", content: "Also look at c.txt", timestamp: 5 },
      ];
      expect(convertMessages(messages, ANTHROPIC)).to.deep.equal([
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me check two things." },
            { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.txt" } },
            { type: "tool_use", id: "toolu_2", name: "read", input: { path: "b.txt" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "alpha" }] },
            {
              type: "tool_result",
              tool_use_id: "toolu_2",
              content: [
                { type: "text", text: "ENOENT: b.txt" },
                { type: "image", source: { type: "base64", media_type: "image/gif", data: "R0lGOD==" } },
              ],
              is_error: true,
            },
            { type: "text", text: "Also look at c.txt" },
          ],
        },
      ]);
    });

    it("sends thinking back with its signature only to the provider that signed it; other providers keep their text", () => {
      const thinking = assistant(
        [
          { type: "thinking", thinking: "reasoning", thinkingSignature: "sig-1" },
          { type: "thinking", thinking: "", thinkingSignature: "opaque", redacted: true },
          { type: "thinking", thinking: "cut off before its signature" },
          { type: "text", text: "Answer." },
        ],
        { stopReason: "stop" },
      );
      const foreign = assistant(
        [
          { type: "thinking", thinking: "openai reasoning", thinkingSignature: "gAAAAencrypted" },
          { type: "thinking", thinking: "no signature at all" },
          { type: "text", text: "Foreign answer." },
        ],
        { provider: "openai", api: "openai-responses", model: "gpt-x", stopReason: "stop" },
      );
      const converted = convertMessages(
        [
          { role: "user", content: "q1", timestamp: 1 },
          thinking,
          { role: "user", content: "q2", timestamp: 3 },
          foreign,
        ],
        ANTHROPIC,
      );
      expect(converted[1]).to.deep.equal({
        role: "assistant",
        content: [
          { type: "thinking", thinking: "reasoning", signature: "sig-1" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "text", text: "Answer." },
        ],
      });
      expect(converted[3]).to.deep.equal({
        role: "assistant",
        content: [{ type: "text", text: "Foreign answer." }],
      });
    });

    it("drops tool calls without a result, results without a call, empty text and empty messages", () => {
      const converted = convertMessages(
        [
          { role: "user", content: "go", timestamp: 1 },
          assistant(
            [
              { type: "text", text: "Starting." },
              { type: "toolCall", id: "toolu_aborted", name: "bash", arguments: { command: "sleep 100" } },
            ],
            { stopReason: "aborted" },
          ),
          {
            role: "toolResult",
            toolCallId: "toolu_unknown",
            toolName: "bash",
            content: [{ type: "text", text: "orphan" }],
            isError: false,
            timestamp: 2,
          },
          assistant([{ type: "text", text: "   " }], { stopReason: "error" }),
          { role: "user", content: [{ type: "text", text: "" }], timestamp: 3 },
          { role: "user", content: "again", timestamp: 4 },
        ],
        ANTHROPIC,
      );
      expect(converted).to.deep.equal([
        { role: "user", content: [{ type: "text", text: "go" }] },
        { role: "assistant", content: [{ type: "text", text: "Starting." }] },
        { role: "user", content: [{ type: "text", text: "again" }] },
      ]);
    });

    it("maps tool-call ids the API would refuse, the same way in the call and its result", () => {
      const converted = convertMessages(
        [
          { role: "user", content: "go", timestamp: 1 },
          assistant([{ type: "toolCall", id: "call_abc|fc_123.x", name: "ls", arguments: {} }], {
            provider: "openai",
            api: "openai-responses",
          }),
          {
            role: "toolResult",
            toolCallId: "call_abc|fc_123.x",
            toolName: "ls",
            content: [],
            isError: false,
            timestamp: 2,
          },
        ],
        ANTHROPIC,
      );
      expect(converted[1]!.content[0]).to.deep.equal({
        type: "tool_use",
        id: "call_abc_fc_123_x",
        name: "ls",
        input: {},
      });
      expect(converted[2]!.content[0]).to.deep.equal({
        type: "tool_result",
        tool_use_id: "call_abc_fc_123_x",
      });
    });
  });

  describe("prompt caching", () => {
    it("marks the system prompt and the last block of the last user message", () => {
      const payload = buildPayload(
        req({
          messages: [
            { role: "user", content: "first", timestamp: 1 },
            assistant([{ type: "toolCall", id: "toolu_1", name: "ls", arguments: {} }]),
            {
              role: "toolResult",
              toolCallId: "toolu_1",
              toolName: "ls",
              content: [{ type: "text", text: "a b c" }],
              isError: false,
              timestamp: 3,
            },
          ],
        }),
      );
      expect(payload.system).to.deep.equal([
        { type: "text", text: "System.", cache_control: { type: "ephemeral" } },
      ]);
      expect(payload.messages[0]!.content[0]).to.not.have.property("cache_control");
      expect(payload.messages[2]!.content.at(-1)).to.deep.include({
        type: "tool_result",
        cache_control: { type: "ephemeral" },
      });
    });

    it("sends no markers with compat.cacheControl false, and no system block for an empty prompt", () => {
      const payload = buildPayload(req({ systemPrompt: "", compat: { cacheControl: false } }));
      expect(payload).to.not.have.property("system");
      expect(JSON.stringify(payload)).to.not.contain("cache_control");
    });
  });

  describe("tool choice, temperature and thinking", () => {
    const classify = {
      name: "classify",
      description: "Answer with a label.",
      parameters: Type.Object({ label: Type.Unsafe<string>({ type: "string", enum: ["safe", "risky"] }) }),
    };

    it("forces the tool, keeps temperature 0 and sends no thinking on a model that allows forcing", () => {
      const payload = buildPayload(
        req({ tools: [classify], toolChoice: { name: "classify" }, temperature: 0, thinkingLevel: "high" }),
      );
      expect(payload.tool_choice).to.deep.equal({ type: "tool", name: "classify" });
      expect(payload.temperature).to.equal(0);
      expect(payload).to.not.have.property("thinking");
      expect(payload.tools![0]!.input_schema).to.deep.include({
        properties: { label: { type: "string", enum: ["safe", "risky"] } },
      });
    });

    it("turns default thinking off to force a tool on Claude 5 models that think by default", () => {
      const payload = buildPayload(
        req({
          model: model("claude-opus-5"),
          tools: [classify],
          toolChoice: { name: "classify" },
          temperature: 0,
        }),
      );
      expect(payload.tool_choice).to.deep.equal({ type: "tool", name: "classify" });
      expect(payload.thinking).to.deep.equal({ type: "disabled" });
      expect(payload).to.not.have.property("temperature"); // Claude 5 models refuse sampling parameters
    });

    it("asks for the tool with tool_choice auto on models that refuse a forced tool", () => {
      const payload = buildPayload(
        req({
          model: model("claude-sonnet-5-5"),
          tools: [classify],
          toolChoice: { name: "classify" },
          temperature: 0,
        }),
      );
      expect(payload.tool_choice).to.deep.equal({ type: "auto" });
      expect(payload).to.not.have.property("temperature");
      expect(payload.thinking).to.deep.equal({ type: "between_tools" }); // its lowest thinking setting
    });

    it("uses the budgets per level, raising max_tokens above the budget within the model's limit", () => {
      const budgets = (["minimal", "low", "medium", "high", "xhigh"] as const).map((level) => {
        const payload = buildPayload(req({ thinkingLevel: level, maxTokens: 2048 }));
        expect(payload.max_tokens, level).to.be.greaterThan(
          (payload.thinking as { budget_tokens: number }).budget_tokens,
        );
        return (payload.thinking as { budget_tokens: number }).budget_tokens;
      });
      expect(budgets).to.deep.equal([1024, 4096, 10240, 20480, 32000]);
      const small = buildPayload(
        req({ model: model("claude-haiku-4-5", { maxTokens: 8192 }), thinkingLevel: "xhigh" }),
      );
      expect(small.max_tokens).to.equal(8192);
      expect(small.thinking).to.deep.equal({ type: "enabled", budget_tokens: 4096 });
      const tiny = buildPayload(
        req({ model: model("claude-haiku-4-5", { maxTokens: 1500 }), thinkingLevel: "high" }),
      );
      expect(tiny).to.not.have.property("thinking");
    });

    it("says thinking is off when the level is off (as pi does), none for a model that does not reason, and passes temperature", () => {
      const off = buildPayload(req({ temperature: 0.5 }));
      expect(off).to.include({ temperature: 0.5 });
      expect(off.thinking).to.deep.equal({ type: "disabled" });
      const plain = buildPayload(
        req({ model: model("claude-haiku-4-5", { reasoning: false }), thinkingLevel: "high" }),
      );
      expect(plain).to.not.have.property("thinking");
    });

    it("maps levels to efforts on adaptive models, and respects 'off' where thinking can be turned off", () => {
      const sonnet5 = buildPayload(req({ model: model("claude-sonnet-5"), thinkingLevel: "minimal" }));
      expect(sonnet5.thinking).to.deep.equal({ type: "adaptive", display: "summarized" });
      expect(sonnet5.output_config).to.deep.equal({ effort: "low" });
      expect(buildPayload(req({ model: model("claude-sonnet-5") })).thinking).to.deep.equal({
        type: "disabled",
      });
      const opus55 = buildPayload(req({ model: model("claude-opus-5-5") }));
      expect(opus55.thinking).to.deep.equal({ type: "adaptive", display: "summarized" }); // cannot be turned off
      expect(opus55).to.not.have.property("output_config");
    });
  });

  describe("model traits", () => {
    it("knows the catalogue (and dated snapshots), guesses from the version, and lets compat override", () => {
      expect(claudeTraits({ id: "claude-haiku-4-5-20251001" })).to.deep.equal({
        thinking: "budget",
        sampling: true,
        forcedToolChoice: true,
      });
      expect(claudeTraits({ id: "claude-sonnet-4-5" }).thinking).to.equal("budget");
      expect(claudeTraits({ id: "claude-opus-4-6" })).to.include({ thinking: "adaptive", sampling: true });
      expect(claudeTraits({ id: "claude-opus-4-8" })).to.include({ thinking: "adaptive", sampling: false });
      expect(claudeTraits({ id: "claude-opus-6" })).to.include({ forcedToolChoice: false });
      expect(claudeTraits({ id: "my-proxy-model" })).to.include({ thinking: "budget", sampling: true });
      // Gateways' dotted versions (GitHub Copilot's ids) read as Anthropic's spelling.
      expect(claudeTraits({ id: "claude-opus-4.7" })).to.deep.equal(claudeTraits({ id: "claude-opus-4-7" }));
      expect(claudeTraits({ id: "claude-haiku-4.5" })).to.deep.equal(
        claudeTraits({ id: "claude-haiku-4-5" }),
      );
      expect(claudeTraits({ id: "claude-fable-5.1" })).to.deep.equal(
        claudeTraits({ id: "claude-fable-5-1" }),
      );
      expect(claudeTraits({ id: "claude-sonnet-4.6" })).to.include({ thinking: "adaptive", sampling: true });
      expect(claudeTraits({ id: "claude-sonnet-5-5" }, { thinking: "budget", sampling: true })).to.include({
        thinking: "budget",
        sampling: true,
        forcedToolChoice: false,
      });
    });
  });
});

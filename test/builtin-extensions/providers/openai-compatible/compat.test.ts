/** builtin:openai-compatible: compat options (models.json), the request they shape, and the SSE reader. */
import { StreamLineTooLongError, type ThinkingLevel } from "@knightcodeai/cli/kit";
import { expect } from "chai";
import {
  BRIDGE_TEXT,
  buildPayload,
  checkCompat,
  DEFAULT_COMPAT,
  NO_TEXT_RESULT,
  resolveCompat,
  SseDecoder,
  streamOpenAICompletions,
} from "../../../../builtin-extensions/providers/openai-compatible/index.js";
import { startTestServer, type TestServer, writeSse } from "../../../helpers/sse-server.js";
import { baseRequest, collect, REASONING_MODEL, recordingHooks, textStream } from "./fixtures.js";

/** What `resolveCompat` and the provider report while `run` runs. */
async function warningsDuring(
  run: (warn: (message: string) => void) => Promise<void> | void,
): Promise<string[]> {
  const seen: string[] = [];
  await run((message) => seen.push(message));
  return seen;
}

describe("builtin:openai-compatible compat options", () => {
  it("defaults to OpenAI's behaviour", () => {
    expect(checkCompat(undefined)).to.deep.equal({ compat: { ...DEFAULT_COMPAT }, problems: [] });
    expect(DEFAULT_COMPAT).to.deep.equal({
      supportsDeveloperRole: true,
      supportsReasoningEffort: true,
      supportsUsageInStreaming: true,
      supportsStore: true,
      maxTokensField: "max_completion_tokens",
      requiresToolResultName: false,
      requiresAssistantAfterToolResult: false,
      timeoutMs: 600_000,
      thinkingFormat: "openai",
      requiresReasoningContentOnAssistantMessages: false,
      zaiToolStream: false,
      sendSessionAffinityHeaders: false,
    });
  });

  it("accepts the peer's key names, including those without effect here (strict is never sent)", () => {
    const { compat, problems } = checkCompat({
      supportsLongCacheRetention: false,
      cacheControlFormat: "anthropic",
      deferredToolsMode: "kimi",
      supportsDeveloperRole: false,
      supportsReasoningEffort: false,
      supportsUsageInStreaming: false,
      supportsStore: false,
      supportsStrictMode: false,
      maxTokensField: "max_tokens",
      requiresToolResultName: true,
      requiresAssistantAfterToolResult: true,
      timeoutMs: 1234,
      thinkingFormat: "zai",
      thinkingLevelMap: { off: null, high: "max" },
      requiresReasoningContentOnAssistantMessages: true,
      zaiToolStream: true,
      sendSessionAffinityHeaders: true,
      chatTemplateArgs: { enable_thinking: { $var: "thinking.enabled" }, preset: "fast" },
    });
    expect(problems).to.deep.equal([]);
    expect(compat).to.deep.equal({
      supportsDeveloperRole: false,
      supportsReasoningEffort: false,
      supportsUsageInStreaming: false,
      supportsStore: false,
      maxTokensField: "max_tokens",
      requiresToolResultName: true,
      requiresAssistantAfterToolResult: true,
      timeoutMs: 1234,
      thinkingFormat: "zai",
      thinkingLevelMap: { off: null, high: "max" },
      requiresReasoningContentOnAssistantMessages: true,
      zaiToolStream: true,
      sendSessionAffinityHeaders: true,
      chatTemplateArgs: { enable_thinking: { $var: "thinking.enabled" }, preset: "fast" },
    });
  });

  it("lists unknown keys and invalid values, keeping the defaults for them", () => {
    const { compat, problems } = checkCompat({
      thinkingBudget: 100,
      openRouterRouting: {},
      supportsStore: "no",
      maxTokensField: "n_predict",
      timeoutMs: -1,
      thinkingFormat: "qwen-chat-template",
      thinkingLevelMap: { low: 3, turbo: "x" },
      chatTemplateArgs: { enable_thinking: { $var: "thinking.budget" } },
    });
    expect(compat).to.deep.equal({ ...DEFAULT_COMPAT, thinkingLevelMap: {}, chatTemplateArgs: {} });
    expect(problems).to.have.length(8);
    expect(problems[0]).to.contain("unknown compat keys ignored: thinkingBudget, openRouterRouting");
    const all = problems.join("\n");
    expect(all).to.contain("compat.supportsStore").and.contain("compat.maxTokensField");
    expect(all).to.contain("compat.timeoutMs");
    expect(all)
      .to.contain('compat.thinkingFormat must be one of "openai", "openrouter"')
      .and.contain('(got "qwen-chat-template")');
    expect(all).to.contain("compat.thinkingLevelMap.low must be a string or null (got 3)");
    expect(all).to.contain('compat.thinkingLevelMap has an unknown level "turbo"');
    expect(all).to.contain("compat.chatTemplateArgs.enable_thinking must be a literal");
  });

  it("warns once per provider per process about unknown keys", async () => {
    const warnings = await warningsDuring((warn) => {
      resolveCompat("compat-test-a", { thinkingFormat: "qwen-chat-template" }, warn);
      resolveCompat("compat-test-a", { thinkingFormat: "qwen-chat-template", other: 1 }, warn);
      resolveCompat("compat-test-b", { supportsDeveloperRole: false }, warn);
      resolveCompat("compat-test-c", { mystery: true }, warn);
    });
    expect(warnings).to.have.length(2);
    expect(warnings[0]).to.contain('"compat-test-a"').and.contain("thinkingFormat");
    expect(warnings[1]).to.contain('"compat-test-c"').and.contain("mystery");
  });

  it("never fails a request over an unknown key", async () => {
    const server: TestServer = await startTestServer();
    try {
      server.respond((_req, res) => writeSse(res, textStream("fine")));
      const warnings = await warningsDuring(async (warn) => {
        const { result } = await collect(
          streamOpenAICompletions(
            baseRequest(`${server.url}/v1`, recordingHooks().hooks, {
              model: { ...REASONING_MODEL, provider: "compat-test-stream" },
              compat: { notAThing: 1, supportsDeveloperRole: false },
            }),
            { warn },
          ),
        );
        expect(result.stopReason, result.errorMessage).to.equal("stop");
      });
      expect(warnings).to.have.length(1);
      expect(server.requests[0]!.body.messages[0].role, "known keys still apply").to.equal("system");
    } finally {
      await server.close();
    }
  });

  describe("the request they shape", () => {
    const hooks = recordingHooks().hooks;
    const request = (overrides = {}) =>
      baseRequest("http://127.0.0.1:1/v1", hooks, {
        model: REASONING_MODEL,
        thinkingLevel: "low",
        ...overrides,
      });

    it("uses system instead of developer, and no reasoning_effort, when told", () => {
      const payload = buildPayload(
        request(),
        checkCompat({ supportsDeveloperRole: false, supportsReasoningEffort: false }).compat,
      );
      expect(payload.messages[0]).to.deep.equal({ role: "system", content: "You are a test assistant." });
      expect(payload).to.not.have.property("reasoning_effort");
      const defaults = buildPayload(request(), DEFAULT_COMPAT);
      expect(defaults.messages[0]!.role).to.equal("developer");
      expect(defaults.reasoning_effort).to.equal("low");
    });

    it("sends no reasoning_effort for thinking level off or a model without reasoning", () => {
      expect(buildPayload(request({ thinkingLevel: "off" }), DEFAULT_COMPAT)).to.not.have.property(
        "reasoning_effort",
      );
      expect(
        buildPayload(request({ model: { ...REASONING_MODEL, reasoning: false } }), DEFAULT_COMPAT),
      ).to.not.have.property("reasoning_effort");
      expect(buildPayload(request({ thinkingLevel: "minimal" }), DEFAULT_COMPAT).reasoning_effort).to.equal(
        "minimal",
      );
    });

    /** The thinking fields of a request at `level` with `compat`. */
    const thinking = (level: ThinkingLevel, compat: Record<string, unknown>) => {
      const payload = buildPayload(request({ thinkingLevel: level }), checkCompat(compat).compat);
      const fields: Record<string, unknown> = {};
      for (const key of ["reasoning_effort", "reasoning", "thinking", "chat_template_args"]) {
        if (key in payload) fields[key] = payload[key];
      }
      return fields;
    };

    it("asks for thinking in each thinkingFormat, on and off", () => {
      expect(thinking("high", { thinkingFormat: "openrouter" })).to.deep.equal({
        reasoning: { effort: "high" },
      });
      expect(thinking("off", { thinkingFormat: "openrouter" })).to.deep.equal({
        reasoning: { effort: "none" },
      });
      expect(thinking("low", { thinkingFormat: "deepseek" })).to.deep.equal({
        thinking: { type: "enabled" },
        reasoning_effort: "low",
      });
      expect(thinking("off", { thinkingFormat: "deepseek" })).to.deep.equal({
        thinking: { type: "disabled" },
      });
      expect(
        thinking("medium", { thinkingFormat: "deepseek", supportsReasoningEffort: false }),
      ).to.deep.equal({
        thinking: { type: "enabled" },
      });
      expect(thinking("high", { thinkingFormat: "zai" })).to.deep.equal({
        thinking: { type: "enabled", clear_thinking: false },
        reasoning_effort: "high",
      });
      expect(thinking("off", { thinkingFormat: "zai" })).to.deep.equal({ thinking: { type: "disabled" } });
      expect(thinking("high", { thinkingFormat: "together", supportsReasoningEffort: false })).to.deep.equal({
        reasoning: { enabled: true },
      });
      expect(thinking("off", { thinkingFormat: "together" })).to.deep.equal({
        reasoning: { enabled: false },
      });
      const baseten = {
        thinkingFormat: "baseten",
        chatTemplateArgs: { enable_thinking: { $var: "thinking.enabled" }, style: "brief" },
        thinkingLevelMap: { off: "none" },
      };
      expect(thinking("medium", baseten)).to.deep.equal({
        chat_template_args: { enable_thinking: true, style: "brief" },
        reasoning_effort: "medium",
      });
      expect(thinking("off", baseten)).to.deep.equal({
        chat_template_args: { enable_thinking: false, style: "brief" },
        reasoning_effort: "none",
      });
    });

    it("sends what thinkingLevelMap says: a string as the value, the nearest offered level for a null one", () => {
      const map = { off: "none", minimal: null, low: null, high: "default", max: "max" };
      expect(thinking("off", { thinkingLevelMap: map })).to.deep.equal({ reasoning_effort: "none" });
      expect(thinking("minimal", { thinkingLevelMap: map }), "the next higher offered").to.deep.equal({
        reasoning_effort: "medium",
      });
      expect(thinking("high", { thinkingLevelMap: map })).to.deep.equal({ reasoning_effort: "default" });
      expect(thinking("xhigh", { thinkingLevelMap: map }), "xhigh unmapped: max above it").to.deep.equal({
        reasoning_effort: "max",
      });
      // Without a map: xhigh is high, off sends nothing (the classic mapping).
      expect(thinking("xhigh", {})).to.deep.equal({ reasoning_effort: "high" });
      expect(thinking("off", {})).to.deep.equal({});
      // A model that cannot stop thinking (off: null) is not asked to.
      expect(
        thinking("off", { thinkingFormat: "openrouter", thinkingLevelMap: { off: null } }),
      ).to.deep.equal({});
      expect(thinking("off", { thinkingFormat: "deepseek", thinkingLevelMap: { off: null } })).to.deep.equal(
        {},
      );
      // Only the top is offered: every level asks for it.
      expect(
        thinking("low", {
          thinkingLevelMap: { minimal: null, low: null, medium: null, high: null, xhigh: "x" },
        }),
      ).to.deep.equal({ reasoning_effort: "x" });
    });

    it("sends no thinking fields to a model that does not reason", () => {
      const payload = buildPayload(
        request({ model: { ...REASONING_MODEL, reasoning: false }, thinkingLevel: "off" }),
        checkCompat({ thinkingFormat: "deepseek", requiresReasoningContentOnAssistantMessages: true }).compat,
      );
      expect(payload).to.not.have.property("thinking");
    });

    it("sends the thinking of earlier assistant messages back as reasoning_content, when told", () => {
      const assistant = (content: any[], timestamp: number) => ({
        role: "assistant" as const,
        content,
        api: "openai-completions",
        provider: "local",
        model: "m",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: {} as never },
        stopReason: "stop" as const,
        timestamp,
      });
      const messages = [
        { role: "user" as const, content: "one", timestamp: 1 },
        assistant(
          [
            { type: "thinking", thinking: "First thought." },
            { type: "thinking", thinking: "hidden", redacted: true },
            { type: "thinking", thinking: "Second thought." },
            { type: "text", text: "Answer one." },
          ],
          2,
        ),
        { role: "user" as const, content: "two", timestamp: 3 },
        assistant([{ type: "text", text: "Answer two." }], 4),
        { role: "user" as const, content: "three", timestamp: 5 },
      ];
      const sent = (compat: Record<string, unknown>, model = REASONING_MODEL) =>
        buildPayload(
          request({ messages, model, systemPrompt: "" }),
          checkCompat(compat).compat,
        ).messages.filter((m) => m.role === "assistant");
      expect(sent({ requiresReasoningContentOnAssistantMessages: true })).to.deep.equal([
        { role: "assistant", content: "Answer one.", reasoning_content: "First thought.\nSecond thought." },
        { role: "assistant", content: "Answer two.", reasoning_content: "" },
      ]);
      expect(sent({})).to.deep.equal([
        { role: "assistant", content: "Answer one." },
        { role: "assistant", content: "Answer two." },
      ]);
      expect(
        sent({ requiresReasoningContentOnAssistantMessages: true }, { ...REASONING_MODEL, reasoning: false }),
        "a model that does not reason gets none",
      ).to.deep.equal([
        { role: "assistant", content: "Answer one." },
        { role: "assistant", content: "Answer two." },
      ]);
    });

    it("sends tool_stream with tools when zaiToolStream is on", () => {
      const tools = [
        { name: "ls", description: "List", parameters: { type: "object", properties: {} } as never },
      ];
      const on = checkCompat({ zaiToolStream: true }).compat;
      expect(buildPayload(request({ tools }), on).tool_stream).to.equal(true);
      expect(buildPayload(request(), on)).to.not.have.property("tool_stream");
      expect(buildPayload(request({ tools }), DEFAULT_COMPAT)).to.not.have.property("tool_stream");
    });

    it("sends x-session-affinity with the session id when sendSessionAffinityHeaders is on", async () => {
      const server = await startTestServer();
      try {
        server.respond((_req, res) => writeSse(res, textStream("ok")));
        for (const sendSessionAffinityHeaders of [true, false]) {
          const rec = recordingHooks();
          const { result } = await collect(
            streamOpenAICompletions(
              baseRequest(`${server.url}/v1`, rec.hooks, {
                sessionId: "session-123",
                compat: { sendSessionAffinityHeaders },
              }),
            ),
          );
          expect(result.stopReason, result.errorMessage).to.equal("stop");
          const seen = rec.of("headers")[0]!.headers["x-session-affinity"];
          expect(seen, "handlers see it").to.equal(sendSessionAffinityHeaders ? "session-123" : undefined);
        }
        expect(server.requests.map((r) => r.headers["x-session-affinity"])).to.deep.equal([
          "session-123",
          undefined,
        ]);
      } finally {
        await server.close();
      }
    });

    it("names the token limit max_tokens, and leaves out stream_options and store, when told", () => {
      const payload = buildPayload(
        request({ maxTokens: 99 }),
        checkCompat({ maxTokensField: "max_tokens", supportsUsageInStreaming: false, supportsStore: false })
          .compat,
      );
      expect(payload.max_tokens).to.equal(99);
      expect(payload).to.not.have.property("max_completion_tokens");
      expect(payload).to.not.have.property("stream_options");
      expect(payload).to.not.have.property("store");
      expect(payload.stream).to.equal(true);
    });

    it("adds tool names to results and bridges a tool result and a user message, when told", () => {
      const messages = [
        { role: "user" as const, content: "go", timestamp: 1 },
        {
          role: "assistant" as const,
          content: [
            { type: "toolCall" as const, id: "c1", name: "shot", arguments: {} },
            { type: "toolCall" as const, id: "c2", name: "ls", arguments: {} },
          ],
          api: "openai-completions",
          provider: "local",
          model: "m",
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: {} as never },
          stopReason: "toolUse" as const,
          timestamp: 2,
        },
        {
          role: "toolResult" as const,
          toolCallId: "c1",
          toolName: "shot",
          content: [{ type: "image" as const, mimeType: "image/png", data: "AAAA" }],
          isError: false,
          timestamp: 3,
        },
        {
          role: "toolResult" as const,
          toolCallId: "c2",
          toolName: "ls",
          content: [{ type: "text" as const, text: "a\nb" }],
          isError: false,
          timestamp: 4,
        },
        { role: "user" as const, content: "next", timestamp: 5 },
      ];
      const payload = buildPayload(
        request({ messages, systemPrompt: "" }),
        checkCompat({ requiresToolResultName: true, requiresAssistantAfterToolResult: true }).compat,
      );
      expect(payload.messages).to.deep.equal([
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "c1", type: "function", function: { name: "shot", arguments: "{}" } },
            { id: "c2", type: "function", function: { name: "ls", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: NO_TEXT_RESULT, name: "shot" },
        { role: "tool", tool_call_id: "c2", content: "a\nb", name: "ls" },
        {
          role: "user",
          content: [
            { type: "text", text: "Images returned by the tool results above:" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          ],
        },
        { role: "assistant", content: BRIDGE_TEXT },
        { role: "user", content: "next" },
      ]);
    });
  });
});

describe("builtin:openai-compatible SSE reader", () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  it("joins data lines, skips comments, and handles CRLF and events split across reads", () => {
    const decoder = new SseDecoder();
    const messages = [
      ...decoder.push(bytes(': OPENROUTER PROCESSING\r\n\r\ndata: {"a":')).messages,
      ...decoder.push(bytes("1}\r")).messages,
      ...decoder.push(bytes("\n\r\nevent: error\ndata: line one\ndata: line two\n\n")).messages,
      ...decoder.push(bytes('error: {"code":500}\n\ndata: [DONE]')).messages,
      ...decoder.end(),
    ];
    expect(messages).to.deep.equal([
      { field: "data", data: '{"a":1}' },
      { field: "data", data: "line one\nline two", event: "error" },
      { field: "error", data: '{"code":500}' },
      { field: "data", data: "[DONE]" },
    ]);
  });

  it("drops a last event cut off mid-JSON (a dropped connection is not a malformed event)", () => {
    const decoder = new SseDecoder();
    expect(decoder.push(bytes('data: {"choices":[{"delta":{"content":"Hel')).messages).to.deep.equal([]);
    expect(decoder.end()).to.deep.equal([]);
  });

  it("decodes multi-byte characters split between reads", () => {
    const decoder = new SseDecoder();
    const encoded = bytes('data: {"t":"héllo ✓"}\n\n');
    const cut = encoded.indexOf(0xc3) + 1;
    const messages = [
      ...decoder.push(encoded.slice(0, cut)).messages,
      ...decoder.push(encoded.slice(cut)).messages,
      ...decoder.end(),
    ];
    expect(messages).to.deep.equal([{ field: "data", data: '{"t":"héllo ✓"}' }]);
  });

  it("tells data from keep-alive comments and blank lines, a partial data line included", () => {
    const decoder = new SseDecoder();
    expect(decoder.push(bytes(": ping\n\n: ping\r\n\r\n"))).to.deep.equal({ messages: [], data: false });
    expect(decoder.push(bytes(": keep-al")).data, "a partial comment").to.equal(false);
    expect(decoder.push(bytes('ive\n\ndata: {"a"')).data, "a partial data line").to.equal(true);
    expect(decoder.push(bytes(":1}\n\n"))).to.deep.equal({
      messages: [{ field: "data", data: '{"a":1}' }],
      data: true,
    });
  });

  it("refuses an event longer than its cap with StreamLineTooLongError", () => {
    const decoder = new SseDecoder(64);
    expect(decoder.push(bytes(`data: ${"x".repeat(50)}\n\n`)).messages).to.have.length(1);
    decoder.push(bytes(`data: ${"y".repeat(40)}`));
    expect(() => decoder.push(bytes("y".repeat(40)))).to.throw(
      StreamLineTooLongError,
      /longer than 64 bytes/,
    );
    // Several lines of one event count together.
    const lines = new SseDecoder(64);
    lines.push(bytes(`data: ${"a".repeat(30)}\n`));
    expect(() => lines.push(bytes(`data: ${"b".repeat(30)}\n`))).to.throw(StreamLineTooLongError);
  });
});

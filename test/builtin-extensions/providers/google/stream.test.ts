/**
 * The Gemini provider against a local server speaking the Gemini API's SSE format: what is sent (URL, key header,
 * contents, tools, generationConfig) and what the streamed chunks become (text, thinking with signatures, tool
 * calls, usage and cost, errors, abort).
 */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageStream,
  LlmMessage,
  ModelInfo,
  ProviderHooks,
  ProviderStreamRequest,
} from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import {
  GOOGLE_MODELS,
  streamGoogle,
  streamUrl,
} from "../../../../builtin-extensions/providers/google/index.js";
import { startTestServer, type TestServer } from "../../../helpers/sse-server.js";
import { API_KEY_INVALID, chunk, retryInfo, textChunks, writeGemini, writeGoogleError } from "./wire.js";

const hooks: ProviderHooks = {
  payload: async (payload) => payload,
  headers: async (headers) => headers,
  response: async () => {},
  streamEvent: async () => {},
};

function modelInfo(id: string): ModelInfo {
  const entry = GOOGLE_MODELS.find((m) => m.id === id);
  return {
    provider: "google",
    api: "google-generative-ai",
    id,
    contextWindow: entry?.contextWindow ?? 1_048_576,
    maxTokens: entry?.maxTokens ?? 65_536,
    reasoning: entry?.reasoning ?? true,
    ...(entry?.cost
      ? {
          cost: {
            input: entry.cost.input,
            output: entry.cost.output,
            cacheRead: entry.cost.cacheRead ?? 0,
            cacheWrite: entry.cost.cacheWrite ?? 0,
          },
        }
      : {}),
  };
}

async function collect(stream: AssistantMessageStream, ms = 5000) {
  const events: AssistantMessageEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream did not end within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([
      (async () => {
        for await (const event of stream) events.push(event);
      })(),
      timeout,
    ]);
    const result = await Promise.race([stream.result(), timeout]);
    return { events, result, types: events.map((e) => e.type) };
  } finally {
    clearTimeout(timer);
  }
}

describe("google provider: the Gemini API wire", () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  function stream(overrides: Partial<ProviderStreamRequest> = {}, model = "gemini-2.5-flash") {
    return streamGoogle({
      model: modelInfo(model),
      systemPrompt: "You are tested.",
      messages: [{ role: "user", content: "Hello", timestamp: 1 }],
      tools: [],
      apiKey: "gm-test-key",
      baseUrl: server.url,
      hooks,
      ...overrides,
    });
  }

  it("streams text from streamGenerateContent?alt=sse, the key in x-goog-api-key", async () => {
    server.respond((_req, res) => writeGemini(res, textChunks(["Hel", "lo ", "there."])));
    const { result, events, types } = await collect(stream({ thinkingLevel: "off" }));
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    expect(result.content).to.deep.equal([{ type: "text", text: "Hello there." }]);
    expect(
      events.filter((e) => e.type === "text_delta").map((e) => (e as { delta: string }).delta),
    ).to.deep.equal(["Hel", "lo ", "there."]);
    expect(types[0]).to.equal("start");
    expect(types.at(-1)).to.equal("done");
    const sent = server.requests[0]!;
    expect(sent.method).to.equal("POST");
    expect(sent.path).to.equal("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(sent.headers["x-goog-api-key"]).to.equal("gm-test-key");
    expect(sent.headers.authorization).to.equal(undefined);
    expect(sent.body).to.deep.equal({
      contents: [{ role: "user", parts: [{ text: "Hello" }] }],
      systemInstruction: { parts: [{ text: "You are tested." }] },
      generationConfig: { maxOutputTokens: 65_536, thinkingConfig: { thinkingBudget: 0 } },
    });
  });

  it("sends what before_provider_request and before_provider_headers handlers make of the payload and headers", async () => {
    server.respond((_req, res) => writeGemini(res, textChunks(["ok"])));
    const { result } = await collect(
      stream({
        headers: { "x-configured": "yes" },
        hooks: {
          ...hooks,
          payload: async (payload) => ({
            ...(payload as object),
            safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
          }),
          headers: async (headers) => ({ ...headers, "x-goog-user-project": "from-hook" }),
        },
      }),
    );
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    const sent = server.requests[0]!;
    expect(sent.body.safetySettings).to.deep.equal([
      { category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" },
    ]);
    expect(sent.body).not.to.have.property("stream");
    expect(sent.headers).to.include({ "x-configured": "yes", "x-goog-user-project": "from-hook" });
  });

  it("takes a base with its version (pi's .../v1beta) as it is", () => {
    expect(streamUrl("https://generativelanguage.googleapis.com/v1beta/", "gemini-2.5-pro")).to.equal(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    );
    expect(streamUrl(undefined, "models/gemini-2.5-pro")).to.equal(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    );
    expect(streamUrl("http://127.0.0.1:9/proxy/v1", "x")).to.equal(
      "http://127.0.0.1:9/proxy/v1/models/x:streamGenerateContent?alt=sse",
    );
  });

  it("reads thought parts as thinking, keeps their signatures and sends them back with the next request", async () => {
    server.respond((_req, res) =>
      writeGemini(res, [
        chunk([{ text: "**Planning**\nLet me ", thought: true }]),
        chunk([{ text: "think.", thought: true }]),
        chunk([{ text: "The answer", thoughtSignature: "c2lnLXRleHQ=" }]),
        chunk([{ text: " is 4." }], {
          finishReason: "STOP",
          usage: { prompt: 12, candidates: 4, thoughts: 30 },
        }),
      ]),
    );
    const first = await collect(stream({ thinkingLevel: "medium" }));
    expect(first.result.stopReason, first.result.errorMessage).to.equal("stop");
    expect(first.result.content).to.deep.equal([
      { type: "thinking", thinking: "**Planning**\nLet me think." },
      { type: "text", text: "The answer is 4.", textSignature: "c2lnLXRleHQ=" },
    ]);
    expect(server.requests[0]!.body.generationConfig).to.deep.equal({
      maxOutputTokens: 65_536,
      thinkingConfig: { thinkingBudget: 8192, includeThoughts: true },
    });

    // A thinking block with its own signature (as Gemini 3 sends it), from the same model, goes back as it came.
    const signed: AssistantMessage = {
      ...first.result,
      content: [
        { type: "thinking", thinking: "Let me think.", thinkingSignature: "c2lnLXRoaW5r" },
        ...first.result.content.slice(1),
      ],
    };
    const foreign: AssistantMessage = { ...signed, model: "gemini-2.5-pro" };
    server.respond((_req, res) => writeGemini(res, textChunks(["ok"])));
    const messages: LlmMessage[] = [
      { role: "user", content: "What is 2+2?", timestamp: 1 },
      signed,
      { role: "user", content: "And from another model?", timestamp: 2 },
      foreign,
      { role: "user", content: "Thanks", timestamp: 3 },
    ];
    const second = await collect(stream({ messages, thinkingLevel: "medium" }));
    expect(second.result.stopReason, second.result.errorMessage).to.equal("stop");
    expect(server.requests[1]!.body.contents).to.deep.equal([
      { role: "user", parts: [{ text: "What is 2+2?" }] },
      {
        role: "model",
        parts: [
          { thought: true, text: "Let me think.", thoughtSignature: "c2lnLXRoaW5r" },
          { text: "The answer is 4.", thoughtSignature: "c2lnLXRleHQ=" },
        ],
      },
      { role: "user", parts: [{ text: "And from another model?" }] },
      // Another model's thinking and signatures are not sent; its text is.
      { role: "model", parts: [{ text: "The answer is 4." }] },
      { role: "user", parts: [{ text: "Thanks" }] },
    ]);
  });

  it("turns a functionCall into a tool call with Gemini's id and signature, and answers it with a functionResponse", async () => {
    const model = "gemini-3-flash-preview";
    server.respond((_req, res) =>
      writeGemini(res, [
        chunk([{ text: "Reading it." }]),
        chunk(
          [
            {
              functionCall: { id: "fc_7h2k", name: "read", args: { path: "src/a.ts", limit: 20 } },
              thoughtSignature: "Y2FsbC1zaWc=",
            },
            { functionCall: { id: "fc_9x1m", name: "grep", args: { pattern: "TODO" } } },
          ],
          { finishReason: "STOP", usage: { prompt: 40, candidates: 12 } },
        ),
      ]),
    );
    const tools = [
      {
        name: "read",
        description: "Read a file",
        parameters: Type.Object({ path: Type.String(), limit: Type.Optional(Type.Number()) }),
      },
      { name: "grep", description: "Search", parameters: Type.Object({ pattern: Type.String() }) },
    ];
    const first = await collect(stream({ tools, thinkingLevel: "low" }, model));
    expect(first.result.stopReason, first.result.errorMessage).to.equal("toolUse");
    expect(first.result.content).to.deep.equal([
      { type: "text", text: "Reading it." },
      {
        type: "toolCall",
        id: "fc_7h2k",
        name: "read",
        arguments: { path: "src/a.ts", limit: 20 },
        thoughtSignature: "Y2FsbC1zaWc=",
      },
      { type: "toolCall", id: "fc_9x1m", name: "grep", arguments: { pattern: "TODO" } },
    ]);
    const ends = first.events.filter((e) => e.type === "toolcall_end") as { toolCall: { id: string } }[];
    expect(ends.map((e) => e.toolCall.id)).to.deep.equal(["fc_7h2k", "fc_9x1m"]);
    expect(server.requests[0]!.body.generationConfig.thinkingConfig).to.deep.equal({
      thinkingLevel: "LOW",
      includeThoughts: true,
    });
    expect(server.requests[0]!.body.tools).to.deep.equal([
      {
        functionDeclarations: [
          {
            name: "read",
            description: "Read a file",
            parameters: {
              type: "object",
              properties: { path: { type: "string" }, limit: { type: "number" } },
              required: ["path"],
            },
          },
          {
            name: "grep",
            description: "Search",
            parameters: {
              type: "object",
              properties: { pattern: { type: "string" } },
              required: ["pattern"],
            },
          },
        ],
      },
    ]);

    server.respond((_req, res) => writeGemini(res, textChunks(["Found one TODO."])));
    const messages: LlmMessage[] = [
      { role: "user", content: "Look", timestamp: 1 },
      first.result,
      {
        role: "toolResult",
        toolCallId: "fc_7h2k",
        toolName: "read",
        content: [{ type: "text", text: "line 1" }],
        isError: false,
        timestamp: 2,
      },
      {
        role: "toolResult",
        toolCallId: "fc_9x1m",
        toolName: "grep",
        content: [{ type: "text", text: "no such file" }],
        isError: true,
        timestamp: 3,
      },
    ];
    const second = await collect(stream({ messages, tools, thinkingLevel: "low" }, model));
    expect(second.result.stopReason, second.result.errorMessage).to.equal("stop");
    expect(server.requests[1]!.body.contents).to.deep.equal([
      { role: "user", parts: [{ text: "Look" }] },
      {
        role: "model",
        parts: [
          { text: "Reading it." },
          {
            functionCall: { name: "read", args: { path: "src/a.ts", limit: 20 }, id: "fc_7h2k" },
            thoughtSignature: "Y2FsbC1zaWc=",
          },
          { functionCall: { name: "grep", args: { pattern: "TODO" }, id: "fc_9x1m" } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "read", response: { output: "line 1" }, id: "fc_7h2k" } },
          { functionResponse: { name: "grep", response: { error: "no such file" }, id: "fc_9x1m" } },
        ],
      },
    ]);
  });

  it("makes an id for a call Gemini 2.5 sends without one, and matches by name and order on the way back", async () => {
    server.respond((_req, res) =>
      writeGemini(res, [
        chunk([{ functionCall: { name: "read", args: { path: "a" } } }], { finishReason: "STOP" }),
      ]),
    );
    const first = await collect(stream({ tools: [] }));
    const call = first.result.content[0] as { type: string; id: string };
    expect(call.type).to.equal("toolCall");
    expect(call.id).to.match(/^call_[0-9a-f]{16}$/);
    expect(first.result.stopReason).to.equal("toolUse");

    server.respond((_req, res) => writeGemini(res, textChunks(["done"])));
    await collect(
      stream({
        messages: [
          { role: "user", content: "Go", timestamp: 1 },
          first.result,
          // An aborted turn's call without a result is left out; Gemini wants every call answered.
          {
            ...first.result,
            content: [{ type: "toolCall", id: "orphan", name: "read", arguments: { path: "b" } }],
          },
          {
            role: "toolResult",
            toolCallId: call.id,
            toolName: "read",
            content: [{ type: "text", text: "A" }],
            isError: false,
            timestamp: 2,
          },
        ],
      }),
    );
    expect(server.requests[1]!.body.contents).to.deep.equal([
      { role: "user", parts: [{ text: "Go" }] },
      { role: "model", parts: [{ functionCall: { name: "read", args: { path: "a" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "read", response: { output: "A" } } }] },
    ]);
  });

  it("sends images as inlineData, in user messages and after the functionResponses of tool results", async () => {
    server.respond((_req, res) => writeGemini(res, textChunks(["A red dot."])));
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    await collect(
      stream({
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image", mimeType: "image/png", data: png },
            ],
            timestamp: 1,
          },
          {
            role: "assistant",
            content: [{ type: "toolCall", id: "c1", name: "shot", arguments: {} }],
            api: "google-generative-ai",
            provider: "google",
            model: "gemini-2.5-flash",
            usage: {
              input: 0,
              output: 0,
              cacheRead: 0,
              cacheWrite: 0,
              totalTokens: 0,
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
            },
            stopReason: "toolUse",
            timestamp: 2,
          },
          {
            role: "toolResult",
            toolCallId: "c1",
            toolName: "shot",
            content: [{ type: "image", mimeType: "image/jpeg", data: "/9j/4AAQ" }],
            isError: false,
            timestamp: 3,
          },
        ],
      }),
    );
    const contents = server.requests[0]!.body.contents;
    expect(contents[0]).to.deep.equal({
      role: "user",
      parts: [{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data: png } }],
    });
    expect(contents[2]).to.deep.equal({
      role: "user",
      parts: [
        { functionResponse: { name: "shot", response: { output: "(the image follows)" } } },
        { inlineData: { mimeType: "image/jpeg", data: "/9j/4AAQ" } },
      ],
    });
  });

  it("maps thinking levels to budgets (2.5) and levels (3), and off to what each model takes", async () => {
    const cases: [string, ProviderStreamRequest["thinkingLevel"], unknown][] = [
      ["gemini-2.5-pro", "off", { thinkingBudget: 128 }],
      ["gemini-2.5-pro", "xhigh", { thinkingBudget: 32768, includeThoughts: true }],
      ["gemini-2.5-flash-lite", "minimal", { thinkingBudget: 512, includeThoughts: true }],
      ["gemini-2.5-flash", "high", { thinkingBudget: 16384, includeThoughts: true }],
      ["gemini-3.1-pro-preview", "medium", { thinkingLevel: "HIGH", includeThoughts: true }],
      ["gemini-3.1-pro-preview", "off", { thinkingLevel: "LOW" }],
      ["gemini-3.5-flash", "minimal", { thinkingLevel: "MINIMAL", includeThoughts: true }],
      ["gemini-3.5-flash", "off", { thinkingLevel: "MINIMAL" }],
    ];
    server.respond((_req, res) => writeGemini(res, textChunks(["ok"])));
    for (const [model, thinkingLevel, expected] of cases) {
      const { result } = await collect(stream(thinkingLevel ? { thinkingLevel } : {}, model));
      expect(result.stopReason, result.errorMessage).to.equal("stop");
      expect(
        server.requests.at(-1)!.body.generationConfig.thinkingConfig,
        `${model} ${thinkingLevel}`,
      ).to.deep.equal(expected);
    }
    // A small output limit is raised so a budget leaves room for the answer; a forced tool becomes mode ANY.
    await collect(
      stream({
        thinkingLevel: "medium",
        maxTokens: 1000,
        temperature: 0,
        tools: [{ name: "pick", description: "Pick", parameters: Type.Object({ label: Type.String() }) }],
        toolChoice: { name: "pick" },
      }),
    );
    const body = server.requests.at(-1)!.body;
    expect(body.generationConfig).to.deep.include({ maxOutputTokens: 8192 + 4096, temperature: 0 });
    expect(body.toolConfig).to.deep.equal({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["pick"] },
    });
  });

  it("reports usage without the cached part in input, thoughts as output, and prices it", async () => {
    server.respond((_req, res) =>
      writeGemini(
        res,
        textChunks(["Cached ", "answer."], {
          prompt: 1_000_000,
          candidates: 100_000,
          thoughts: 100_000,
          cached: 400_000,
        }),
      ),
    );
    const { result } = await collect(stream({}, "gemini-2.5-pro"));
    expect(result.usage).to.include({
      input: 600_000,
      output: 200_000,
      cacheRead: 400_000,
      cacheWrite: 0,
      totalTokens: 1_200_000,
    });
    // gemini-2.5-pro: $1.25 input, $10 output, $0.125 cache hits per million tokens.
    expect(result.usage.cost.input).to.be.closeTo(0.75, 1e-9);
    expect(result.usage.cost.output).to.be.closeTo(2, 1e-9);
    expect(result.usage.cost.cacheRead).to.be.closeTo(0.05, 1e-9);
    expect(result.usage.cost.total).to.be.closeTo(2.8, 1e-9);
  });

  describe("errors", () => {
    async function failWith(respond: Parameters<TestServer["respond"]>[0], overrides = {}) {
      server.respond(respond);
      const { result, types } = await collect(stream(overrides));
      expect(types).to.deep.equal(["error"]);
      return result;
    }

    it("401 and 403 are auth failures that say how to set the key", async () => {
      for (const [code, status] of [
        [401, "UNAUTHENTICATED"],
        [403, "PERMISSION_DENIED"],
      ] as const) {
        const result = await failWith((_req, res) =>
          writeGoogleError(res, code, status, "Method doesn't allow unregistered callers."),
        );
        expect(result).to.include({ stopReason: "error", errorKind: "auth" });
        expect(result.errorMessage)
          .to.contain(`(${code})`)
          .and.contain("unregistered callers")
          .and.contain("GEMINI_API_KEY");
      }
    });

    it("a wrong key (Gemini's 400 API_KEY_INVALID) is an auth failure, the key not repeated", async () => {
      const result = await failWith(
        (_req, res) =>
          writeGoogleError(res, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [
            API_KEY_INVALID,
          ]),
        { apiKey: "AIzaSy-wrong-key-123456" },
      );
      expect(result).to.include({ stopReason: "error", errorKind: "auth" });
      expect(result.errorMessage).to.contain("API key not valid").and.contain("GEMINI_API_KEY");
      expect(result.errorMessage).not.to.contain("AIzaSy-wrong-key-123456");
    });

    it("429 RESOURCE_EXHAUSTED is a rate limit with the RetryInfo delay", async () => {
      const result = await failWith((_req, res) =>
        writeGoogleError(res, 429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", [
          retryInfo("37s"),
        ]),
      );
      expect(result).to.include({ stopReason: "error", errorKind: "rate_limit", retryAfterMs: 37_000 });
      expect(result.errorMessage).to.contain("You exceeded your current quota.");
    });

    it("a prompt over the context window (400) is context_overflow", async () => {
      const result = await failWith((_req, res) =>
        writeGoogleError(
          res,
          400,
          "INVALID_ARGUMENT",
          "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        ),
      );
      expect(result).to.include({ stopReason: "error", errorKind: "context_overflow" });
      expect(result.errorMessage).to.contain("1048576");
    });

    it("503 UNAVAILABLE is overloaded; 404 names the model id", async () => {
      let result = await failWith((_req, res) =>
        writeGoogleError(res, 503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
      );
      expect(result).to.include({ errorKind: "overloaded" });
      result = await failWith((_req, res) =>
        writeGoogleError(res, 404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta."),
      );
      expect(result).to.include({ errorKind: "bad_request" });
      expect(result.errorMessage).to.contain('Check the model id "gemini-2.5-flash"');
    });

    it("without a key nothing is sent, and the message names GEMINI_API_KEY", async () => {
      const { result } = await collect(stream({ apiKey: "" }));
      expect(result).to.include({ stopReason: "error", errorKind: "auth" });
      expect(result.errorMessage).to.match(/^No API key for google\. Set GEMINI_API_KEY/);
      expect(server.requests).to.have.length(0);
    });

    it("an error chunk in the stream and a SAFETY finish end the message with an error", async () => {
      server.respond((_req, res) =>
        writeGemini(res, [
          chunk([{ text: "Par" }]),
          { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } },
        ]),
      );
      let { result } = await collect(stream());
      expect(result).to.include({ stopReason: "error", errorKind: "overloaded" });
      expect(result.content).to.deep.equal([{ type: "text", text: "Par" }]);

      server.respond((_req, res) =>
        writeGemini(res, [chunk([{ text: "I can" }]), chunk([], { finishReason: "SAFETY" })]),
      );
      ({ result } = await collect(stream()));
      expect(result).to.include({ stopReason: "error", errorKind: "unknown" });
      expect(result.errorMessage).to.equal(
        "google stopped the answer: its safety filters blocked the response (SAFETY)",
      );
    });

    it("a stream that ends without a finishReason is a lost connection", async () => {
      server.respond((_req, res) => writeGemini(res, [chunk([{ text: "Half" }])]));
      const { result } = await collect(stream());
      expect(result).to.include({ stopReason: "error", errorKind: "network" });
      expect(result.content).to.deep.equal([{ type: "text", text: "Half" }]);
    });
  });

  it("reads a JSON array of chunks (an answer without alt=sse), and names the baseUrl when a web page answers", async () => {
    server.respond((_req, res) => {
      res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
      res.end(JSON.stringify(textChunks(["Not ", "streamed."])));
    });
    let { result } = await collect(stream());
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    expect(result.content).to.deep.equal([{ type: "text", text: "Not streamed." }]);

    server.respond((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html><body>Sign in</body></html>");
    });
    ({ result } = await collect(stream()));
    expect(result).to.include({ stopReason: "error", errorKind: "bad_request" });
    expect(result.errorMessage).to.equal(
      `google answered with a web page, not an event stream: check its baseUrl "${server.url}"`,
    );
  });

  it("an abort mid-stream ends the message at once, keeping what arrived", async () => {
    server.respond((_req, res) => writeGemini(res, [chunk([{ text: "Streaming " }])], { hold: true }));
    const controller = new AbortController();
    const s = stream({ signal: controller.signal });
    const outcome = collect(s);
    let abortedAt = 0;
    for await (const event of s) {
      if (event.type === "text_delta" && !abortedAt) {
        abortedAt = Date.now();
        controller.abort();
      }
    }
    const { result } = await outcome;
    expect(Date.now() - abortedAt).to.be.lessThan(2000);
    expect(result).to.include({ stopReason: "aborted", errorKind: "aborted" });
    expect(result.content).to.deep.equal([{ type: "text", text: "Streaming " }]);
  });
});

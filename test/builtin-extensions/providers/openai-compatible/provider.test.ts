/** builtin:openai-compatible driven directly: streamSimple against a local server that speaks Chat Completions. */
import type { ExtensionAPI, ProviderConfig, ToolCall } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import openaiCompatible, {
  OPENAI_COMPLETIONS_API,
  OPENAI_COMPLETIONS_PROVIDER,
  PLACEHOLDER_API_KEY,
  streamOpenAICompletions,
} from "../../../../builtin-extensions/providers/openai-compatible/index.js";
import {
  type SseEvent,
  startTestServer,
  type TestServer,
  writeJsonError,
  writeSse,
} from "../../../helpers/sse-server.js";
import {
  baseRequest,
  CHUNK_ID,
  chunk,
  collect,
  DONE,
  finishChunk,
  REASONING_MODEL,
  recordingHooks,
  roleChunk,
  textChunks,
  textStream,
  toolCallChunks,
  usageChunk,
  writeRaw,
} from "./fixtures.js";

describe("builtin:openai-compatible provider", () => {
  let server: TestServer;
  let baseUrl: string;

  beforeEach(async () => {
    server = await startTestServer();
    baseUrl = `${server.url}/v1`;
  });

  afterEach(async () => {
    await server.close();
  });

  it("registers the openai-completions API with no models of its own, then the named providers", () => {
    const providers = new Map<string, ProviderConfig>();
    openaiCompatible({
      registerProvider: (name: string, config: ProviderConfig) => providers.set(name, config),
    } as unknown as ExtensionAPI);
    expect([...providers.keys()][0]).to.equal(OPENAI_COMPLETIONS_PROVIDER);
    expect([...providers.keys()].slice(1)).to.include.members(["groq", "openrouter", "deepseek", "xai"]);
    const config = providers.get(OPENAI_COMPLETIONS_PROVIDER)!;
    expect(config.api).to.equal(OPENAI_COMPLETIONS_API);
    expect(config.models ?? []).to.deep.equal([]);
    expect(config.streamSimple).to.be.a("function");
  });

  it("streams a text answer: normalised events, usage with cached tokens, hooks, and what the server received", async () => {
    server.respond((_req, res) => writeSse(res, textStream("Hello from the server", [120, 6, 100])));
    const rec = recordingHooks({ headers: (h) => ({ ...h, "x-added-by-hook": "yes" }) });
    const { events, result, types } = await collect(
      streamOpenAICompletions(
        baseRequest(baseUrl, rec.hooks, { headers: { "x-from-models-json": "1" }, apiKey: "sk-local" }),
      ),
    );

    expect(result.stopReason, result.errorMessage).to.equal("stop");
    expect(result.content).to.deep.equal([{ type: "text", text: "Hello from the server" }]);
    expect(result).to.include({ api: "openai-completions", provider: "local", model: "qwen3-coder" });
    expect(result.usage).to.include({
      input: 20,
      output: 6,
      cacheRead: 100,
      cacheWrite: 0,
      totalTokens: 126,
    });
    expect(types[0]).to.equal("start");
    expect(types[1]).to.equal("text_start");
    expect(types.filter((t) => t === "text_delta").length).to.be.greaterThan(3);
    expect(types.slice(-2)).to.deep.equal(["text_end", "done"]);
    const deltas = events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : []));
    expect(deltas.join("")).to.equal("Hello from the server");

    expect(server.requests).to.have.length(1);
    const sent = server.requests[0]!;
    expect(sent.method).to.equal("POST");
    expect(sent.path).to.equal("/v1/chat/completions");
    expect(sent.headers.authorization).to.equal("Bearer sk-local");
    expect(sent.headers["x-from-models-json"]).to.equal("1");
    expect(sent.headers["x-added-by-hook"]).to.equal("yes");
    expect(sent.headers).to.not.have.property("openai-organization");
    expect(sent.headers["content-type"]).to.equal("application/json");
    expect(sent.headers["user-agent"]).to.match(/^knightcode\//);
    expect(sent.body).to.deep.equal({
      model: "qwen3-coder",
      messages: [
        { role: "system", content: "You are a test assistant." },
        { role: "user", content: "Hello" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      store: false,
      max_completion_tokens: 4096,
    });

    expect(rec.calls.map((c) => c.hook).slice(0, 3)).to.deep.equal(["payload", "headers", "response"]);
    expect(rec.of("payload")[0]!.payload).to.deep.equal(sent.body);
    expect(rec.of("headers")[0]!.headers).to.deep.equal({ "x-from-models-json": "1" });
    const [response] = rec.of("response");
    expect(response!.status).to.equal(200);
    expect(response!.headers["content-type"]).to.equal("text/event-stream");
    const raw = rec.of("streamEvent").map((c) => c.data);
    expect(raw).to.have.length(textStream("Hello from the server").length - 1); // every chunk but [DONE]
    expect(raw[0]).to.include({ id: CHUNK_ID, object: "chat.completion.chunk" });
    expect(raw.at(-1).usage.prompt_tokens_details.cached_tokens).to.equal(100);
  });

  it("sends a handler's replacement payload and the placeholder key when none is configured", async () => {
    server.respond((_req, res) => writeSse(res, textStream("ok")));
    const rec = recordingHooks({ payload: (p) => ({ ...p, top_k: 20, stream: false }) });
    const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, rec.hooks)));
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    const sent = server.requests[0]!;
    expect(sent.headers.authorization).to.equal(`Bearer ${PLACEHOLDER_API_KEY}`);
    expect(sent.body.top_k).to.equal(20);
    expect(sent.body.stream, "the answer is always read as a stream").to.equal(true);
  });

  it("converts the conversation, tools, tool choice, temperature and reasoning effort", async () => {
    server.respond((_req, res) => writeSse(res, textStream("fine")));
    const rec = recordingHooks();
    const parameters = Type.Object({ path: Type.String() });
    const { result } = await collect(
      streamOpenAICompletions(
        baseRequest(baseUrl, rec.hooks, {
          model: REASONING_MODEL,
          thinkingLevel: "xhigh",
          temperature: 0.2,
          maxTokens: 512,
          toolChoice: { name: "read" },
          tools: [{ name: "read", description: "Read a file", parameters }],
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "Look at this" },
                { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
              ],
              timestamp: 1,
            },
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: "from another provider", thinkingSignature: "sig-abc" },
                { type: "text", text: "Reading it." },
                { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } },
              ],
              api: "anthropic-messages",
              provider: "anthropic",
              model: "claude",
              usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: {} as never },
              stopReason: "toolUse",
              timestamp: 2,
            },
            {
              role: "toolResult",
              toolCallId: "call_1",
              toolName: "read",
              content: [{ type: "text", text: "file body" }],
              isError: false,
              timestamp: 3,
            },
            { role: "user", content: [{ type: "text", text: "and now?" }], timestamp: 4 },
          ],
        }),
      ),
    );
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    const body = server.requests[0]!.body;
    expect(body.messages).to.deep.equal([
      { role: "developer", content: "You are a test assistant." },
      {
        role: "user",
        content: [
          { type: "text", text: "Look at this" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        ],
      },
      {
        role: "assistant",
        content: "Reading it.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "file body" },
      { role: "user", content: "and now?" },
    ]);
    expect(JSON.stringify(body)).to.not.contain("from another provider");
    expect(body.tools).to.deep.equal([
      {
        type: "function",
        function: {
          name: "read",
          description: "Read a file",
          parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        },
      },
    ]);
    expect(body.tool_choice).to.deep.equal({ type: "function", function: { name: "read" } });
    expect(body.temperature).to.equal(0.2);
    expect(body.max_completion_tokens).to.equal(512);
    expect(body.reasoning_effort).to.equal("high");
  });

  it("answers an interrupted tool call with a synthetic result so the server accepts the history", async () => {
    server.respond((_req, res) => writeSse(res, textStream("ok")));
    const rec = recordingHooks();
    await collect(
      streamOpenAICompletions(
        baseRequest(baseUrl, rec.hooks, {
          messages: [
            { role: "user", content: "go", timestamp: 1 },
            {
              role: "assistant",
              content: [
                { type: "toolCall", id: "call_9", name: "bash", arguments: { command: "sleep 100" } },
              ],
              api: "openai-completions",
              provider: "local",
              model: "qwen3-coder",
              usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: {} as never },
              stopReason: "aborted",
              timestamp: 2,
            },
            { role: "user", content: "never mind", timestamp: 3 },
          ],
        }),
      ),
    );
    const messages = server.requests[0]!.body.messages;
    expect(messages.map((m: { role: string }) => m.role)).to.deep.equal([
      "system",
      "user",
      "assistant",
      "tool",
      "user",
    ]);
    expect(messages[3]).to.include({ role: "tool", tool_call_id: "call_9" });
  });

  it("streams reasoning_content (llama.cpp) as thinking, with usage in the final chunk", async () => {
    // llama.cpp's server: no stream_options needed, finish_reason and usage (plus timings) in one last chunk.
    server.respond((_req, res) =>
      writeSse(res, [
        chunk({ role: "assistant", content: null }),
        chunk({ reasoning_content: "The user" }),
        chunk({ reasoning_content: " says hi." }),
        chunk({ content: "Hi" }),
        chunk({ content: " there" }),
        chunk({}, "stop", {
          usage: { completion_tokens: 9, prompt_tokens: 21, total_tokens: 30 },
          timings: { prompt_n: 21, predicted_n: 9 },
        }),
        DONE,
      ]),
    );
    const rec = recordingHooks();
    const { result, types } = await collect(
      streamOpenAICompletions(
        baseRequest(baseUrl, rec.hooks, { model: REASONING_MODEL, thinkingLevel: "medium" }),
      ),
    );
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    expect(result.content).to.deep.equal([
      { type: "thinking", thinking: "The user says hi." },
      { type: "text", text: "Hi there" },
    ]);
    expect(types).to.deep.equal([
      "start",
      "thinking_start",
      "thinking_delta",
      "thinking_delta",
      "thinking_end",
      "text_start",
      "text_delta",
      "text_delta",
      "text_end",
      "done",
    ]);
    expect(result.usage).to.include({ input: 21, output: 9, cacheRead: 0 });
    expect(server.requests[0]!.body.reasoning_effort).to.equal("medium");
    expect(server.requests[0]!.body.messages[0].role).to.equal("developer");
  });

  it("streams `reasoning` (vLLM, OpenRouter) as thinking and does not double a field sent under both names", async () => {
    server.respond((_req, res) =>
      writeSse(res, [
        roleChunk(),
        chunk({ reasoning: "Plan: " }),
        chunk({ reasoning_content: "answer.", reasoning: "answer." }),
        ...textChunks("Done."),
        finishChunk("stop"),
        usageChunk(10, 4),
        DONE,
      ]),
    );
    const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
    expect(result.content).to.deep.equal([
      { type: "thinking", thinking: "Plan: answer." },
      { type: "text", text: "Done." },
    ]);
  });

  it("streams parallel tool calls whose argument deltas interleave, one block per index", async () => {
    const first = toolCallChunks(0, "call_read", "read", { path: "src/index.ts", limit: 40 }, 4);
    const second = toolCallChunks(1, "call_grep", "grep", { pattern: "TODO", glob: "**/*.ts" }, 5);
    const interleaved: SseEvent[] = [];
    for (let i = 0; i < Math.max(first.length, second.length); i++) {
      if (first[i]) interleaved.push(first[i]!);
      if (second[i]) interleaved.push(second[i]!);
    }
    server.respond((_req, res) =>
      writeSse(res, [
        ...interleaved,
        // one chunk may carry pieces of two calls
        chunk({
          tool_calls: [
            { index: 0, function: { arguments: "" } },
            { index: 1, function: { arguments: "" } },
          ],
        }),
        finishChunk("tool_calls"),
        usageChunk(300, 45),
        DONE,
      ]),
    );
    const rec = recordingHooks();
    const { events, result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, rec.hooks)));
    expect(result.stopReason, result.errorMessage).to.equal("toolUse");
    expect(result.content).to.deep.equal([
      { type: "toolCall", id: "call_read", name: "read", arguments: { path: "src/index.ts", limit: 40 } },
      { type: "toolCall", id: "call_grep", name: "grep", arguments: { pattern: "TODO", glob: "**/*.ts" } },
    ]);
    const starts = events.filter((e) => e.type === "toolcall_start").map((e) => e.contentIndex);
    expect(starts).to.deep.equal([0, 1]);
    const deltasOf = (index: number) =>
      events.flatMap((e) => (e.type === "toolcall_delta" && e.contentIndex === index ? [e.delta] : []));
    expect(deltasOf(0).length).to.be.greaterThan(3);
    expect(deltasOf(1).length).to.be.greaterThan(3);
    expect(JSON.parse(deltasOf(0).join(""))).to.deep.equal({ path: "src/index.ts", limit: 40 });
    const sequence = events
      .filter((e) => e.type === "toolcall_delta")
      .map((e) => e.contentIndex)
      .join("");
    expect(sequence, "deltas of the two calls alternate").to.contain("0101");
    const ends = events
      .filter((e) => e.type === "toolcall_end")
      .map((e) => (e as { toolCall: ToolCall }).toolCall.id);
    expect(ends).to.deep.equal(["call_read", "call_grep"]);
    expect(result.usage).to.include({ input: 300, output: 45 });
  });

  it("reports tool use when a server says finish_reason stop after tool calls (Ollama), and accepts no [DONE]", async () => {
    server.respond((_req, res) =>
      writeSse(res, [
        chunk({
          role: "assistant",
          content: "",
          tool_calls: [
            {
              id: "call_x1",
              index: 0,
              type: "function",
              function: { name: "ls", arguments: '{"path":"."}' },
            },
          ],
        }),
        finishChunk("stop"),
        usageChunk(40, 10),
      ]),
    );
    const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
    expect(result.stopReason, result.errorMessage).to.equal("toolUse");
    expect(result.content).to.deep.equal([
      { type: "toolCall", id: "call_x1", name: "ls", arguments: { path: "." } },
    ]);
  });

  it("maps finish_reason length", async () => {
    server.respond((_req, res) =>
      writeSse(res, [roleChunk(), ...textChunks("cut"), finishChunk("length"), usageChunk(5, 1), DONE]),
    );
    const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
    expect(result.stopReason).to.equal("length");
    expect(result.content).to.deep.equal([{ type: "text", text: "cut" }]);
  });

  describe("HTTP errors", () => {
    it("gives kind auth for a 401, with the server's message and how to configure the key", async () => {
      server.respond((_req, res) =>
        writeJsonError(res, 401, {
          error: {
            message: "Incorrect API key provided: sk-bad. You can find your API key at https://example.com.",
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        }),
      );
      const rec = recordingHooks();
      const { result, types } = await collect(
        streamOpenAICompletions(baseRequest(baseUrl, rec.hooks, { apiKey: "sk-bad" })),
      );
      expect(types).to.deep.equal(["error"]);
      expect(result.stopReason).to.equal("error");
      expect(result.errorKind).to.equal("auth");
      expect(result.errorMessage).to.contain("Incorrect API key provided");
      expect(result.errorMessage).to.contain("models.json").and.contain("auth.json");
      expect(rec.of("response").map((r) => r.status)).to.deep.equal([401]);
      expect(server.requests, "no retries inside the provider").to.have.length(1);
    });

    it("gives context_overflow for a context-length 400 (OpenAI and llama.cpp wordings)", async () => {
      server.respondInOrder(
        (_req, res) =>
          writeJsonError(res, 400, {
            error: {
              message:
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.",
              type: "invalid_request_error",
              param: "messages",
              code: "context_length_exceeded",
            },
          }),
        (_req, res) =>
          writeJsonError(res, 400, {
            error: {
              code: 400,
              message: "the request exceeds the available context size, try increasing it",
              type: "exceed_context_size_error",
            },
          }),
      );
      for (const wording of ["maximum context length", "exceeds the available context size"]) {
        const { result } = await collect(
          streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)),
        );
        expect(result.errorKind, result.errorMessage).to.equal("context_overflow");
        expect(result.errorMessage).to.contain(wording);
      }
    });

    it("shows the provider's message for a 400, whatever the body's shape", async () => {
      server.respondInOrder(
        (_req, res) =>
          writeJsonError(res, 400, {
            error: { message: "Invalid value for 'temperature'", type: "invalid_request_error", code: null },
          }),
        (_req, res) =>
          writeJsonError(res, 400, {
            object: "error",
            message: "vLLM says no",
            type: "BadRequestError",
            code: 400,
          }),
        (_req, res) => writeJsonError(res, 400, { detail: "FastAPI-style detail" }),
        (_req, res) => writeJsonError(res, 404, { error: 'model "nope" not found, try pulling it first' }),
      );
      const messages: string[] = [];
      for (let i = 0; i < 4; i++) {
        const { result } = await collect(
          streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)),
        );
        expect(result.errorKind).to.equal("bad_request");
        messages.push(result.errorMessage ?? "");
      }
      expect(messages[0]).to.contain("Invalid value for 'temperature'").and.contain("(400)");
      expect(messages[1]).to.contain("vLLM says no");
      expect(messages[2]).to.contain("FastAPI-style detail");
      expect(messages[3]).to.contain('model "nope" not found').and.contain("baseUrl");
    });

    it("gives rate_limit with the server's retry-after for a 429", async () => {
      server.respond((_req, res) =>
        writeJsonError(
          res,
          429,
          { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
          { "retry-after-ms": "30", "retry-after": "1" },
        ),
      );
      const rec = recordingHooks();
      const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, rec.hooks)));
      expect(result.errorKind).to.equal("rate_limit");
      expect(result.retryAfterMs).to.equal(30);
      expect(rec.of("response")[0]).to.deep.include({ status: 429 });
      expect(rec.of("response")[0]!.headers["retry-after-ms"]).to.equal("30");
      expect(server.requests).to.have.length(1);
    });

    it("fails with bad_request and sends nothing when the provider has no baseUrl", async () => {
      const rec = recordingHooks();
      const { result } = await collect(
        streamOpenAICompletions(baseRequest(baseUrl, rec.hooks, { baseUrl: undefined })),
      );
      expect(result.errorKind).to.equal("bad_request");
      expect(result.errorMessage).to.contain("baseUrl").and.contain("models.json");
      expect(rec.calls).to.deep.equal([]);
      expect(server.requests).to.have.length(0);
    });

    it("fails with bad_request when the baseUrl is not an http(s) URL", async () => {
      const { result } = await collect(
        streamOpenAICompletions(baseRequest("127.0.0.1:8080/v1", recordingHooks().hooks)),
      );
      expect(result.errorKind).to.equal("bad_request");
      expect(result.errorMessage).to.contain('"127.0.0.1:8080/v1"').and.contain("http(s)");
    });

    it("gives a network error when nothing listens", async () => {
      await server.close();
      const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
      expect(result.errorKind, result.errorMessage).to.equal("network");
      expect(result.errorMessage)
        .to.contain("ECONNREFUSED")
        .and.contain(baseUrl)
        .and.contain("Is the server running?");
    });
  });

  describe("failures in the stream", () => {
    it("maps an error object sent mid-stream (OpenAI shape) to overloaded and keeps the text so far", async () => {
      server.respond((_req, res) =>
        writeSse(res, [
          roleChunk(),
          ...textChunks("Partial ", "answer"),
          {
            data: { error: { message: "The server is overloaded. Please try again.", type: "server_error" } },
          },
        ]),
      );
      const rec = recordingHooks();
      const { result, types } = await collect(streamOpenAICompletions(baseRequest(baseUrl, rec.hooks)));
      expect(result.stopReason).to.equal("error");
      expect(result.errorKind).to.equal("overloaded");
      expect(result.errorMessage).to.contain("The server is overloaded");
      expect(result.content).to.deep.equal([{ type: "text", text: "Partial answer" }]);
      expect(types.at(-1)).to.equal("error");
      expect(rec.of("streamEvent").at(-1)!.data).to.have.property("error");
    });

    it("maps llama.cpp's `error:` line and OpenRouter's error chunk by their status codes", async () => {
      server.respondInOrder(
        (_req, res) =>
          writeRaw(res, [
            `data: ${JSON.stringify(roleChunk().data)}\n\n`,
            `data: ${JSON.stringify(textChunks("Loading")[0]!.data)}\n\n`,
            'error: {"code":503,"message":"Loading model","type":"unavailable_error"}\n\n',
          ]),
        (_req, res) =>
          writeSse(res, [
            roleChunk(),
            chunk({ content: "" }, "error", {
              error: { code: 429, message: "Rate limit exceeded upstream", metadata: { provider_name: "X" } },
            }),
          ]),
      );
      const first = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
      expect(first.result.errorKind, first.result.errorMessage).to.equal("overloaded");
      expect(first.result.errorMessage).to.contain("Loading model");
      expect(first.result.content).to.deep.equal([{ type: "text", text: "Loading" }]);
      const second = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
      expect(second.result.errorKind, second.result.errorMessage).to.equal("rate_limit");
      expect(second.result.errorMessage).to.contain("Rate limit exceeded upstream");
    });

    it("gives a network error when the connection drops mid-stream, keeping what arrived", async () => {
      server.respond((_req, res) =>
        writeSse(res, [roleChunk(), ...textChunks("Some", " text", " that", " never ends")], {
          dropAfter: 3,
          delayMs: 5,
        }),
      );
      const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
      expect(result.stopReason).to.equal("error");
      expect(result.errorKind, result.errorMessage).to.equal("network");
      expect(result.errorMessage).to.contain("was lost before the response was complete");
      expect(result.content).to.deep.equal([{ type: "text", text: "Some text" }]);
    });

    it("gives a network error when the stream just ends without finish_reason or [DONE]", async () => {
      server.respond((_req, res) => writeSse(res, [roleChunk(), ...textChunks("Half an ans")]));
      const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
      expect(result.errorKind).to.equal("network");
      expect(result.errorMessage).to.contain("the stream ended before the response was complete");
      expect(result.content).to.deep.equal([{ type: "text", text: "Half an ans" }]);
    });

    it("fails with kind unknown and a clear message on a malformed event, without hanging", async () => {
      server.respondInOrder(
        (_req, res) =>
          writeRaw(res, [
            `data: ${JSON.stringify(roleChunk().data)}\n\n`,
            'data: {"id":"chatcmpl-x","choices":[{"delta":{"content":"oops"\n\n',
            `data: ${JSON.stringify(textChunks("never seen")[0]!.data)}\n\n`,
            "data: [DONE]\n\n",
          ]),
        (_req, res) => writeSse(res, [roleChunk(), { data: { choices: { index: 0 } } }, DONE]),
      );
      const first = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
      expect(first.result.errorKind).to.equal("unknown");
      expect(first.result.errorMessage).to.contain("malformed stream event").and.contain('"content":"oops"');
      const second = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
      expect(second.result.errorKind).to.equal("unknown");
      expect(second.result.errorMessage).to.contain("`choices` is not an array");
    });

    it("ends a stalled stream at once with stopReason aborted when the signal aborts", async () => {
      // After w2 the server sends nothing more and keeps the connection: only the abort can end the stream, so
      // the bound below is loose (a loaded machine) and still fails a stream that waits for the server.
      server.respond((_req, res) =>
        writeSse(res, [roleChunk(), ...textChunks(...Array.from({ length: 20 }, (_, i) => `w${i} `)), DONE], {
          stallAfter: 4,
        }),
      );
      const controller = new AbortController();
      const stream = streamOpenAICompletions(
        baseRequest(baseUrl, recordingHooks().hooks, { signal: controller.signal }),
      );
      let aborted = 0;
      const done = collect(stream, 5000);
      for await (const event of stream) {
        if (event.type === "text_delta" && event.delta === "w2 ") {
          aborted = Date.now();
          controller.abort();
        }
      }
      const { result, types } = await done;
      expect(Date.now() - aborted).to.be.lessThan(2000);
      expect(result.stopReason).to.equal("aborted");
      expect(result.errorKind).to.equal("aborted");
      expect(types.at(-1)).to.equal("error");
      expect(result.content).to.deep.equal([{ type: "text", text: "w0 w1 w2 " }]);
    });

    it("fails with kind aborted before sending when the signal is already aborted", async () => {
      const { result } = await collect(
        streamOpenAICompletions(
          baseRequest(baseUrl, recordingHooks().hooks, { signal: AbortSignal.abort() }),
        ),
      );
      expect(result.stopReason).to.equal("aborted");
      expect(server.requests).to.have.length(0);
    });

    it("times out a stream that stalls longer than compat.timeoutMs", async () => {
      // After its first text the server sends nothing more and keeps the connection: only the timeout can end the
      // stream. The timeout is long enough that a loaded machine does not hit it before the first chunks arrive.
      server.respond((_req, res) =>
        writeSse(res, [roleChunk(), ...textChunks("stalling"), DONE], { stallAfter: 2 }),
      );
      const { result } = await collect(
        streamOpenAICompletions(
          baseRequest(baseUrl, recordingHooks().hooks, { compat: { timeoutMs: 1500 } }),
        ),
        10_000,
      );
      expect(result.errorKind, result.errorMessage).to.equal("timeout");
      expect(result.errorMessage).to.contain("compat.timeoutMs");
      expect(result.content).to.deep.equal([{ type: "text", text: "stalling" }]);
    });

    it("reads a server that ignored stream: true and answered one JSON completion", async () => {
      server.respond((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "chatcmpl-1",
            object: "chat.completion",
            created: 1,
            model: "m",
            choices: [
              {
                index: 0,
                message: {
                  role: "assistant",
                  content: "Whole answer",
                  tool_calls: [{ id: "call_j", type: "function", function: { name: "ls", arguments: "{}" } }],
                },
                finish_reason: "tool_calls",
              },
            ],
            usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
          }),
        );
      });
      const { result } = await collect(streamOpenAICompletions(baseRequest(baseUrl, recordingHooks().hooks)));
      expect(result.stopReason, result.errorMessage).to.equal("toolUse");
      expect(result.content).to.deep.equal([
        { type: "text", text: "Whole answer" },
        { type: "toolCall", id: "call_j", name: "ls", arguments: {} },
      ]);
      expect(result.usage).to.include({ input: 7, output: 3 });
    });
  });
});

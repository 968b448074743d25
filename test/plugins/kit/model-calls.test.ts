/** Module-scope model calls (`complete`, `getModel`) and `ctx.modelRegistry.getApiKeyAndHeaders`, through real sessions. */

import type { ExtensionAPI, ModelInfo } from "@knightcodeai/cli";
import { complete, getModel, getModels, StringEnum, Type } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";

describe("model calls from module scope", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("complete() answers through the open session's provider, with the system prompt and messages given", async () => {
    let model: ModelInfo | undefined;
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) =>
          kc.registerCommand("model", {
            handler: async (_args, ctx) => {
              model = ctx.model;
            },
          }),
      ],
      script: [{ text: "summary: all good" }],
    });
    await t.prompt("/model");
    expect(model, "the session has a model").to.not.equal(undefined);
    expect(getModel(model!.provider, model!.id)).to.deep.equal(model);
    expect(getModels(model!.provider).map((m) => m.id)).to.include(model!.id);
    const answer = await complete(model!, {
      systemPrompt: "Summarise.",
      messages: [{ role: "user", content: "hello", timestamp: Date.now() }],
    });
    expect(answer.stopReason).to.equal("stop");
    expect(answer.content).to.deep.equal([{ type: "text", text: "summary: all good" }]);
  });

  it("fails clearly when no session is open, and for a model the session does not know", async () => {
    expect(() => complete({ provider: "scripted", id: "scripted" }, { messages: [] })).to.throw(
      /No KnightCode session is open/,
    );
    t = await createTestSession({ script: [] });
    expect(getModel("nowhere", "nothing")).to.equal(undefined);
    expect(() => complete({ provider: "nowhere", id: "nothing" }, { messages: [] })).to.throw(
      /Unknown model nowhere\/nothing/,
    );
  });

  it("a session that ends withdraws its models", async () => {
    t = await createTestSession({ script: [] });
    expect(getModels().length).to.be.greaterThan(0);
    await t.dispose();
    t = undefined;
    expect(getModels()).to.deep.equal([]);
  });
});

describe("ctx.modelRegistry.getApiKeyAndHeaders", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("gives the key and headers a request would carry, and says when the provider is unknown", async () => {
    const results: unknown[] = [];
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerProvider("keyed", {
            api: "scripted",
            apiKey: "KC_TEST_KEYED_KEY",
            headers: { "x-team": "blue" },
            models: [{ id: "m1", contextWindow: 1000, maxTokens: 100 }],
          });
          kc.registerCommand("auth", {
            handler: async (_args, ctx) => {
              results.push(
                await ctx.modelRegistry.getApiKeyAndHeaders(ctx.modelRegistry.find("keyed", "m1")!),
              );
              results.push(
                await ctx.modelRegistry.getApiKeyAndHeaders({ ...ctx.model!, provider: "nowhere", id: "x" }),
              );
            },
          });
        },
      ],
      script: [],
    });
    process.env.KC_TEST_KEYED_KEY = "sk-test-123";
    try {
      await t.prompt("/auth");
    } finally {
      delete process.env.KC_TEST_KEYED_KEY;
    }
    expect(results).to.deep.equal([
      { ok: true, apiKey: "sk-test-123", headers: { "x-team": "blue" } },
      { ok: false, error: 'Provider "nowhere" is not registered' },
    ]);
  });
});

describe("StringEnum", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("is a plain {type, enum} string schema that tool calls are validated against", async () => {
    const schema = StringEnum(["add", "sub"] as const, { description: "operation" });
    expect(JSON.parse(JSON.stringify(schema))).to.deep.equal({
      type: "string",
      enum: ["add", "sub"],
      description: "operation",
    });
    expect(() => StringEnum([] as unknown as readonly string[])).to.throw(/non-empty array of strings/);
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) =>
          kc.registerTool({
            name: "calc",
            label: "calc",
            description: "calc",
            parameters: Type.Object({ op: schema }),
            execute: async (_id, params) => ({
              content: [{ type: "text", text: `op=${params.op}` }],
              details: {},
            }),
          }),
      ],
      script: [
        { toolCalls: [{ name: "calc", arguments: { op: "mul" } }] },
        { toolCalls: [{ name: "calc", arguments: { op: "sub" } }] },
        { text: "done" },
      ],
    });
    await t.prompt("go");
    const results = t.eventsOfType("tool_execution_end") as unknown as {
      isError: boolean;
      result: { content: { text: string }[] };
    }[];
    expect(results.map((r) => r.isError)).to.deep.equal([true, false]);
    expect(results[0]!.result.content[0]!.text).to.match(/Invalid arguments for tool "calc".*op/);
    expect(results[1]!.result.content[0]!.text).to.equal("op=sub");
  });
});

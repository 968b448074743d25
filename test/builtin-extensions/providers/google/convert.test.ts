/**
 * Tool schemas as Gemini's `parameters` accept them (an OpenAPI 3.0 subset: what it does not know is a 400), and
 * the tool declarations a real tool set becomes.
 */
import { type LlmMessage, StringEnum, Type } from "@knightcodeai/cli";
import { expect } from "chai";
import {
  buildPayload,
  cleanSchema,
  convertMessages,
  UNSIGNED_CALL_SIGNATURE,
} from "../../../../builtin-extensions/providers/google/index.js";

describe("google provider: tool schemas", () => {
  it("drops the keywords Gemini refuses and keeps the ones it takes", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      $id: "urn:tool",
      type: "object",
      title: "Args",
      additionalProperties: false,
      properties: {
        path: { type: "string", description: "File", minLength: 1, default: ".", examples: ["a.ts"] },
        env: { type: "object", patternProperties: { "^[A-Z_]+$": { type: "string" } } },
        count: { type: "integer", minimum: 0, maximum: 10, exclusiveMaximum: 11, format: "int32" },
        when: { type: "string", format: "uri" },
        tags: { type: "array", items: { type: "string" }, uniqueItems: true, minItems: 1 },
        any: { type: "array" },
        box: {
          type: "array",
          prefixItems: [{ type: "integer" }, { type: "integer" }],
          minItems: 2,
          maxItems: 2,
        },
        pair: { type: "array", items: [{ type: "string" }, { type: "number" }] },
      },
      required: ["path", "missing"],
    };
    expect(cleanSchema(schema)).to.deep.equal({
      type: "object",
      title: "Args",
      properties: {
        path: { type: "string", description: "File", minLength: 1 },
        env: { type: "object" },
        count: { type: "integer", minimum: 0, maximum: 10, format: "int32" },
        when: { type: "string" },
        tags: { type: "array", items: { type: "string" }, minItems: 1 },
        any: { type: "array", items: {} },
        box: { type: "array", items: { type: "integer" }, minItems: 2, maxItems: 2 },
        pair: { type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } },
      },
      required: ["path"],
    });
  });

  it("turns const into enum, unions of string literals into one enum, and null alternatives into nullable", () => {
    const schema = Type.Object({
      mode: Type.Union([Type.Literal("read"), Type.Literal("write")]),
      fixed: Type.Literal("yes"),
      level: StringEnum(["low", "high"]),
      maybe: Type.Union([Type.String(), Type.Null()]),
      either: Type.Union([Type.String(), Type.Number()]),
      typeList: { type: ["integer", "null"] } as never,
      oneOf: { oneOf: [{ type: "string" }, { type: "boolean" }] } as never,
      numbers: { type: "number", enum: [1, 2] } as never,
      untyped: { enum: ["a", "b"] } as never,
    });
    const cleaned = cleanSchema(schema) as { properties: Record<string, unknown> };
    expect(cleaned.properties).to.deep.equal({
      mode: { type: "string", enum: ["read", "write"] },
      fixed: { type: "string", enum: ["yes"] },
      level: { type: "string", enum: ["low", "high"] },
      maybe: { nullable: true, type: "string" },
      either: { anyOf: [{ type: "string" }, { type: "number" }] },
      typeList: { nullable: true, type: "integer" },
      oneOf: { anyOf: [{ type: "string" }, { type: "boolean" }] },
      numbers: { type: "number" },
      untyped: { type: "string", enum: ["a", "b"] },
    });
  });

  it("inlines local $refs, and a recursive one becomes a schema that takes anything", () => {
    const schema = {
      type: "object",
      $defs: {
        point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] },
        node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } },
      },
      properties: {
        at: { $ref: "#/$defs/point", description: "Where" },
        tree: { $ref: "#/$defs/node" },
        remote: { $ref: "https://example.com/schema.json", description: "Elsewhere" },
      },
    };
    expect(cleanSchema(schema)).to.deep.equal({
      type: "object",
      properties: {
        at: { type: "object", properties: { x: { type: "number" } }, required: ["x"], description: "Where" },
        tree: { type: "object", properties: { next: {} } },
        remote: { description: "Elsewhere" },
      },
    });
  });

  it("declares a tool without parameters with none, and keeps the order of the tools", () => {
    const payload = buildPayload({
      model: {
        provider: "google",
        api: "google-generative-ai",
        id: "gemini-2.5-flash",
        contextWindow: 1_048_576,
        maxTokens: 65_536,
        reasoning: false,
      },
      systemPrompt: "   ",
      messages: [{ role: "user", content: "   ", timestamp: 1 }],
      tools: [
        { name: "now", description: "The time", parameters: Type.Object({}) },
        {
          name: "env",
          description: "Variables",
          parameters: Type.Object({ vars: Type.Record(Type.String(), Type.String()) }),
        },
      ],
      hooks: {
        payload: async (p) => p,
        headers: async (h) => h,
        response: async () => {},
        streamEvent: async () => {},
      },
    });
    expect(payload).to.deep.equal({
      contents: [],
      generationConfig: { maxOutputTokens: 65_536 },
      tools: [
        {
          functionDeclarations: [
            { name: "now", description: "The time" },
            {
              name: "env",
              description: "Variables",
              parameters: { type: "object", properties: { vars: { type: "object" } }, required: ["vars"] },
            },
          ],
        },
      ],
    });
  });
});

describe("google provider: another model's turns", () => {
  const usage = {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  const claudeTurn: LlmMessage = {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Claude's reasoning", thinkingSignature: "EqQBCkgIAhABGAIiQ" },
      { type: "toolCall", id: "toolu_01/Ab.c", name: "read", arguments: { path: "a" } },
      { type: "toolCall", id: "toolu_02", name: "read", arguments: { path: "b" } },
    ],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-5-5",
    usage,
    stopReason: "toolUse",
    timestamp: 2,
  };
  const results: LlmMessage[] = ["toolu_01/Ab.c", "toolu_02"].map((id, i) => ({
    role: "toolResult",
    toolCallId: id,
    toolName: "read",
    content: [{ type: "text", text: `content ${i}` }],
    isError: false,
    timestamp: 3 + i,
  }));
  const messages: LlmMessage[] = [
    { role: "user", content: "Read both", timestamp: 1 },
    claudeTurn,
    ...results,
  ];

  it("Gemini 3 gets ids made to fit and the stand-in signature on the first call of an unsigned turn", () => {
    const contents = convertMessages(messages, {
      provider: "google",
      api: "google-generative-ai",
      id: "gemini-3.5-flash",
    });
    expect(contents.slice(1)).to.deep.equal([
      {
        role: "model",
        parts: [
          {
            functionCall: { name: "read", args: { path: "a" }, id: "toolu_01_Ab_c" },
            thoughtSignature: UNSIGNED_CALL_SIGNATURE,
          },
          { functionCall: { name: "read", args: { path: "b" }, id: "toolu_02" } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "read", response: { output: "content 0" }, id: "toolu_01_Ab_c" } },
          { functionResponse: { name: "read", response: { output: "content 1" }, id: "toolu_02" } },
        ],
      },
    ]);
  });

  it("Gemini 2.5 gets neither ids nor a stand-in signature", () => {
    const contents = convertMessages(messages, {
      provider: "google",
      api: "google-generative-ai",
      id: "gemini-2.5-pro",
    });
    expect(contents[1]).to.deep.equal({
      role: "model",
      parts: [
        { functionCall: { name: "read", args: { path: "a" } } },
        { functionCall: { name: "read", args: { path: "b" } } },
      ],
    });
  });
});

/**
 * Tool schemas as Gemini's `parameters` accept them (an OpenAPI 3.0 subset: what it does not know is a 400), and
 * the tool declarations a real tool set becomes.
 */
import { StringEnum, Type } from "@knightcodeai/cli";
import { expect } from "chai";
import { buildPayload, cleanSchema } from "../../../../builtin-extensions/providers/google/index.js";

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

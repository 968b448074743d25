import { expect } from "chai";
import {
  describeTools,
  normalizeCode,
  reachedBy,
  sandboxTools,
  shortName,
} from "../../../builtin-extensions/codemode/catalogue.js";
import { schemaToType, toolSignature } from "../../../builtin-extensions/codemode/declarations.js";

describe("codemode declarations from JSON Schema", () => {
  it("renders required and optional properties, enums, consts, unions and nullable", () => {
    const type = schemaToType({
      type: "object",
      required: ["mode"],
      properties: {
        mode: { enum: ["fast", "slow"], description: "How to run" },
        level: { type: ["integer", "null"] },
        tag: { const: "v1" },
        value: { anyOf: [{ type: "string" }, { type: "number" }] },
        note: { type: "string", nullable: true },
      },
    });
    expect(type).to.equal(
      [
        "{",
        "  /** How to run */",
        '  mode: "fast" | "slow";',
        "  level?: number | null;",
        '  tag?: "v1";',
        "  value?: string | number;",
        "  note?: string | null;",
        "}",
      ].join("\n"),
    );
  });

  it("renders arrays, tuples, index signatures and intersections", () => {
    expect(
      schemaToType({ type: "array", items: { anyOf: [{ type: "string" }, { type: "boolean" }] } }),
    ).to.equal("(string | boolean)[]");
    expect(schemaToType({ type: "array", prefixItems: [{ type: "string" }, { type: "number" }] })).to.equal(
      "[string, number]",
    );
    expect(schemaToType({ type: "object", additionalProperties: { type: "number" } })).to.equal(
      "{\n  [key: string]: number;\n}",
    );
    expect(
      schemaToType({
        allOf: [
          { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
          { type: "object", properties: { b: { type: "number" } }, required: ["b"] },
        ],
      }),
    ).to.equal("{\n  a: string;\n} & {\n  b: number;\n}");
  });

  it("follows internal $refs and stops at a cycle", () => {
    const tree = {
      $defs: {
        node: {
          type: "object",
          required: ["name"],
          properties: {
            name: { type: "string" },
            children: { type: "array", items: { $ref: "#/$defs/node" } },
          },
        },
      },
      $ref: "#/$defs/node",
    };
    expect(schemaToType(tree)).to.equal("{\n  name: string;\n  children?: unknown[];\n}");
    expect(schemaToType({ $ref: "#/definitions/missing" })).to.equal("unknown");
    expect(schemaToType({ $ref: "https://example.com/schema" })).to.equal("unknown");
  });

  it("writes unknown for odd schemas and past the depth and size limits", () => {
    expect(schemaToType({ type: "wat" })).to.equal("unknown");
    expect(schemaToType(true)).to.equal("unknown");
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10; i++) deep = { type: "object", properties: { x: deep } };
    expect(schemaToType(deep)).to.contain("x?: unknown;");
    const wide = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 400 }, (_, i) => [`field_${i}`, { type: "string" }]),
      ),
    };
    const text = schemaToType(wide);
    expect(text.length).to.be.below(6000);
    expect(text).to.contain("field_0?: string;");
    expect(text).to.match(/\/\/ \d+ more properties: describeTool\(\) shows them\n}$/);
  });

  it("quotes keys that are not identifiers and keeps comments closed", () => {
    const signature = toolSignature(
      "get",
      {
        description: "Fetch */ a page\nsecond line",
        parameters: { type: "object", properties: { "page-id": { type: "string" } }, required: ["page-id"] },
        outputSchema: { type: "object", properties: { html: { type: "string" } } },
      },
      "",
    );
    expect(signature).to.equal(
      '/** Fetch *\\/ a page */\nget(args: {\n  "page-id": string;\n}): Promise<{\n  html?: string;\n}>;',
    );
  });
});

describe("codemode catalogue", () => {
  const ns = { name: "mcp__my-docs", aliases: ["my-docs"], description: "Docs server" };
  const tool = { name: "mcp__my-docs__search", description: "Search.", parameters: { type: "object" } };

  it("reaches a namespaced tool by its short name under the namespace and its aliases", () => {
    expect(shortName({ ...tool, namespace: ns })).to.equal("search");
    expect(sandboxTools([{ ...tool, namespace: ns, exposure: "codemode" }])).to.deep.equal([
      {
        name: "mcp__my-docs__search",
        keys: ["mcp__my-docs__search", "mcp__my_docs__search", "search"],
        namespaces: ["mcp__my_docs", "my_docs"],
      },
    ]);
  });

  it("groups tools by namespace in the description, and shortens it when the tools are many", () => {
    const entry = (name: string) => ({
      name,
      description: `Tool ${name}.`,
      parameters: { type: "object", properties: { q: { type: "string" } } } as never,
      exposure: "codemode" as const,
      namespace: ns,
    });
    const small = describeTools([entry("mcp__my-docs__search")]);
    expect(small).to.contain(
      "  /** Docs server */\n  mcp__my_docs: {\n    /** Tool mcp__my-docs__search. */\n    search(args:",
    );
    const many = describeTools(Array.from({ length: 300 }, (_, i) => entry(`mcp__my-docs__tool${i}`)));
    expect(many).to.contain("- tools.mcp__my_docs (also my_docs): Docs server\n  tool0, tool1,");
    expect(many).to.contain("and 260 more");
    expect(many.length).to.be.below(17_000);
  });

  it("reaches every tool when a script lists, searches or indexes tools, else the words it uses", () => {
    expect(reachedBy("const t = listTools();")).to.equal("all");
    expect(reachedBy("await searchTools('x')")).to.equal("all");
    expect(reachedBy("await tools[name]({})")).to.equal("all");
    expect(reachedBy("return await tools.docs.search({ q: 'x' })")).to.deep.equal([
      "return",
      "await",
      "tools",
      "docs",
      "search",
      "q",
      "x",
    ]);
  });

  it("runs a fenced script and a bare async arrow function as bodies", () => {
    expect(normalizeCode("```js\nreturn 1;\n```")).to.equal("return 1;");
    expect(normalizeCode("async () => { return 2; }")).to.equal(
      "return await (async () => { return 2; })();",
    );
    expect(normalizeCode("const a = 1;\nreturn a;")).to.equal("const a = 1;\nreturn a;");
  });
});

/** Tool mechanics every tool shares: exposure, ownership, nested calls, structured results, loadouts, renderers. */

import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import type { ExtensionAPI, ToolDefinition, ToolResult } from "../../../kernel/index.js";
import { ToolRegistry } from "../../../plugins/tool-registry/tool-registry.js";

const owner = (id: string, origin: "builtin" | "user" | "cli" = "cli", order = 0) => ({ id, origin, order });

const tool = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition =>
  ({
    name,
    description: `${name} tool`,
    parameters: Type.Object({ text: Type.Optional(Type.String()) }),
    execute: async () => ({ content: [{ type: "text", text: name }], details: undefined }),
    ...extra,
  }) as ToolDefinition;

const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;

describe("tool registry", () => {
  it("activates direct and model-only tools on registration unless defaultActive is false", () => {
    const registry = new ToolRegistry();
    registry.registerTool(owner("cli:a"), tool("direct1"));
    registry.registerTool(owner("cli:a"), tool("modelOnly", { exposure: "model-only" }));
    registry.registerTool(owner("cli:a"), tool("optional", { defaultActive: false }));
    registry.registerTool(owner("cli:a"), tool("scriptOnly", { exposure: "codemode" }));
    registry.registerTool(owner("cli:a"), tool("searchable", { exposure: "deferred" }));
    registry.registerTool(owner("cli:a"), tool("gone", { exposure: "hidden" }));
    expect(registry.getActiveTools()).to.deep.equal(["direct1", "modelOnly"]);
    expect(registry.declarations().map((d) => d.name)).to.deep.equal(["direct1", "modelOnly"]);
    const callable = ["direct1", "modelOnly", "optional", "scriptOnly", "searchable", "gone"].filter((n) =>
      registry.isCallable(n),
    );
    expect(callable).to.deep.equal(["direct1", "scriptOnly", "searchable"]);
  });

  it("activates explicitly, ignores unknown names, and never activates hidden tools", () => {
    const registry = new ToolRegistry();
    registry.registerTool(owner("cli:a"), tool("one"));
    registry.registerTool(owner("cli:a"), tool("scriptOnly", { exposure: "codemode" }));
    registry.registerTool(owner("cli:a"), tool("gone", { exposure: "hidden" }));
    registry.setActiveTools(["scriptOnly", "nope", "gone"]);
    expect(registry.getActiveTools()).to.deep.equal(["scriptOnly"]);
    expect(registry.declarations().map((d) => d.name)).to.deep.equal(["scriptOnly"]);
  });

  it("withdraws a tool re-registered as hidden by its owner", () => {
    const registry = new ToolRegistry();
    registry.registerTool(owner("cli:a"), tool("one"));
    registry.registerTool(owner("cli:a"), tool("one", { exposure: "hidden" }));
    expect(registry.getActiveTools()).to.deep.equal([]);
    expect(registry.isCallable("one")).to.equal(false);
    expect(registry.getAllTools().map((t) => t.exposure)).to.deep.equal(["hidden"]);
  });

  it("reports exposure, namespace, annotations and reachesTools in getAllTools", () => {
    const registry = new ToolRegistry();
    registry.registerTool(
      owner("cli:a"),
      tool("mcp__docs__search", {
        exposure: "codemode",
        namespace: {
          name: "mcp__docs",
          aliases: ["docs"],
          description: "Docs server",
          instructions: "Use search first",
        },
        annotations: { readOnlyHint: true, openWorldHint: true },
      }),
    );
    registry.registerTool(owner("cli:a"), tool("runner", { reachesTools: () => "all" }));
    const [docs, runner] = registry.getAllTools();
    expect(docs).to.deep.include({
      exposure: "codemode",
      namespace: {
        name: "mcp__docs",
        aliases: ["docs"],
        description: "Docs server",
        instructions: "Use search first",
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
      reachesTools: false,
      owner: "cli:a",
    });
    expect(runner!.reachesTools).to.equal(true);
  });

  it("lets another extension replace a default (with one notice) and restores it when the replacement goes", () => {
    const notices: string[] = [];
    const registry = new ToolRegistry((m) => notices.push(m));
    registry.registerTool(owner("builtin:core-tools", "builtin"), tool("bash"), { fallback: true });
    const replacement = registry.registerTool(
      owner("user:/x/sandboxed.ts", "user", 1),
      tool("bash", { description: "mine" }),
    );
    expect(registry.get("bash")!.owner.id).to.equal("user:/x/sandboxed.ts");
    expect(registry.declarations()[0]!.description).to.equal("mine");
    expect(notices).to.have.length(1);
    expect(notices[0]).to.contain("builtin:core-tools").and.contain("user:/x/sandboxed.ts");
    void replacement.dispose();
    expect(registry.get("bash")!.owner.id).to.equal("builtin:core-tools");
  });

  it("keeps a user's tool when a default of the same name registers after it", () => {
    const registry = new ToolRegistry();
    registry.registerTool(owner("cli:/mine.ts"), tool("read", { description: "mine" }));
    registry.registerTool(owner("builtin:core-tools", "builtin"), tool("read"), { fallback: true });
    expect(registry.get("read")!.owner.id).to.equal("cli:/mine.ts");
  });

  it("decides by the registration option, not by origin: a third party's default yields to a built-in", () => {
    const registry = new ToolRegistry();
    registry.registerTool(owner("user:/default-read.ts", "user"), tool("read"), { fallback: true });
    registry.registerTool(owner("builtin:core-tools", "builtin"), tool("read", { description: "built-in" }));
    expect(registry.get("read")!.owner.id).to.equal("builtin:core-tools");
    // Two built-ins that both claim the name without the option conflict like anyone else.
    expect(() => registry.registerTool(owner("builtin:other", "builtin"), tool("read"))).to.throw(
      /Tool "read" from builtin:other conflicts/,
    );
  });

  it("refuses the same name from two extensions that are not defaults, naming both", () => {
    const registry = new ToolRegistry();
    registry.registerTool(owner("user:/a.ts", "user"), tool("search"));
    expect(() => registry.registerTool(owner("cli:/b.ts"), tool("search"))).to.throw(
      /Tool "search" from cli:\/b\.ts conflicts with the tool of the same name from user:\/a\.ts/,
    );
    registry.registerTool(owner("user:/c.ts", "user"), tool("find"), { fallback: true });
    expect(() => registry.registerTool(owner("cli:/d.ts"), tool("find"), { fallback: true })).to.throw(
      /Both are registered as defaults/,
    );
  });

  it("names the offending field of invalid arguments and applies prepareArguments first", () => {
    const registry = new ToolRegistry();
    registry.registerTool(
      owner("cli:a"),
      tool("edit", {
        parameters: Type.Object({ path: Type.String(), count: Type.Integer({ default: 1 }) }),
        prepareArguments: (raw: any) => (raw && typeof raw.file === "string" ? { path: raw.file } : raw),
      }),
    );
    expect(registry.checkArguments("edit", { file: "a.txt" })).to.deep.equal({
      ok: true,
      value: { path: "a.txt", count: 1 },
    });
    const bad = registry.checkArguments("edit", { path: 3 });
    expect(bad.ok).to.equal(false);
    expect((bad as { error: string }).error).to.contain("/path");
  });

  it("checks a schema's first calls the interpreted way and later ones compiled, with the same answers", () => {
    const registry = new ToolRegistry();
    const parameters = Type.Object({
      path: Type.String(),
      limit: Type.Optional(Type.Integer({ minimum: 1 })),
    });
    registry.registerTool(owner("cli:a"), tool("look", { parameters }));
    const answers = Array.from({ length: 4 }, () => [
      registry.checkArguments("look", { path: "a.txt", limit: 2 }),
      registry.checkArguments("look", { path: "a.txt", limit: 0 }),
      registry.checkArguments("look", { limit: "x" }),
    ]);
    expect(answers[0]![0]).to.deep.equal({ ok: true, value: { path: "a.txt", limit: 2 } });
    expect((answers[0]![1] as { error: string }).error).to.contain("/limit");
    expect((answers[0]![2] as { error: string }).error).to.match(/\/path.*\/limit|\/limit.*\/path/);
    for (const later of answers.slice(1)) expect(later).to.deep.equal(answers[0]);
    // A kind TypeBox does not know is checked by Ajv from the first call on.
    registry.registerTool(
      owner("cli:a"),
      tool("odd", {
        parameters: Type.Unsafe<{ n: number }>({
          [Symbol.for("TypeBox.Kind")]: "Odd",
          type: "object",
          properties: { n: { type: "number" } },
          required: ["n"],
        }),
      }),
    );
    for (let i = 0; i < 4; i++) {
      expect(registry.checkArguments("odd", { n: 1 }).ok).to.equal(true);
      expect((registry.checkArguments("odd", { n: "1" }) as { error: string }).error).to.contain("/n");
    }
  });

  it("validates tools that bring a plain JSON Schema (as MCP servers do), naming the field", () => {
    const registry = new ToolRegistry();
    registry.registerTool(
      owner("cli:a"),
      tool("plain", {
        parameters: {
          type: "object",
          properties: { query: { type: "string" }, limit: { type: "integer", default: 10 } },
          required: ["query"],
        } as never,
      }),
    );
    expect(registry.checkArguments("plain", { query: "x" })).to.deep.equal({
      ok: true,
      value: { query: "x", limit: 10 },
    });
    const bad = registry.checkArguments("plain", { query: 5 });
    expect((bad as { error: string }).error).to.contain("/query");
  });

  it("lets prepareLoadout replace descriptions and hide declarations while the tools stay callable", () => {
    const registry = new ToolRegistry();
    registry.registerTool(owner("cli:a"), tool("alpha"));
    registry.registerTool(owner("cli:a"), tool("beta"));
    let seen: unknown;
    registry.registerTool(
      owner("cli:a"),
      tool("orchestrator", {
        prepareLoadout: (loadout) => {
          seen = loadout.declared.map((d) => d.name);
          return {
            descriptions: { orchestrator: "Runs alpha and beta for you" },
            hiddenDeclarations: ["alpha", "beta"],
          };
        },
      }),
    );
    const declared = registry.declarations();
    expect(declared.map((d) => d.name)).to.deep.equal(["orchestrator"]);
    expect(declared[0]!.description).to.equal("Runs alpha and beta for you");
    expect(seen).to.deep.equal(["alpha", "beta", "orchestrator"]);
    expect(registry.isCallable("alpha")).to.equal(true);
  });

  it("resolves renderers through the resolver chain in load order, then the tool's own", () => {
    const registry = new ToolRegistry();
    registry.registerTool(owner("cli:a"), tool("read", { renderCall: () => "own" }));
    registry.registerToolRenderer(owner("cli:late", "cli", 2), (name, next) =>
      name === "read"
        ? { renderCall: () => `late(${String(next()?.renderCall?.({}, {} as never))})` }
        : next(),
    );
    registry.registerToolRenderer(
      owner("cli:early", "cli", 1),
      (_name, next) => next() ?? { renderCall: () => "filler" },
    );
    const options = { expanded: false, isPartial: false, cwd: "/" };
    expect(registry.getToolRenderers("read")?.renderCall?.({}, options)).to.equal("late(own)");
    expect(registry.getToolRenderers("not-registered-yet")?.renderCall?.({}, options)).to.equal("filler");
  });
});

describe("tool mechanics in a session", () => {
  const sessions: TestSession[] = [];
  afterEach(async () => {
    for (const t of sessions.splice(0)) await t.dispose();
  });
  const open = async (options: TestSessionOptions): Promise<TestSession> => {
    const t = await createTestSession(options);
    sessions.push(t);
    return t;
  };
  const usage = (n: number) => ({
    input: n,
    output: n,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 2 * n,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  });

  it("records nested calls on the caller's result, bounded, and sums nested usage at every depth", async () => {
    const big = "x".repeat(9 * 1024);
    const h = await open({
      script: [{ toolCalls: [{ name: "outer", id: "call_R" }] }, { text: "ok" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool(
            tool("leaf", {
              exposure: "codemode",
              execute: async () => ({
                content: [{ type: "text", text: "leaf" }],
                details: undefined,
                usage: usage(1),
              }),
            }),
          );
          kc.registerTool(
            tool("middle", {
              exposure: "codemode",
              execute: async (_id, _p, signal, _u, ctx) => {
                await ctx.executeTool("leaf", {}, { ...(signal ? { signal } : {}) });
                await ctx.executeTool("leaf", {});
                return { content: [{ type: "text", text: "middle" }], details: undefined, usage: usage(10) };
              },
            }),
          );
          kc.registerTool(
            tool("outer", {
              execute: async (_id, _p, _s, _u, ctx) => {
                await ctx.executeTool("middle", {});
                await ctx.executeTool("leaf", { text: big });
                for (let i = 0; i < 300; i++) await ctx.executeTool("leaf", { text: "y".repeat(100) });
                return { content: [{ type: "text", text: "outer" }], details: undefined, usage: usage(100) };
              },
            }),
          );
        },
      ],
    });
    await h.session.prompt("go");
    const result = h
      .eventsOfType("message_end")
      .map((e) => e.message as { role: string; toolCallId?: string; nestedCalls?: any; usage?: any })
      .find((m) => m.role === "toolResult")!;
    expect(result.nestedCalls.complete).to.equal(false);
    expect(result.nestedCalls.calls).to.have.length(256);
    const ids = result.nestedCalls.calls.slice(0, 4).map((c: { toolCallId: string }) => c.toolCallId);
    expect(ids).to.deep.equal(["call_R/1/1", "call_R/1/2", "call_R/1", "call_R/2"]);
    const bigCall = result.nestedCalls.calls[3];
    expect(bigCall).to.not.have.property("arguments");
    expect(result.nestedCalls.calls[4].arguments).to.deep.equal({ text: "y".repeat(100) });
    const withArgs = result.nestedCalls.calls.filter((c: { arguments?: unknown }) => c.arguments);
    const argBytes = withArgs.reduce(
      (n: number, c: { arguments: unknown }) => n + JSON.stringify(c.arguments).length,
      0,
    );
    expect(argBytes).to.be.at.most(32 * 1024);
    // own 100 + middle (10 + 2 leaves) + 301 leaves
    expect(result.usage.input).to.equal(100 + 12 + 301);
    const nestedStarts = h.eventsOfType("tool_execution_start").filter((e) => e.parentToolCallId);
    expect(nestedStarts[0]).to.deep.include({ toolCallId: "call_R/1", parentToolCallId: "call_R" });
    const results = h
      .eventsOfType("message_end")
      .filter((e) => (e.message as { role: string }).role === "toolResult");
    expect(results).to.have.length(1);
  });

  it("passes structuredContent to calling tools, and drops it when a handler redacts the content", async () => {
    const received: unknown[] = [];
    const h = await open({
      script: [{ toolCalls: [{ name: "caller" }] }, { text: "ok" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool(
            tool("data", {
              exposure: "codemode",
              outputSchema: Type.Object({ count: Type.Number() }),
              execute: async (_id, params: { text?: string }) => ({
                content: [{ type: "text", text: "count: 3" }],
                details: undefined,
                structuredContent: { count: 3 },
                isError: params.text === "fail",
              }),
            }),
          );
          kc.registerTool(
            tool("caller", {
              execute: async (_id, _p, _s, _u, ctx) => {
                received.push(await ctx.executeTool("data", {}));
                received.push(await ctx.executeTool("data", { text: "fail" }));
                received.push(await ctx.executeTool("data", { text: "redact" }));
                return { content: [{ type: "text", text: "done" }], details: undefined };
              },
            }),
          );
          kc.on("tool_result", (event) =>
            (event.input as { text?: string }).text === "redact"
              ? { content: [{ type: "text" as const, text: "[redacted]" }] }
              : undefined,
          );
        },
      ],
    });
    await h.session.prompt("go");
    const [plain, failed, redacted] = received as ToolResult[];
    expect(plain!.structuredContent).to.deep.equal({ count: 3 });
    expect(failed!.isError).to.equal(true);
    expect(failed!.structuredContent).to.deep.equal({ count: 3 });
    expect(textOf(redacted!)).to.equal("[redacted]");
    expect(redacted).to.not.have.property("structuredContent");
  });

  it("lists callable tools in ctx.tools with their namespace and output schema", async () => {
    let listed: { name: string; namespace?: { name: string } }[] = [];
    const h = await open({
      script: [{ toolCalls: [{ name: "lister" }] }, { text: "ok" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool(
            tool("mcp__docs__search", {
              exposure: "codemode",
              namespace: { name: "mcp__docs", aliases: ["docs"] },
            }),
          );
          kc.registerTool(tool("ask", { exposure: "model-only" }));
          kc.registerTool(
            tool("lister", {
              execute: async (_id, _p, _s, _u, ctx) => {
                listed = ctx.tools;
                return { content: [{ type: "text", text: "ok" }], details: undefined };
              },
            }),
          );
        },
      ],
    });
    await h.session.prompt("go");
    const names = listed.map((t) => t.name);
    expect(names).to.include.members(["lister", "mcp__docs__search"]);
    expect(names).to.not.include("ask");
    expect(listed.find((t) => t.name === "mcp__docs__search")!.namespace!.name).to.equal("mcp__docs");
  });

  it("refuses a nested call to a model-only tool", async () => {
    let result: ToolResult | undefined;
    const h = await open({
      script: [{ toolCalls: [{ name: "caller" }] }, { text: "ok" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool(tool("ask", { exposure: "model-only" }));
          kc.registerTool(
            tool("caller", {
              execute: async (_id, _p, _s, _u, ctx) => {
                result = await ctx.executeTool("ask", {});
                return { content: [{ type: "text", text: "ok" }], details: undefined };
              },
            }),
          );
        },
      ],
    });
    await h.session.prompt("go");
    expect(result!.isError).to.equal(true);
    expect(textOf(result!)).to.contain("not available");
  });

  it("records the system prompt and tool set before the first request and again when they change", async () => {
    let api: ExtensionAPI | undefined;
    const h = await open({
      script: [{ text: "one" }, { text: "two" }, { text: "three" }],
      extensions: [
        (kc: ExtensionAPI) => {
          api = kc;
          kc.registerTool(tool("alpha", { promptSnippet: "alpha things" }));
          kc.registerTool(tool("beta", { defaultActive: false }));
        },
      ],
    });
    await h.session.prompt("first");
    await h.session.prompt("second");
    api!.setActiveTools(["alpha", "beta"]);
    await h.session.prompt("third");
    const records = h.session.sessionManager
      .getBranch()
      .filter((e) => e.type === "custom" && e.customType === "knightcode.system")
      .map((e) => (e as { data: { tools: { name: string }[]; systemPrompt: string } }).data);
    const ours = (r: { tools: { name: string }[] }) =>
      r.tools.map((t) => t.name).filter((n) => n === "alpha" || n === "beta");
    expect(records.map(ours)).to.deep.equal([["alpha"], ["alpha", "beta"]]);
    expect(records[0]!.systemPrompt).to.contain("alpha things");
  });
});

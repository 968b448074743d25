/**
 * builtin:codemode in real sessions: the scripted provider asks for `codemode` with a script, and the script calls
 * fixture tools (one with `outputSchema`, one that throws, one that waits on its signal, one that reports usage)
 * and core tools in the session's temp dir, in the real QuickJS sandbox worker.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ExtensionAPI, type ProviderStreamRequest, Type } from "@knightcodeai/cli";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { CODEMODE_INTRO } from "../../../builtin-extensions/codemode/catalogue.js";
import {
  type CodemodeDetails,
  codemodeSettings,
  DEFAULT_CODEMODE_SETTINGS,
} from "../../../builtin-extensions/codemode/index.js";
import { loadSettings } from "../../../plugins/settings/settings.js";
import { useTempDir } from "../../helpers/temp-dir.js";

interface Fixtures {
  aborted: string[];
}

function fixtureTools(seen: Fixtures) {
  return (kc: ExtensionAPI) => {
    const inventory = {
      name: "inventory",
      aliases: ["stock"],
      description: "Warehouse stock",
      instructions: "Look items up one by one; counts are per warehouse.",
    };
    kc.registerTool({
      name: "inventory_lookup",
      description: "How many of an item are in stock.",
      parameters: Type.Object({ item: Type.String() }),
      outputSchema: Type.Object({ item: Type.String(), count: Type.Number() }),
      exposure: "codemode",
      namespace: inventory,
      execute: async (_id, { item }) => ({
        content: [{ type: "text", text: `${item}: ${item.length}` }],
        structuredContent: { item, count: item.length },
        details: undefined,
      }),
    });
    kc.registerTool({
      name: "inventory_partial",
      description: "A lookup that fails half way but still reports what it counted.",
      parameters: Type.Object({}),
      outputSchema: Type.Object({ reason: Type.String(), done: Type.Number() }),
      exposure: "codemode",
      namespace: inventory,
      execute: async () => ({
        content: [{ type: "text", text: "partial failure" }],
        structuredContent: { reason: "partial", done: 2 },
        isError: true,
        details: undefined,
      }),
    });
    kc.registerTool({
      name: "explode",
      description: "Always fails.",
      parameters: Type.Object({}),
      exposure: "codemode",
      execute: async () => {
        throw new Error("boom");
      },
    });
    kc.registerTool({
      name: "wait_for_abort",
      description: "Runs until its call is aborted.",
      parameters: Type.Object({}),
      exposure: "codemode",
      execute: (id, _params, signal) =>
        new Promise<never>((_resolve, reject) => {
          signal?.addEventListener("abort", () => {
            seen.aborted.push(id);
            reject(new Error("stopped"));
          });
        }),
    });
    kc.registerTool({
      name: "charge",
      description: "Makes a model call of its own and reports its usage.",
      parameters: Type.Object({}),
      exposure: "codemode",
      execute: async () => ({
        content: [{ type: "text", text: "charged" }],
        details: undefined,
        usage: {
          input: 100,
          output: 7,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 107,
          cost: { input: 0.01, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.012 },
        },
      }),
    });
  };
}

interface CodemodeEnd {
  toolCallId: string;
  isError: boolean;
  text: string;
  details: CodemodeDetails;
  elapsedMs: number;
  h: TestSession;
}

describe("builtin:codemode", function () {
  this.timeout(30_000);
  const sessions: TestSession[] = [];
  afterEach(async () => {
    for (const t of sessions.splice(0)) await t.dispose();
  });
  const open = async (options: TestSessionOptions): Promise<TestSession> => {
    const t = await createTestSession(options);
    sessions.push(t);
    return t;
  };
  let seen: Fixtures;
  beforeEach(() => {
    seen = { aborted: [] };
  });

  async function run(
    code: string,
    options: {
      settings?: Record<string, unknown>;
      extensions?: ((kc: ExtensionAPI) => void)[];
      before?: (h: TestSession) => void;
    } = {},
  ): Promise<CodemodeEnd> {
    const h = await open({
      script: [{ toolCalls: [{ name: "codemode", arguments: { code }, id: "cm1" }] }, { text: "done" }],
      extensions: [fixtureTools(seen), ...(options.extensions ?? [])],
      ...(options.settings ? { settings: options.settings } : {}),
    });
    options.before?.(h);
    const started = performance.now();
    await h.session.prompt("run the script");
    const elapsedMs = performance.now() - started;
    const end = h.eventsOfType("tool_execution_end").find((e) => e.toolName === "codemode") as unknown as {
      toolCallId: string;
      isError: boolean;
      result: { content: { type: string; text: string }[]; details: CodemodeEnd["details"] };
    };
    const types = h.events.filter((e) => e.type !== "message_update").map((e) => e.type);
    expect(end, JSON.stringify(types)).to.not.equal(undefined);
    return {
      toolCallId: end.toolCallId,
      isError: end.isError,
      text: end.result.content.map((c) => c.text).join(""),
      details: end.result.details,
      elapsedMs,
      h,
    };
  }

  const toolResultMessage = (h: TestSession, toolCallId: string) =>
    h
      .eventsOfType("message_end")
      .map((e) => (e as unknown as { message: Record<string, unknown> }).message)
      .find((m) => m.role === "toolResult" && m.toolCallId === toolCallId) as Record<string, any>;

  it("fans out with Promise.all: structured results, namespace alias and top-level names, nested events", async () => {
    const r = await run(`
      const items = ["apple", "fig", "banana"];
      const found = await Promise.all(items.map((item) => tools.inventory.lookup({ item })));
      const viaAlias = await tools.stock.lookup({ item: "kiwi" });
      const topLevel = await tools.inventory_lookup({ item: "plum" });
      return { counts: found.map((f) => f.count), alias: viaAlias.count, top: topLevel.item };
    `);
    expect(r.isError, r.text).to.equal(false);
    expect(JSON.parse(r.text)).to.deep.equal({ counts: [5, 3, 6], alias: 4, top: "plum" });
    const nested = r.h.eventsOfType("tool_execution_start").filter((e) => e.parentToolCallId === "cm1");
    expect(nested.map((e) => e.toolCallId)).to.have.members(["cm1/1", "cm1/2", "cm1/3", "cm1/4", "cm1/5"]);
    expect(nested.every((e) => e.toolName === "inventory_lookup")).to.equal(true);
    const record = toolResultMessage(r.h, "cm1").nestedCalls;
    expect(record.complete).to.equal(true);
    expect(record.calls).to.have.length(5);
    expect(record.calls.map((c: { status: string }) => c.status)).to.deep.equal([
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
    ]);
    expect(record.calls[0].arguments).to.deep.equal({ item: "apple" });
  });

  it("gives an isError result with data to the script, and throws for a tool that fails", async () => {
    const r = await run(`
      const partial = await tools.inventory.partial({});
      let message;
      try { await tools.explode({}); } catch (e) { message = e.message; }
      return { partial, message };
    `);
    expect(r.isError, r.text).to.equal(false);
    expect(JSON.parse(r.text)).to.deep.equal({ partial: { reason: "partial", done: 2 }, message: "boom" });
    expect(r.details).to.include({ calls: 2, failedCalls: 2 });
  });

  it("calls core tools, which return their text", async () => {
    const r = await run(`return await tools.read({ path: "notes.txt" });`, {
      before: (h) => writeFileSync(join(h.cwd, "notes.txt"), "first line\nsecond line\n"),
    });
    expect(r.isError, r.text).to.equal(false);
    expect(r.text).to.contain("second line");
  });

  it("aborts the calls still running when the script returns, and reports them", async () => {
    const r = await run(`tools.wait_for_abort({}); tools.wait_for_abort({}); return "left early";`);
    expect(r.isError, r.text).to.equal(false);
    expect(r.text).to.contain("left early");
    expect(r.text).to.contain("Cancelled 2 tool call(s) still running when the script ended");
    expect(r.details.cancelled).to.deep.equal(["wait_for_abort", "wait_for_abort"]);
    expect(seen.aborted).to.have.members(["cm1/1", "cm1/2"]);
    const statuses = toolResultMessage(r.h, "cm1").nestedCalls.calls.map((c: { status: string }) => c.status);
    expect(statuses).to.deep.equal(["error", "error"]);
  });

  for (const [name, code] of [
    ["a busy loop", "while (true) {}"],
    ["a loop of awaits", "while (true) await null;"],
  ] as const) {
    it(`stops ${name} at the deadline`, async () => {
      const r = await run(code, { settings: { codemode: { timeoutMs: 400 } } });
      expect(r.isError).to.equal(true);
      expect(r.details.failure, r.text).to.equal("timeout");
      expect(r.text).to.contain("over its 400 ms limit (setting codemode.timeoutMs)");
      expect(r.elapsedMs).to.be.below(10_000);
    });
  }

  it("stops an allocation loop at the memory limit", async () => {
    const r = await run(
      "const chunks = []; while (true) chunks.push({ n: chunks.length, list: [chunks.length] });",
      {
        settings: { codemode: { memoryMb: 8, timeoutMs: 20_000 } },
      },
    );
    expect(r.isError).to.equal(true);
    expect(r.details.failure, r.text).to.equal("memory");
    expect(r.text).to.contain("out of its 8 MB of memory");
  });

  it("keeps the full output of a cut result in a private temp file (mode 0600)", async () => {
    const r = await run("for (let i = 0; i < 3000; i++) console.log('line ' + i); return 'done';");
    const path = r.details.fullOutputPath;
    expect(path, r.text).to.be.a("string");
    try {
      expect(r.text).to.contain(`Full output: ${path}`);
      expect(statSync(path!).mode & 0o777).to.equal(0o600);
      expect(readFileSync(path!, "utf8")).to.contain("line 2999");
    } finally {
      rmSync(path!, { force: true });
    }
  });

  it("turns deep recursion into an error the script can catch", async () => {
    const r = await run(`
      function down(n) { return down(n + 1) + 1; }
      try { down(0); } catch (e) { return "caught " + e.message; }
    `);
    expect(r.isError, r.text).to.equal(false);
    expect(r.text).to.match(/^caught .*stack/);
  });

  it("has no fetch, process, require, timers or import() inside", async () => {
    const r = await run(`
      const kinds = [typeof fetch, typeof process, typeof require, typeof setTimeout, typeof WebAssembly];
      let imported = "loaded";
      try { await import("node:fs"); } catch (e) { imported = "refused"; }
      return { kinds, imported };
    `);
    expect(JSON.parse(r.text)).to.deep.equal({
      kinds: ["undefined", "undefined", "undefined", "undefined", "undefined"],
      imported: "refused",
    });
  });

  it("fails at once, with a clear message, when the script waits on nothing", async () => {
    const r = await run("await new Promise(() => {});", { settings: { codemode: { timeoutMs: 20_000 } } });
    expect(r.isError).to.equal(true);
    expect(r.details.failure).to.equal("stalled");
    expect(r.text).to.contain("nothing can settle");
    expect(r.elapsedMs).to.be.below(5_000);
  });

  it("lets a tool_call gate block a nested call", async () => {
    const gate = (kc: ExtensionAPI) => {
      kc.on("tool_call", (event) =>
        event.toolName === "inventory_lookup" && (event.input as { item?: string }).item === "secret"
          ? { block: true, reason: "secret items are off limits" }
          : undefined,
      );
    };
    const r = await run(
      `const ok = await tools.inventory.lookup({ item: "pear" });
       try { await tools.inventory.lookup({ item: "secret" }); return "not blocked"; }
       catch (e) { return ok.count + " / " + e.message; }`,
      { extensions: [gate] },
    );
    expect(r.text).to.equal("4 / Tool call blocked: secret items are off limits");
    const statuses = toolResultMessage(r.h, "cm1").nestedCalls.calls.map((c: { status: string }) => c.status);
    expect(statuses).to.deep.equal(["ok", "blocked"]);
  });

  it("adds the usage of nested calls to its result", async () => {
    const r = await run("await tools.charge({}); await tools.charge({}); return 'ok';");
    const usage = toolResultMessage(r.h, "cm1").usage;
    expect(usage).to.include({ input: 200, output: 14, totalTokens: 214 });
  });

  it("lists, describes and searches tools; deferred tools are callable but not listed", async () => {
    const deferred = (kc: ExtensionAPI) => {
      kc.registerTool({
        name: "hidden_gem",
        description: "A deferred tool about inventory.",
        parameters: Type.Object({}),
        exposure: "deferred",
        execute: async () => ({ content: [{ type: "text", text: "gem" }], details: undefined }),
      });
    };
    const r = await run(
      `return {
        listed: listTools().map((t) => t.name).filter((n) => n.startsWith("inventory") || n === "hidden_gem"),
        instructions: describeNamespace("stock").instructions,
        params: Object.keys(describeTool("inventory_lookup").parameters.properties),
        search: (await searchTools("stock lookup item", 1)).map((t) => t.name),
        gem: await tools.hidden_gem({}),
      };`,
      { extensions: [deferred] },
    );
    expect(JSON.parse(r.text)).to.deep.equal({
      listed: ["inventory_lookup", "inventory_partial"],
      instructions: "Look items up one by one; counts are per warehouse.",
      params: ["item"],
      search: ["inventory_lookup"],
      gem: "gem",
    });
  });

  it("reports what a call reaches to tool_call handlers", async () => {
    const reaches: unknown[] = [];
    const watch = (kc: ExtensionAPI) => {
      kc.on("tool_call", (event) => {
        if (event.toolName === "codemode") reaches.push(event.reaches);
        return undefined;
      });
    };
    await run("return await tools.inventory.lookup({ item: 'x' });", { extensions: [watch] });
    expect(reaches[0]).to.include.members(["tools", "inventory", "lookup"]);
    await run("return listTools().length;", { extensions: [watch] });
    expect(reaches[1]).to.equal("all");
  });

  it("runs the next script in the warm sandbox the last one left", async () => {
    await run("return 1;");
    const second = await run("return 2;");
    expect(second.details.coldStart).to.equal(false);
  });

  it("describes the codemode tools in its declaration, stays stable, and is left out without them", async () => {
    const requests: ProviderStreamRequest[] = [];
    const capture = (step: object) => (request: ProviderStreamRequest) => {
      requests.push(request);
      return step;
    };
    const h = await open({
      script: [
        capture({ toolCalls: [{ name: "codemode", arguments: { code: "return 1" } }] }),
        capture({ text: "ok" }),
      ],
      extensions: [fixtureTools(seen)],
    });
    await h.session.prompt("go");
    const description = (i: number) => requests[i]!.tools.find((t) => t.name === "codemode")?.description;
    expect(description(0)).to.contain(CODEMODE_INTRO);
    expect(description(0)).to.contain("lookup(args: {\n      item: string;\n    }): Promise<{");
    expect(description(0)).to.contain("explode(args: Record<string, unknown>): Promise<string>;");
    expect(description(1)).to.equal(description(0));
    expect(requests[0]!.tools.map((t) => t.name)).to.not.include("inventory_lookup");

    const bare = await open({ script: [capture({ text: "hi" })] });
    await bare.session.prompt("hello");
    expect(requests[2]!.tools.map((t) => t.name)).to.not.include("codemode");
  });

  it("can be named in defaultTools and --tools like any tool", async () => {
    const declaredWith = async (options: { settings?: Record<string, unknown>; tools?: string[] }) => {
      const requests: ProviderStreamRequest[] = [];
      const h = await open({
        script: [
          (request: ProviderStreamRequest) => {
            requests.push(request);
            return { text: "ok" };
          },
        ],
        extensions: [fixtureTools(seen)],
        ...options,
      });
      await h.session.prompt("go");
      return requests[0]!.tools.map((t) => t.name);
    };
    expect(await declaredWith({})).to.include("codemode");
    expect(await declaredWith({ settings: { defaultTools: ["-codemode"] } })).to.not.include("codemode");
    expect(await declaredWith({ tools: ["read"] })).to.deep.equal(["read"]);
    expect(await declaredWith({ tools: ["read", "codemode"] })).to.deep.equal(["read", "codemode"]);
  });
});

describe("codemode settings", () => {
  const tmp = useTempDir("kc-codemode-settings-");

  it("validates codemode.* in settings files, naming the key", () => {
    tmp.write("agent/settings.json", JSON.stringify({ codemode: { timeoutMs: "soon", memoryMb: 16 } }));
    const settings = loadSettings({
      agentDir: join(tmp.path, "agent"),
      cwd: tmp.path,
      projectTrusted: false,
    });
    expect(settings.warnings.join("\n")).to.contain(
      'setting "codemode.timeoutMs" ignored: expected an integer',
    );
    expect(codemodeSettings(settings.all())).to.deep.equal({
      timeoutMs: 30_000,
      memoryMb: 16,
      maxConcurrent: 4,
    });
  });

  it("falls back to the default for a value out of range", () => {
    expect(codemodeSettings({ codemode: { timeoutMs: 0, memoryMb: 2.5, maxConcurrent: 2 } })).to.deep.equal({
      ...DEFAULT_CODEMODE_SETTINGS,
      maxConcurrent: 2,
    });
  });
});

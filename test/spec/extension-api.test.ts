/**
 * Rows of the spec's extensions.md that KnightCode did but no test held (docs/spec-coverage.md): what
 * `provider_stream_event` handlers get and how they are run, `context_with_system` keeping its system message first,
 * a tool's own `usage` in the session totals, the rules of `registerMcpServer` with `mcp_servers_change`, and the
 * contract of the awaitable `ctx.sendUserMessage()` of a command. Each runs a real session with the scripted model.
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@knightcodeai/cli";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("spec rows: extension API contracts (extensions.md)", function () {
  this.timeout(30_000);
  const sessions: TestSession[] = [];
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.dispose();
  });
  async function open(options: TestSessionOptions): Promise<TestSession> {
    const s = await createTestSession(options);
    sessions.push(s);
    return s;
  }

  it("runs provider_stream_event handlers one event at a time, with the provider, API and model, and never persists them", async () => {
    const order: string[] = [];
    const seen: { provider: string; api: string; model: string }[] = [];
    let ctxEntries: () => unknown[] = () => [];
    let n = 0;
    const s = await open({
      script: [{ text: "a streamed answer in several chunks" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("provider_stream_event", async (event) => {
            const i = n++;
            seen.push({ provider: event.provider, api: event.api, model: event.model });
            order.push(`start ${i}`);
            await sleep(5);
            order.push(`end ${i}`);
          });
          kc.on("provider_stream_event", () => {
            throw new Error("viewer broke on a raw event");
          });
          kc.registerCommand("entries", {
            description: "keeps a way to read the entries",
            handler: async (_args, ctx) => {
              ctxEntries = () => ctx.sessionManager.getEntries();
            },
          });
        },
      ],
    });
    await s.prompt("hello");
    expect(n, "one dispatch per raw event").to.be.greaterThan(2);
    expect(seen[0]).to.deep.equal({ provider: "scripted", api: "scripted", model: "scripted" });
    // Awaited in stream order: the next event waits for the slow handler of the one before.
    const expected = Array.from({ length: n }, (_, i) => [`start ${i}`, `end ${i}`]).flat();
    expect(order).to.deep.equal(expected);
    // A throwing handler is reported; the answer is the provider's, unchanged.
    expect(s.warnings.join("\n")).to.contain("viewer broke on a raw event");
    expect(s.lastAssistantText()).to.equal("a streamed answer in several chunks");
    await s.prompt("/entries");
    const stored = JSON.stringify(ctxEntries());
    expect(stored).to.contain("a streamed answer in several chunks");
    expect(stored).to.not.contain("provider_stream_event");
  });

  it("refuses a context_with_system result that does not start with a system message, and sends the session's prompt", async () => {
    const s = await open({
      script: [{ text: "answered", expect: { systemPromptContains: "KnightCode" } }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("context_with_system", (event) => ({ messages: event.messages.slice(1) }));
        },
      ],
    });
    await s.prompt("hello");
    expect(s.lastAssistantText()).to.equal("answered");
    expect(s.warnings.join("\n")).to.contain("context_with_system must keep a system message at index 0");
  });

  it("adds the usage a tool reports in its result to the session's totals", async () => {
    const s = await open({
      script: [
        { toolCalls: [{ name: "priced", arguments: {} }], usage: { input: 10, output: 5 } },
        { text: "done", usage: { input: 20, output: 1 } },
      ],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool({
            name: "priced",
            label: "priced",
            description: "makes a nested model call of its own",
            parameters: Type.Object({}),
            execute: async () => ({
              content: [{ type: "text", text: "side answer" }],
              details: undefined,
              usage: {
                input: 1000,
                output: 300,
                cacheRead: 0,
                cacheWrite: 0,
                totalTokens: 1300,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
              },
            }),
          });
        },
      ],
    });
    await s.prompt("use the tool");
    expect(s.lastAssistantText()).to.equal("done");
    const stats = s.session.getSessionStats();
    expect(stats.tokens).to.deep.include({ input: 10 + 20 + 1000, output: 5 + 1 + 300 });
  });

  it("registerMcpServer: refuses bad names, bad configs and another extension's name; a second registration replaces; mcp_servers_change follows", async () => {
    const changes: string[][] = [];
    let a: ExtensionAPI | undefined;
    let b: ExtensionAPI | undefined;
    const s = await open({
      disableBuiltins: ["builtin:mcp"],
      script: [{ text: "done" }],
      extensions: [
        (kc: ExtensionAPI) => {
          a = kc;
          // Standing in for an MCP extension: it connects what it hears of.
          kc.on("mcp_servers_change", (event) => void changes.push([...event.servers]));
          kc.registerMcpServer("docs", { url: "https://docs.example.test/mcp" });
        },
        (kc: ExtensionAPI) => {
          b = kc;
        },
      ],
    });
    await s.prompt("go");
    expect(a!.getMcpServers().map((x) => x.name)).to.deep.equal(["docs"]);
    expect(() => a!.registerMcpServer("bad name!", { command: "x" })).to.throw(/name "bad name!" is invalid/);
    expect(() => a!.registerMcpServer("empty", {} as never)).to.throw(/needs a command \(stdio\) or a url/);
    expect(() => a!.registerMcpServer("typed", { command: "x", timeout: "soon" } as never)).to.throw(
      /timeout/,
    );
    expect(() => b!.registerMcpServer("docs", { command: "node" })).to.throw(/already registered by/);
    expect(() => b!.unregisterMcpServer("docs")).to.throw(/cannot unregister "docs"/);

    a!.registerMcpServer("docs", { command: "node", args: ["server.js"] });
    const listed = a!.getMcpServers();
    expect(listed).to.have.length(1);
    expect(listed[0]!.config).to.deep.equal({ command: "node", args: ["server.js"] });
    b!.registerMcpServer("tickets", { url: "https://tickets.example.test/mcp" });
    a!.unregisterMcpServer("docs");
    await sleep(10);
    expect(changes.slice(-3)).to.deep.equal([["docs"], ["docs", "tickets"], ["tickets"]]);
    expect(s.warnings.join("\n")).to.not.contain("no MCP extension is loaded");
    // Registrations are not saved: no mcp.json appears.
    expect(existsSync(join(s.agentDir, "mcp.json"))).to.equal(false);
  });

  it("knightcode.events carries data from one extension to another", async () => {
    const heard: unknown[] = [];
    const s = await open({
      script: [{ text: "done" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerCommand("announce", {
            description: "tells the other extension",
            handler: async (args) => {
              kc.events.emit("build:finished", { target: args });
            },
          });
        },
        (kc: ExtensionAPI) => {
          kc.events.on("build:finished", (data) => void heard.push(data));
        },
      ],
    });
    await s.prompt("/announce web");
    expect(heard).to.deep.equal([{ target: "web" }]);
  });

  it("gives the command-only operations to command handlers and not to event handlers", async () => {
    const kinds: Record<string, string[]> = {};
    const ops = (ctx: object) =>
      ["waitForIdle", "reload", "navigateTree", "newSession", "fork", "switchSession"].map(
        (op) => `${op}:${typeof (ctx as Record<string, unknown>)[op]}`,
      );
    const s = await open({
      script: [{ text: "done" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("agent_start", (_event, ctx) => {
            kinds.event = ops(ctx);
          });
          kc.registerCommand("ops", {
            description: "lists what its ctx has",
            handler: async (_args, ctx) => {
              kinds.command = ops(ctx);
            },
          });
        },
      ],
    });
    await s.prompt("/ops");
    await s.prompt("hello");
    expect(
      kinds.command!.every((k) => k.endsWith(":function")),
      kinds.command!.join(),
    ).to.equal(true);
    expect(
      kinds.event!.every((k) => k.endsWith(":undefined")),
      kinds.event!.join(),
    ).to.equal(true);
  });

  it("loads an npm dependency from the node_modules beside an extension file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kc-spec-dep-"));
    try {
      mkdirSync(join(dir, "node_modules", "left-pad-ish"), { recursive: true });
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({ name: "ext", dependencies: { "left-pad-ish": "1.0.0" } }),
      );
      writeFileSync(
        join(dir, "node_modules", "left-pad-ish", "package.json"),
        JSON.stringify({ name: "left-pad-ish", version: "1.0.0", main: "index.js" }),
      );
      writeFileSync(
        join(dir, "node_modules", "left-pad-ish", "index.js"),
        "module.exports = (text, n) => String(text).padStart(n, '*');\n",
      );
      writeFileSync(
        join(dir, "padded.ts"),
        [
          'import pad from "left-pad-ish";',
          "export default (kc: any) => {",
          '  kc.registerCommand("pad", { description: "pads", handler: async (args: string, ctx: any) => ctx.ui.notify(pad(args, 6), "info") });',
          "};",
        ].join("\n"),
      );
      const s = await open({ script: [{ text: "done" }], extensions: [join(dir, "padded.ts")] });
      await s.prompt("/pad abc");
      expect(s.ui.notifications.map((n) => n.message)).to.include("***abc");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves declarations a prepareLoadout hook hides out of the default system prompt's tool list and rules", async () => {
    let prompt = "";
    const tool = (name: string, extra: Record<string, unknown> = {}) => ({
      name,
      label: name,
      description: `The ${name} tool`,
      promptSnippet: `${name}_snippet: does ${name} things`,
      promptGuidelines: [`Use ${name}_rule before anything else`],
      parameters: Type.Object({}),
      execute: async () => ({ content: [{ type: "text" as const, text: name }], details: undefined }),
      ...extra,
    });
    const s = await open({
      script: [{ text: "done" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool(tool("alpha_probe"));
          kc.registerTool(
            tool("conductor_probe", {
              prepareLoadout: () => ({ hiddenDeclarations: ["alpha_probe"] }),
            }),
          );
          kc.registerCommand("prompt", {
            description: "reads the system prompt",
            handler: async (_args, ctx) => {
              prompt = ctx.getSystemPrompt();
            },
          });
        },
      ],
    });
    await s.prompt("hello");
    await s.prompt("/prompt");
    expect(prompt).to.contain("conductor_probe");
    expect(prompt).to.not.contain("alpha_probe");
    expect(prompt).to.not.contain("alpha_probe_rule");
  });

  it("names no tool in the skills hint, so it holds with the file reader hidden", async () => {
    const agentDir = mkdtempSync(join(tmpdir(), "kc-spec-skills-"));
    try {
      mkdirSync(join(agentDir, "skills", "release-notes"), { recursive: true });
      writeFileSync(
        join(agentDir, "skills", "release-notes", "SKILL.md"),
        "---\nname: release-notes\ndescription: Writes release notes from the changelog\n---\nSteps.\n",
      );
      let prompt = "";
      const s = await open({
        agentDir,
        tools: ["bash"],
        script: [{ text: "done" }],
        extensions: [
          (kc: ExtensionAPI) =>
            kc.registerCommand("prompt", {
              description: "reads the system prompt",
              handler: async (_args, ctx) => {
                prompt = ctx.getSystemPrompt();
              },
            }),
        ],
      });
      await s.prompt("hello");
      await s.prompt("/prompt");
      const skills = prompt.slice(prompt.indexOf("# Skills"));
      expect(skills).to.contain('name="release-notes"');
      const hint = skills.slice(0, skills.indexOf("<skills>"));
      for (const tool of ["read", "bash", "grep", "find", "ls"]) {
        expect(hint).to.not.match(new RegExp(`\`${tool}\`|\\b${tool} tool\\b`));
      }
    } finally {
      rmSync(agentDir, { recursive: true, force: true });
    }
  });

  it("switches the model and the thinking level through knightcode.setModel() and setThinkingLevel()", async () => {
    const seen: string[] = [];
    let api: ExtensionAPI | undefined;
    const s = await open({
      script: [{ text: "from the first model" }, { text: "from the second model" }],
      extensions: [
        (kc: ExtensionAPI) => {
          api = kc;
          // A second model served by the scripted API, as a models.json entry would be.
          kc.registerProvider("alt", {
            api: "scripted",
            models: [{ id: "alt-1", reasoning: true }],
          } as never);
          kc.on("model_select", (e) => void seen.push(`model_select ${e.model.id} ${e.source}`));
          kc.on("thinking_level_select", (e) => void seen.push(`thinking ${e.previousLevel}->${e.level}`));
          kc.registerCommand("switch", {
            description: "moves to alt-1 at high",
            handler: async (_args, ctx) => {
              const model = ctx.modelRegistry.find("alt", "alt-1")!;
              seen.push(`set ${await kc.setModel(model)}`);
              kc.setThinkingLevel("high");
            },
          });
        },
      ],
    });
    await s.prompt("one");
    await s.prompt("/switch");
    expect(api!.getThinkingLevel()).to.equal("high");
    await s.prompt("two");
    const models = s
      .eventsOfType("message_end")
      .map((e) => e.message as { role: string; provider?: string; model?: string })
      .filter((m) => m.role === "assistant")
      .map((m) => `${m.provider}/${m.model}`);
    expect(models).to.deep.equal(["scripted/scripted", "alt/alt-1"]);
    expect(seen).to.include("set true");
    expect(seen).to.include("model_select alt-1 set");
    expect(seen.some((x) => x.endsWith("->high"))).to.equal(true);
    expect(s.eventsOfType("thinking_level_changed").at(-1)).to.deep.include({ level: "high" });
  });

  it("gives ctx.signal to work of the active run, aborted with it, and none to an idle command", async () => {
    let during: AbortSignal | undefined;
    let idle: AbortSignal | undefined | "unset" = "unset";
    let release!: () => void;
    const reached = new Promise<void>((resolve) => {
      release = resolve;
    });
    const s = await open({
      script: [{ toolCalls: [{ name: "wait_probe", arguments: {} }] }, { text: "never" }],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.registerTool({
            name: "wait_probe",
            label: "wait",
            description: "waits on nested work owned by the turn",
            parameters: Type.Object({}),
            execute: async (_id, _params, _signal, _onUpdate, ctx) => {
              during = ctx.signal;
              release();
              await new Promise<void>((resolve) => ctx.signal?.addEventListener("abort", () => resolve()));
              return { content: [{ type: "text", text: "stopped" }], details: undefined };
            },
          });
          kc.registerCommand("idle", {
            description: "reads ctx.signal while nothing runs",
            handler: async (_args, ctx) => {
              idle = ctx.signal;
            },
          });
        },
      ],
    });
    const run = s.prompt("go");
    await reached;
    expect(during).to.be.instanceOf(AbortSignal);
    expect(during!.aborted).to.equal(false);
    s.session.abort();
    await run;
    expect(during!.aborted).to.equal(true);
    await s.prompt("/idle");
    expect(idle).to.equal(undefined);
  });

  describe("await ctx.sendUserMessage() in a command", () => {
    it("resolves after the run it starts has settled", async () => {
      const log: string[] = [];
      const s = await open({
        script: [{ text: "inner answer", chunkDelayMs: 5 }],
        extensions: [
          (kc: ExtensionAPI) => {
            kc.on("agent_settled", () => void log.push("settled"));
            kc.registerCommand("ask", {
              description: "asks the model and waits",
              handler: async (_args, ctx) => {
                await ctx.sendUserMessage("inner question");
                log.push(`resolved idle=${ctx.isIdle()}`);
              },
            });
          },
        ],
      });
      await s.prompt("/ask");
      expect(log).to.deep.equal(["settled", "resolved idle=true"]);
      expect(s.lastAssistantText()).to.equal("inner answer");
    });

    it("only queues a message sent with deliverAs during a run, resolving before that run settles", async () => {
      const log: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const s = await open({
        script: [
          { toolCalls: [{ name: "hold", arguments: {} }] },
          { text: "first run answered" },
          { text: "follow-up answered" },
        ],
        extensions: [
          (kc: ExtensionAPI) => {
            kc.registerTool({
              name: "hold",
              label: "hold",
              description: "waits until the test lets it go",
              parameters: Type.Object({}),
              execute: async () => {
                await held;
                return { content: [{ type: "text", text: "released" }], details: undefined };
              },
            });
            kc.on("agent_settled", () => void log.push("settled"));
            kc.registerCommand("later", {
              description: "queues a follow-up during the run",
              handler: async (_args, ctx: ExtensionCommandContext) => {
                kc.sendUserMessage("start a run");
                const deadline = Date.now() + 10_000;
                while (ctx.isIdle() && Date.now() < deadline) await sleep(5);
                await ctx.sendUserMessage("and then this", { deliverAs: "followUp" });
                log.push(`queued idle=${ctx.isIdle()}`);
                release();
                await ctx.waitForIdle();
              },
            });
          },
        ],
      });
      await s.prompt("/later");
      expect(log[0]).to.equal("queued idle=false");
      expect(log).to.include("settled");
      const users = s
        .eventsOfType("message_end")
        .map((e) => e.message as { role: string; content: unknown })
        .filter((m) => m.role === "user")
        .map((m) => (typeof m.content === "string" ? m.content : (m.content as { text: string }[])[0]!.text));
      expect(users).to.deep.equal(["start a run", "and then this"]);
      expect(s.lastAssistantText()).to.equal("follow-up answered");
    });

    it("has the same contract on the context a replaced session hands to withSession", async () => {
      const log: string[] = [];
      const s = await open({
        script: [{ text: "answer in the new session", chunkDelayMs: 5 }],
        extensions: [
          (kc: ExtensionAPI) => {
            kc.on("agent_settled", () => void log.push("settled"));
            kc.registerCommand("fresh", {
              description: "asks in a new session",
              handler: async (_args, ctx) => {
                await ctx.newSession({
                  withSession: async (next) => {
                    await next.sendUserMessage("first question here");
                    log.push(`resolved idle=${next.isIdle()}`);
                  },
                });
              },
            });
          },
        ],
      });
      await s.prompt("/fresh");
      expect(log).to.deep.equal(["settled", "resolved idle=true"]);
      expect(s.lastAssistantText()).to.equal("answer in the new session");
    });

    it("gives the prompt that ran the command the dispatch's acceptance once, before settlement; handled without one", async () => {
      const log: string[] = [];
      const s = await open({
        script: [{ text: "inner", chunkDelayMs: 5 }],
        extensions: [
          (kc: ExtensionAPI) => {
            kc.on("agent_settled", () => void log.push("settled"));
            kc.registerCommand("ask", {
              description: "dispatches twice",
              handler: async (_args, ctx) => {
                await ctx.sendUserMessage("question");
                log.push("first resolved");
                await ctx.sendUserMessage("/quiet");
                log.push("second resolved");
              },
            });
            kc.registerCommand("quiet", { description: "does nothing", handler: async () => {} });
          },
        ],
      });
      const accept = (label: string) => ({ onAccepted: (d: string) => void log.push(`${label}:${d}`) });
      await s.session.prompt("/ask", accept("ask") as never);
      expect(log).to.deep.equal(["ask:started", "settled", "first resolved", "second resolved"]);
      log.length = 0;
      await s.session.prompt("/quiet", accept("quiet") as never);
      expect(log).to.deep.equal(["quiet:handled"]);
    });

    it("rethrows the failure of a command it runs, which is also reported", async () => {
      const log: string[] = [];
      const s = await open({
        script: [{ text: "never asked" }],
        extensions: [
          (kc: ExtensionAPI) => {
            kc.registerCommand("boom", {
              description: "fails",
              handler: async () => {
                throw new Error("boom failed on purpose");
              },
            });
            kc.registerCommand("outer", {
              description: "runs /boom through sendUserMessage",
              handler: async (_args, ctx) => {
                try {
                  await ctx.sendUserMessage("/boom");
                  log.push("resolved");
                } catch (error) {
                  log.push(`rejected: ${(error as Error).message}`);
                }
              },
            });
          },
        ],
      });
      await s.prompt("/outer");
      expect(log).to.have.length(1);
      expect(log[0]).to.match(/^rejected: .*boom failed on purpose/);
      expect(s.warnings.join("\n")).to.contain("boom failed on purpose");
      expect(s.eventsOfType("agent_start")).to.have.length(0);
    });
  });
});

/** The SDK composition: trust and project resources, extension origins and order, sessions on disk, replacement. */

import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { createScriptedProvider } from "../../../builtin-extensions/scripted-provider/index.js";
import {
  type AgentSessionHandle,
  type CreateAgentSessionOptions,
  createAgentSession,
  createStandardKernel,
} from "../../../hosts/sdk/create-agent-session.js";
import { sessionInternals } from "../../../hosts/sdk/session-internals.js";
import type {
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
  Kernel,
} from "../../../kernel/index.js";
import { headlessUI } from "../../../plugins/kit/headless-ui.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** An extension file that records its origin order through a global list. */
const recorder = (name: string) => `
export default function (kc: any) {
  (globalThis as any).__kcOrder.push(${JSON.stringify(name)});
  kc.registerCommand(${JSON.stringify(name)}, { handler() {} });
}
`;

describe("createAgentSession", () => {
  const tmp = useTempDir("kc-sdk-");
  let kernel: Kernel;
  const handles: AgentSessionHandle[] = [];
  let warnings: string[];
  const g = globalThis as unknown as { __kcOrder: string[] };

  beforeEach(async () => {
    g.__kcOrder = [];
    warnings = [];
    kernel = await createStandardKernel({ agentDir: join(tmp.path, "agent"), cacheDir: false });
  });

  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    await kernel.dispose();
  });

  const project = () => join(tmp.path, "project");
  const agentDir = () => join(tmp.path, "agent");

  async function open(options: CreateAgentSessionOptions = {}): Promise<AgentSessionHandle> {
    const handle = await createAgentSession({
      cwd: project(),
      agentDir: agentDir(),
      kernel,
      warn: (message) => warnings.push(message),
      session: { inMemory: true },
      ...options,
    });
    handles.push(handle);
    return handle;
  }

  function layout(): void {
    tmp.write("project/.knightcode/extensions/project-ext.ts", recorder("project"));
    tmp.write("project/.knightcode/settings.json", JSON.stringify({ fromProject: true }));
    tmp.write("agent/extensions/personal-ext.ts", recorder("personal"));
    tmp.write("cli-ext.ts", recorder("cli"));
  }

  const commands = (handle: AgentSessionHandle) =>
    (
      sessionInternals(handle).runtime.scope.resolve({ id: "core.commands" } as never) as {
        getCommands(): { name: string }[];
      }
    )
      .getCommands()
      .map((c) => c.name);

  it("does not load an untrusted project's extensions or settings, and says so once", async () => {
    layout();
    const handle = await open({ extensions: [join(tmp.path, "cli-ext.ts")] });
    expect(g.__kcOrder).to.deep.equal(["personal", "cli"]);
    expect(commands(handle)).to.not.include("project");
    expect(sessionInternals(handle).settings.get("fromProject")).to.equal(undefined);
    expect(handle.projectTrusted).to.equal(false);
    const notices = warnings.filter((w) => w.includes("not trusted"));
    expect(notices).to.have.length(1);
    expect(notices[0]).to.contain(join(project(), ".knightcode"));
  });

  it("loads a trusted project's resources, with handlers in load order: built-in, personal, project, CLI", async () => {
    layout();
    const handle = await open({ approve: true, extensions: [join(tmp.path, "cli-ext.ts")] });
    expect(g.__kcOrder).to.deep.equal(["personal", "cli", "project"]);
    // Distinct origins in load order (there are several built-ins).
    const origins = sessionInternals(handle)
      .runtime.extensionInfos.map((i) => i.origin)
      .filter((o, i, all) => o !== all[i - 1]);
    expect(origins).to.deep.equal(["builtin", "user", "project", "cli"]);
    expect(sessionInternals(handle).settings.get("fromProject")).to.equal(true);
    expect(handle.projectTrusted).to.equal(true);
  });

  it("lets a personal or CLI extension decide project trust through project_trust", async () => {
    layout();
    const decider = tmp.write(
      "decider.ts",
      `export default (kc: any) => kc.on("project_trust", (event: any) => ({ trusted: event.cwd === ${JSON.stringify(project())} ? "yes" : "no" }));`,
    );
    const handle = await open({ extensions: [decider] });
    expect(handle.projectTrusted).to.equal(true);
    expect(commands(handle)).to.include("project");
  });

  it("refuses project_trust to an SDK extension: the spec names only personal and command-line ones", async () => {
    layout();
    const warnings: string[] = [];
    const handle = await open({
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("project_trust", () => ({ trusted: "yes" }));
        },
      ],
      warn: (message) => warnings.push(message),
    });
    expect(handle.projectTrusted).to.equal(false);
    expect(warnings.join("\n")).to.match(
      /may not handle "project_trust": only user, cli extensions take part/,
    );
  });

  it("uses a saved trust decision for the project or an ancestor", async () => {
    layout();
    tmp.write(
      "agent/trust.json",
      JSON.stringify({
        version: 1,
        decisions: { [tmp.path]: { trusted: true, at: new Date().toISOString() } },
      }),
    );
    const handle = await open();
    expect(handle.projectTrusted).to.equal(true);
  });

  it("disables a built-in extension listed as -builtin:<name> in settings", async () => {
    tmp.write("agent/settings.json", JSON.stringify({ extensions: ["-builtin:scripted"] }));
    const handle = await open();
    expect(sessionInternals(handle).runtime.extensionInfos.map((i) => i.id)).to.not.include(
      "builtin:scripted",
    );
    expect(
      sessionInternals(handle)
        .models.getAvailable()
        .map((m) => m.provider),
    ).to.not.include("scripted");
  });

  it("says how to configure a model when none is selected", async () => {
    const handle = await open();
    let error: unknown;
    await handle.prompt("hi").catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).to.contain("No model is selected");
    // The agent folder's real files, not a placeholder.
    expect(String(error)).to.contain("auth.json").and.contain("models.json").and.not.contain("<agentDir>");
    let resolveError: unknown;
    try {
      sessionInternals(handle).models.resolveModel({});
    } catch (e) {
      resolveError = e;
    }
    expect(String(resolveError)).to.contain("ANTHROPIC_API_KEY").and.contain("models.json");
  });

  it("answers from a script file given with the scripted provider's own --script flag", async () => {
    const script = tmp.write("hello.json", JSON.stringify({ steps: [{ text: "scripted hello" }] }));
    const handle = await open({ provider: "scripted", model: "scripted", flags: { script } });
    const texts: string[] = [];
    handle.subscribe((e) => {
      if (e.type === "message_end" && (e.message as { role: string }).role === "assistant") {
        texts.push(((e.message as { content: { text: string }[] }).content[0] ?? { text: "" }).text);
      }
    });
    await handle.prompt("hi");
    expect(texts).to.deep.equal(["scripted hello"]);
  });

  it("persists the session and resumes it with its messages and model", async () => {
    const steps = [{ text: "first answer" }, { text: "second answer", expect: { lastUserText: "again" } }];
    const first = await open({
      session: {},
      provider: "scripted",
      model: "scripted",
      extensions: [createScriptedProvider(steps)],
    });
    await first.prompt("hello");
    const file = first.sessionManager.getSessionFile()!;
    expect(existsSync(file)).to.equal(true);
    await first.dispose();
    const resumed = await open({
      session: { continue: true },
      extensions: [createScriptedProvider(steps.slice(1))],
    });
    expect(resumed.sessionManager.getSessionFile()).to.equal(file);
    expect(sessionInternals(resumed).agent.model?.id).to.equal("scripted");
    const roles = sessionInternals(resumed)
      .log.buildContext()
      .messages.map((m) => m.role);
    expect(roles).to.deep.equal(["user", "assistant"]);
    await resumed.prompt("again");
    expect(
      sessionInternals(resumed)
        .log.buildContext()
        .messages.map((m) => m.role),
    ).to.deep.equal(["user", "assistant", "user", "assistant"]);
  });

  it("keeps --no-session sessions in memory only", async () => {
    const handle = await open({
      session: { inMemory: true },
      provider: "scripted",
      model: "scripted",
      extensions: [createScriptedProvider([{ text: "ok" }])],
    });
    await handle.prompt("hi");
    expect(handle.sessionManager.getSessionFile()).to.equal(undefined);
    expect(existsSync(join(agentDir(), "sessions"))).to.equal(false);
  });

  it("replaces the session on newSession: old ctx goes stale, reasons and previous file are reported", async () => {
    const seen: string[] = [];
    let oldCtx: ExtensionContext | undefined;
    let command: ExtensionCommandContext | undefined;
    const handle = await open({
      session: {},
      provider: "scripted",
      model: "scripted",
      extensions: [
        createScriptedProvider([{ text: "one" }]),
        (kc: ExtensionAPI) => {
          kc.on("session_start", (event, ctx) => {
            seen.push(`start:${event.reason}:${event.previousSessionFile ? "prev" : "-"}`);
            oldCtx ??= ctx;
          });
          kc.on("session_shutdown", (event) => void seen.push(`shutdown:${event.reason}`));
          kc.registerCommand("fresh", {
            handler: async (_args, ctx) => {
              command = ctx;
            },
          });
        },
      ],
    });
    await handle.prompt("hi");
    const firstFile = handle.sessionManager.getSessionFile();
    await handle.prompt("/fresh");
    let replacedCwd: string | undefined;
    const result = await command!.newSession({
      withSession: async (ctx) => {
        replacedCwd = ctx.cwd;
      },
    });
    expect(result).to.deep.equal({ cancelled: false });
    expect(seen).to.deep.equal(["start:startup:-", "shutdown:new", "start:new:prev"]);
    expect(() => oldCtx!.cwd).to.throw(/reloaded, replaced or shut down/);
    expect(replacedCwd).to.equal(project());
    expect(handle.sessionManager.getSessionFile()).to.not.equal(firstFile);
    expect(sessionInternals(handle).log.buildContext().messages).to.deep.equal([]);
  });

  it("lets session_before_switch cancel a replacement", async () => {
    const handle = await open({
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("session_before_switch", () => ({ cancel: true }));
        },
      ],
    });
    const before = sessionInternals(handle).runtime;
    expect(await handle.newSession()).to.deep.equal({ cancelled: true });
    expect(sessionInternals(handle).runtime).to.equal(before);
  });

  it("forks into a new file that names its parent, keeping the branch up to the entry", async () => {
    const handle = await open({
      session: {},
      provider: "scripted",
      model: "scripted",
      extensions: [createScriptedProvider([{ text: "a" }, { text: "b" }])],
    });
    await handle.prompt("one");
    await handle.prompt("two");
    const firstFile = handle.sessionManager.getSessionFile()!;
    const userTwo = handle.sessionManager
      .getBranch()
      .filter((e) => e.type === "message" && e.message.role === "user")[1]!;
    await handle.fork(userTwo.id, { position: "before" });
    expect(handle.sessionManager.getHeader().parentSession).to.equal(firstFile);
    expect(
      sessionInternals(handle)
        .log.buildContext()
        .messages.map((m) => m.role),
    ).to.deep.equal(["user", "assistant"]);
    const files = readdirSync(join(firstFile, ".."));
    expect(files.filter((f) => f.endsWith(".jsonl"))).to.have.length(2);
  });

  it("navigates the tree within the same file from a command", async () => {
    let command: ExtensionCommandContext | undefined;
    const handle = await open({
      provider: "scripted",
      model: "scripted",
      extensions: [
        createScriptedProvider([{ text: "a" }, { text: "b" }, { text: "c" }]),
        (kc: ExtensionAPI) => {
          kc.registerCommand("grab", {
            handler: async (_a, ctx) => {
              command = ctx;
            },
          });
        },
      ],
    });
    await handle.prompt("one");
    const firstAssistant = handle.sessionManager.getLeafId()!;
    await handle.prompt("two");
    await handle.prompt("/grab");
    await command!.navigateTree(firstAssistant);
    await handle.prompt("three");
    const branch = sessionInternals(handle)
      .log.buildContext()
      .messages.map((m) => (m.role === "user" ? m.content : m.role));
    expect(branch).to.deep.equal(["one", "assistant", "three", "assistant"]);
    expect(handle.sessionManager.getChildren(firstAssistant)).to.have.length(2);
  });

  it("applies defaultTools from settings to the active set", async () => {
    const handle = await open({
      settings: {
        defaultTools: ["-two", "+three"],
        extensions: ["-builtin:core-tools", "-builtin:codemode", "-builtin:tool-search"],
      },
      extensions: [
        (kc: ExtensionAPI) => {
          const tool = (name: string, defaultActive = true) =>
            kc.registerTool({
              name,
              description: name,
              parameters: { type: "object", properties: {} } as never,
              defaultActive,
              execute: async () => ({ content: [], details: undefined }),
            });
          tool("one");
          tool("two");
          tool("three", false);
        },
      ],
    });
    expect(sessionInternals(handle).tools.getActiveTools().sort()).to.deep.equal(["one", "three"]);
  });

  it("builds the system prompt from context files, SYSTEM.md and the active tools, and follows edits of the tool list", async () => {
    tmp.write("project/AGENTS.md", "Always run the linter before committing.");
    tmp.write("agent/APPEND_SYSTEM.md", "Answer in British English.");
    let prompt = "";
    const handle = await open({
      provider: "scripted",
      model: "scripted",
      extensions: [
        createScriptedProvider([
          (request: { systemPrompt: string }) => {
            prompt = request.systemPrompt;
            return { text: "ok" };
          },
        ] as never),
        (kc: ExtensionAPI) => {
          for (const name of ["alpha", "beta"]) {
            kc.registerTool({
              name,
              description: name,
              promptSnippet: `${name} does ${name} things`,
              parameters: { type: "object", properties: {} } as never,
              execute: async () => ({ content: [], details: undefined }),
            });
          }
          kc.on("before_agent_start", (event) => {
            event.systemPromptOptions.tools = event.systemPromptOptions.tools.filter((t) => t !== "beta");
          });
        },
      ],
    });
    await handle.prompt("hi");
    expect(prompt).to.contain("Always run the linter before committing.");
    expect(prompt).to.contain(join(project(), "AGENTS.md"));
    expect(prompt).to.contain("Answer in British English.");
    expect(prompt).to.contain("alpha does alpha things");
    expect(prompt).to.not.contain("beta does beta things");
    expect(sessionInternals(handle).agent.systemPrompt).to.equal(prompt);
  });

  it("reports a malformed settings file with its location and still starts", async () => {
    mkdirSync(agentDir(), { recursive: true });
    writeFileSync(join(agentDir(), "settings.json"), '{\n  "retry": {\n    "enabled": true,\n  }\n}\n');
    await open();
    expect(warnings.some((w) => w.includes("settings.json:4:"))).to.equal(true);
  });

  it("sends an extension's log warnings and errors to warn with its id, and drops info without a log callback", async () => {
    await open({
      extensions: [
        function logger(kc: ExtensionAPI) {
          kc.log.info("quiet detail");
          kc.log.warn("cache is cold");
          kc.log.error("index is broken");
        },
      ],
    });
    expect(warnings.filter((w) => w.startsWith("sdk:logger: "))).to.deep.equal([
      "sdk:logger: cache is cold",
      "sdk:logger: index is broken",
    ]);
    expect(warnings.join("\n")).to.not.contain("quiet detail");
  });

  it("dispatches each chunk of a person's bash command as bash_execution_update, in order, before it returns", async () => {
    const chunks: { id?: string; delta: string }[] = [];
    mkdirSync(project(), { recursive: true });
    const handle = await open({
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("bash_execution_update", (event) => {
            chunks.push(event);
          });
        },
      ],
    });
    const result = await handle.executeBash("printf one; sleep 0.05; printf two", {
      id: "req-1",
      excludeFromContext: true,
    });
    expect(result.exitCode).to.equal(0);
    expect(chunks.map((c) => c.delta).join("")).to.equal("onetwo");
    expect(chunks.every((c) => c.id === "req-1")).to.equal(true);
  });

  it("subscribes to the session's wire events only while a host listens, across session replacement", async () => {
    const handle = await open();
    const count = () => sessionInternals(handle).runtime.bus.count("message_update");
    expect(count(), "nobody listens: hot events skip their payloads").to.equal(0);
    const seen: string[] = [];
    const unsubscribe = handle.subscribe((event) => seen.push(event.type));
    expect(count()).to.equal(1);
    await handle.newSession();
    expect(count(), "the new session's bus gets the host's handlers").to.equal(1);
    unsubscribe();
    expect(count()).to.equal(0);
  });

  it("runs beforeStart once, before session_start, with the modes registered and the UI it binds visible there", async () => {
    const seen: { hasUI: boolean; status?: string }[] = [];
    const statuses: string[] = [];
    const ui = {
      ...headlessUI,
      setStatus: (_key: string, text: string | undefined) => statuses.push(text ?? ""),
    };
    let calls = 0;
    let extensionHandlers = 0;
    const handle = await open({
      extensions: [
        (kc: ExtensionAPI) =>
          kc.on("session_start", (_event, ctx) => {
            seen.push({ hasUI: ctx.hasUI });
            ctx.ui.setStatus("start", "from session_start");
          }),
      ],
      beforeStart: (session) => {
        calls++;
        expect(session.getMode("rpc"), "built-in modes are registered already").to.not.equal(undefined);
        session.setUI(ui, true);
        // A host may listen from here on, with one handler per wire event (built-ins may listen too).
        extensionHandlers = sessionInternals(session).runtime.bus.count("agent_start");
        session.subscribe(() => {});
      },
    });
    expect(seen).to.deep.equal([{ hasUI: true }]);
    expect(statuses).to.deep.equal(["from session_start"]);
    expect(sessionInternals(handle).runtime.bus.count("agent_start")).to.equal(extensionHandlers + 1);
    await handle.newSession();
    expect(calls, "only the first session").to.equal(1);
    expect(seen).to.deep.equal([{ hasUI: true }, { hasUI: true }]);
  });

  it("ends createAgentSession with the error beforeStart throws, leaving no session behind", async () => {
    let started = false;
    const failing = createAgentSession({
      cwd: project(),
      agentDir: agentDir(),
      kernel,
      warn: (message) => warnings.push(message),
      session: { inMemory: true },
      extensions: [
        (kc: ExtensionAPI) =>
          kc.on("session_start", () => {
            started = true;
          }),
      ],
      beforeStart: () => {
        throw new Error("no such mode");
      },
    });
    let error: unknown;
    await failing.catch((e: unknown) => {
      error = e;
    });
    expect((error as Error)?.message).to.equal("no such mode");
    expect(started).to.equal(false);
  });
});

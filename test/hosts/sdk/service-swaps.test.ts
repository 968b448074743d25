/**
 * Every service docs/swapping-builtins.md says a host can replace, replaced through its token with only the public
 * entry points (`@knightcodeai/cli` and `@knightcodeai/cli/plugin`), and shown to be the one in use: session store,
 * settings, trust, agent loop, model registry and tool registry.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  type AgentSessionHandle,
  createAgentSession,
  createStandardKernel,
  type ExtensionAPI,
  type ToolInfo,
} from "@knightcodeai/cli";
import {
  definePlugin,
  fileSessionStore,
  type Kernel,
  type PluginDefinition,
  SessionManager,
  type SessionStore,
  serviceTokens,
  standardPlugins,
  type Token,
  ToolRegistry,
} from "@knightcodeai/cli/plugin";
import { expect } from "chai";
import { createScriptedProvider } from "../../../builtin-extensions/scripted-provider/index.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** The standard plugin that provides `token`, to decorate rather than rewrite. */
function standard<T>(token: Token<T>): PluginDefinition<T, any> {
  const found = standardPlugins().find((p) => p.provides === token);
  if (!found) throw new Error(`no standard plugin provides ${token}`);
  return found as PluginDefinition<T, any>;
}

describe("swapping services through their tokens", () => {
  const tmp = useTempDir("kc-swap-");
  let kernel: Kernel;
  const handles: AgentSessionHandle[] = [];

  beforeEach(async () => {
    kernel = await createStandardKernel({ agentDir: join(tmp.path, "agent"), cacheDir: false });
  });

  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    await kernel.dispose();
  });

  async function open(
    options: Parameters<typeof createAgentSession>[0] = {},
    answers: string[] = ["done"],
  ): Promise<AgentSessionHandle> {
    const handle = await createAgentSession({
      cwd: tmp.path,
      agentDir: join(tmp.path, "agent"),
      kernel,
      warn: () => {},
      provider: "scripted",
      model: "scripted",
      extensions: [createScriptedProvider(answers.map((text) => ({ text })))],
      ...options,
    });
    handles.push(handle);
    return handle;
  }

  it("session store: an in-memory store keeps every session off the disk", async () => {
    const opened: string[] = [];
    const memory: SessionStore = {
      create: (o) => {
        opened.push("create");
        return SessionManager.inMemory(o.cwd);
      },
      open: () => {
        throw new Error("this store keeps no files");
      },
      continueRecent: (o) => {
        opened.push("continue");
        return SessionManager.inMemory(o.cwd);
      },
      inMemory: (cwd) => SessionManager.inMemory(cwd),
      list: () => [],
      listAll: () => [],
      findById: (id) => {
        throw new Error(`no session ${id}`);
      },
      info: () => undefined,
      archiveLocation: (o) => o,
      archive: () => {
        throw new Error("this store keeps no files");
      },
      unarchive: () => {
        throw new Error("this store keeps no files");
      },
      remove: () => {
        throw new Error("this store keeps no files");
      },
      catalog: () => ({
        page: () => ({ sessions: [] }),
        find: () => undefined,
        warm: async () => {},
        touched: () => {},
        close: () => {},
      }),
      header: () => undefined,
      readBranch: () => {
        throw new Error("this store keeps no files");
      },
      readBranchTail: () => {
        throw new Error("this store keeps no files");
      },
      fork: () => {
        throw new Error("this store keeps no files");
      },
      setCwd: () => {
        throw new Error("this store keeps no files");
      },
    };
    kernel.provide(
      definePlugin({ id: "test:memory-store", provides: serviceTokens.sessionStore, create: () => memory }),
    );
    const handle = await open();
    await handle.prompt("hi");
    await handle.newSession();
    expect(opened).to.deep.equal(["create", "create"]);
    expect(handle.getState().sessionFile).to.equal(undefined);
    expect(existsSync(join(tmp.path, "agent", "sessions"))).to.equal(false);
  });

  it("session store: the host face's listings (what the app-server's thread/list pages) come from the store", async () => {
    const file = join(tmp.path, "elsewhere", "s.jsonl");
    const info = {
      path: file,
      id: "00000000-0000-4000-8000-000000000001",
      cwd: tmp.path,
      created: new Date(1_000),
      modified: new Date(2_000),
      messageCount: 3,
      firstMessage: "from the swapped store",
    };
    const asked: unknown[] = [];
    const listing: SessionStore = {
      ...fileSessionStore,
      catalog: (location) => ({
        page: (options) => {
          asked.push({ location: location.agentDir, cwd: options.cwd, limit: options.limit });
          return { sessions: [{ info, mtimeMs: 3_000 }] };
        },
        find: (id) => (id === info.id ? { info, mtimeMs: 3_000 } : undefined),
        warm: async () => {},
        touched: () => {},
        close: () => {},
      }),
    };
    kernel.provide(
      definePlugin({ id: "test:listing-store", provides: serviceTokens.sessionStore, create: () => listing }),
    );
    const handle = await open({ session: { inMemory: true } });
    const page = handle.host.sessions.page({ cwd: tmp.path, limit: 5 });
    expect(page.sessions.map((s) => [s.id, s.firstMessage, s.fileModified.getTime()])).to.deep.equal([
      [info.id, "from the swapped store", 3_000],
    ]);
    expect(asked).to.deep.equal([{ location: join(tmp.path, "agent"), cwd: tmp.path, limit: 5 }]);
    expect(handle.host.sessions.find(info.id)?.path).to.equal(file);
  });

  it("settings: a loader that adds values is what the session and its extensions read", async () => {
    const original = kernel.container.resolve(serviceTokens.settings);
    kernel.provide(
      definePlugin({
        id: "test:settings",
        provides: serviceTokens.settings,
        create: () => ({
          load: (o) =>
            original.load({
              ...o,
              overrides: { ...o.overrides, defaultThinkingLevel: "high", team: "blue" },
            }),
        }),
      }),
    );
    let seen: unknown;
    const handle = await open({
      session: { inMemory: true },
      extensions: [
        createScriptedProvider([{ text: "ok" }]),
        (kc: ExtensionAPI) => {
          seen = kc.getSettings().team;
        },
      ],
    });
    expect(seen).to.equal("blue");
    expect(handle.getThinkingLevel()).to.equal("high");
  });

  it("trust: a resolver that trusts every project makes the project's extensions load without asking", async () => {
    const asked: string[] = [];
    kernel.provide(
      definePlugin({
        id: "test:trust",
        provides: serviceTokens.trust,
        create: () => ({
          resolve: async (o) => {
            asked.push(o.cwd);
            return { trusted: true, source: "extension", protectedInputs: [] };
          },
          saved: () => undefined,
          save: () => {},
          protectedInputs: async () => [],
        }),
      }),
    );
    tmp.write(
      ".knightcode/extensions/project.ts",
      `export default (kc: any) => kc.registerCommand("from-project", { handler() {} });\n`,
    );
    const handle = await open({ session: { inMemory: true } });
    expect(asked).to.deep.equal([tmp.path]);
    expect(handle.projectTrusted).to.equal(true);
    expect(handle.getCommands().map((c) => c.name)).to.include("from-project");
  });

  it("agent loop: a decorated loop sees every prompt the host sends", async () => {
    const std = standard(serviceTokens.agent);
    const prompts: string[] = [];
    kernel.provide({
      ...std,
      id: "test:agent-loop",
      create: (deps) => {
        const agent = std.create(deps);
        const prompt = agent.prompt.bind(agent);
        agent.prompt = (text, options) => {
          prompts.push(text);
          return prompt(text, options);
        };
        return agent;
      },
    });
    const handle = await open({ session: { inMemory: true } });
    await handle.prompt("first");
    expect(prompts).to.deep.equal(["first"]);
    expect(handle.getState().messageCount).to.equal(2);
  });

  it("model registry: a registry that hides models hides them from the host and from model selection", async () => {
    const std = standard(serviceTokens.models);
    kernel.provide({
      ...std,
      id: "test:models",
      create: (deps) => {
        const models = std.create(deps);
        // Hidden from the list and from lookups by name (resolveModel finds a provider/model by `find`).
        const available = models.getAvailable.bind(models);
        const find = models.find.bind(models);
        models.getAvailable = () => available().filter((m) => m.provider !== "scripted");
        models.find = (provider, id) => (provider === "scripted" ? undefined : find(provider, id));
        return models;
      },
    });
    // Selecting the hidden model fails as for any unknown provider, and the host never lists it.
    const refused = await open({ session: { inMemory: true } }).catch((error: unknown) => error);
    expect(String(refused)).to.contain('Unknown provider "scripted"');
    const handle = await createAgentSession({
      cwd: tmp.path,
      agentDir: join(tmp.path, "agent"),
      kernel,
      warn: () => {},
      session: { inMemory: true },
      extensions: [createScriptedProvider([])],
    });
    handles.push(handle);
    expect(handle.getAvailableModels().map((m) => m.provider)).to.not.include("scripted");
  });

  it("tool registry: a registry subclass serves the loop and the extension API alike", async () => {
    class ReadOnlyTools extends ToolRegistry {
      override getAllTools(): ToolInfo[] {
        return super.getAllTools().filter((t) => t.name !== "bash");
      }
      override declarations() {
        return super.declarations().filter((d) => d.name !== "bash");
      }
    }
    const std = standard(serviceTokens.toolRegistry);
    kernel.provide({ ...std, id: "test:tools", create: () => new ReadOnlyTools() });
    let fromApi: string[] = [];
    const handle = await open({
      session: { inMemory: true },
      extensions: [
        createScriptedProvider([{ text: "ok" }]),
        (kc: ExtensionAPI) => {
          kc.on("session_start", () => {
            fromApi = kc.getAllTools().map((t) => t.name);
          });
        },
      ],
    });
    await handle.prompt("go");
    expect(fromApi).to.include("read").and.not.include("bash");
    expect(readdirSync(tmp.path)).to.not.include("sessions");
  });
});

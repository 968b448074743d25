/**
 * ModelService: models.json and auth.json, resolveModel, classify(), and the provider hooks wired to the bus.
 * Uses real temp agent dirs; some tests build the service directly over a ProviderStore and a real HookBus.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  codeSteps,
  createScriptedProvider,
  type ScriptEntry,
  scriptedProviderConfig,
} from "../../../builtin-extensions/scripted-provider/index.js";
import {
  type AgentSessionHandle,
  type CreateAgentSessionOptions,
  createAgentSession,
  createStandardKernel,
} from "../../../hosts/sdk/create-agent-session.js";
import { sessionInternals } from "../../../hosts/sdk/session-internals.js";
import {
  type AssistantMessage,
  type AssistantMessageStream,
  type Disposable,
  type ExtensionContext,
  type ExtensionInfo,
  HookBus,
  type Kernel,
  type ProviderConfig,
  type ProviderStreamRequest,
} from "../../../kernel/index.js";
import { emptyUsage } from "../../../plugins/kit/usage.js";
import { ModelService, noModelHelp } from "../../../plugins/model-registry/model-service.js";
import { ProviderStore } from "../../../plugins/model-registry/provider-store.js";
import { ensureNoDisposablesLeaked } from "../../helpers/leak-check.js";

const LOCAL_MODELS_JSON = {
  providers: {
    local: {
      baseUrl: "http://127.0.0.1:1/v1",
      api: "scripted",
      apiKey: "LOCAL_KEY",
      models: [{ id: "m1", contextWindow: 1000, maxTokens: 100 }, { id: "m2" }],
    },
  },
};

const testOwner: ExtensionInfo = { id: "sdk:test", origin: "sdk", order: 0 };

/** A temp dir with an agent dir inside; sessions opened through it share one kernel and are disposed after. */
function useAgentDir(): {
  readonly dir: string;
  readonly agentDir: string;
  readonly warnings: string[];
  write(name: string, content: unknown): string;
  open(options?: Partial<CreateAgentSessionOptions>): Promise<AgentSessionHandle>;
  /** A ModelService built directly over a fresh store and a real bus; `register` is undone after the test. */
  service(options?: { env?: NodeJS.ProcessEnv; apiKeys?: Record<string, string> }): {
    models: ModelService;
    store: ProviderStore;
    bus: HookBus;
    register(name: string, config: ProviderConfig): void;
  };
} {
  let dir = "";
  let kernel: Kernel | undefined;
  const handles: AgentSessionHandle[] = [];
  const registrations: Disposable[] = [];
  const warnings: string[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-models-"));
    mkdirSync(join(dir, "agent"), { recursive: true });
  });
  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    for (const registration of registrations.splice(0)) registration.dispose();
    await kernel?.dispose();
    kernel = undefined;
    warnings.length = 0;
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get agentDir() {
      return join(dir, "agent");
    },
    warnings,
    write(name, content) {
      const file = join(dir, "agent", name);
      writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
      return file;
    },
    async open(options = {}) {
      kernel ??= await createStandardKernel({ agentDir: join(dir, "agent"), cacheDir: false });
      const handle = await createAgentSession({
        cwd: dir,
        agentDir: join(dir, "agent"),
        kernel,
        session: { inMemory: true },
        warn: (message) => warnings.push(message),
        ...options,
        settings: { retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 5 }, ...options.settings },
      });
      handles.push(handle);
      return handle;
    },
    service(options = {}) {
      const store = new ProviderStore();
      const bus = new HookBus({
        onHandlerError: (report) => warnings.push(`${report.owner.id} (${report.event}): ${report.error}`),
      });
      const models = new ModelService({
        store,
        bus,
        context: () => ({}) as ExtensionContext,
        agentDir: join(dir, "agent"),
        ...(options.env ? { env: options.env } : {}),
        ...(options.apiKeys ? { apiKeys: options.apiKeys } : {}),
        warn: (message) => warnings.push(message),
      });
      const register = (name: string, config: ProviderConfig) => {
        registrations.push(store.register(name, config, testOwner, {}));
      };
      return { models, store, bus, register };
    },
  };
}

function lastAssistant(handle: AgentSessionHandle): AssistantMessage {
  const last = sessionInternals(handle)
    .log.buildContext()
    .messages.findLast((m) => m.role === "assistant") as AssistantMessage | undefined;
  expect(last, "an assistant message was recorded").to.not.equal(undefined);
  return last!;
}

function textOf(message: AssistantMessage): string {
  return message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

function userMessage(text: string) {
  return { role: "user" as const, content: text, timestamp: Date.now() };
}

/** Catches the error of a promise (or a function that throws). */
async function failure(run: () => unknown): Promise<Error & { code?: string }> {
  try {
    await run();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error("expected an error");
}

/**
 * A hand-written provider that calls each hook the way a network provider would: headers, response, one
 * streamEvent per raw event, then a text answer.
 */
function hookedProvider(record: {
  headersSent?: Record<string, string>;
  rawEvents?: unknown[];
  streamEventCalls?: number;
}): ProviderConfig {
  return {
    models: [{ id: "h1" }],
    streamSimple(request: ProviderStreamRequest): AssistantMessageStream {
      const run = (async (): Promise<AssistantMessage> => {
        record.headersSent = await request.hooks.headers({
          "content-type": "application/json",
          "x-kept": "kept",
          "x-changed": "old",
          "x-removed": "gone soon",
          "x-also-removed": "gone soon",
        });
        await request.hooks.response(201, { "x-request-id": "req-1", "content-type": "text/event-stream" });
        for (const data of record.rawEvents ?? []) {
          record.streamEventCalls = (record.streamEventCalls ?? 0) + 1;
          await request.hooks.streamEvent(data);
        }
        return {
          role: "assistant",
          content: [{ type: "text", text: "hooked" }],
          api: request.model.api,
          provider: request.model.provider,
          model: request.model.id,
          usage: emptyUsage(),
          stopReason: "stop",
          timestamp: Date.now(),
        };
      })();
      return {
        async *[Symbol.asyncIterator]() {
          const message = await run;
          yield { type: "done", reason: "stop", message };
        },
        result: () => run,
      };
    },
  };
}

describe("model service", () => {
  const agent = useAgentDir();
  ensureNoDisposablesLeaked();

  describe("models.json", () => {
    it("lists a custom provider's models with their defaults filled", () => {
      agent.write("models.json", LOCAL_MODELS_JSON);
      const { models } = agent.service();
      const local = models.getAvailable().filter((m) => m.provider === "local");
      expect(local).to.deep.equal([
        {
          provider: "local",
          id: "m1",
          api: "scripted",
          contextWindow: 1000,
          maxTokens: 100,
          reasoning: false,
        },
        {
          provider: "local",
          id: "m2",
          api: "scripted",
          contextWindow: 128_000,
          maxTokens: 8_192,
          reasoning: false,
        },
      ]);
      expect(agent.warnings).to.deep.equal([]);
    });

    it("serves requests with the registered provider of the api, passing baseUrl and the env key", async () => {
      agent.write("models.json", LOCAL_MODELS_JSON);
      const seen: ProviderStreamRequest[] = [];
      const step = (request: ProviderStreamRequest) => {
        seen.push(request);
        return { text: `served ${request.model.provider}/${request.model.id}` };
      };
      for (const [env, expectedKey] of [
        [{ LOCAL_KEY: "key-from-env" }, "key-from-env"],
        [{}, undefined],
      ] as const) {
        const { models, register } = agent.service({ env });
        register("scripted", scriptedProviderConfig(codeSteps([step])));
        const result = await models
          .stream({
            model: models.find("local", "m1")!,
            systemPrompt: "",
            messages: [userMessage("hi")],
            tools: [],
          })
          .result();
        expect(result.stopReason, result.errorMessage).to.equal("stop");
        expect(textOf(result)).to.equal("served local/m1");
        const request = seen.at(-1)!;
        expect(request.baseUrl).to.equal("http://127.0.0.1:1/v1");
        expect(request.apiKey).to.equal(expectedKey);
        expect(request.model).to.include({ provider: "local", id: "m1", api: "scripted" });
      }
      expect(seen).to.have.length(2);
    });

    it("runs a session prompt on a models.json model through the scripted api", async () => {
      agent.write("models.json", LOCAL_MODELS_JSON);
      const saved = process.env.LOCAL_KEY;
      delete process.env.LOCAL_KEY;
      try {
        const seen: ProviderStreamRequest[] = [];
        const h = await agent.open({
          provider: "local",
          model: "m1",
          extensions: [
            createScriptedProvider([
              (request: ProviderStreamRequest) => {
                seen.push(request);
                return { text: "local answer" };
              },
            ] satisfies ScriptEntry[]),
          ],
        });
        expect(sessionInternals(h).agent.model).to.include({ provider: "local", id: "m1" });
        await h.prompt("hi");
        expect(textOf(lastAssistant(h))).to.equal("local answer");
        expect(seen).to.have.length(1);
        expect(seen[0]!.baseUrl).to.equal("http://127.0.0.1:1/v1");
        expect(seen[0]!).to.not.have.property("apiKey");
      } finally {
        if (saved === undefined) delete process.env.LOCAL_KEY;
        else process.env.LOCAL_KEY = saved;
      }
    });

    it("warns with line:column about a malformed file and still starts the session", async () => {
      const file = agent.write(
        "models.json",
        '{\n  "providers": {\n    "local": { "api": "scripted", "models": [{ "id": "m1" }] },\n  }\n}\n',
      );
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        extensions: [createScriptedProvider([{ text: "still works" }])],
      });
      const warning = agent.warnings.find((w) => w.includes("models.json"));
      expect(warning, agent.warnings.join("\n")).to.not.equal(undefined);
      expect(warning).to.contain(`${file}:4:3`);
      expect(
        sessionInternals(h)
          .models.getAvailable()
          .some((m) => m.provider === "local"),
      ).to.equal(false);
      await h.prompt("hi");
      expect(textOf(lastAssistant(h))).to.equal("still works");
    });

    it("gives line:column for an unexpected token (a single-quoted string) in models.json too", () => {
      const file = agent.write(
        "models.json",
        `{\n  "providers": {\n    "local": { "apiKey": 'LOCAL_KEY' }\n  }\n}\n`,
      );
      agent.service();
      expect(agent.warnings).to.have.length(1);
      expect(agent.warnings[0]).to.contain(`${file}:3:26`);
    });

    it("warns about a file that does not match the schema, naming the path, and ignores it", () => {
      agent.write("models.json", { providers: { local: { api: "scripted", models: [{ id: "" }] } } });
      const { models } = agent.service();
      expect(agent.warnings).to.have.length(1);
      expect(agent.warnings[0])
        .to.contain("/providers/local/models/0/id")
        .and.contain("the file was ignored");
      expect(models.getAvailable()).to.deep.equal([]);
    });

    it("prefers the key in auth.json over the environment variable", async () => {
      agent.write("models.json", LOCAL_MODELS_JSON);
      agent.write("auth.json", { local: { key: "k-123" } });
      const seen: ProviderStreamRequest[] = [];
      const { models, register } = agent.service({ env: { LOCAL_KEY: "key-from-env" } });
      register(
        "scripted",
        scriptedProviderConfig(
          codeSteps([
            (request: ProviderStreamRequest) => {
              seen.push(request);
              return { text: "ok" };
            },
          ]),
        ),
      );
      expect(models.resolveApiKey("local", "LOCAL_KEY")).to.equal("k-123");
      await models
        .stream({
          model: models.find("local", "m1")!,
          systemPrompt: "",
          messages: [userMessage("hi")],
          tools: [],
        })
        .result();
      expect(seen[0]!.apiKey).to.equal("k-123");
      // Other providers still resolve from the environment, and a literal key is passed as it is.
      expect(models.resolveApiKey("other", "LOCAL_KEY")).to.equal("key-from-env");
      expect(models.resolveApiKey("other", "sk-literal-key")).to.equal("sk-literal-key");
    });

    it("saves a key to auth.json with owner-only permissions, keeping other entries", async () => {
      agent.write("auth.json", { other: { type: "api_key", key: "keep-me" } });
      const { models } = agent.service();
      models.saveCredential("local", "k-saved");
      const { readFileSync, statSync } = await import("node:fs");
      const { join } = await import("node:path");
      const path = join(agent.agentDir, "auth.json");
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      expect(JSON.parse(readFileSync(path, "utf8"))).to.deep.equal({
        other: { type: "api_key", key: "keep-me" },
        local: { type: "api_key", key: "k-saved" },
      });
      expect(models.resolveApiKey("local", undefined)).to.equal("k-saved");
    });

    it("refuses to save a key into an auth.json that is a directory, naming the file and the cause", () => {
      const path = join(agent.agentDir, "auth.json");
      mkdirSync(path, { recursive: true });
      const { models } = agent.service();
      expect(() => models.saveCredential("local", "k-saved"))
        .to.throw(`${path}: cannot be read: it is a directory; fix or remove it before saving a key`)
        .with.property("code", "KC_ERR_AUTH_FILE");
    });

    it("reads auth.json once and again only when the file changes", async () => {
      const { readFileSync, utimesSync, writeFileSync } = await import("node:fs");
      const { join } = await import("node:path");
      agent.write("auth.json", { local: { key: "k-aaa" } });
      const path = join(agent.agentDir, "auth.json");
      const stamp = 1_700_000_000;
      utimesSync(path, stamp, stamp);
      const { models } = agent.service();
      expect(models.resolveApiKey("local", undefined)).to.equal("k-aaa");
      // Same size and mtime: the cached entries stand (a per-request re-read would see k-bbb).
      writeFileSync(path, readFileSync(path, "utf8").replace("k-aaa", "k-bbb"));
      utimesSync(path, stamp, stamp);
      expect(models.resolveApiKey("local", undefined)).to.equal("k-aaa");
      // A real change (here the size) is picked up on the next request.
      writeFileSync(path, JSON.stringify({ local: { key: "k-changed" } }));
      expect(models.resolveApiKey("local", undefined)).to.equal("k-changed");
    });

    it("lists as usable only models with a key, a keyless server or no need of one, saying why; never a test-only provider", () => {
      agent.write(
        "models.json",
        JSON.stringify({
          providers: {
            local: {
              api: "openai-completions",
              baseUrl: "http://127.0.0.1:9/v1",
              models: [{ id: "m1", input: ["text", "image"] }],
            },
            keyed: {
              api: "openai-completions",
              baseUrl: "http://127.0.0.1:9/v1",
              apiKey: "KEYED_KEY",
              models: [{ id: "k1" }],
            },
            stored: {
              api: "openai-completions",
              baseUrl: "http://127.0.0.1:9/v1",
              apiKey: "STORED_KEY",
              models: [{ id: "s1" }],
            },
          },
        }),
      );
      const { models, register } = agent.service({ env: {} });
      register("scripted", scriptedProviderConfig(codeSteps([])));
      const usable = () =>
        models.getUsable().map((u) => [`${u.model.provider}/${u.model.id}`, u.access, u.images]);
      expect(usable()).to.deep.equal([["local/m1", "server http://127.0.0.1:9/v1, no key", true]]);
      models.saveCredential("stored", "k-stored");
      expect(usable()).to.deep.include(["stored/s1", "key in auth.json", false]);
      expect(usable().map(([name]) => name))
        .to.not.include("keyed/k1")
        .and.not.include("scripted/scripted");
      expect(models.listCredentials()).to.deep.equal([
        { provider: "stored", type: "api_key", masked: "****" },
      ]);
      expect(models.loginProviders()).to.include("keyed").and.not.include("scripted");
      // What each needs, and where its key comes from now (CredentialStore.keyStatus).
      expect(models.keyStatus("local")).to.deep.equal({ needsKey: false });
      expect(models.keyStatus("keyed")).to.deep.equal({ needsKey: true, keyVariable: "KEYED_KEY" });
      expect(models.keyStatus("stored")).to.deep.equal({
        needsKey: true,
        keyVariable: "STORED_KEY",
        source: "auth.json",
      });
      expect(models.keyStatus("nobody")).to.equal(undefined);
      expect(models.removeCredential("stored")).to.equal(true);
      expect(models.removeCredential("stored")).to.equal(false);
      expect(usable().map(([name]) => name)).to.not.include("stored/s1");
      expect(() => models.saveCredential("stored", "  ")).to.throw('An empty key for "stored" was not saved');
    });

    it("keyStatus names the environment variable set, or a literal key of models.json, as the key's source", () => {
      agent.write(
        "models.json",
        JSON.stringify({
          providers: {
            keyed: {
              api: "openai-completions",
              baseUrl: "http://127.0.0.1:9/v1",
              apiKey: "KEYED_KEY",
              models: [{ id: "k1" }],
            },
            literal: {
              api: "openai-completions",
              baseUrl: "http://127.0.0.1:9/v1",
              apiKey: "sk-literal-1",
              models: [{ id: "l1" }],
            },
          },
        }),
      );
      const { models } = agent.service({ env: { KEYED_KEY: "from-env" } });
      expect(models.keyStatus("keyed")).to.deep.equal({
        needsKey: true,
        keyVariable: "KEYED_KEY",
        source: "environment",
      });
      expect(models.keyStatus("literal")).to.deep.equal({ needsKey: true, source: "models.json" });
    });

    it("warns about a malformed auth.json and falls back to the environment", () => {
      agent.write("auth.json", "{ not json");
      const { models } = agent.service({ env: { LOCAL_KEY: "key-from-env" } });
      expect(models.resolveApiKey("local", "LOCAL_KEY")).to.equal("key-from-env");
      expect(models.resolveApiKey("local", "LOCAL_KEY")).to.equal("key-from-env");
      // Reported once for this version of the file, not once per request.
      expect(agent.warnings.filter((w) => w.includes("auth.json:1:3: invalid JSON"))).to.have.length(1);
    });
  });

  describe("resolveModel", () => {
    function withScripted() {
      agent.write("models.json", LOCAL_MODELS_JSON);
      const { models, register } = agent.service();
      register("scripted", scriptedProviderConfig(codeSteps([])));
      return models;
    }

    it("accepts provider/model in the model field", () => {
      const models = withScripted();
      expect(models.resolveModel({ model: "scripted/scripted" })).to.include({
        provider: "scripted",
        id: "scripted",
      });
      expect(models.resolveModel({ model: "local/m2" })).to.include({ provider: "local", id: "m2" });
      expect(models.resolveModel({ provider: "local", model: "m1" })).to.include({
        provider: "local",
        id: "m1",
      });
      expect(models.resolveModel({ provider: "local" })).to.include({ provider: "local", id: "m1" });
    });

    it("gives a bare model id that several providers serve to the first one usable now", () => {
      const model = { id: "shared", contextWindow: 1000, maxTokens: 100 };
      agent.write(
        "models.json",
        JSON.stringify({
          providers: {
            keyless: {
              api: "openai-completions",
              baseUrl: "http://127.0.0.1:9/v1",
              apiKey: "KC_UNSET_KEY",
              models: [model],
            },
            keyed: {
              api: "openai-completions",
              baseUrl: "http://127.0.0.1:9/v1",
              apiKey: "KC_SET_KEY",
              models: [model],
            },
          },
        }),
      );
      const { models } = agent.service({ env: { KC_SET_KEY: "k" } });
      expect(models.resolveModel({ model: "shared" })).to.include({ provider: "keyed", id: "shared" });
      // Named with its provider, the first is taken as asked.
      expect(models.resolveModel({ model: "keyless/shared" })).to.include({ provider: "keyless" });
    });

    it("a provider's aliases name it (--model alias/id, --provider alias, find); its own name and models.json win", () => {
      const j1 = { id: "j1", contextWindow: 1000, maxTokens: 100 };
      agent.write(
        "models.json",
        JSON.stringify({
          providers: {
            "in-json": { api: "openai-completions", baseUrl: "http://127.0.0.1:9/v1", models: [j1] },
          },
        }),
      );
      const { models, register } = agent.service();
      const config = (id: string) => ({
        ...scriptedProviderConfig(codeSteps([])),
        models: [{ id, contextWindow: 1000, maxTokens: 100 }],
      });
      register("real", { ...config("r1"), aliases: ["other-name", "taken", "in-json"] });
      expect(models.resolveModel({ model: "other-name/r1" })).to.include({ provider: "real", id: "r1" });
      expect(models.resolveModel({ provider: "other-name" })).to.include({ provider: "real", id: "r1" });
      expect(models.find("other-name", "r1")).to.include({ provider: "real", id: "r1" });
      // Model lists show the provider's own name only.
      expect(models.getAvailable().map((m) => m.provider)).to.not.include("other-name");
      // A provider registered under the alias's name is that provider.
      register("taken", config("t1"));
      expect(models.resolveModel({ model: "taken/t1" })).to.include({ provider: "taken", id: "t1" });
      expect(models.find("taken", "r1")).to.equal(undefined);
      // So is a models.json entry of that name.
      expect(models.resolveModel({ model: "in-json/j1" })).to.include({ provider: "in-json", id: "j1" });
      expect(models.find("in-json", "r1")).to.equal(undefined);
      // A key given for an alias (`--provider other-name --api-key k`) is the provider's.
      const given = agent.service({ apiKeys: { "other-name": "k-given" } });
      given.register("real", { ...config("r1"), aliases: ["other-name"] });
      expect(given.models.resolveApiKey("real", undefined)).to.equal("k-given");
    });

    it("names the known providers and how to configure a model for an unknown provider", async () => {
      const models = withScripted();
      const error = await failure(() => models.resolveModel({ model: "nope/m1" }));
      expect(error.code).to.equal("KC_ERR_NO_MODEL");
      expect(error.message).to.contain('Unknown provider "nope"');
      expect(error.message)
        .to.match(/known: .*local/)
        .and.match(/known: .*scripted/);
      expect(error.message).to.contain(join(agent.agentDir, "models.json")).and.not.contain("<agentDir>");
    });

    it("lists the provider's models for an unknown model", async () => {
      const models = withScripted();
      const error = await failure(() => models.resolveModel({ provider: "local", model: "m9" }));
      expect(error.code).to.equal("KC_ERR_NO_MODEL");
      expect(error.message).to.contain('Unknown model "m9"').and.contain("local/m1, local/m2");
    });

    it("explains how to get a model when neither provider nor model is given", async () => {
      const models = withScripted();
      const error = await failure(() => models.resolveModel({}));
      expect(error.code).to.equal("KC_ERR_NO_MODEL");
      expect(error.message).to.equal(noModelHelp(agent.agentDir));
      // The real files of the agent folder, not a placeholder or a file of this repository.
      expect(error.message)
        .to.contain(join(agent.agentDir, "auth.json"))
        .and.contain(join(agent.agentDir, "models.json"))
        .and.contain("/login")
        .and.not.contain("<agentDir>")
        .and.not.contain("examples/");
    });

    it("fails createAgentSession with the unknown-provider message and leaves nothing registered", async () => {
      const error = await failure(() => agent.open({ provider: "nope" }));
      expect(error.message).to.contain('Unknown provider "nope"').and.contain("scripted");
      // A session without the built-in sees no "scripted" provider unless the failed session still holds it.
      const b = await agent.open({ settings: { extensions: ["-builtin:scripted"] } });
      expect(sessionInternals(b).models.find("scripted", "scripted")).to.equal(undefined);
    });
  });

  describe("classify()", () => {
    const labels = ["safe", "unsafe"];

    it("answers with the label the model picked through a forced tool call at temperature 0", async () => {
      const seen: ProviderStreamRequest[] = [];
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        extensions: [
          createScriptedProvider([
            (request: ProviderStreamRequest) => {
              seen.push(request);
              return { toolCalls: [{ name: "classify", arguments: { label: "safe" } }] };
            },
          ] satisfies ScriptEntry[]),
        ],
      });
      const answer = await sessionInternals(h).models.runtime().classify({ prompt: "Is `ls` safe?", labels });
      expect(answer.label).to.equal("safe");
      expect(answer.usage).to.have.property("totalTokens");
      expect(seen).to.have.length(1);
      const request = seen[0]!;
      expect(request.toolChoice).to.deep.equal({ name: "classify" });
      expect(request.temperature).to.equal(0);
      expect(request.model).to.include({ provider: "scripted", id: "scripted" });
      expect(request.tools.map((t) => t.name)).to.deep.equal(["classify"]);
      const schema = request.tools[0]!.parameters as unknown as {
        properties: { label: { type: string; enum: string[] } };
      };
      expect(schema.properties.label.enum).to.deep.equal(labels);
      expect(schema.properties.label.type).to.equal("string");
      expect((request.messages[0] as { content: string }).content).to.equal("Is `ls` safe?");
    });

    it("throws an error naming an answer that is not one of the labels, and the labels", async () => {
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        extensions: [
          createScriptedProvider([{ toolCalls: [{ name: "classify", arguments: { label: "maybe" } }] }]),
        ],
      });
      const error = await failure(() => sessionInternals(h).models.classify({ prompt: "x", labels }));
      expect(error.code).to.equal("KC_ERR_CLASSIFY");
      expect(error.message).to.contain('"maybe"').and.contain("safe, unsafe");
    });

    it("throws when the model answers without the classify call", async () => {
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        extensions: [createScriptedProvider([{ text: "I think it is safe" }])],
      });
      const error = await failure(() => sessionInternals(h).models.classify({ prompt: "x", labels }));
      expect(error.code).to.equal("KC_ERR_CLASSIFY");
      expect(error.message).to.contain("null").and.contain("safe, unsafe");
    });

    it("throws when the provider fails", async () => {
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        extensions: [createScriptedProvider([{ error: { kind: "overloaded", message: "529 overloaded" } }])],
      });
      const error = await failure(() => sessionInternals(h).models.classify({ prompt: "x", labels }));
      expect(error.code).to.equal("KC_ERR_CLASSIFY");
      expect(error.message).to.contain("529 overloaded");
    });

    it("throws for fewer than two labels without asking the model", async () => {
      let requests = 0;
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        extensions: [
          createScriptedProvider(() => {
            requests++;
            return [];
          }),
        ],
      });
      for (const few of [["safe"], []]) {
        const error = await failure(() => sessionInternals(h).models.classify({ prompt: "x", labels: few }));
        expect(error.code).to.equal("KC_ERR_CLASSIFY");
        expect(error.message).to.contain("at least two labels");
      }
      expect(requests).to.equal(0);
    });

    it("offers the session's current model as a classifier", async () => {
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        extensions: [createScriptedProvider([])],
      });
      expect(sessionInternals(h).models.getAvailableClassifiers()).to.deep.include({
        provider: "scripted",
        model: "scripted",
      });
      expect(sessionInternals(h).models.runtime().getAvailableClassifiers()).to.deep.include({
        provider: "scripted",
        model: "scripted",
      });
    });

    it("throws when no classifier model is available", async () => {
      const { models } = agent.service();
      expect(models.getAvailableClassifiers()).to.deep.equal([]);
      const error = await failure(() => models.classify({ prompt: "x", labels }));
      expect(error.code).to.equal("KC_ERR_CLASSIFY");
      expect(error.message).to.contain("No classifier model is available");
    });
  });

  describe("the transport setting and images.blockImages", () => {
    const PNG_DATA =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    async function run(settings: Record<string, unknown>, extra: Partial<ProviderConfig> = {}) {
      const seen: ProviderStreamRequest[] = [];
      const step = (request: ProviderStreamRequest) => {
        seen.push(
          structuredClone({ ...request, hooks: undefined, signal: undefined, streamApi: undefined }) as never,
        );
        return { text: "ok" };
      };
      const config = { ...scriptedProviderConfig(codeSteps([step, step])), ...extra };
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        settings,
        extensions: [(kc) => kc.registerProvider("scripted", config)],
      });
      await h.prompt("one", { images: [{ type: "image", data: PNG_DATA, mimeType: "image/png" }] });
      await h.prompt("two");
      return Object.assign(seen, {
        recorded: JSON.stringify(sessionInternals(h).log.buildContext().messages),
      });
    }

    const transportWarnings = () => agent.warnings.filter((w) => w.includes("transport"));

    it("passes the transport to the provider; one that does not list it is named in a warning, once", async () => {
      const seen = await run({ transport: "websocket" });
      expect(seen.map((r) => r.transport)).to.deep.equal(["websocket", "websocket"]);
      expect(transportWarnings()).to.deep.equal([
        'Provider "scripted" cannot use the "websocket" transport (the transport setting); its requests use SSE.',
      ]);
    });

    it("says nothing to a provider that lists the transport, nor for auto", async () => {
      const listed = await run({ transport: "websocket-cached" }, { transports: ["sse", "websocket"] });
      expect(listed.map((r) => r.transport)).to.deep.equal(["websocket-cached", "websocket-cached"]);
      const auto = await run({});
      expect(auto.map((r) => r.transport)).to.deep.equal(["auto", "auto"]);
      expect(transportWarnings()).to.deep.equal([]);
    });

    it("sends images as they are by default, and the note instead with blockImages; the session keeps them", async () => {
      const sent = await run({});
      expect(JSON.stringify(sent[1]!.messages)).to.contain(PNG_DATA);
      const blocked = await run({ images: { blockImages: true } });
      for (const request of blocked) {
        const text = JSON.stringify(request.messages);
        expect(text).to.not.contain(PNG_DATA);
        expect(text).to.not.contain('"type":"image"');
      }
      expect(blocked[0]!.messages[0]!.content).to.deep.equal([
        { type: "text", text: "one" },
        { type: "text", text: "Image reading is disabled." },
      ]);
      expect(blocked.recorded, "the session file keeps the image").to.contain(PNG_DATA);
    });
  });

  describe("provider hooks", () => {
    it("lets before_provider_headers handlers add, change and delete headers; the provider gets the result", async () => {
      const record: Parameters<typeof hookedProvider>[0] = {};
      const seenByHandler: Record<string, unknown>[] = [];
      const h = await agent.open({
        extensions: [
          (kc) => kc.registerProvider("hooked", hookedProvider(record)),
          (kc) => {
            kc.on("before_provider_headers", (event) => {
              seenByHandler.push({ ...event, headers: { ...event.headers } });
              event.headers["x-added"] = "added in place";
              event.headers["x-changed"] = "new";
              event.headers["x-removed"] = null;
            });
          },
          (kc) => {
            kc.on("before_provider_headers", (event) => ({
              ...event.headers,
              "x-returned": "returned",
              "x-also-removed": null,
            }));
          },
        ],
      });
      await sessionInternals(h).agent.setModel(undefined, sessionInternals(h).models.find("hooked", "h1")!);
      await h.prompt("hi");
      expect(textOf(lastAssistant(h))).to.equal("hooked");
      expect(seenByHandler[0]).to.deep.include({ provider: "hooked", api: "hooked", model: "h1" });
      expect(record.headersSent).to.deep.equal({
        "content-type": "application/json",
        "x-kept": "kept",
        "x-changed": "new",
        "x-added": "added in place",
        "x-returned": "returned",
      });
      expect(agent.warnings).to.deep.equal([]);
    });

    it("gives after_provider_response the status and headers", async () => {
      const responses: unknown[] = [];
      const h = await agent.open({
        extensions: [
          (kc) => kc.registerProvider("hooked", hookedProvider({})),
          (kc) => {
            kc.on("after_provider_response", (event) => {
              responses.push(event);
            });
          },
        ],
      });
      await sessionInternals(h).agent.setModel(undefined, sessionInternals(h).models.find("hooked", "h1")!);
      await h.prompt("hi");
      expect(responses).to.deep.equal([
        {
          provider: "hooked",
          api: "hooked",
          model: "h1",
          status: 201,
          headers: { "x-request-id": "req-1", "content-type": "text/event-stream" },
        },
      ]);
    });

    it("dispatches provider_stream_event for each raw event only while someone listens", async () => {
      const rawEvents = [{ type: "a" }, { type: "b", n: 1 }, { type: "c" }];
      const { models, bus, register } = agent.service();
      const record: Parameters<typeof hookedProvider>[0] = { rawEvents };
      register("hooked", hookedProvider(record));
      let dispatches = 0;
      // Counts dispatches by wrapping the bus's emit (the loose signature: any notify event goes through).
      const loose = bus as unknown as { emit(event: string, payload: unknown, ctx?: unknown): Promise<void> };
      const emit = loose.emit.bind(bus);
      loose.emit = (event, payload, ctx) => {
        if (event === "provider_stream_event") dispatches++;
        return emit(event, payload, ctx);
      };
      const request = () =>
        models
          .stream({
            model: models.find("hooked", "h1")!,
            systemPrompt: "",
            messages: [userMessage("hi")],
            tools: [],
          })
          .result();

      await request();
      expect(record.streamEventCalls).to.equal(3);
      expect(dispatches, "no dispatch without a listener").to.equal(0);

      const received: unknown[] = [];
      const off = bus.on("provider_stream_event", (event: unknown) => void received.push(event), {
        id: "sdk:listener",
        order: 0,
        origin: "sdk",
      });
      await request();
      expect(record.streamEventCalls).to.equal(6);
      expect(dispatches).to.equal(3);
      expect(received).to.deep.equal(
        rawEvents.map((data) => ({ provider: "hooked", api: "hooked", model: "h1", data })),
      );

      off();
      await request();
      expect(record.streamEventCalls).to.equal(9);
      expect(dispatches, "none after the listener left").to.equal(3);
    });

    it("sends every raw event of the scripted provider to a provider_stream_event listener, in order", async () => {
      let calls = 0;
      const received: unknown[] = [];
      const inner = scriptedProviderConfig(codeSteps([{ text: "streamed in chunks" }]));
      const counted: ProviderConfig = {
        ...inner,
        streamSimple: (request) =>
          inner.streamSimple!({
            ...request,
            hooks: {
              ...request.hooks,
              streamEvent: (data) => {
                calls++;
                return request.hooks.streamEvent(data);
              },
            },
          }),
      };
      const h = await agent.open({
        provider: "scripted",
        model: "scripted",
        extensions: [
          (kc) => kc.registerProvider("scripted", counted),
          (kc) => {
            kc.on("provider_stream_event", (event) => void received.push(event.data));
          },
        ],
      });
      await h.prompt("hi");
      expect(textOf(lastAssistant(h))).to.equal("streamed in chunks");
      expect(calls).to.be.greaterThan(3);
      expect(received).to.have.length(calls);
      expect((received[0] as { type: string }).type).to.equal("message_start");
      expect((received.at(-1) as { type: string }).type).to.equal("message_end");
    });
  });
});

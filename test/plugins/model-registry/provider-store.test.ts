/**
 * Provider registrations across sessions of one kernel: process-wide visibility, unregistering, lifetime across
 * reload and dispose, replacing a built-in provider, and per-session virtual models.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
import type {
  AssistantMessage,
  AssistantMessageStream,
  ExtensionAPI,
  ExtensionFactory,
  Kernel,
  ModelInfo,
  ProviderConfig,
  ProviderStreamRequest,
} from "../../../kernel/index.js";
import { emptyUsage } from "../../../plugins/kit/usage.js";
import { ensureNoDisposablesLeaked } from "../../helpers/leak-check.js";

/** Sessions that share one kernel (and so one provider store), disposed after each test. */
function useSharedKernel(): {
  readonly dir: string;
  readonly warnings: string[];
  open(options?: Partial<CreateAgentSessionOptions>): Promise<AgentSessionHandle>;
} {
  let dir = "";
  let kernel: Kernel | undefined;
  const handles: AgentSessionHandle[] = [];
  const warnings: string[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "kc-providers-"));
    kernel = await createStandardKernel({ agentDir: join(dir, "agent"), cacheDir: false });
  });
  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    await kernel?.dispose();
    kernel = undefined;
    warnings.length = 0;
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    warnings,
    async open(options = {}) {
      const handle = await createAgentSession({
        cwd: dir,
        agentDir: join(dir, "agent"),
        kernel: kernel!,
        session: { inMemory: true },
        warn: (message) => warnings.push(message),
        ...options,
        settings: { retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 5 }, ...options.settings },
      });
      handles.push(handle);
      return handle;
    },
  };
}

/** A provider written by hand: one text answer, streamed as a single `done` event. */
function textProvider(answer: string, requests: ProviderStreamRequest[] = []): ProviderConfig {
  return {
    models: [{ id: "rocket", contextWindow: 1000, maxTokens: 100 }],
    streamSimple(request): AssistantMessageStream {
      requests.push(request);
      const message: AssistantMessage = {
        role: "assistant",
        content: [{ type: "text", text: answer }],
        api: request.model.api,
        provider: request.model.provider,
        model: request.model.id,
        usage: emptyUsage(),
        stopReason: "stop",
        timestamp: Date.now(),
      };
      return {
        async *[Symbol.asyncIterator]() {
          yield { type: "done", reason: "stop", message };
        },
        result: async () => message,
      };
    },
  };
}

/** An extension factory (owner id `sdk:<name>`) that registers one provider. */
function providerExtension(name: string, provider: string, config: () => ProviderConfig): ExtensionFactory {
  const factory = (kc: ExtensionAPI) => {
    kc.registerProvider(provider, config());
  };
  Object.defineProperty(factory, "name", { value: name });
  return factory;
}

function lastAssistant(handle: AgentSessionHandle): AssistantMessage {
  const messages = sessionInternals(handle).log.buildContext().messages;
  const last = messages.findLast((m) => m.role === "assistant");
  expect(last, "an assistant message was recorded").to.not.equal(undefined);
  return last as AssistantMessage;
}

function textOf(message: AssistantMessage): string {
  return message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

async function promptWith(
  handle: AgentSessionHandle,
  model: ModelInfo | undefined,
  text = "hi",
): Promise<void> {
  expect(model, "the model is listed").to.not.equal(undefined);
  expect(await sessionInternals(handle).agent.setModel(undefined, model!)).to.equal(true);
  await handle.prompt(text);
}

describe("provider registrations", () => {
  const sessions = useSharedKernel();
  ensureNoDisposablesLeaked();

  describe("are process-wide", () => {
    it("lists a provider registered in session A in session B, which can prompt it", async () => {
      const requests: ProviderStreamRequest[] = [];
      await sessions.open({
        extensions: [providerExtension("acme", "acme", () => textProvider("from acme", requests))],
      });
      const b = await sessions.open();

      const listed = sessionInternals(b)
        .models.getAvailable()
        .find((m) => m.provider === "acme");
      expect(listed).to.deep.equal({
        provider: "acme",
        id: "rocket",
        api: "acme",
        contextWindow: 1000,
        maxTokens: 100,
        reasoning: false,
      });
      await promptWith(b, sessionInternals(b).models.find("acme", "rocket"));
      const answer = lastAssistant(b);
      expect(answer.stopReason).to.equal("stop");
      expect(textOf(answer)).to.equal("from acme");
      expect(requests).to.have.length(1);
      expect(requests[0]!.model).to.include({ provider: "acme", id: "rocket" });
    });

    it("removes the provider for every session when A calls unregisterProvider", async () => {
      let apiA: ExtensionAPI | undefined;
      const a = await sessions.open({
        extensions: [
          providerExtension("acme", "acme", () => textProvider("from acme")),
          (kc) => {
            apiA = kc;
          },
        ],
      });
      const b = await sessions.open();
      expect(
        await sessionInternals(b).agent.setModel(
          undefined,
          sessionInternals(b).models.find("acme", "rocket")!,
        ),
      ).to.equal(true);

      apiA!.unregisterProvider("acme");

      expect(sessionInternals(a).models.find("acme", "rocket")).to.equal(undefined);
      expect(sessionInternals(b).models.find("acme", "rocket")).to.equal(undefined);
      expect(
        sessionInternals(b)
          .models.getAvailable()
          .map((m) => m.provider),
      ).to.not.include("acme");
      // B had selected it: its next request fails with a message naming the provider.
      await b.prompt("still there?");
      const answer = lastAssistant(b);
      expect(answer.stopReason).to.equal("error");
      expect(answer.errorMessage).to.contain('Provider "acme" is not registered');
    });

    it("keeps the provider through A's reload", async () => {
      const a = await sessions.open({
        extensions: [providerExtension("acme", "acme", () => textProvider("after reload"))],
      });
      const b = await sessions.open();
      await a.reload();
      expect(sessionInternals(b).models.find("acme", "rocket")).to.not.equal(undefined);
      await promptWith(b, sessionInternals(b).models.find("acme", "rocket"));
      expect(textOf(lastAssistant(b))).to.equal("after reload");
    });

    it("never hides the provider from B while A reloads", async () => {
      let b: AgentSessionHandle | undefined;
      let runs = 0;
      let seenByBDuringReload: ModelInfo | undefined;
      const acme = (kc: ExtensionAPI) => {
        runs++;
        if (runs > 1) seenByBDuringReload = b && sessionInternals(b).models.find("acme", "rocket");
        kc.registerProvider("acme", textProvider("x"));
      };
      const a = await sessions.open({ extensions: [acme] });
      b = await sessions.open();
      await a.reload();
      expect(runs).to.equal(2);
      expect(seenByBDuringReload, "acme listed in B while A's extension re-registers it").to.not.equal(
        undefined,
      );
    });

    it("drops the provider when the last session that registered it is disposed", async () => {
      const ext = () => providerExtension("acme", "acme", () => textProvider("from acme"));
      const a = await sessions.open({ extensions: [ext()] });
      const c = await sessions.open({ extensions: [ext()] });
      const b = await sessions.open();
      expect(sessionInternals(b).models.find("acme", "rocket")).to.not.equal(undefined);

      await a.dispose();
      expect(sessionInternals(b).models.find("acme", "rocket"), "C still holds it").to.not.equal(undefined);
      await promptWith(b, sessionInternals(b).models.find("acme", "rocket"));
      expect(textOf(lastAssistant(b))).to.equal("from acme");

      await c.dispose();
      expect(sessionInternals(b).models.find("acme", "rocket")).to.equal(undefined);
      expect(
        sessionInternals(b)
          .models.getAvailable()
          .map((m) => m.provider),
      ).to.not.include("acme");
    });
  });

  describe("replacing a built-in provider", () => {
    it("serves requests with an sdk extension's provider registered under the built-in's name", async () => {
      const h = await sessions.open({
        provider: "scripted",
        model: "scripted",
        extensions: [createScriptedProvider([{ text: "from the replacement" }])],
      });
      await h.prompt("hi");
      const answer = lastAssistant(h);
      expect(answer.stopReason).to.equal("stop");
      expect(textOf(answer)).to.equal("from the replacement");
    });

    it("serves requests with a cli extension file's provider registered under the built-in's name", async () => {
      const file = join(sessions.dir, "replacement.ts");
      writeFileSync(
        file,
        `export default function (kc: any) {
  kc.registerProvider("scripted", {
    models: [{ id: "scripted" }],
    streamSimple(request: any) {
      const message = {
        role: "assistant",
        content: [{ type: "text", text: "from the cli file" }],
        api: request.model.api,
        provider: request.model.provider,
        model: request.model.id,
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop",
        timestamp: Date.now(),
      };
      return {
        async *[Symbol.asyncIterator]() { yield { type: "done", reason: "stop", message }; },
        result: async () => message,
      };
    },
  });
}
`,
      );
      const h = await sessions.open({ provider: "scripted", model: "scripted", extensions: [file] });
      expect(sessions.warnings).to.deep.equal([]);
      await h.prompt("hi");
      expect(textOf(lastAssistant(h))).to.equal("from the cli file");
    });

    it("answers from the built-in (no script) when nobody replaces it", async () => {
      const h = await sessions.open({ provider: "scripted", model: "scripted" });
      await h.prompt("hi");
      const answer = lastAssistant(h);
      expect(answer.stopReason).to.equal("error");
      expect(answer.errorMessage).to.contain("has no script");
    });

    it("keeps the replacement for session A when session B, which replaced it too, is disposed", async () => {
      const replacement = () =>
        providerExtension("replacement", "scripted", () =>
          scriptedProviderConfig(codeSteps(() => [{ text: "replaced" }])),
        );
      const a = await sessions.open({ provider: "scripted", model: "scripted", extensions: [replacement()] });
      const b = await sessions.open({ provider: "scripted", model: "scripted", extensions: [replacement()] });
      await b.dispose();
      expect(
        sessionInternals(a).models.find("scripted", "scripted"),
        "A still registers scripted",
      ).to.not.equal(undefined);
      await a.prompt("hi");
      expect(textOf(lastAssistant(a))).to.equal("replaced");
    });

    it("keeps session A's replacement when another session that loads the built-in starts", async () => {
      const a = await sessions.open({
        provider: "scripted",
        model: "scripted",
        extensions: [createScriptedProvider([{ text: "replaced" }])],
      });
      await sessions.open();
      await a.prompt("hi");
      expect(textOf(lastAssistant(a))).to.equal("replaced");
    });

    it("gives the built-in back to other sessions when the replacing session is disposed", async () => {
      const b = await sessions.open();
      const a = await sessions.open({
        provider: "scripted",
        model: "scripted",
        extensions: [createScriptedProvider([{ text: "replaced" }])],
      });
      await a.dispose();
      expect(sessionInternals(b).models.find("scripted", "scripted")).to.not.equal(undefined);
    });
  });

  describe("virtual models", () => {
    it("route session A's requests to the real model and stay invisible to session B", async () => {
      const seen: ModelInfo[] = [];
      const a: AgentSessionHandle = await sessions.open({
        provider: "scripted",
        model: "scripted",
        extensions: [
          createScriptedProvider([
            (request: ProviderStreamRequest) => {
              seen.push(request.model);
              return { text: "routed" };
            },
          ] satisfies ScriptEntry[]),
          (kc) => {
            kc.registerVirtualModel("router", {
              route: () => sessionInternals(a).models.find("scripted", "scripted")!,
            });
          },
        ],
      });
      // B does not load the built-in scripted provider, so A's scripted registration stays the one in use.
      const b = await sessions.open({ settings: { extensions: ["-builtin:scripted"] } });

      const router = sessionInternals(a).models.find("virtual", "router");
      expect(router).to.deep.equal({
        provider: "virtual",
        id: "router",
        api: "virtual",
        contextWindow: 0,
        maxTokens: 0,
        reasoning: false,
      });
      await promptWith(a, router);
      expect(textOf(lastAssistant(a))).to.equal("routed");
      expect(seen.map((m) => `${m.provider}/${m.id}`)).to.deep.equal(["scripted/scripted"]);

      expect(sessionInternals(b).models.find("virtual", "router")).to.equal(undefined);
      expect(
        sessionInternals(b)
          .models.getAvailable()
          .some((m) => m.provider === "virtual"),
      ).to.equal(false);
      const fromB = await sessionInternals(b)
        .models.stream({ model: router!, systemPrompt: "", messages: [], tools: [] })
        .result();
      expect(fromB.stopReason).to.equal("error");
      expect(fromB.errorMessage).to.contain('Virtual model "router" is not registered');
    });
  });
});

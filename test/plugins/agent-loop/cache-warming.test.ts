/** Idle prompt-cache refreshes: timing, the decision event, the settings, and when they stop. */

import { expect } from "chai";
import {
  codeSteps,
  SCRIPTED_API,
  SCRIPTED_MODEL,
  SCRIPTED_PROVIDER,
  type ScriptEntry,
  scriptedProviderConfig,
} from "../../../builtin-extensions/scripted-provider/index.js";
import {
  type CacheWarmingDecisionEvent,
  type ExtensionContext,
  HookBus,
  type ModelInfo,
  type ProviderHooks,
} from "../../../kernel/index.js";
import { CACHE_WARMING_ENTRY, CacheWarmer } from "../../../plugins/agent-loop/cache-warming.js";
import type { ModelRequest } from "../../../plugins/model-registry/model-service.js";
import type { CacheWarmingSettings } from "../../../plugins/settings/settings.js";

const INTERVAL = 20;
const model: ModelInfo = { ...SCRIPTED_MODEL, provider: SCRIPTED_PROVIDER, api: SCRIPTED_API };
const hooks: ProviderHooks = {
  payload: async (payload) => payload,
  headers: async (headers) => headers,
  response: async () => {},
  streamEvent: async () => {},
};
const handler = (order: number) => ({ id: `test:${order}`, order });

async function until(condition: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
const quiet = (ms = INTERVAL * 3) => new Promise((r) => setTimeout(r, ms));

function setup(settings: Partial<CacheWarmingSettings> | undefined, steps: ScriptEntry[] = []) {
  const bus = new HookBus({ onHandlerError: () => {} });
  const ctx = {} as ExtensionContext;
  const provider = scriptedProviderConfig(
    codeSteps(steps.length > 0 ? steps : Array(10).fill({ text: "." })),
  );
  const state = { busy: false, ready: true, model: model as ModelInfo | undefined };
  const requests: ModelRequest[] = [];
  const records: { customType: string; data: Record<string, unknown> }[] = [];
  const decisions: CacheWarmingDecisionEvent[] = [];
  bus.on(
    "cache_warming_decision",
    (event: CacheWarmingDecisionEvent) => void decisions.push(event),
    handler(0),
  );
  const warmer = new CacheWarmer({
    bus,
    context: () => ctx,
    settings: () => settings && { enabled: true, intervalMs: INTERVAL, maxRefreshes: 5, ...settings },
    model: () => state.model,
    busy: () => state.busy,
    ready: () => state.ready,
    lastRequest: (m) => ({ model: m, systemPrompt: "You are a test.", messages: [], tools: [] }),
    stream: (request) => {
      requests.push(request);
      return provider.streamSimple!({ ...request, hooks });
    },
    record: (customType, data) => void records.push({ customType, data: data as Record<string, unknown> }),
  });
  return { bus, state, requests, records, decisions, warmer };
}

describe("cache warming", () => {
  let warmers: CacheWarmer[] = [];
  const open = (...args: Parameters<typeof setup>) => {
    const t = setup(...args);
    warmers.push(t.warmer);
    return t;
  };
  afterEach(() => {
    for (const warmer of warmers) warmer.cancel();
    warmers = [];
  });

  it("re-sends the last request for one token each interval, records it, and stops at maxRefreshes", async () => {
    const t = open({ maxRefreshes: 2 });
    t.warmer.idle();
    await until(() => t.records.length === 2);
    await quiet();
    expect(t.requests.map((r) => [r.maxTokens, r.systemPrompt])).to.deep.equal([
      [1, "You are a test."],
      [1, "You are a test."],
    ]);
    expect(t.records).to.have.length(2);
    expect(t.records[0]!.customType).to.equal(CACHE_WARMING_ENTRY);
    expect(t.records[0]!.data).to.include({ provider: "scripted", model: "scripted" });
    expect(t.records[0]!.data.usage).to.have.property("totalTokens");
  });

  it("counts maxRefreshes per idle period: a run start resets the count", async () => {
    const t = open({ maxRefreshes: 1 });
    t.warmer.idle();
    await until(() => t.records.length === 1);
    t.warmer.runStarted();
    t.warmer.idle();
    await until(() => t.records.length === 2);
    await quiet();
    expect(t.records).to.have.length(2);
  });

  it("lets the last handler that answers decide, and the settings decide when none does", async () => {
    const t = open({ enabled: false, maxRefreshes: 1 });
    t.bus.on("cache_warming_decision", () => ({ action: "stop" }), handler(1));
    t.bus.on("cache_warming_decision", () => ({ action: "warm" }), handler(2));
    t.bus.on("cache_warming_decision", () => undefined, handler(3));
    t.warmer.idle();
    await until(() => t.records.length === 1);

    const bySettings = open({ enabled: false });
    bySettings.warmer.idle();
    await until(() => bySettings.decisions.length === 1);
    await quiet();
    expect(bySettings.requests).to.deep.equal([]);
    expect(bySettings.decisions).to.have.length(1);

    const stopped = open({ enabled: true });
    stopped.bus.on("cache_warming_decision", () => ({ action: "stop" }), handler(1));
    stopped.warmer.idle();
    await until(() => stopped.decisions.length === 1);
    await quiet();
    expect(stopped.requests).to.deep.equal([]);
  });

  it("reports how long the session has been idle, counted from the end of the run", async () => {
    const t = open({ maxRefreshes: 2 });
    t.warmer.idle();
    await until(() => t.records.length === 2);
    const [first, second] = t.decisions.map((d) => d.idleMs);
    expect(first).to.be.at.least(INTERVAL - 2);
    expect(second).to.be.at.least(first! + INTERVAL - 2);
    expect(t.decisions[0]!.model).to.deep.equal(model);
  });

  it("neither asks nor refreshes while a run is in progress, and a run start drops the pending refresh", async () => {
    const busy = open({});
    busy.state.busy = true;
    busy.warmer.idle();
    await quiet();
    expect(busy.decisions).to.deep.equal([]);

    const restarted = open({});
    restarted.warmer.idle();
    restarted.warmer.runStarted();
    await quiet();
    expect(restarted.decisions).to.deep.equal([]);
  });

  it("does not start without settings or a model, nor after the session stopped taking requests", async () => {
    const off = open(undefined);
    off.warmer.idle();
    const noModel = open({});
    noModel.state.model = undefined;
    noModel.warmer.idle();
    const closed = open({});
    closed.state.ready = false;
    closed.warmer.idle();
    await quiet();
    expect([...off.decisions, ...noModel.decisions, ...closed.decisions]).to.deep.equal([]);
  });

  it("records a failed refresh with its error and stops", async () => {
    const t = open({}, [{ error: { kind: "auth", message: "key expired" } }, { text: "." }]);
    t.warmer.idle();
    await until(() => t.records.length === 1);
    await quiet();
    expect(t.records[0]!.data).to.include({ error: "key expired" });
    expect(t.requests).to.have.length(1);
  });

  it("records a refresh that a run overtook, and leaves the next one to that run's end", async () => {
    const t = open({}, [{ text: ".", delayMs: INTERVAL }, { text: "." }]);
    t.bus.on(
      "cache_warming_decision",
      () => {
        setTimeout(() => {
          t.state.busy = true;
        }, 1);
        return undefined;
      },
      handler(1),
    );
    t.warmer.idle();
    await until(() => t.records.length === 1);
    // The run is over but has not called idle(): nothing may be scheduled behind its back.
    t.state.busy = false;
    await quiet();
    expect(t.decisions).to.have.length(1);
    expect(t.requests).to.have.length(1);
  });
});

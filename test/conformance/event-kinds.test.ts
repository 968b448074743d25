/**
 * Conformance suite driven by the event catalogue: every event has a row, and every event is checked against
 * the rules of its kind (order, error policy, unsubscribe during dispatch, results).
 */
import { expect } from "chai";
import { type EventSpec, eventCatalog, eventNames } from "../../kernel/api/event-catalog.js";
import type { BoundaryState, ToolResultEvent } from "../../kernel/api/events.js";
import { ExtensionStartupError } from "../../kernel/errors.js";
import {
  ExtensionHandlerError,
  type HandlerErrorReport,
  type HandlerOwner,
  HookBus,
} from "../../kernel/events/hook-bus.js";
import { closestName } from "../../plugins/kit/closest-name.js";
import { checkReturn, InvalidReturnError, returnSchemas } from "../../plugins/kit/event-returns.js";
import { wireEvents } from "../../plugins/kit/wire/json-event.js";

/** The checklist: json.md, extensions.md, and the closest peer's 41 events (reference/pi.md, section 2.3). */
const SPEC_EVENTS = {
  jsonWire: [
    "agent_start",
    "agent_end",
    "agent_settled",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "queue_update",
    "entry_appended",
    "session_info_changed",
    "thinking_level_changed",
    "compaction_start",
    "compaction_end",
    "auto_retry_start",
    "auto_retry_end",
    "summarization_retry_scheduled",
    "summarization_retry_attempt_start",
    "summarization_retry_finished",
  ],
  rpcOnly: ["bash_execution_update", "extension_error"],
  peer41: [
    "project_trust",
    "resources_discover",
    "mcp_servers_change",
    "session_start",
    "session_info_changed",
    "session_before_switch",
    "session_before_fork",
    "session_before_compact",
    "session_compact",
    "session_compact_failed",
    "session_before_tree",
    "session_tree",
    "session_shutdown",
    "input",
    "before_agent_start",
    "agent_start",
    "agent_end",
    "agent_before_settle",
    "agent_settled",
    "ui_prompt_start",
    "ui_prompt_end",
    "turn_start",
    "turn_end",
    "context",
    "context_with_system",
    "before_provider_headers",
    "before_provider_request",
    "after_provider_response",
    "provider_stream_event",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "tool_call",
    "tool_result",
    "user_bash",
    "model_select",
    "thinking_level_select",
    "cache_warming_decision",
  ],
};

/** Kinds the spec fixes for particular events (extensions.md, json.md). */
const SPEC_KINDS: Record<string, EventSpec["kind"]> = {
  tool_call: "gate",
  user_bash: "gate",
  project_trust: "gate",
  cache_warming_decision: "lastWins",
  turn_end: "boundary",
  agent_before_settle: "boundary",
  context: "transform",
  context_with_system: "transform",
  tool_result: "transform",
  message_end: "transform",
  before_agent_start: "transform",
  input: "transform",
  before_provider_request: "transform",
  agent_settled: "notify",
  message_update: "notify",
  provider_stream_event: "notify",
};

/** A value of the right shape for each event whose handlers' returns are checked against a schema. */
const VALID_RETURNS: Readonly<Record<string, object>> = {
  input: { action: "continue" },
  context: { messages: [] },
  context_with_system: { messages: [{ role: "system", content: "You help." }] },
  message_end: { message: { role: "user", content: "hi" } },
  cache_warming_decision: { action: "warm" },
};

const owner = (order: number, origin: HandlerOwner["origin"] = "cli"): HandlerOwner => ({
  id: `test:ext-${order}`,
  order,
  origin,
});

/** The bus without its compile-time checks, for tests that dispatch every event by a name held in a variable. */
interface LooseBus {
  emit(event: string, payload: unknown, ctx?: unknown): Promise<void>;
  transform(event: string, initial: unknown, ctx?: unknown, options?: object): Promise<unknown>;
  gate(event: string, payload: unknown, ctx: unknown, options: object): Promise<unknown>;
  lastWins(event: string, payload: unknown, ctx?: unknown): Promise<unknown>;
  boundary(event: string, payload: unknown, ctx?: unknown, initial?: unknown): Promise<unknown>;
}
const loose = (bus: HookBus): LooseBus => bus as unknown as LooseBus;

function makeBus(): { bus: HookBus; reports: HandlerErrorReport[] } {
  const reports: HandlerErrorReport[] = [];
  return {
    bus: new HookBus({ onHandlerError: (r) => reports.push(r), checkReturn, suggestName: closestName }),
    reports,
  };
}

/** Dispatches an event the way its kind requires and returns what the dispatch produced. */
async function dispatch(bus: HookBus, name: string, payload: unknown = {}): Promise<unknown> {
  switch (eventCatalog[name as keyof typeof eventCatalog].kind) {
    case "notify":
      return loose(bus).emit(name, payload, {});
    case "transform":
      return loose(bus).transform(name, payload, {});
    case "gate":
      return loose(bus).gate(name, payload, {}, { failClosed: () => ({ failClosed: true }) });
    case "lastWins":
      return loose(bus).lastWins(name, payload, {});
    case "boundary":
      return loose(bus).boundary(name, payload as object, {});
  }
}

describe("event catalogue", () => {
  it("declares every event of json.md, the RPC-only events and the peer's 41 events", () => {
    const expected = new Set([...SPEC_EVENTS.jsonWire, ...SPEC_EVENTS.rpcOnly, ...SPEC_EVENTS.peer41]);
    const missing = [...expected].filter((name) => !eventNames.includes(name as never));
    expect(missing).to.deep.equal([]);
  });

  it("marks exactly the json.md events as written to the JSON stream and the RPC-only ones as rpc", () => {
    const json = eventNames.filter((n) => wireEvents[n]?.stream === "json");
    const rpc = eventNames.filter((n) => wireEvents[n]?.stream === "rpc");
    expect([...json].sort()).to.deep.equal([...SPEC_EVENTS.jsonWire].sort());
    expect([...rpc].sort()).to.deep.equal([...SPEC_EVENTS.rpcOnly].sort());
  });

  it("lists the fields of every wire event, and only catalogued events go on the wire", () => {
    for (const name of Object.keys(wireEvents)) expect(eventNames, name).to.include(name);
    expect(wireEvents.turn_end?.fields).to.deep.equal(["message", "toolResults"]);
    expect(wireEvents.message_update?.fields).to.deep.equal(["usage", "assistantMessageEvent"]);
  });

  it("gives the spec's kind to every event whose kind the spec fixes", () => {
    for (const [name, kind] of Object.entries(SPEC_KINDS)) {
      expect(eventCatalog[name as keyof typeof eventCatalog].kind, name).to.equal(kind);
    }
  });

  it("makes gates fail closed, only session_start propagate, and everything else report", () => {
    for (const name of eventNames) {
      const { kind, errorPolicy } = eventCatalog[name];
      if (kind === "gate") expect(errorPolicy, name).to.equal("fail-closed");
      else if (name === "session_start") expect(errorPolicy).to.equal("propagate");
      else expect(errorPolicy, name).to.equal("report");
    }
  });

  it("answers the same for a checked return whether its checker is interpreted or compiled (from the third check)", () => {
    const refusal = (value: unknown) => {
      try {
        checkReturn("cache_warming_decision", value);
        return "accepted";
      } catch (error) {
        expect(error).to.be.instanceOf(InvalidReturnError);
        return (error as Error).message;
      }
    };
    const answers = Array.from({ length: 4 }, () => [
      refusal({ action: "warm" }),
      refusal({ action: "later" }),
      refusal({ nothing: true }),
    ]);
    expect(answers[0]![0]).to.equal("accepted");
    expect(answers[0]![1]).to.match(
      /cache_warming_decision handler returned a value of the wrong shape: \/action/,
    );
    for (const later of answers.slice(1)) expect(later).to.deep.equal(answers[0]);
  });

  it("is frozen", () => {
    expect(Object.isFrozen(eventCatalog)).to.equal(true);
    expect(Object.isFrozen(eventCatalog.tool_call)).to.equal(true);
  });
});

describe("hook bus conformance (every catalogue row)", () => {
  for (const name of eventNames) {
    const spec = eventCatalog[name];
    describe(`${name} (${spec.kind}, ${spec.errorPolicy})`, () => {
      it("runs handlers in extension load order, then registration order", async () => {
        const { bus } = makeBus();
        const calls: string[] = [];
        const add = (o: HandlerOwner, tag: string) =>
          bus.on(
            name,
            () => {
              calls.push(tag);
            },
            o,
          );
        add(owner(2), "c1");
        add(owner(0), "a1");
        add(owner(1), "b1");
        add(owner(0), "a2");
        add(owner(2), "c2");
        await dispatch(bus, name);
        expect(calls).to.deep.equal(["a1", "a2", "b1", "c1", "c2"]);
      });

      it("does not let subscribing or unsubscribing change a dispatch already running", async () => {
        const { bus } = makeBus();
        const calls: string[] = [];
        let unsubscribeB: () => void = () => {};
        let added = false;
        bus.on(
          name,
          () => {
            calls.push("a");
            unsubscribeB();
            if (!added) {
              added = true;
              bus.on(name, () => void calls.push("late"), owner(3));
            }
          },
          owner(0),
        );
        unsubscribeB = bus.on(name, () => void calls.push("b"), owner(1));
        await dispatch(bus, name);
        expect(calls, "first dispatch").to.deep.equal(["a", "b"]);
        calls.length = 0;
        await dispatch(bus, name);
        expect(calls, "second dispatch").to.deep.equal(["a", "late"]);
      });

      it("returns an idempotent unsubscribe function", async () => {
        const { bus } = makeBus();
        let calls = 0;
        const off = bus.on(name, () => void calls++, owner(0));
        const keep = bus.on(name, () => void calls++, owner(1));
        off();
        off();
        await dispatch(bus, name);
        expect(calls).to.equal(1);
        expect(bus.count(name)).to.equal(1);
        keep();
        expect(bus.has(name)).to.equal(false);
      });

      it(`applies the ${spec.errorPolicy} policy to a throwing handler`, async () => {
        const { bus, reports } = makeBus();
        const after: string[] = [];
        bus.on(
          name,
          () => {
            throw new Error("boom");
          },
          owner(0),
        );
        bus.on(name, () => void after.push("next"), owner(1));
        const result = await dispatch(bus, name);
        expect(reports).to.have.length(1);
        expect(reports[0]!.owner.id).to.equal("test:ext-0");
        expect(reports[0]!.event).to.equal(name);
        expect((reports[0]!.error as Error).message).to.equal("boom");
        if (spec.errorPolicy === "fail-closed") {
          // The throwing handler's refusal is the decision; later handlers do not run.
          expect(result).to.deep.equal({ failClosed: true });
          expect(after).to.deep.equal([]);
        } else {
          expect(after).to.deep.equal(["next"]);
        }
      });

      if (spec.kind === "notify") {
        it("ignores handler return values", async () => {
          const { bus } = makeBus();
          bus.on(name, () => ({ ignored: true }), owner(0));
          expect(await loose(bus).emit(name, {}, {})).to.equal(undefined);
        });
      }

      if (spec.kind === "transform") {
        // A value of the shape the event's handlers may return, carrying a counter the tests follow.
        const valid = (n: number) => ({ ...(VALID_RETURNS[name] ?? {}), n });
        it("passes each handler the previous result; undefined keeps the value", async () => {
          const { bus } = makeBus();
          const seen: unknown[] = [];
          bus.on(name, (value: { n: number }) => valid(value.n + 1), owner(0));
          bus.on(name, (value: unknown) => void seen.push(value), owner(1));
          bus.on(name, (value: { n: number }) => valid(value.n * 10), owner(2));
          const result = await loose(bus).transform(name, valid(1), {});
          expect(seen).to.deep.equal([valid(2)]);
          expect(result).to.deep.equal(valid(20));
        });

        it("keeps the previous value when a handler throws", async () => {
          const { bus } = makeBus();
          bus.on(name, () => valid(2), owner(0));
          bus.on(
            name,
            () => {
              throw new Error("bad");
            },
            owner(1),
          );
          expect(await loose(bus).transform(name, valid(1), {})).to.deep.equal(valid(2));
        });
      }

      if (Object.hasOwn(returnSchemas, name)) {
        it("reports a return of the wrong shape like a throw, naming the extension, and skips it", async () => {
          const { bus, reports } = makeBus();
          const good = { ...(VALID_RETURNS[name] ?? {}), n: 2 };
          bus.on(name, () => good, owner(0));
          bus.on(name, () => "not a result", owner(1));
          let later = 0;
          bus.on(name, () => void later++, owner(2));
          const result =
            spec.kind === "lastWins"
              ? await loose(bus).lastWins(name, {}, {})
              : await dispatch(bus, name, good);
          expect(result).to.deep.equal(good);
          expect(later, "the handlers after it still run").to.equal(1);
          expect(reports).to.have.length(1);
          expect(reports[0]!.owner.id).to.equal("test:ext-1");
          expect(reports[0]!.event).to.equal(name);
          expect(reports[0]!.error).to.be.instanceOf(InvalidReturnError);
          expect(String((reports[0]!.error as Error).message)).to.contain(`the ${name} handler returned`);
        });
      }

      if (spec.kind === "gate") {
        it("lets the first decision win and skips later handlers; undefined passes", async () => {
          const { bus } = makeBus();
          const calls: number[] = [];
          bus.on(name, () => void calls.push(0), owner(0));
          bus.on(
            name,
            () => {
              calls.push(1);
              return { decided: 1 };
            },
            owner(1),
          );
          bus.on(
            name,
            () => {
              calls.push(2);
              return { decided: 2 };
            },
            owner(2),
          );
          const result = await loose(bus).gate(name, {}, {}, { failClosed: () => ({ failClosed: true }) });
          expect(result).to.deep.equal({ decided: 1 });
          expect(calls).to.deep.equal([0, 1]);
        });

        it("returns undefined when nobody decides", async () => {
          const { bus } = makeBus();
          bus.on(name, () => undefined, owner(0));
          expect(await loose(bus).gate(name, {}, {}, { failClosed: () => "closed" })).to.equal(undefined);
        });
      }

      if (spec.kind === "lastWins") {
        it("lets the last handler that returns a value win", async () => {
          const { bus } = makeBus();
          bus.on(name, () => ({ action: "warm" }), owner(0));
          bus.on(name, () => ({ action: "stop" }), owner(1));
          bus.on(name, () => undefined, owner(2));
          expect(await loose(bus).lastWins(name, {}, {})).to.deep.equal({ action: "stop" });
        });
      }

      if (spec.kind === "boundary") {
        it("chains entries and continue, and keeps end sticky", async () => {
          const { bus } = makeBus();
          const seen: { end: boolean; continue: boolean; entries: number }[] = [];
          const draft = (n: number) => ({ type: "custom" as const, customType: `d${n}` });
          bus.on(
            name,
            (e: { entries: unknown[] }) => ({ entries: [...e.entries, draft(1)], continue: true }),
            owner(0),
          );
          bus.on(name, () => ({ end: true }), owner(1));
          bus.on(
            name,
            (e: { end: boolean; continue: boolean; entries: unknown[] }) => {
              seen.push({ end: e.end, continue: e.continue, entries: e.entries.length });
              return { entries: [...e.entries, draft(2)], end: false };
            },
            owner(2),
          );
          const state = (await loose(bus).boundary(name, { turnIndex: 0 }, {})) as BoundaryState;
          expect(seen).to.deep.equal([{ end: true, continue: true, entries: 1 }]);
          expect(state.entries.map((d) => (d as { customType: string }).customType)).to.deep.equal([
            "d1",
            "d2",
          ]);
          expect(state.continue).to.equal(true);
          expect(state.end).to.equal(true);
        });

        it("drops the proposal of a handler that returns something invalid", async () => {
          const { bus, reports } = makeBus();
          bus.on(name, () => ({ entries: "nope" }), owner(0));
          const state = await loose(bus).boundary(name, {}, {});
          expect(state).to.deep.equal({ entries: [], continue: false, end: false });
          expect(reports).to.have.length(1);
        });
      }

      if (spec.errorPolicy === "propagate") {
        it("propagates ExtensionStartupError, naming the extension, and stops the dispatch", async () => {
          const { bus, reports } = makeBus();
          const after: string[] = [];
          bus.on(
            name,
            () => {
              throw new ExtensionStartupError("unsafe runtime");
            },
            owner(0),
          );
          bus.on(name, () => void after.push("next"), owner(1));
          let caught: unknown;
          await loose(bus)
            .emit(name, {}, {})
            .catch((e: unknown) => {
              caught = e;
            });
          expect(caught).to.be.instanceOf(ExtensionHandlerError);
          expect((caught as ExtensionHandlerError).owner.id).to.equal("test:ext-0");
          expect((caught as Error).message).to.contain("unsafe runtime");
          expect(after).to.deep.equal([]);
          expect(reports).to.deep.equal([]);
        });
      }

      if (spec.hot) {
        it("reports nobody listening, so emitters can skip building the payload", () => {
          const { bus } = makeBus();
          expect(bus.has(name)).to.equal(false);
          const off = bus.on(name, () => {}, owner(0));
          expect(bus.has(name)).to.equal(true);
          off();
          expect(bus.has(name)).to.equal(false);
        });
      }
    });
  }
});

describe("hook bus rules", () => {
  it("rejects an unknown event and suggests the closest name", () => {
    const { bus } = makeBus();
    expect(() => bus.on("tool_cal", () => {}, owner(0))).to.throw(/Unknown event "tool_cal".*"tool_call"/);
    expect(() => bus.on("constructor", () => {}, owner(0))).to.throw(/Unknown event/);
  });

  it("rejects an unknown event without a suggestion when the bus was given no suggestName", () => {
    const bus = new HookBus({ onHandlerError: () => {} });
    expect(() => bus.on("tool_cal", () => {}, owner(0))).to.throw(/^Unknown event "tool_cal"\.$/);
  });

  it("refuses a dispatch of the wrong kind", async () => {
    const { bus } = makeBus();
    bus.on("tool_call", () => {}, owner(0));
    let caught: unknown;
    await loose(bus)
      .emit("tool_call", {}, {})
      .catch((e: unknown) => {
        caught = e;
      });
    expect((caught as { code?: string }).code).to.equal("KC_ERR_WRONG_DISPATCH");
  });

  it("runs fallback handlers after all others, in load order among themselves, and names the deciding owner", async () => {
    const { bus } = makeBus();
    const ran: string[] = [];
    const decide = (id: string, answer?: { cancel: boolean }) => () => {
      ran.push(id);
      return answer;
    };
    bus.on("session_before_compact", decide("builtin-fallback", { cancel: true }), owner(0), {
      fallback: true,
    });
    bus.on("session_before_compact", decide("late-fallback"), owner(5), { fallback: true });
    bus.on("session_before_compact", decide("user"), owner(3));
    bus.on("session_before_compact", decide("early"), owner(1));
    let decidedBy: string | undefined;
    const result = await bus.gate("session_before_compact", {} as never, undefined, {
      failClosed: () => ({ cancel: true }),
      isDecision: (r, by) => {
        decidedBy = by.id;
        return r.cancel === true;
      },
    });
    expect(ran).to.deep.equal(["early", "user", "builtin-fallback"]);
    expect(result).to.deep.equal({ cancel: true });
    expect(decidedBy).to.equal(owner(0).id);
  });

  it("lets only the declared origins subscribe to project_trust", () => {
    const { bus } = makeBus();
    expect(() => bus.on("project_trust", () => {}, owner(0, "project"))).to.throw(
      /may not handle "project_trust"/,
    );
    expect(() => bus.on("project_trust", () => {}, owner(0, "user"))).not.to.throw();
  });

  it("reports ordinary errors from session_start instead of propagating them", async () => {
    const { bus, reports } = makeBus();
    bus.on(
      "session_start",
      () => {
        throw new Error("plain");
      },
      owner(0),
    );
    await bus.emit("session_start", { reason: "startup" });
    expect(reports.map((r) => r.event)).to.deep.equal(["session_start"]);
  });

  it("stops a transform chain when the stop rule says so (input handled)", async () => {
    const { bus } = makeBus();
    const calls: number[] = [];
    bus.on(
      "input",
      () => {
        calls.push(0);
        return { action: "handled" };
      },
      owner(0),
    );
    bus.on("input", () => void calls.push(1), owner(1));
    const result = await bus.transform("input", { text: "hi" }, undefined, {
      stop: (r) => r.action === "handled",
    });
    expect(result).to.deep.equal({ action: "handled" });
    expect(calls).to.deep.equal([0]);
  });

  it("folds results with the dispatcher's fold and builds payloads with toEvent", async () => {
    const { bus } = makeBus();
    bus.on("tool_result", (e: { isError: boolean }) => ({ isError: !e.isError }), owner(0));
    bus.on("tool_result", () => ({ details: { n: 1 } }), owner(1));
    const result = await bus.transform(
      "tool_result",
      { content: [], details: undefined as unknown, isError: false } as Omit<
        ToolResultEvent,
        "toolName" | "toolCallId" | "input"
      >,
      undefined,
      {
        toEvent: (v) => ({ toolName: "t", toolCallId: "c1", input: {}, ...v }),
        fold: (v, patch) => ({ ...v, ...patch }),
      },
    );
    expect(result).to.deep.equal({ content: [], details: { n: 1 }, isError: true });
  });
});

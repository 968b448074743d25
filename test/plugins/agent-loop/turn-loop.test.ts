/**
 * The turn loop on its own: a real hook bus, tool registry and tool runner, an in-memory session and the scripted
 * provider's stream function, with no kernel or SDK around it.
 */

import { Type } from "@sinclair/typebox";
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
  type AgentMessage,
  type ExtensionContext,
  HookBus,
  type ModelInfo,
  type ProviderHooks,
  type ToolDefinition,
} from "../../../kernel/index.js";
import { commitDrafts } from "../../../plugins/agent-loop/boundary-drafts.js";
import { messageText, promptMessage } from "../../../plugins/agent-loop/convert.js";
import { MessageQueues } from "../../../plugins/agent-loop/message-queues.js";
import { ToolRunner } from "../../../plugins/agent-loop/tool-runner.js";
import { Transcript } from "../../../plugins/agent-loop/transcript.js";
import { runTurns, type TurnLoopConfig } from "../../../plugins/agent-loop/turn-loop.js";
import type { ModelRequest } from "../../../plugins/model-registry/model-service.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { ToolRegistry } from "../../../plugins/tool-registry/tool-registry.js";

const model: ModelInfo = { ...SCRIPTED_MODEL, provider: SCRIPTED_PROVIDER, api: SCRIPTED_API };
const owner = { id: "test:loop", origin: "cli" as const, order: 0 };
const hooks: ProviderHooks = {
  payload: async (payload) => payload,
  headers: async (headers) => headers,
  response: async () => {},
  streamEvent: async () => {},
};

const echo = (extra: Partial<ToolDefinition> = {}): ToolDefinition =>
  ({
    name: "echo",
    description: "Echo the text back",
    parameters: Type.Object({ text: Type.String() }),
    execute: async (_id: string, params: { text: string }) => ({
      content: [{ type: "text", text: params.text }],
      details: undefined,
    }),
    ...extra,
  }) as ToolDefinition;

/** Events the loop emits, as `type` or `type detail`. */
const LOOP_EVENTS = [
  "agent_start",
  "turn_start",
  "message_start",
  "message_end",
  "turn_end",
  "tool_execution_end",
];

function setup(steps: ScriptEntry[], tools: ToolDefinition[] = []) {
  const bus = new HookBus({ onHandlerError: () => {} });
  const log = SessionManager.inMemory("/work");
  const ctx = {} as ExtensionContext;
  const context = () => ctx;
  const registry = new ToolRegistry();
  for (const tool of tools) registry.registerTool(owner, tool);
  const runner = new ToolRunner(registry, bus, context);
  const transcript = new Transcript(bus, context, log);
  const queues = new MessageQueues(() => {});
  const provider = scriptedProviderConfig(codeSteps(steps));
  const requests: ModelRequest[] = [];
  const recorded: string[] = [];
  const events: string[] = [];
  for (const name of LOOP_EVENTS) {
    bus.on(
      name,
      (event: { message?: AgentMessage; turnIndex?: number }) => {
        const detail = event.turnIndex ?? event.message?.role;
        events.push(detail === undefined ? name : `${name} ${detail}`);
      },
      owner,
    );
  }
  const state = { model, systemPrompt: "You are a test.", thinkingLevel: "off" as "off" | "high" };
  const config: TurnLoopConfig = {
    bus,
    context,
    transcript,
    model: () => state.model,
    systemPrompt: () => state.systemPrompt,
    thinkingLevel: () => state.thinkingLevel,
    tools: () => registry.declarations(),
    stream: (request) => {
      requests.push(request);
      return provider.streamSimple!({ ...request, hooks });
    },
    beforeRequest: (systemPrompt, declared) =>
      recorded.push(`${systemPrompt} [${declared.map((d) => d.name)}]`),
    runTools: (calls, signal) => runner.runBatch(calls, signal),
    hasSteering: () => queues.hasSteering(),
    hasFollowUps: () => queues.hasFollowUps(),
    takeSteering: () => queues.takeSteering(),
    takeFollowUps: () => queues.takeFollowUps(),
    commit: (boundary) =>
      commitDrafts(boundary.entries, {
        log,
        transcript,
        appended: async () => {},
        report: (error) => {
          throw error;
        },
      }),
  };
  const run = (text: string, signal = new AbortController().signal) =>
    runTurns([promptMessage(text)], config, signal);
  return { bus, log, queues, requests, recorded, events, state, config, run };
}

describe("turn loop", () => {
  it("runs a text turn: the input enters, the answer streams, and the run is done", async () => {
    const t = setup([{ text: "Hello" }]);
    const outcome = await t.run("Hi");
    expect(outcome.kind).to.equal("done");
    expect(t.events).to.deep.equal([
      "agent_start",
      "turn_start 0",
      "message_start user",
      "message_end user",
      "message_start assistant",
      "message_end assistant",
      "turn_end 0",
    ]);
    expect(outcome.messages.map((m) => m.role)).to.deep.equal(["user", "assistant"]);
    expect(t.log.buildContext().messages.map(messageText)).to.deep.equal(["Hi", "Hello"]);
  });

  it("answers tool calls with their results in a further turn, in the order the calls were written", async () => {
    const t = setup(
      [
        {
          toolCalls: [
            { name: "echo", arguments: { text: "slow" } },
            { name: "echo", arguments: { text: "fast" } },
          ],
        },
        { text: "done", expect: { lastToolResult: { toolName: "echo", textContains: "fast" } } },
      ],
      [
        echo({
          execute: async (_id: string, p: { text: string }) => {
            await new Promise((r) => setTimeout(r, p.text === "slow" ? 30 : 1));
            return { content: [{ type: "text", text: p.text }], details: undefined };
          },
        } as Partial<ToolDefinition>),
      ],
    );
    const outcome = await t.run("go");
    expect(outcome.kind).to.equal("done");
    expect(t.events.filter((e) => e.startsWith("turn_"))).to.deep.equal([
      "turn_start 0",
      "turn_end 0",
      "turn_start 1",
      "turn_end 1",
    ]);
    const results = outcome.messages.filter((m) => m.role === "toolResult").map(messageText);
    expect(results).to.deep.equal(["slow", "fast"]);
    const last = outcome.messages.at(-1)!;
    expect(last.role === "assistant" && last.stopReason).to.equal("stop");
  });

  it("takes steering after the current turn and follow-ups only once nothing else asks for a turn", async () => {
    const t = setup(
      [
        { toolCalls: [{ name: "echo", arguments: { text: "x" } }] },
        { text: "steered", expect: { lastUserText: "steer" } },
        { text: "followed", expect: { lastUserText: "later" } },
      ],
      [
        echo({
          execute: async () => {
            t.queues.enqueue("followUp", promptMessage("later"));
            t.queues.enqueue("steering", promptMessage("steer"));
            return { content: [{ type: "text", text: "ok" }], details: undefined };
          },
        } as Partial<ToolDefinition>),
      ],
    );
    const outcome = await t.run("go");
    expect(outcome.kind).to.equal("done");
    const flow = outcome.messages.map(
      (m) => `${m.role}:${m.role === "assistant" ? m.stopReason : messageText(m)}`,
    );
    expect(flow).to.deep.equal([
      "user:go",
      "assistant:toolUse",
      "toolResult:ok",
      "user:steer",
      "assistant:stop",
      "user:later",
      "assistant:stop",
    ]);
  });

  it("makes no further request when every tool result of the batch terminates", async () => {
    const t = setup(
      [{ toolCalls: [{ name: "echo", arguments: { text: "bye" } }] }, { text: "not reached" }],
      [
        echo({
          execute: async () => ({
            content: [{ type: "text", text: "bye" }],
            details: undefined,
            terminate: true,
          }),
        } as Partial<ToolDefinition>),
      ],
    );
    const outcome = await t.run("go");
    expect(outcome.kind).to.equal("done");
    expect(t.requests).to.have.length(1);
  });

  it("lets turn_end continue a finished turn, or end a run that had more to do", async () => {
    const continued = setup([{ text: "one" }, { text: "two", expect: { lastUserTextContains: "nudge" } }]);
    continued.bus.on(
      "turn_end",
      (event: { turnIndex: number; entries: unknown[] }) =>
        event.turnIndex === 0
          ? { entries: [{ type: "custom_message", customType: "nudge", content: "nudge" }], continue: true }
          : undefined,
      owner,
    );
    expect((await continued.run("go")).kind).to.equal("done");
    expect(continued.requests).to.have.length(2);

    const ended = setup(
      [{ toolCalls: [{ name: "echo", arguments: { text: "a" } }] }, { text: "x" }],
      [echo()],
    );
    ended.bus.on("turn_end", () => ({ end: true }), owner);
    ended.queues.enqueue("followUp", promptMessage("never delivered"));
    expect((await ended.run("go")).kind).to.equal("end");
    expect(ended.requests).to.have.length(1);
    expect(ended.queues.hasPending()).to.equal(true);
  });

  it("ends with the failed answer when the provider fails", async () => {
    const t = setup([
      { error: { kind: "overloaded", message: "529 overloaded", afterChunks: 1 } },
      { text: "x" },
    ]);
    const outcome = await t.run("go");
    expect(outcome.kind).to.equal("error");
    if (outcome.kind !== "error") return;
    expect(outcome.error).to.include({
      stopReason: "error",
      errorKind: "overloaded",
      errorMessage: "529 overloaded",
    });
    expect(t.events.at(-1)).to.equal("turn_end 0");
    expect(t.requests).to.have.length(1);
  });

  it("ends aborted when the signal aborts mid-stream, after closing the turn", async () => {
    const t = setup([{ text: "a long answer streaming slowly", chunkDelayMs: 20 }, { text: "never" }]);
    const controller = new AbortController();
    t.bus.on(
      "message_start",
      (event: { message: AgentMessage }) => {
        if (event.message.role === "assistant") controller.abort();
      },
      owner,
    );
    const outcome = await t.run("go", controller.signal);
    expect(outcome.kind).to.equal("aborted");
    const last = outcome.messages.at(-1)!;
    expect(last.role === "assistant" && last.stopReason).to.equal("aborted");
    expect(t.events.slice(-2)).to.deep.equal(["message_end assistant", "turn_end 0"]);
    expect(t.requests).to.have.length(1);
  });

  it("builds the request from the branch as context handlers leave it, without changing the branch", async () => {
    const t = setup([{ text: "ok", expect: { lastUserText: "[edited] original" } }]);
    t.bus.on(
      "context",
      (event: { messages: AgentMessage[] }) => ({
        messages: event.messages.map((m) =>
          m.role === "user" ? { ...m, content: `[edited] ${messageText(m)}` } : m,
        ),
      }),
      owner,
    );
    const outcome = await t.run("original");
    expect(outcome.kind).to.equal("done");
    expect(messageText(t.log.buildContext().messages[0]!)).to.equal("original");
  });

  it("gives context and context_with_system handlers copies, so changes in place never reach the session", async () => {
    for (const event of ["context", "context_with_system"]) {
      const t = setup([{ text: "ok", expect: { lastUserText: "changed in place" } }]);
      t.bus.on(
        event,
        (e: { messages: { role: string; content: unknown }[] }) => {
          for (const m of e.messages) if (m.role === "user") m.content = "changed in place";
        },
        owner,
      );
      expect((await t.run("original")).kind, event).to.equal("done");
      expect(messageText(t.log.buildContext().messages[0]!), event).to.equal("original");
    }
  });

  it("sends the prompt context_with_system leaves and records the session's own prompt and tools", async () => {
    const t = setup([{ text: "ok", expect: { systemPromptContains: "REWRITTEN" } }], [echo()]);
    t.bus.on(
      "context_with_system",
      (event: { messages: { role: string; content: unknown }[] }) => ({
        messages: [{ ...event.messages[0]!, content: "REWRITTEN" }, ...event.messages.slice(1)],
      }),
      owner,
    );
    expect((await t.run("go")).kind).to.equal("done");
    expect(t.requests[0]!.systemPrompt).to.equal("REWRITTEN");
    expect(t.recorded).to.deep.equal(["You are a test. [echo]"]);
  });

  it("reads the model, thinking level and tools for each request", async () => {
    const other: ModelInfo = { ...model, id: "scripted-2" };
    const t = setup(
      [{ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "ok" }],
      [
        echo({
          execute: async () => {
            t.state.model = other;
            t.state.thinkingLevel = "high";
            return { content: [{ type: "text", text: "switched" }], details: undefined };
          },
        } as Partial<ToolDefinition>),
      ],
    );
    await t.run("go");
    expect(t.requests.map((r) => `${r.model.id} ${r.thinkingLevel ?? "off"}`)).to.deep.equal([
      "scripted off",
      "scripted-2 high",
    ]);
  });
});

/** The agent loop against the scripted provider: event order and shapes (json.md), tools, queues, retries. */

import type { ExtensionAPI, SessionEvent, SystemPromptOptions, ToolDefinition } from "@knightcodeai/cli";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import { sessionInternals } from "../../../hosts/sdk/session-internals.js";

const echoTool = (name = "echo", extra: Partial<ToolDefinition> = {}): ToolDefinition =>
  ({
    name,
    description: "Echo the text back",
    parameters: Type.Object({ text: Type.String() }),
    execute: async (_id: string, params: { text: string }) => ({
      content: [{ type: "text", text: params.text }],
      details: { echoed: params.text },
    }),
    ...extra,
  }) as ToolDefinition;

const withTools =
  (...tools: ToolDefinition[]) =>
  (kc: ExtensionAPI) => {
    for (const tool of tools) kc.registerTool(tool);
  };

/** Event types in order, without the message_update noise. */
const types = (t: TestSession) => t.events.filter((e) => e.type !== "message_update").map((e) => e.type);

/** Handler failures the session reported (`extension_error`). */
const errors = (t: TestSession) =>
  t.eventsOfType("extension_error").map((e) => ({ event: String(e.event), error: String(e.error) }));

describe("agent loop", () => {
  const sessions: TestSession[] = [];
  afterEach(async () => {
    for (const t of sessions.splice(0)) await t.dispose();
  });
  const open = async (options: TestSessionOptions) => {
    const t = await createTestSession(options);
    sessions.push(t);
    return t;
  };

  it("runs a text turn with the events of json.md in order", async () => {
    const t = await open({ script: [{ text: "Hello there" }] });
    await t.prompt("Hi");
    expect(types(t)).to.deep.equal([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
    const [user, assistantStart] = t.eventsOfType("message_start");
    expect(user!.message).to.include({ role: "user", content: "Hi" });
    expect((assistantStart!.message as { role: string; stopReason: string }).stopReason).to.equal("pending");
    const updates = t.eventsOfType("message_update");
    const deltas = updates
      .map((u) => u.assistantMessageEvent as { type: string; delta?: string })
      .filter((e) => e.type === "text_delta")
      .map((e) => e.delta);
    expect(deltas.length).to.be.greaterThan(1);
    expect(deltas.join("")).to.equal("Hello there");
    for (const u of updates) expect(u.usage).to.have.property("totalTokens");
    const final = t.eventsOfType("message_end")[1]!.message as {
      content: { text: string }[];
      stopReason: string;
    };
    expect(final.stopReason).to.equal("stop");
    expect(final.content[0]!.text).to.equal("Hello there");
    expect(t.eventsOfType("turn_end")[0]).to.deep.include({ toolResults: [] });
    expect(t.eventsOfType("agent_end")[0]!.willRetry).to.equal(false);
    expect(t.eventsOfType("agent_settled")[0]).to.deep.equal({ type: "agent_settled", aborted: false });
    const recorded = t.session.sessionManager.getBranch().map((e) => e.type === "message" && e.message.role);
    expect(recorded).to.deep.include.members(["user", "assistant"]);
  });

  it("runs a tool turn: the call, its execution events with durationMs, the result, and the follow-up request", async () => {
    const t = await open({
      script: [{ toolCalls: [{ name: "echo", arguments: { text: "ping" } }] }, { text: "done" }],
      extensions: [withTools(echoTool())],
    });
    await t.prompt("go");
    expect(types(t)).to.deep.equal([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "turn_start",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
    const toolcallStart = t
      .eventsOfType("message_update")
      .map(
        (u) =>
          u.assistantMessageEvent as { type: string; partial: { content: { id: string; name: string }[] } },
      )
      .find((e) => e.type === "toolcall_start");
    expect(toolcallStart).to.not.equal(undefined);
    const end = t.eventsOfType("tool_execution_end")[0]!;
    expect(end).to.include({ toolName: "echo", isError: false });
    expect(end.durationMs).to.be.a("number");
    expect((end.result as { content: { text: string }[] }).content[0]!.text).to.equal("ping");
    const turnEnd = t.eventsOfType("turn_end")[0]!;
    expect((turnEnd.toolResults as { toolName: string }[]).map((r) => r.toolName)).to.deep.equal(["echo"]);
  });

  it("runs the tool calls of one message in parallel and records results in source order", async () => {
    const log: string[] = [];
    const slow = (name: string, ms: number) =>
      echoTool(name, {
        execute: async (_id: string, params: { text: string }) => {
          log.push(`start ${name}`);
          await new Promise((r) => setTimeout(r, ms));
          log.push(`end ${name}`);
          return { content: [{ type: "text", text: params.text }], details: undefined };
        },
      } as Partial<ToolDefinition>);
    const t = await open({
      script: [
        {
          toolCalls: [
            { name: "slow", arguments: { text: "a" } },
            { name: "fast", arguments: { text: "b" } },
          ],
        },
        { text: "ok" },
      ],
      extensions: [withTools(slow("slow", 60), slow("fast", 5))],
    });
    await t.prompt("both");
    expect(log).to.deep.equal(["start slow", "start fast", "end fast", "end slow"]);
    const results = t
      .eventsOfType("message_end")
      .map((e) => e.message as { role: string; toolName?: string })
      .filter((m) => m.role === "toolResult")
      .map((m) => m.toolName);
    expect(results).to.deep.equal(["slow", "fast"]);
  });

  it("turns an invalid tool call into an error result naming the bad field, then goes on", async () => {
    const t = await open({
      script: [{ toolCalls: [{ name: "echo", arguments: { text: 42 } }] }, { text: "sorry" }],
      extensions: [withTools(echoTool())],
    });
    await t.prompt("x");
    const end = t.eventsOfType("tool_execution_end")[0]!;
    expect(end.isError).to.equal(true);
    expect(end).to.not.have.property("durationMs");
    const text = (end.result as { content: { text: string }[] }).content[0]!.text;
    expect(text).to.contain('Invalid arguments for tool "echo"');
    expect(text).to.contain("/text");
    expect(t.eventsOfType("agent_settled")[0]!.aborted).to.equal(false);
    expect(t.eventsOfType("turn_start")).to.have.length(2);
  });

  it("reports an unknown tool to the model as an error result", async () => {
    const t = await open({ script: [{ toolCalls: [{ name: "nope" }] }, { text: "ok" }] });
    await t.prompt("x");
    const end = t.eventsOfType("tool_execution_end")[0]!;
    expect(end.isError).to.equal(true);
    expect((end.result as { content: { text: string }[] }).content[0]!.text).to.contain(
      '"nope" does not exist',
    );
  });

  it("blocks a call when a tool_call handler says so, and when a handler throws", async () => {
    let ran = 0;
    const t = await open({
      script: [
        {
          toolCalls: [
            { name: "echo", arguments: { text: "rm -rf" } },
            { name: "echo", arguments: { text: "boom" } },
            { name: "echo", arguments: { text: "fine" } },
          ],
        },
        { text: "ok" },
      ],
      extensions: [
        withTools(
          echoTool("echo", {
            execute: async (_id: string, p: { text: string }) => {
              ran++;
              return { content: [{ type: "text", text: p.text }], details: undefined };
            },
          } as Partial<ToolDefinition>),
        ),
        (kc) => {
          kc.on("tool_call", (event) => {
            if (event.input.text === "rm -rf") return { block: true, reason: "too dangerous" };
            if (event.input.text === "boom") throw new Error("checker crashed");
            return undefined;
          });
        },
      ],
    });
    await t.prompt("x");
    // Calls run in parallel, so end events arrive in completion order; compare them in call order.
    const byId = (a: SessionEvent, b: SessionEvent) =>
      String(a.toolCallId).localeCompare(String(b.toolCallId));
    const ends = [...t.eventsOfType("tool_execution_end")].sort(byId).map((e) => ({
      isError: e.isError,
      text: (e.result as { content: { text: string }[] }).content[0]!.text,
    }));
    expect(ends[0]).to.deep.equal({ isError: true, text: "Tool call blocked: too dangerous" });
    expect(ends[1]!.isError).to.equal(true);
    expect(ends[1]!.text).to.contain("checker crashed");
    expect(ends[2]).to.deep.equal({ isError: false, text: "fine" });
    expect(ran).to.equal(1);
    expect(errors(t).some((e) => e.event === "tool_call" && e.error.includes("checker crashed"))).to.equal(
      true,
    );
  });

  it("lets tool_call handlers mutate the input the tool receives", async () => {
    const t = await open({
      script: [{ toolCalls: [{ name: "echo", arguments: { text: "raw" } }] }, { text: "ok" }],
      extensions: [
        withTools(echoTool()),
        (kc) => {
          kc.on("tool_call", (event) => {
            event.input.text = "rewritten";
          });
        },
      ],
    });
    await t.prompt("x");
    expect(
      (t.eventsOfType("tool_execution_end")[0]!.result as { content: { text: string }[] }).content[0]!.text,
    ).to.equal("rewritten");
  });

  it("composes tool_result patches, also for a tool that threw", async () => {
    const t = await open({
      script: [
        {
          toolCalls: [
            { name: "echo", arguments: { text: "secret" } },
            { name: "fail", arguments: { text: "x" } },
          ],
        },
        { text: "ok" },
      ],
      extensions: [
        withTools(
          echoTool(),
          echoTool("fail", {
            execute: async () => {
              throw new Error("disk full");
            },
          } as Partial<ToolDefinition>),
        ),
        (kc) => {
          kc.on("tool_result", (event) => ({
            content: [{ type: "text" as const, text: `[redacted ${event.toolName}]` }],
          }));
          kc.on("tool_result", (event) => ({
            details: { saw: (event.content[0] as { text: string }).text, wasError: event.isError },
          }));
        },
      ],
    });
    await t.prompt("x");
    const [first, second] = t.eventsOfType("tool_execution_end");
    expect(first!.result).to.deep.equal({
      content: [{ type: "text", text: "[redacted echo]" }],
      details: { saw: "[redacted echo]", wasError: false },
    });
    expect(second!.isError).to.equal(true);
    expect((second!.result as { details: unknown }).details).to.deep.equal({
      saw: "[redacted fail]",
      wasError: true,
    });
  });

  it("aborts mid-stream: the message ends aborted, running tools get the signal, queued messages come back", async () => {
    const t = await open({
      script: [{ text: "a long answer that streams slowly", chunkDelayMs: 1000 }],
    });
    const run = t.session.prompt("go");
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (t.eventsOfType("message_update").length > 0) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    t.session.followUp("later");
    const returned = t.session.abort();
    await run;
    expect(returned).to.deep.equal({ steering: [], followUp: ["later"] });
    const assistant = t.eventsOfType("message_end").at(-1)!.message as { stopReason: string };
    expect(assistant.stopReason).to.equal("aborted");
    expect(t.eventsOfType("agent_settled").at(-1)!.aborted).to.equal(true);
    expect(t.session.isIdle()).to.equal(true);
  });

  it("kills a running tool through its signal on abort", async () => {
    let sawAbort = false;
    const t = await open({
      script: [{ toolCalls: [{ name: "wait", arguments: { text: "" } }] }, { text: "never" }],
      extensions: [
        withTools(
          echoTool("wait", {
            execute: (_id: string, _p: unknown, signal: AbortSignal | undefined) =>
              new Promise((_resolve, reject) => {
                const timer = setTimeout(() => reject(new Error("not aborted")), 5_000);
                signal?.addEventListener("abort", () => {
                  clearTimeout(timer);
                  sawAbort = true;
                  reject(new Error("aborted"));
                });
              }),
          } as Partial<ToolDefinition>),
        ),
      ],
    });
    const run = t.session.prompt("go");
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (t.eventsOfType("tool_execution_start").length > 0) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    t.session.abort();
    await run;
    expect(sawAbort).to.equal(true);
    expect(t.eventsOfType("turn_start")).to.have.length(1);
    expect(t.eventsOfType("agent_settled")[0]!.aborted).to.equal(true);
  });

  it("delivers steering after the current turn and follow-ups after the agent finishes", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const t = await open({
      script: [
        { toolCalls: [{ name: "hold", arguments: { text: "" } }] },
        { text: "after steering", expect: { lastUserText: "steer me" } },
        { text: "after follow-up", expect: { lastUserText: "and then this" } },
      ],
      extensions: [
        withTools(
          echoTool("hold", {
            execute: async () => {
              await gate;
              return { content: [{ type: "text", text: "held" }], details: undefined };
            },
          } as Partial<ToolDefinition>),
        ),
      ],
    });
    const run = t.session.prompt("start");
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (t.eventsOfType("tool_execution_start").length > 0) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    await t.session.prompt("and then this", { streamingBehavior: "followUp" });
    await t.session.prompt("steer me", { streamingBehavior: "steer" });
    expect(t.eventsOfType("queue_update").at(-1)).to.deep.include({
      steering: ["steer me"],
      followUp: ["and then this"],
    });
    release();
    await run;
    const users = t
      .eventsOfType("message_start")
      .map((e) => e.message as { role: string; content: unknown })
      .filter((m) => m.role === "user")
      .map((m) => m.content);
    expect(users).to.deep.equal(["start", "steer me", "and then this"]);
    const finals = t
      .eventsOfType("message_end")
      .map((e) => e.message as { role: string; stopReason?: string; errorMessage?: string })
      .filter((m) => m.role === "assistant");
    expect(finals.map((m) => m.stopReason)).to.deep.equal(["toolUse", "stop", "stop"]);
    expect(t.eventsOfType("agent_start")).to.have.length(1);
    expect(t.eventsOfType("queue_update").at(-1)).to.deep.include({ steering: [], followUp: [] });
  });

  it("refuses a prompt once the run is past its start unless it says how to enter the run", async () => {
    const t = await open({
      script: [{ text: "a slow answer that streams in several chunks", chunkDelayMs: 100 }],
    });
    const run = t.session.prompt("one");
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (t.eventsOfType("agent_start").length > 0) {
          clearInterval(timer);
          resolve();
        }
      }, 2);
    });
    let error: unknown;
    let accepted = false;
    await t.session
      .prompt("two", {
        onAccepted: () => {
          accepted = true;
        },
      })
      .catch((e: unknown) => {
        error = e;
      });
    expect((error as { code?: string }).code).to.equal("KC_ERR_BUSY");
    expect(accepted).to.equal(false);
    await run;
  });

  it("counts a starting run as busy: prompts, user and custom messages sent meanwhile join it in order", async () => {
    let releaseStart: () => void = () => {};
    const startHeld = new Promise<void>((r) => {
      releaseStart = r;
    });
    let api: ExtensionAPI | undefined;
    const t = await open({
      script: [{ text: "one answer for all" }],
      extensions: [
        (kc) => {
          api = kc;
          kc.on("before_agent_start", async () => {
            await startHeld;
          });
        },
      ],
    });
    const accepted: string[] = [];
    const prompt = (text: string) => t.session.prompt(text, { onAccepted: () => accepted.push(text) });
    const runs = [prompt("first")];
    await new Promise((r) => setTimeout(r, 10));
    // The run is in before_agent_start: not idle, and what comes now joins it.
    expect(t.session.isIdle()).to.equal(false);
    runs.push(prompt("second"));
    await new Promise((r) => setTimeout(r, 5));
    api!.sendUserMessage("third");
    api!.sendMessage({ customType: "note", content: "fourth", display: true });
    runs.push(prompt("fifth"));
    releaseStart();
    await Promise.all(runs);
    expect(accepted).to.deep.equal(["first", "second", "fifth"]);
    expect(t.eventsOfType("agent_start")).to.have.length(1);
    const entered = t
      .eventsOfType("message_end")
      .map((e) => e.message as { role: string; content: unknown })
      .filter((m) => m.role !== "assistant")
      .map((m) => (typeof m.content === "string" ? m.content : (m.content as { text: string }[])[0]!.text));
    expect(entered).to.deep.equal(["first", "second", "third", "fourth", "fifth"]);
    expect(t.session.isIdle()).to.equal(true);
  });

  it("retries after a scripted 529 with backoff and reports the retry events", async () => {
    const t = await open({
      script: [
        { error: { kind: "overloaded", status: 529, message: "529 overloaded", retryAfterMs: 10 } },
        { text: "recovered" },
      ],
    });
    await t.prompt("x");
    expect(types(t)).to.deep.equal([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "auto_retry_start",
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "auto_retry_end",
      "agent_settled",
    ]);
    expect(t.eventsOfType("agent_end").map((e) => e.willRetry)).to.deep.equal([true, false]);
    expect(t.eventsOfType("auto_retry_start")[0]).to.deep.include({
      attempt: 1,
      maxAttempts: 3,
      errorMessage: "529 overloaded",
    });
    expect(t.eventsOfType("auto_retry_start")[0]!.delayMs).to.equal(10);
    expect(t.eventsOfType("auto_retry_end")[0]).to.deep.include({ success: true, attempt: 2 });
    const users = t
      .eventsOfType("message_start")
      .filter((e) => (e.message as { role: string }).role === "user");
    expect(users).to.have.length(1);
  });

  it("gives up after maxRetries with a final error", async () => {
    const overloaded = { error: { kind: "overloaded" as const, message: "busy" } };
    const t = await open({
      script: [overloaded, overloaded, overloaded],
      settings: { retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 } },
    });
    await t.prompt("x");
    expect(t.eventsOfType("auto_retry_start").map((e) => e.attempt)).to.deep.equal([1, 2]);
    expect(t.eventsOfType("auto_retry_end")[0]).to.deep.include({
      success: false,
      attempt: 3,
      finalError: "busy",
    });
    expect(t.eventsOfType("agent_end").map((e) => e.willRetry)).to.deep.equal([true, true, false]);
  });

  it("does not retry errors that are not retryable", async () => {
    const t = await open({ script: [{ error: { kind: "auth", message: "bad key" } }] });
    await t.prompt("x");
    expect(t.eventsOfType("auto_retry_start")).to.deep.equal([]);
    const final = t.eventsOfType("message_end").at(-1)!.message as {
      stopReason: string;
      errorMessage: string;
    };
    expect(final).to.include({ stopReason: "error", errorMessage: "bad key" });
  });

  it("lets agent_before_settle ask for one continuation and then end", async () => {
    let settles = 0;
    const t = await open({
      script: [{ text: "first" }, { text: "second", expect: { lastUserTextContains: "keep going" } }],
      extensions: [
        (kc) => {
          kc.on("agent_before_settle", (event) => {
            settles++;
            if (settles === 1) {
              return {
                entries: [
                  ...event.entries,
                  { type: "custom_message" as const, customType: "nudge", content: "keep going" },
                ],
                continue: true,
              };
            }
            return { end: true };
          });
        },
      ],
    });
    await t.prompt("x");
    expect(settles).to.equal(2);
    expect(t.eventsOfType("agent_start")).to.have.length(2);
    const texts = t
      .eventsOfType("message_end")
      .map((e) => e.message as { role: string; content: unknown })
      .filter((m) => m.role === "assistant")
      .map((m) => (m.content as { text: string }[])[0]!.text);
    expect(texts).to.deep.equal(["first", "second"]);
    expect(t.eventsOfType("agent_settled")).to.have.length(1);
  });

  it("commits turn_end entries and ends the run on end: true without draining queued input", async () => {
    const t = await open({
      script: [{ toolCalls: [{ name: "echo", arguments: { text: "a" } }] }, { text: "not reached" }],
      extensions: [
        withTools(echoTool()),
        (kc) => {
          kc.on("turn_end", (event) => ({
            entries: [
              ...event.entries,
              { type: "custom" as const, customType: "audit", data: { turn: event.turnIndex } },
            ],
            end: true,
          }));
        },
      ],
    });
    await t.prompt("x");
    expect(t.eventsOfType("turn_start")).to.have.length(1);
    const appended = t.eventsOfType("entry_appended")[0]!.entry as { customType: string; data: unknown };
    expect(appended).to.deep.include({ customType: "audit", data: { turn: 0 } });
  });

  it("skips the follow-up request when every tool result of the batch terminates", async () => {
    const t = await open({
      script: [{ toolCalls: [{ name: "finish", arguments: { text: "bye" } }] }, { text: "not reached" }],
      extensions: [
        withTools(
          echoTool("finish", {
            execute: async () => ({
              content: [{ type: "text", text: "bye" }],
              details: undefined,
              terminate: true,
            }),
          } as Partial<ToolDefinition>),
        ),
      ],
    });
    await t.prompt("x");
    expect(t.eventsOfType("turn_start")).to.have.length(1);
  });

  it("runs sequential tools one at a time", async () => {
    let running = 0;
    let overlap = false;
    const seq = echoTool("seq", {
      executionMode: "sequential",
      execute: async () => {
        running++;
        if (running > 1) overlap = true;
        await new Promise((r) => setTimeout(r, 10));
        running--;
        return { content: [{ type: "text", text: "ok" }], details: undefined };
      },
    } as Partial<ToolDefinition>);
    const t = await open({
      script: [
        { toolCalls: [1, 2, 3].map(() => ({ name: "seq", arguments: { text: "" } })) },
        { text: "ok" },
      ],
      extensions: [withTools(seq)],
    });
    await t.prompt("x");
    expect(overlap).to.equal(false);
    expect(t.eventsOfType("tool_execution_end")).to.have.length(3);
  });

  it("runs a whole batch in order, one call finished before the next starts, when one of its tools is sequential", async () => {
    const order: string[] = [];
    // The slow call comes first: run in parallel, the fast echo would finish before it.
    const seq = echoTool("seq", {
      executionMode: "sequential",
      execute: async (_id: string, params: { text: string }) => {
        order.push(`run ${params.text}`);
        await new Promise((r) => setTimeout(r, 30));
        return { content: [{ type: "text", text: params.text }], details: undefined };
      },
    } as Partial<ToolDefinition>);
    const echo = echoTool("echo", {
      execute: async (_id: string, params: { text: string }) => {
        order.push(`run ${params.text}`);
        return { content: [{ type: "text", text: params.text }], details: undefined };
      },
    } as Partial<ToolDefinition>);
    const t = await open({
      script: [
        {
          toolCalls: [
            { name: "seq", arguments: { text: "a" } },
            { name: "echo", arguments: { text: "b" } },
            { name: "seq", arguments: { text: "c" } },
          ],
        },
        { text: "ok" },
      ],
      extensions: [
        withTools(seq, echo),
        (kc) => {
          kc.on("tool_call", (event) => {
            order.push(`gate ${(event.input as { text: string }).text}`);
          });
        },
      ],
    });
    await t.prompt("x");
    expect(order).to.deep.equal(["gate a", "run a", "gate b", "run b", "gate c", "run c"]);
    expect(
      t.events
        .filter((e) => e.type === "tool_execution_start" || e.type === "tool_execution_end")
        .map(
          (e) =>
            `${e.type === "tool_execution_start" ? "start" : "end"} ${(e as unknown as { toolCallId: string }).toolCallId}`,
        ),
    ).to.deep.equal([
      "start call_1",
      "end call_1",
      "start call_2",
      "end call_2",
      "start call_3",
      "end call_3",
    ]);
  });

  it("applies input transforms and stops at handled input", async () => {
    const t = await open({
      script: [{ text: "ok", expect: { lastUserText: "HELLO" } }],
      extensions: [
        (kc) => {
          kc.on("input", (event) =>
            event.text === "swallow"
              ? { action: "handled" as const }
              : { action: "transform" as const, text: event.text.toUpperCase() },
          );
        },
      ],
    });
    await t.prompt("swallow");
    expect(t.events).to.deep.equal([]);
    await t.prompt("hello");
    const final = t.eventsOfType("message_end").at(-1)!.message as { stopReason: string };
    expect(final.stopReason).to.equal("stop");
  });

  it("shows before_agent_start the options in the peer's shape too, and edits of them reach the provider", async () => {
    let options: SystemPromptOptions | undefined;
    const t = await open({
      script: [{ text: "ok", expect: { systemPromptContains: "Always cite the file." } }],
      extensions: [
        (kc) => {
          kc.on("before_agent_start", (event) => {
            options = structuredClone(event.systemPromptOptions);
            // What an extension written for the peer does: it knows appendSystemPrompt, not sections.
            event.systemPromptOptions.appendSystemPrompt = "Always cite the file.";
          });
        },
      ],
    });
    await t.prompt("hi");
    expect(t.lastAssistantText()).to.equal("ok");
    expect(options!.cwd).to.equal(t.cwd);
    expect(options!.selectedTools).to.deep.equal(options!.tools).and.include("read");
    expect(options!.toolSnippets).to.have.property("read").that.is.a("string");
    expect(options!.promptGuidelines).to.be.an("array");
    expect(options!.contextFiles).to.be.an("array");
    expect(options!.skills).to.deep.equal([]);
  });

  it("adds a before_agent_start message to the run and can force the system prompt", async () => {
    const seen: { messageType: string; prompt?: string; sections: number }[] = [];
    const t = await open({
      script: [{ text: "ok", expect: { systemPromptContains: "FORCED PROMPT" } }],
      extensions: [
        (kc) => {
          kc.on("before_agent_start", (event) => {
            seen.push({
              messageType: event.messageType,
              prompt: event.prompt,
              sections: event.systemPromptOptions.sections.length,
            });
            return {
              message: { customType: "memo", content: "remember this" },
              systemPrompt: "FORCED PROMPT",
            };
          });
        },
      ],
    });
    await t.prompt("hi");
    expect(seen).to.have.length(1);
    expect(seen[0]).to.include({ messageType: "user", prompt: "hi" });
    expect(seen[0]!.sections).to.be.greaterThan(0);
    const roles = t.eventsOfType("message_start").map((e) => (e.message as { role: string }).role);
    expect(roles).to.deep.equal(["user", "custom", "assistant"]);
    expect((t.eventsOfType("message_end").at(-1)!.message as { stopReason: string }).stopReason).to.equal(
      "stop",
    );
    expect(sessionInternals(t.session).agent.systemPrompt).to.equal("FORCED PROMPT");
  });

  it("adds the messages of several before_agent_start handlers to the same run, in handler order", async () => {
    const memo = (customType: string) => (kc: ExtensionAPI) => {
      kc.on("before_agent_start", (event) =>
        event.prompt === "first" ? { message: { customType, content: customType } } : undefined,
      );
    };
    const t = await open({
      script: [{ text: "one", expect: { lastUserText: "second-memo" } }, { text: "two" }],
      extensions: [memo("first-memo"), memo("second-memo")],
    });
    await t.prompt("first");
    await t.prompt("second");
    const started = t
      .eventsOfType("message_start")
      .map((e) => e.message as { role: string; customType?: string; content: unknown })
      .map((m) => (m.role === "custom" ? m.customType : m.role === "user" ? `user ${m.content}` : m.role));
    expect(started).to.deep.equal([
      "user first",
      "first-memo",
      "second-memo",
      "assistant",
      "user second",
      "assistant",
    ]);
  });

  it("holds a nextTurn message until the next run starts, then sends it ahead of the prompt", async () => {
    let api: ExtensionAPI | undefined;
    const t = await open({
      script: [{ text: "ok", expect: { lastUserText: "the prompt" } }],
      extensions: [
        (kc) => {
          api = kc;
        },
      ],
    });
    api!.sendMessage({ customType: "memo", content: "context for later" }, { deliverAs: "nextTurn" });
    await new Promise((r) => setImmediate(r));
    expect(t.events).to.deep.equal([]);
    await t.prompt("the prompt");
    const started = t.eventsOfType("message_start").map((e) => (e.message as { role: string }).role);
    expect(started).to.deep.equal(["custom", "user", "assistant"]);
    expect(t.lastAssistantText()).to.equal("ok");
  });

  it("lets context handlers transform the request messages without changing the session", async () => {
    const t = await open({
      script: [{ text: "ok", expect: { lastUserText: "[edited] original" } }],
      extensions: [
        (kc) => {
          kc.on("context", (event) => ({
            messages: event.messages.map((m) =>
              m.role === "user" && typeof m.content === "string"
                ? { ...m, content: `[edited] ${m.content}` }
                : m,
            ),
          }));
        },
      ],
    });
    await t.prompt("original");
    expect((t.eventsOfType("message_end").at(-1)!.message as { stopReason: string }).stopReason).to.equal(
      "stop",
    );
    const user = t.session.sessionManager
      .getBranch()
      .find((e) => e.type === "message" && e.message.role === "user");
    expect(user?.type === "message" && user.message.role === "user" && user.message.content).to.equal(
      "original",
    );
  });

  it("lets message_end replace a message with one of the same role, and refuses a role change", async () => {
    const t = await open({
      script: [{ text: "raw" }],
      extensions: [
        (kc) => {
          kc.on("message_end", (event) =>
            event.message.role === "assistant"
              ? { message: { ...event.message, content: [{ type: "text" as const, text: "polished" }] } }
              : event.message.role === "user"
                ? { message: { role: "assistant", content: [] } as never }
                : undefined,
          );
        },
      ],
    });
    await t.prompt("x");
    const ends = t.eventsOfType("message_end").map((e) => e.message as { role: string; content: unknown });
    expect(ends[0]!.role).to.equal("user");
    expect((ends[1]!.content as { text: string }[])[0]!.text).to.equal("polished");
    expect(
      errors(t).some((e) => e.event === "message_end" && e.error.includes("may not change the role")),
    ).to.equal(true);
  });

  it("runs provider hooks: a before_provider_request replacement reaches the provider", async () => {
    const seen: string[] = [];
    const t = await open({
      script: [{ text: "from the script" }],
      extensions: [
        (kc) => {
          kc.on("before_provider_request", (event) => ({
            ...(event.payload as object),
            scriptedStep: { text: "from the hook" },
          }));
          kc.on("after_provider_response", (event) => void seen.push(`status ${event.status}`));
          kc.on("provider_stream_event", () => void seen.push("raw"));
        },
      ],
    });
    await t.prompt("x");
    const final = t.eventsOfType("message_end").at(-1)!.message as { content: { text: string }[] };
    expect(final.content[0]!.text).to.equal("from the hook");
    expect(seen[0]).to.equal("status 200");
    expect(seen.filter((s) => s === "raw").length).to.be.greaterThan(1);
  });

  it("runs /commands instead of sending them to the model", async () => {
    const calls: string[] = [];
    const t = await open({
      script: [],
      extensions: [
        (kc) => {
          kc.registerCommand("note", {
            handler: async (args, ctx) => {
              calls.push(args);
              expect(typeof ctx.waitForIdle).to.equal("function");
            },
          });
        },
      ],
    });
    await t.prompt("/note remember the milk");
    expect(calls).to.deep.equal(["remember the milk"]);
    expect(t.events).to.deep.equal([]);
  });

  it("runs nested ctx.executeTool calls through the pipeline with parent ids", async () => {
    const t = await open({
      script: [{ toolCalls: [{ name: "outer", arguments: { text: "x" }, id: "call_A" }] }, { text: "ok" }],
      extensions: [
        withTools(
          echoTool(),
          echoTool("outer", {
            execute: async (
              _id: string,
              _p: unknown,
              signal: AbortSignal | undefined,
              _u: unknown,
              ctx: any,
            ) => {
              const first = await ctx.executeTool("echo", { text: "one" }, { signal });
              const second = await ctx.executeTool("echo", { text: 7 });
              return {
                content: [{ type: "text", text: `${first.content[0].text}/${second.isError}` }],
                details: undefined,
              };
            },
          } as Partial<ToolDefinition>),
        ),
      ],
    });
    await t.prompt("x");
    const starts = t
      .eventsOfType("tool_execution_start")
      .map((e) => `${e.toolCallId}|${e.parentToolCallId ?? ""}`);
    expect(starts).to.deep.equal(["call_A|", "call_A/1|call_A", "call_A/2|call_A"]);
    const outer = t.eventsOfType("tool_execution_end").find((e) => e.toolCallId === "call_A")!;
    expect((outer.result as { content: { text: string }[] }).content[0]!.text).to.equal("one/true");
    const results = t
      .eventsOfType("message_end")
      .map((e) => e.message as { role: string })
      .filter((m) => m.role === "toolResult");
    expect(results).to.have.length(1);
  });

  it("records sendMessage, appendEntry and session name changes", async () => {
    let api: ExtensionAPI | undefined;
    const t = await open({
      script: [{ text: "ok", expect: { lastUserTextContains: "note for the model" } }],
      extensions: [
        (kc) => {
          api = kc;
        },
      ],
    });
    api!.sendMessage({ customType: "note", content: "note for the model" }, { triggerTurn: true });
    await t.session.waitForIdle();
    await new Promise((r) => setTimeout(r, 20));
    await t.session.waitForIdle();
    api!.appendEntry("bookmark", { at: 1 });
    api!.setSessionName("Investigation");
    await new Promise((r) => setImmediate(r));
    expect(t.eventsOfType("entry_appended")[0]!.entry).to.deep.include({
      type: "custom",
      customType: "bookmark",
    });
    expect(t.eventsOfType("session_info_changed")[0]).to.deep.equal({
      type: "session_info_changed",
      name: "Investigation",
    });
    expect(api!.getSessionName()).to.equal("Investigation");
    expect((t.eventsOfType("message_end").at(-1)!.message as { stopReason: string }).stopReason).to.equal(
      "stop",
    );
  });

  it("emits thinking_level_changed and records the change", async () => {
    const t = await open({ script: [] });
    t.session.setThinkingLevel("high");
    await new Promise((r) => setImmediate(r));
    expect(t.eventsOfType("thinking_level_changed")).to.deep.equal([
      { type: "thinking_level_changed", level: "high" },
    ]);
    expect(sessionInternals(t.session).log.buildContext().thinkingLevel).to.equal("high");
  });

  it("refuses to prompt after an extension refused the session", async () => {
    const { ExtensionStartupError } = await import("../../../kernel/index.js");
    const t = await open({
      script: [{ text: "never" }],
      extensions: [
        (kc) => {
          kc.on("session_start", () => {
            throw new ExtensionStartupError("not here");
          });
        },
      ],
    });
    let error: unknown;
    await t.session.prompt("x").catch((e: unknown) => {
      error = e;
    });
    expect((error as { code?: string }).code).to.equal("KC_ERR_STARTUP_FAILED");
  });
  it("refreshes the prompt cache while idle as cache_warming_decision handlers decide, the last answer winning", async () => {
    const requests: { maxTokens?: number }[] = [];
    const decisions: string[] = [];
    const t = await open({
      script: [
        { text: "first" },
        (request: { maxTokens?: number }) => {
          requests.push(request);
          return { text: "." };
        },
      ] as never,
      settings: { cacheWarming: { enabled: false, intervalMs: 10, maxRefreshes: 5 } },
      extensions: [
        (kc) => {
          kc.on("cache_warming_decision", () => ({ action: "stop" as const }));
          kc.on("cache_warming_decision", (event) => {
            decisions.push(`idle ${event.idleMs >= 0 ? "ok" : "bad"}`);
            return decisions.length === 1 ? { action: "warm" as const } : undefined;
          });
        },
      ],
    });
    await t.prompt("hi");
    const deadline = Date.now() + 2_000;
    while (decisions.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    expect(decisions).to.deep.equal(["idle ok", "idle ok"]);
    expect(requests).to.have.length(1);
    expect(requests[0]!.maxTokens).to.equal(1);
    const warm = t.session.sessionManager
      .getEntries()
      .filter((e) => e.type === "custom" && e.customType === "knightcode.cacheWarming");
    expect(warm).to.have.length(1);
  });
});

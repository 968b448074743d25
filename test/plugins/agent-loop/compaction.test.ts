/**
 * Compaction through a real session with the scripted provider: the cut rule (pure), the manual trigger (`ctx.compact`,
 * the handle, `/compact`), the threshold and overflow triggers, extensions that cancel or replace the summary, the
 * `fallback` ordering that lets them, summary retries with back-off, and what later requests send.
 */
import { expect } from "chai";
import type { ScriptEntry } from "../../../hosts/testing/index.js";
import { createTestSession, type TestSession } from "../../../hosts/testing/test-session.js";
import type {
  AgentMessage,
  ExtensionAPI,
  ProviderStreamRequest,
  SessionEntry,
} from "../../../kernel/index.js";
import { estimateTokens, prepareCompaction } from "../../../plugins/agent-loop/compaction.js";

const long = (word: string) => `${word} `.repeat(40).trim(); // ~200 characters, ~50 tokens

/** Text of every message a request carried, in order (user content as sent). */
function requestTexts(request: ProviderStreamRequest): string[] {
  return request.messages.map((m) =>
    typeof m.content === "string"
      ? m.content
      : m.content.map((c) => ("text" in c ? c.text : c.type === "toolCall" ? `call:${c.name}` : "")).join(""),
  );
}

/** A step that records the request it answers. */
function recording(
  into: ProviderStreamRequest[],
  text: string,
  usage?: { input: number; output: number },
): ScriptEntry {
  return (request) => {
    into.push(request);
    return { text, ...(usage ? { usage } : {}) };
  };
}

const isSummaryRequest = (request: ProviderStreamRequest) => request.systemPrompt.includes("condense");

let entryCounter = 0;
function entry(message: AgentMessage): SessionEntry {
  entryCounter++;
  return {
    type: "message",
    id: `e${entryCounter}`,
    parentId: entryCounter > 1 ? `e${entryCounter - 1}` : null,
    timestamp: new Date(0).toISOString(),
    message,
  } as SessionEntry;
}

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 });
const assistant = (text: string, call?: { id: string; name: string; path: string }): AgentMessage =>
  ({
    role: "assistant",
    content: [
      { type: "text", text },
      ...(call ? [{ type: "toolCall", id: call.id, name: call.name, arguments: { path: call.path } }] : []),
    ],
    api: "scripted",
    provider: "scripted",
    model: "scripted",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: call ? "toolUse" : "stop",
    timestamp: 0,
  }) as AgentMessage;
const toolResult = (id: string, name: string, text: string, nested?: { toolName: string; path: string }[]) =>
  ({
    role: "toolResult",
    toolCallId: id,
    toolName: name,
    content: [{ type: "text", text }],
    isError: false,
    ...(nested
      ? {
          nestedCalls: {
            complete: true,
            calls: nested.map((n, i) => ({
              toolCallId: `${id}/${i + 1}`,
              toolName: n.toolName,
              arguments: { path: n.path },
              status: "ok",
            })),
          },
        }
      : {}),
    timestamp: 0,
  }) as AgentMessage;

describe("compaction: the cut", () => {
  it("keeps the most recent keepRecentTokens and never starts the kept part at a tool result", () => {
    const branch = [
      entry(user(long("start"))),
      entry(assistant("reading", { id: "c1", name: "read", path: "a.ts" })),
      entry(toolResult("c1", "read", long("contents"))),
      entry(assistant("editing", { id: "c2", name: "edit", path: "b.ts" })),
      entry(toolResult("c2", "edit", long("patched"))),
      entry(assistant("done")),
    ];
    // The last two messages are small; the edit result alone reaches the budget, so the cut would fall on it.
    const budget = estimateTokens(branch[5]!.type === "message" ? branch[5].message : user("")) + 1;
    const prep = prepareCompaction(branch, budget)!;
    expect(prep.firstKeptEntryId).to.equal(branch[3]!.id);
    expect(prep.messagesToSummarize.map((m) => m.role)).to.deep.equal(["user", "assistant", "toolResult"]);
    expect(prep.keptMessages.map((m) => m.role)).to.deep.equal(["assistant", "toolResult", "assistant"]);
    expect(prep.readFiles).to.deep.equal(["a.ts"]);
    expect(prep.modifiedFiles).to.deep.equal([]);
    expect(prep.tokensBefore).to.equal(branch.reduce((n, e) => n + estimateTokens((e as any).message), 0));
  });

  it("returns nothing when everything fits in keepRecentTokens", () => {
    const branch = [entry(user("hi")), entry(assistant("hello"))];
    expect(prepareCompaction(branch, 1000)).to.equal(undefined);
  });

  it("keeps the latest turn and summarises the ones before it when asked to compact a conversation that fits", () => {
    const branch = [
      entry(user("first")),
      entry(assistant("one")),
      entry(user("second")),
      entry(assistant("reading", { id: "c1", name: "read", path: "a.ts" })),
      entry(toolResult("c1", "read", "text")),
      entry(assistant("two")),
    ];
    expect(prepareCompaction(branch, 100_000)).to.equal(undefined);
    const prep = prepareCompaction(branch, 100_000, { manual: true })!;
    expect(prep.firstKeptEntryId).to.equal(branch[2]!.id);
    expect(prep.messagesToSummarize.map((m) => m.role)).to.deep.equal(["user", "assistant"]);
    // A single turn has nothing before it.
    expect(prepareCompaction(branch.slice(0, 2), 100_000, { manual: true })).to.equal(undefined);
  });

  it("lists files from nested calls and from the previous compaction, a modified file not as read", () => {
    const first = [
      entry(user(long("go"))),
      entry(assistant("run", { id: "c1", name: "batch", path: "x" })),
      entry(
        toolResult("c1", "batch", "ok", [
          { toolName: "read", path: "nested-read.ts" },
          { toolName: "write", path: "nested-write.ts" },
        ]),
      ),
      entry(assistant("read it", { id: "c2", name: "read", path: "nested-write.ts" })),
      entry(toolResult("c2", "read", "x")),
      entry(user(long("more"))),
    ];
    const previous = {
      type: "compaction",
      id: "cmp",
      parentId: first.at(-1)!.id,
      timestamp: new Date(0).toISOString(),
      summary: "before",
      firstKeptEntryId: first[0]!.id,
      tokensBefore: 1,
      details: { readFiles: ["old-read.ts"], modifiedFiles: ["old-mod.ts"] },
    } as SessionEntry;
    const after = [entry(user(long("again"))), entry(assistant(long("answer")))];
    const prep = prepareCompaction([...first, previous, ...after], 60)!;
    expect(prep.readFiles).to.deep.equal(["nested-read.ts", "old-read.ts"]);
    expect(prep.modifiedFiles).to.deep.equal(["nested-write.ts", "old-mod.ts"]);
    // The earlier summary is summarised again, first.
    expect(JSON.stringify(prep.messagesToSummarize[0])).to.contain("before");
  });
});

describe("compaction in a session", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  // Each prompt is about 60 tokens and each answer about 130: the last exchange stays, older ones are summarised.
  const small = { compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 150 } };

  async function conversation(
    requests: ProviderStreamRequest[],
    extra: ScriptEntry[],
    extensions: ((kc: ExtensionAPI) => void)[] = [],
    settings: Record<string, unknown> = small,
  ) {
    t = await createTestSession({
      settings,
      extensions,
      script: [
        recording(requests, long("first answer")),
        recording(requests, long("second answer")),
        recording(requests, long("third answer")),
        ...extra,
      ],
    });
    await t.prompt(long("one"));
    await t.prompt(long("two"));
    await t.prompt(long("three"));
    return t;
  }

  it("compacts on request a conversation within keepRecentTokens: handlers see the earlier turns, the latest is kept", async () => {
    const requests: ProviderStreamRequest[] = [];
    const seen: string[][] = [];
    const ext = (kc: ExtensionAPI) =>
      kc.on("session_before_compact", (event) => {
        seen.push(event.preparation.messagesToSummarize.map((m) => m.role));
        return undefined;
      });
    // The default keepRecentTokens (20,000) holds the whole conversation.
    await conversation(requests, [{ text: "SUMMARY OF TWO TURNS" }], [ext], {});
    const result = await t!.session.compact();
    expect(seen).to.deep.equal([["user", "assistant", "user", "assistant"]]);
    expect(result.summary).to.equal("SUMMARY OF TWO TURNS");
  });

  it("compacts on request: the summary replaces older turns in the next request, originals stay in the tree", async () => {
    const requests: ProviderStreamRequest[] = [];
    const compacted: unknown[] = [];
    const listen = (kc: ExtensionAPI) => kc.on("session_compact", (event) => void compacted.push(event));
    await conversation(
      requests,
      [
        (request) => {
          requests.push(request);
          return {
            text: "SUMMARY-OF-EARLIER-TURNS",
            expect: { lastUserTextContains: "Focus of this summary: tests" },
          };
        },
        recording(requests, "after"),
      ],
      [listen],
    );
    const result = await t!.session.compact("tests");
    expect(result.summary).to.match(/^SUMMARY-OF-EARLIER-TURNS/);
    expect(result.estimatedTokensAfter).to.be.lessThan(result.tokensBefore);
    expect(result.details).to.deep.equal({ readFiles: [], modifiedFiles: [] });
    const summaryRequest = requests[3]!;
    expect(isSummaryRequest(summaryRequest)).to.equal(true);
    expect(requestTexts(summaryRequest)[0]).to.contain("[User]: one one").and.not.contain("three three");

    const branch = t!.session.sessionManager.getBranch();
    const compaction = branch.find((e) => e.type === "compaction")!;
    expect(compaction).to.deep.include({
      summary: result.summary,
      firstKeptEntryId: result.firstKeptEntryId,
    });
    // Every original message is still in the file.
    expect(branch.filter((e) => e.type === "message")).to.have.length(6);

    await t!.prompt("next");
    const texts = requestTexts(requests[4]!);
    expect(texts[0]).to.contain("<summary>").and.contain("SUMMARY-OF-EARLIER-TURNS");
    expect(texts.join("\n")).not.to.contain("one one one");
    expect(texts.at(-1)).to.equal("next");

    const types = t!.events.map((e) => e.type).filter((type) => /compact/.test(type));
    expect(types).to.deep.equal(["compaction_start", "compaction_end"]);
    const end = t!.eventsOfType("compaction_end")[0]!;
    expect(end).to.deep.include({ reason: "manual", aborted: false, willRetry: false });
    expect(compacted[0]).to.deep.include({ reason: "manual", fromExtension: false });
  });

  it("ctx.compact() reports through onComplete and onError; /compact notifies", async () => {
    const requests: ProviderStreamRequest[] = [];
    const outcomes: string[] = [];
    const ext = (kc: ExtensionAPI) => {
      kc.registerCommand("squash", {
        handler: async (_args, ctx) =>
          new Promise<void>((resolve) =>
            ctx.compact({
              onComplete: (r) => {
                outcomes.push(`ok:${r.summary.slice(0, 3)}`);
                resolve();
              },
              onError: (e) => {
                outcomes.push(`error:${e.message}`);
                resolve();
              },
            }),
          ),
      });
    };
    await conversation(requests, [{ text: "S1 summary" }, { text: "S2 summary" }], [ext]);
    await t!.prompt("/squash");
    // The second compaction finds nothing older than keepRecentTokens left to summarise.
    await t!.prompt("/squash");
    expect(outcomes[0]).to.equal("ok:S1 ");
    expect(outcomes[1]).to.match(/^error:Nothing to compact/);
    await t!.prompt("/compact");
    expect(t!.ui.notifications.at(-1)).to.deep.include({ level: "error" });
  });

  it("compacts before a request once the context passes contextWindow - reserveTokens", async () => {
    const requests: ProviderStreamRequest[] = [];
    // The scripted model's window is 200,000: leave 105 tokens of room. The answers report their usage, so the
    // context is 20 + 60, then 30 + 60 tokens before the second and third request, and 160 + 1 before the fourth.
    const settings = { compaction: { enabled: true, reserveTokens: 199_895, keepRecentTokens: 150 } };
    const usage = (input: number) => ({ input, output: 10 });
    t = await createTestSession({
      settings,
      script: [
        recording(requests, long("first"), usage(10)),
        recording(requests, long("second"), usage(20)),
        recording(requests, long("third"), usage(150)),
        recording(requests, "THRESHOLD SUMMARY"),
        recording(requests, "answer"),
      ],
    });
    await t.prompt(long("one"));
    await t.prompt(long("two"));
    await t.prompt(long("three"));
    expect(t!.eventsOfType("compaction_start")).to.have.length(0);
    await t!.prompt("four");
    expect(t!.eventsOfType("compaction_start").map((e) => e.reason)).to.deep.equal(["threshold"]);
    expect(isSummaryRequest(requests[3]!)).to.equal(true);
    expect(requestTexts(requests[4]!)[0]).to.contain("THRESHOLD SUMMARY");
    expect(requestTexts(requests[4]!).at(-1)).to.equal("four");
  });

  it("after a failed threshold compaction, the run goes on without another attempt", async () => {
    const requests: ProviderStreamRequest[] = [];
    const settings = { compaction: { enabled: true, reserveTokens: 199_895, keepRecentTokens: 150 } };
    const usage = (input: number) => ({ input, output: 10 });
    const noop = (kc: ExtensionAPI) =>
      kc.registerTool({
        name: "noop",
        label: "noop",
        description: "Does nothing",
        parameters: { type: "object", properties: {} } as never,
        execute: async () => ({ content: [{ type: "text", text: "ok" }], details: undefined }),
      });
    t = await createTestSession({
      settings,
      extensions: [noop],
      script: [
        recording(requests, long("first"), usage(10)),
        recording(requests, long("second"), usage(20)),
        recording(requests, long("third"), usage(150)),
        { error: { kind: "bad_request", message: "summaries are off today" } },
        { toolCalls: [{ name: "noop" }], usage: usage(170) },
        { text: "done", usage: usage(180) },
      ],
    });
    await t.prompt(long("one"));
    await t.prompt(long("two"));
    await t.prompt(long("three"));
    await t.prompt("four");
    expect(t.eventsOfType("compaction_start")).to.have.length(1);
    expect(t.eventsOfType("compaction_end")[0]!.errorMessage).to.contain("summaries are off today");
    expect(t.lastAssistantText()).to.equal("done");
  });

  it("does not compact on its own when compaction.enabled is false", async () => {
    const requests: ProviderStreamRequest[] = [];
    const settings = { compaction: { enabled: false, reserveTokens: 199_999, keepRecentTokens: 60 } };
    await conversation(requests, [recording(requests, "answer")], [], settings);
    await t!.prompt("four");
    expect(t!.eventsOfType("compaction_start")).to.have.length(0);
    expect(requests).to.have.length(4);
  });

  it("recovers from a context_overflow answer: compacts, then retries the request once", async () => {
    const requests: ProviderStreamRequest[] = [];
    await conversation(requests, [
      { error: { kind: "context_overflow", message: "prompt is too long" } },
      recording(requests, "OVERFLOW SUMMARY"),
      recording(requests, "answer after retry"),
    ]);
    await t!.prompt("four");
    const end = t!.eventsOfType("compaction_end")[0]!;
    expect(end).to.deep.include({ reason: "overflow", aborted: false, willRetry: true });
    expect(t!.eventsOfType("agent_end").at(-2)).to.deep.include({ willRetry: true });
    expect(requestTexts(requests.at(-1)!)[0]).to.contain("OVERFLOW SUMMARY");
    expect(t!.lastAssistantText()).to.equal("answer after retry");
  });

  it("retries an overflow only once per run", async () => {
    const requests: ProviderStreamRequest[] = [];
    await conversation(requests, [
      { error: { kind: "context_overflow" } },
      { text: "S" },
      { error: { kind: "context_overflow", message: "still too long" } },
    ]);
    await t!.prompt("four");
    expect(t!.eventsOfType("compaction_start")).to.have.length(1);
    const last = t!.eventsOfType("message_end").at(-1)!.message as { errorMessage?: string };
    expect(last.errorMessage).to.equal("still too long");
    expect(t!.eventsOfType("agent_end").at(-1)).to.deep.include({ willRetry: false });
  });

  it("an extension can supply the summary; builtin:compaction (fallback) then never asks the model", async () => {
    const requests: ProviderStreamRequest[] = [];
    const order: string[] = [];
    const compacted: unknown[] = [];
    const ext = (kc: ExtensionAPI) => {
      kc.on("session_compact", (event) => void compacted.push(event));
      kc.on("session_before_compact", (event) => {
        order.push("custom");
        return {
          compaction: {
            summary: "MINE",
            firstKeptEntryId: event.preparation.firstKeptEntryId,
            tokensBefore: event.preparation.tokensBefore,
          },
        };
      });
    };
    await conversation(requests, [recording(requests, "after")], [ext]);
    const result = await t!.session.compact();
    expect(result.summary).to.equal("MINE");
    // Without details of its own, the entry gets the prepared file lists.
    expect(result.details).to.deep.equal({ readFiles: [], modifiedFiles: [] });
    expect(compacted[0]).to.deep.include({ reason: "manual", fromExtension: true, willRetry: false });
    expect(requests).to.have.length(3);
    expect(order).to.deep.equal(["custom"]);
  });

  it("a turn_end handler can propose a compaction entry; the next request sends its summary", async () => {
    const requests: ProviderStreamRequest[] = [];
    let proposed = false;
    const ext = (kc: ExtensionAPI) =>
      kc.on("turn_end", (event, ctx) => {
        const branch = ctx.sessionManager.getBranch();
        if (proposed || branch.length < 4) return undefined;
        proposed = true;
        const keep = branch.at(-2)!;
        return {
          entries: [
            ...event.entries,
            { type: "compaction", summary: "DRAFTED SUMMARY", firstKeptEntryId: keep.id, tokensBefore: 99 },
          ],
        };
      });
    await conversation(requests, [recording(requests, "after")], [ext]);
    await t!.prompt("four");
    const texts = requestTexts(requests.at(-1)!);
    expect(texts[0]).to.contain("DRAFTED SUMMARY");
    expect(texts.join("\n")).not.to.contain("one one one");
    // A drafted entry is not a compaction run: no compaction events.
    expect(t!.eventsOfType("compaction_start")).to.have.length(0);
  });

  it("an extension can cancel: compaction_end says aborted and the call rejects", async () => {
    const requests: ProviderStreamRequest[] = [];
    const ext = (kc: ExtensionAPI) => kc.on("session_before_compact", () => ({ cancel: true }));
    await conversation(requests, [], [ext]);
    let error: (Error & { code?: string }) | undefined;
    await t!.session.compact().catch((e: Error) => {
      error = e;
    });
    expect(error?.code).to.equal("KC_ERR_COMPACTION_ABORTED");
    expect(t!.eventsOfType("compaction_end")[0]).to.deep.equal({
      type: "compaction_end",
      reason: "manual",
      aborted: true,
      willRetry: false,
    });
    expect(t!.session.sessionManager.getBranch().some((e) => e.type === "compaction")).to.equal(false);
  });

  it("abort() stops a manual compaction: compaction_end says aborted", async () => {
    const requests: ProviderStreamRequest[] = [];
    let started: () => void = () => {};
    const waiting = new Promise<void>((resolve) => {
      started = resolve;
    });
    const ext = (kc: ExtensionAPI) =>
      kc.on(
        "session_before_compact",
        (event) =>
          new Promise((resolve) => {
            started();
            event.signal.addEventListener("abort", () => resolve(undefined), { once: true });
          }),
      );
    await conversation(requests, [], [ext]);
    const compaction = t!.session.compact().then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    await waiting;
    expect(t!.session.isIdle()).to.equal(false);
    t!.session.abort();
    expect((await compaction)?.code).to.equal("KC_ERR_COMPACTION_ABORTED");
    expect(t!.eventsOfType("compaction_end")[0]).to.deep.include({ aborted: true, willRetry: false });
    expect(t!.session.isIdle()).to.equal(true);
  });

  it("fails with a clear message when builtin:compaction is disabled and nobody summarises", async () => {
    const failed: unknown[] = [];
    t = await createTestSession({
      settings: small,
      disableBuiltins: ["builtin:compaction"],
      extensions: [(kc) => kc.on("session_compact_failed", (event) => void failed.push(event))],
      script: [{ text: long("alpha answer") }, { text: long("beta answer") }],
    });
    await t.prompt(long("one"));
    await t.prompt(long("two"));
    const error = await t.session.compact().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).to.contain("builtin:compaction is disabled");
    const end = t.eventsOfType("compaction_end")[0]!;
    expect(end).to.deep.include({ aborted: false, willRetry: false, errorMessage: error!.message });
    expect(failed[0]).to.deep.equal({ reason: "manual", error: error!.message });
  });

  it("retries a failing summary request with back-off and reports it", async () => {
    const requests: ProviderStreamRequest[] = [];
    await conversation(requests, [
      { error: { kind: "overloaded", message: "terminated" } },
      { error: { kind: "network", message: "reset" } },
      { text: "SUMMARY AT LAST" },
    ]);
    const result = await t!.session.compact();
    expect(result.summary).to.match(/^SUMMARY AT LAST/);
    const retry = t!.events
      .filter((e) => e.type.startsWith("summarization_retry"))
      .map(({ type, ...rest }) => ({ type, ...rest }));
    expect(retry).to.deep.equal([
      {
        type: "summarization_retry_scheduled",
        attempt: 1,
        maxAttempts: 3,
        delayMs: 1,
        errorMessage: "terminated",
      },
      { type: "summarization_retry_attempt_start", source: "compaction", reason: "manual" },
      {
        type: "summarization_retry_scheduled",
        attempt: 2,
        maxAttempts: 3,
        delayMs: 2,
        errorMessage: "reset",
      },
      { type: "summarization_retry_attempt_start", source: "compaction", reason: "manual" },
      { type: "summarization_retry_finished" },
    ]);
  });

  it("ends with errorMessage once summary retries run out", async () => {
    const requests: ProviderStreamRequest[] = [];
    const settings = { ...small, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 5 } };
    await conversation(
      requests,
      [
        { error: { kind: "overloaded", message: "busy" } },
        { error: { kind: "overloaded", message: "still busy" } },
      ],
      [],
      settings,
    );
    const error = await t!.session.compact().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).to.contain("still busy");
    expect(t!.eventsOfType("summarization_retry_finished")).to.have.length(1);
    expect(t!.eventsOfType("compaction_end")[0]).to.deep.include({
      aborted: false,
      errorMessage: error!.message,
    });
  });
});

describe("fallback handlers", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("run after every other handler, whatever the load order", async () => {
    const order: string[] = [];
    const early = (kc: ExtensionAPI) => {
      kc.on("agent_start", () => void order.push("early-fallback"), { fallback: true });
      kc.on("agent_start", () => void order.push("early"));
    };
    const late = (kc: ExtensionAPI) => kc.on("agent_start", () => void order.push("late"));
    t = await createTestSession({ extensions: [early, late], script: [{ text: "hi" }] });
    await t.prompt("go");
    expect(order).to.deep.equal(["early", "late", "early-fallback"]);
  });
});

/**
 * Provider conformance: the same cases, with the same expectations, for every wire API (anthropic-messages,
 * openai-responses, openai-completions, each against a local server speaking its real format) and the scripted
 * provider. What a case means for each wire is in conformance/targets.ts; a case a provider cannot express is
 * stated there with the reason, and the first test below fails when a case is neither run nor stated.
 */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageStream,
  ProviderHooks,
  ProviderWaitingNotice,
} from "@knightcodeai/cli";
import { expect } from "chai";
import { type Answer, type CaseName, type Driver, TARGETS } from "./conformance/targets.js";

/** Hooks that log each call in order: `payload`, `headers`, `response:<status>`, `raw:<event JSON>`. */
function loggingHooks(log: string[], overrides: Partial<ProviderHooks> = {}): ProviderHooks {
  return {
    payload: async (payload) => {
      log.push("payload");
      return payload;
    },
    headers: async (headers) => {
      log.push("headers");
      return headers;
    },
    response: async (status) => {
      log.push(`response:${status}`);
    },
    streamEvent: async (data) => {
      // Lets the consumer log what was pushed so far: the events this raw event becomes must not be among it.
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`raw:${JSON.stringify(data)}`);
    },
    ...overrides,
  };
}

interface Outcome {
  events: AssistantMessageEvent[];
  result: AssistantMessage;
  types: string[];
}

/** Every event and the final message; fails the test instead of hanging. */
async function collect(stream: AssistantMessageStream, log?: string[], ms = 5000): Promise<Outcome> {
  const events: AssistantMessageEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream did not end within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([
      (async () => {
        for await (const event of stream) {
          events.push(event);
          log?.push(`event:${event.type}${"delta" in event ? `:${event.delta}` : ""}`);
        }
      })(),
      timeout,
    ]);
    const result = await Promise.race([stream.result(), timeout]);
    return { events, result, types: events.map((e) => e.type) };
  } finally {
    clearTimeout(timer);
  }
}

function deltas(events: AssistantMessageEvent[], type: string, contentIndex?: number): string[] {
  return events.flatMap((e) =>
    e.type === type && "delta" in e && (contentIndex === undefined || e.contentIndex === contentIndex)
      ? [e.delta]
      : [],
  );
}

const TEXT = ["Alpha ", "bravo ", "charlie ", "delta."];

/** The hook calls of a log, without the normalised events `collect` logs. */
function hookCalls(log: string[]): string[] {
  return log.filter((entry) => !entry.startsWith("event:"));
}

async function run(driver: Driver, answer: Answer, log: string[] = [], hooks = loggingHooks(log)) {
  driver.serve(answer);
  return collect(driver.stream(hooks), log);
}

/** A key and a password no error message may show (stderr, the JSON stream and the session file repeat them). */
const KEY = "kc-conformance-key-4f9a1c";
const PASSWORD = "hunter2-conformance";

function expectNoSecret(message: string | undefined): void {
  expect(message).to.be.a("string");
  expect(message).not.to.contain(KEY);
  expect(message).not.to.contain(PASSWORD);
}

/** Each case, stated once: what is served and what every provider must make of it. */
const CASES: Record<CaseName, (driver: Driver) => Promise<void>> = {
  async text(driver) {
    const { types, events, result } = await run(driver, { kind: "text", pieces: TEXT });
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    expect(result.content).to.deep.equal([{ type: "text", text: TEXT.join("") }]);
    expect(types.slice(0, 2)).to.deep.equal(["start", "text_start"]);
    expect(types.slice(-2)).to.deep.equal(["text_end", "done"]);
    expect(deltas(events, "text_delta").length).to.be.greaterThan(1);
    expect(deltas(events, "text_delta").join("")).to.equal(TEXT.join(""));
    expect((events.at(-1) as { message: AssistantMessage }).message).to.deep.equal(result);
  },

  async thinking(driver) {
    const thinking = ["Let me ", "think about ", "it."];
    const text = ["Here ", "it is."];
    const { types, events, result } = await run(driver, { kind: "thinking", thinking, text });
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    expect(result.content.map((block) => block.type)).to.deep.equal(["thinking", "text"]);
    expect(result.content[0]).to.include({ thinking: thinking.join("") });
    expect(result.content[1]).to.deep.equal({ type: "text", text: text.join("") });
    expect(deltas(events, "thinking_delta", 0).join("")).to.equal(thinking.join(""));
    expect(types.indexOf("thinking_end")).to.be.lessThan(types.indexOf("text_start"));
  },

  async "parallel tool calls split across deltas"(driver) {
    const calls = [
      { id: "call_read_1", name: "read", args: { path: "src/index.ts", offset: 10, limit: 40 } },
      {
        id: "call_grep_2",
        name: "grep",
        args: { pattern: "TODO", paths: ["src", "test"], ignoreCase: true },
      },
    ];
    const { events, result } = await run(driver, { kind: "tools", calls });
    expect(result.stopReason, result.errorMessage).to.equal("toolUse");
    expect(result.content).to.deep.equal(
      calls.map((call) => ({ type: "toolCall", id: call.id, name: call.name, arguments: call.args })),
    );
    for (const [index, call] of calls.entries()) {
      const pieces = deltas(events, "toolcall_delta", index);
      expect(pieces.length, call.name).to.be.greaterThan(1);
      expect(JSON.parse(pieces.join("")), call.name).to.deep.equal(call.args);
    }
    const ends = events.filter((e) => e.type === "toolcall_end") as { toolCall: { name: string } }[];
    expect(ends.map((e) => e.toolCall.name)).to.deep.equal(["read", "grep"]);
  },

  async usage(driver) {
    const usage = { input: 120, output: 30, cacheRead: 1000 };
    const { result } = await run(driver, { kind: "text", pieces: TEXT, usage });
    expect(result.usage).to.include({ ...usage, cacheWrite: 0, totalTokens: 1150 });
  },

  async "abort mid-stream"(driver) {
    // After the first piece nothing comes: only the abort can end this stream.
    driver.serve({ kind: "stall", pieces: TEXT });
    const controller = new AbortController();
    const stream = driver.stream(loggingHooks([]), { signal: controller.signal });
    let abortedAt = 0;
    const outcome = collect(stream);
    for await (const event of stream) {
      if (event.type === "text_delta" && !abortedAt) {
        abortedAt = Date.now();
        controller.abort();
      }
    }
    const { result, types, events } = await outcome;
    expect(Date.now() - abortedAt).to.be.lessThan(2000);
    expect(result).to.include({
      stopReason: "aborted",
      errorKind: "aborted",
      errorMessage: "Request was aborted",
    });
    expect(types.at(-1)).to.equal("error");
    // What arrived before the abort is kept.
    expect(result.content).to.deep.equal([{ type: "text", text: deltas(events, "text_delta").join("") }]);
    expect(TEXT.join("").startsWith(deltas(events, "text_delta").join(""))).to.equal(true);
  },

  async "abort before the request"(driver) {
    driver.serve({ kind: "text", pieces: TEXT });
    const sentBefore = driver.sent?.length ?? 0;
    const log: string[] = [];
    const { types, result } = await collect(
      driver.stream(loggingHooks(log), { signal: AbortSignal.abort() }),
    );
    expect(types).to.deep.equal(["error"]);
    expect(result).to.include({ stopReason: "aborted", errorKind: "aborted" });
    expect(log, "no hook ran").to.deep.equal([]);
    expect(driver.sent?.length ?? 0, "nothing reached the server").to.equal(sentBefore);
  },

  async "401 unauthorized"(driver) {
    const log: string[] = [];
    const { types, result } = await run(
      driver,
      { kind: "error", status: 401, message: "the key was refused" },
      log,
    );
    expect(types).to.deep.equal(["error"]);
    expect(result).to.include({ stopReason: "error", errorKind: "auth" });
    expect(result.errorMessage).to.contain("the key was refused");
    expect(hookCalls(log)).to.deep.equal(["payload", "headers", "response:401"]);
  },

  async "429 rate limited"(driver) {
    const log: string[] = [];
    const { result } = await run(
      driver,
      { kind: "error", status: 429, message: "slow down please", retryAfterSeconds: 2 },
      log,
    );
    expect(result).to.include({ stopReason: "error", errorKind: "rate_limit", retryAfterMs: 2000 });
    expect(result.errorMessage).to.contain("slow down please");
    expect(hookCalls(log)).to.deep.equal(["payload", "headers", "response:429"]);
  },

  async "500 server error"(driver) {
    const log: string[] = [];
    const { result } = await run(driver, { kind: "error", status: 500, message: "the server broke" }, log);
    expect(result).to.include({ stopReason: "error", errorKind: "overloaded" });
    expect(result.errorMessage).to.contain("the server broke");
    expect(hookCalls(log)).to.deep.equal(["payload", "headers", "response:500"]);
  },

  async "context overflow"(driver) {
    const message = "prompt is too long: 210000 tokens > 200000 maximum";
    const { result } = await run(driver, { kind: "overflow", message });
    expect(result).to.include({ stopReason: "error", errorKind: "context_overflow" });
    expect(result.errorMessage).to.contain(message);
  },

  async "dropped connection"(driver) {
    // The first two pieces hold 10 characters: where the scripted provider's chunks (3, 5, 2, ...) end too.
    const pieces = ["Cut off", " at", " this point", " and never seen"];
    const { result, types } = await run(driver, { kind: "drop", pieces, keep: 2 });
    expect(result).to.include({ stopReason: "error", errorKind: "network" });
    expect(result.content).to.deep.equal([{ type: "text", text: "Cut off at" }]);
    expect(types.at(-1)).to.equal("error");
  },

  async "malformed event"(driver) {
    const { result, types } = await run(driver, { kind: "malformed" });
    expect(result).to.include({ stopReason: "error", errorKind: "unknown" });
    expect(result.errorMessage).to.contain("sent a malformed stream event");
    expect(types.at(-1)).to.equal("error");
  },

  async "hook order"(driver) {
    const log: string[] = [];
    await run(driver, { kind: "text", pieces: TEXT }, log);
    expect(log.slice(0, 3)).to.deep.equal(["payload", "headers", "response:200"]);
    const rest = log.slice(3);
    expect(rest.every((entry) => entry.startsWith("raw:") || entry.startsWith("event:"))).to.equal(true);
    expect(rest[0], "a raw event comes before anything normalised").to.match(/^raw:/);
    expect(rest.at(-1)).to.equal("event:done");
    // Each delta is normalised only after the stream event hook saw the raw event carrying it.
    for (const [at, entry] of rest.entries()) {
      const delta = /^event:text_delta:(.*)$/s.exec(entry)?.[1];
      if (delta === undefined) continue;
      const carried = rest
        .slice(0, at)
        .some((earlier) => earlier.startsWith("raw:") && earlier.includes(delta));
      expect(carried, `the raw event carrying ${JSON.stringify(delta)} came first`).to.equal(true);
    }
  },

  async "handler changes reach the wire"(driver) {
    const hooks = loggingHooks([], {
      payload: async (payload) => ({ ...(payload as object), conformance_marker: 7 }),
      headers: async (headers) => ({ ...headers, "x-conformance": "from-hook" }),
    });
    driver.serve({ kind: "text", pieces: TEXT });
    const { result } = await collect(driver.stream(hooks, { headers: { "x-configured": "yes" } }));
    expect(result.stopReason, result.errorMessage).to.equal("stop");
    const sent = driver.sent!.at(-1)!;
    expect(sent.body).to.include({ conformance_marker: 7, stream: true });
    expect(sent.headers).to.include({ "x-conformance": "from-hook", "x-configured": "yes" });
  },

  async "non-object payload"(driver) {
    const log: string[] = [];
    const hooks = loggingHooks(log, {
      payload: async () => {
        log.push("payload");
        return "not a payload";
      },
    });
    driver.serve({ kind: "text", pieces: TEXT });
    const sentBefore = driver.sent?.length ?? 0;
    const { result, types } = await collect(driver.stream(hooks));
    expect(types).to.deep.equal(["error"]);
    expect(result).to.include({ stopReason: "error", errorKind: "bad_request" });
    expect(result.errorMessage).to.match(
      /^A before_provider_request handler returned a string instead of a payload object/,
    );
    expect(log, "nothing after the payload hook").to.deep.equal(["payload"]);
    expect(driver.sent?.length ?? 0, "nothing reached the server").to.equal(sentBefore);
  },

  async "failing hook handler"(driver) {
    const log: string[] = [];
    const hooks = loggingHooks(log, {
      headers: async () => {
        throw new Error("vault locked");
      },
    });
    driver.serve({ kind: "text", pieces: TEXT });
    const sentBefore = driver.sent?.length ?? 0;
    const { result } = await collect(driver.stream(hooks));
    expect(result).to.include({
      stopReason: "error",
      errorKind: "unknown",
      errorMessage: "A before_provider_headers handler failed: vault locked",
    });
    expect(log).to.deep.equal(["payload"]);
    expect(driver.sent?.length ?? 0, "nothing reached the server").to.equal(sentBefore);
  },

  async "idle timeout"(driver) {
    driver.serve({ kind: "silent" });
    const started = Date.now();
    const { result } = await collect(driver.stream(loggingHooks([]), { compat: { timeoutMs: 150 } }));
    expect(result).to.include({ stopReason: "error", errorKind: "timeout" });
    expect(result.errorMessage).to.contain("compat.timeoutMs");
    // The server never answers: without the timeout nothing would end the request (the bound allows a loaded machine).
    expect(Date.now() - started).to.be.lessThan(5000);
  },

  async "waiting notices"(driver) {
    // A server that never answers: the user hears that the request is still waiting, then that it timed out.
    driver.serve({ kind: "silent" });
    const notices: ProviderWaitingNotice[] = [];
    const hooks = loggingHooks([], { waiting: (notice) => notices.push(notice) });
    const { result } = await collect(driver.stream(hooks, { compat: { timeoutMs: 400 } }));
    expect(result).to.include({ stopReason: "error", errorKind: "timeout" });
    expect(notices.length, "every 100 ms of a 400 ms limit").to.be.within(2, 4);
    for (const notice of notices) {
      expect(notice.timeoutMs).to.equal(400);
      expect(notice.waitedMs).to.be.within(100, 399);
      expect(notice.message).to.match(
        / has sent nothing for \d+ ms; still waiting \(the request times out after 400 ms/,
      );
      expect(notice.message).to.contain("compat.timeoutMs");
    }
  },

  async "keep-alive comments only"(driver) {
    // Comments every 25 ms: a reader that counts them as progress never times out.
    driver.serve({ kind: "comments" });
    const { result } = await collect(driver.stream(loggingHooks([]), { compat: { timeoutMs: 200 } }));
    expect(result).to.include({ stopReason: "error", errorKind: "timeout" });
    expect(result.errorMessage).to.contain("sent nothing for 0.2s");
  },

  async "a huge line and a closed connection"(driver) {
    // A 40 MB line took a quadratic reader 25 s, a 60 MB one more than 120 s; the cap stops reading at 16 MiB.
    driver.serve({ kind: "huge line", megabytes: 60 });
    const { result } = await collect(driver.stream(loggingHooks([])), undefined, 30_000);
    expect(result).to.include({ stopReason: "error", errorKind: "unknown" });
    expect(result.errorMessage).to.match(
      / sent an event stream line \(or one event's lines together\) longer than 16 MiB/,
    );
  },

  async "a 401 that repeats the key"(driver) {
    // Servers quote the key they refused, in their message and as the header they got.
    driver.serve({
      kind: "error",
      status: 401,
      message: `Invalid API key ${KEY} (Authorization: Bearer ${KEY}, "apiKey": "${KEY}")`,
    });
    const { result } = await collect(driver.stream(loggingHooks([]), { apiKey: KEY }));
    expect(result).to.include({ stopReason: "error", errorKind: "auth" });
    expectNoSecret(result.errorMessage);
    expect(result.errorMessage).to.contain(
      `Invalid API key [redacted] (Authorization: Bearer [redacted], "apiKey": "[redacted]")`,
    );
  },

  async "credentials in the baseUrl"(driver) {
    // Whether the request is refused before it is sent (fetch will not send a URL with credentials) or the
    // server quotes the address, the password is not in the message.
    driver.serve({
      kind: "error",
      status: 401,
      message: `no access for http://proxy-user:${PASSWORD}@127.0.0.1/v1`,
    });
    const { result } = await collect(
      driver.stream(loggingHooks([]), { apiKey: KEY }, { userinfo: `proxy-user:${PASSWORD}` }),
    );
    expect(result.stopReason).to.equal("error");
    expectNoSecret(result.errorMessage);
  },
};

describe("provider conformance", () => {
  it("runs every case for every provider, or states why the provider cannot express it", () => {
    const names = Object.keys(CASES);
    for (const target of TARGETS) {
      for (const [name, reason] of Object.entries(target.cannot)) {
        expect(names, `${target.name} states a case that does not exist`).to.include(name);
        expect(reason, `${target.name}: ${name}`).to.be.a("string").and.not.equal("");
      }
    }
  });

  for (const target of TARGETS) {
    const stated = Object.keys(target.cannot);
    describe(`${target.name}${stated.length ? ` (cannot express: ${stated.join(", ")})` : ""}`, () => {
      let driver: Driver;
      before(async () => {
        driver = await target.open();
      });
      after(async () => {
        await driver.close();
      });

      for (const [name, check] of Object.entries(CASES) as [CaseName, (driver: Driver) => Promise<void>][]) {
        if (target.cannot[name] !== undefined) continue; // stated in targets.ts, checked above
        it(name, () => check(driver));
      }
    });
  }
});

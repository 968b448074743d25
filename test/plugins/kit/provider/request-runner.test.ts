/**
 * The provider kit's request runner driven with a wire written in the test (the providers' own wires are tested
 * against local servers in test/builtin-extensions/providers), and the push stream under the writer.
 */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import {
  type AssistantMessage,
  type AssistantMessageEvent,
  type AssistantMessageStream,
  type AssistantMessageWriter,
  MalformedEventError,
  type ModelInfo,
  type ProviderHooks,
  ProviderRequestError,
  type ProviderStreamRequest,
  type ProviderWire,
  PushStream,
  runProviderRequest,
  type WireSend,
} from "@knightcodeai/cli";
import { createTestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";

const MODEL: ModelInfo = {
  provider: "fake",
  api: "fake-api",
  id: "fake-1",
  contextWindow: 1000,
  maxTokens: 100,
  reasoning: false,
};

/** Hooks that log each call as `hook` or `hook:detail`; `payload` may be replaced by a test. */
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
      // Gives a consumer time to log what was pushed so far: the normalised event must not be among it yet.
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`raw:${(data as { type: string }).type}`);
    },
    ...overrides,
  };
}

function request(
  hooks: ProviderHooks,
  overrides: Partial<ProviderStreamRequest> = {},
): ProviderStreamRequest {
  return { model: MODEL, systemPrompt: "", messages: [], tools: [], hooks, ...overrides };
}

/** A wire that answers with text events: `start`, `text:<delta>`..., `stop`. */
function textWire(
  writer: AssistantMessageWriter,
  options: {
    log?: string[];
    events?: Iterable<unknown> | AsyncIterable<unknown>;
    overrides?: Partial<ProviderWire>;
  } = {},
): ProviderWire {
  let block = -1;
  return {
    name: "Fake",
    buildPayload: () => ({ model: "fake-1" }),
    async send({ payload, headers }: WireSend) {
      options.log?.push(`send:${JSON.stringify(payload)}:${JSON.stringify(headers)}`);
      return {
        status: 200,
        headers: {},
        events: options.events ?? [{ type: "start" }, { type: "text", delta: "Hi" }, { type: "stop" }],
      };
    },
    handle(event) {
      const e = event as { type: string; delta?: string };
      if (e.type === "start") block = writer.textStart();
      else if (e.type === "text") writer.textDelta(block, e.delta ?? "");
      else if (e.type === "stop") {
        writer.textEnd(block);
        writer.done("stop");
      } else throw new MalformedEventError(`unexpected event type ${e.type}`);
    },
    ...options.overrides,
  };
}

async function collect(stream: AssistantMessageStream, log?: string[]) {
  const events: AssistantMessageEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    log?.push(`event:${event.type}`);
  }
  return { events, result: await stream.result() };
}

function settled(stream: AssistantMessageStream, ms = 2000): Promise<AssistantMessage> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    stream.result().finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no result within ${ms} ms`)), ms);
    }),
  ]);
}

describe("plugins/kit/provider: runProviderRequest", () => {
  it("runs payload, headers, response, then each stream event before the events it is normalised into", async () => {
    const log: string[] = [];
    const hooks = loggingHooks(log, {
      payload: async (payload) => {
        log.push("payload");
        return { ...(payload as object), changed: true };
      },
      headers: async (headers) => {
        log.push("headers");
        return { ...headers, "x-hook": "1" };
      },
    });
    const stream = runProviderRequest(request(hooks, { headers: { "x-configured": "2" } }), (writer) =>
      textWire(writer, { log }),
    );
    const { result } = await collect(stream, log);
    expect(result.stopReason).to.equal("stop");
    expect(log).to.deep.equal([
      "payload",
      "headers",
      'send:{"model":"fake-1","changed":true}:{"x-configured":"2","x-hook":"1"}',
      "response:200",
      "raw:start",
      "event:start",
      "event:text_start",
      "raw:text",
      "event:text_delta",
      "raw:stop",
      "event:text_end",
      "event:done",
    ]);
  });

  it("ends an aborted request before any hook, and a refused one before any hook too", async () => {
    const log: string[] = [];
    const aborted = await collect(
      runProviderRequest(request(loggingHooks(log), { signal: AbortSignal.abort() }), (writer) =>
        textWire(writer, { log }),
      ),
    );
    expect(aborted.events.map((e) => e.type)).to.deep.equal(["error"]);
    expect(aborted.result).to.include({ stopReason: "aborted", errorKind: "aborted" });
    const refused = await settled(
      runProviderRequest(request(loggingHooks(log)), (writer) =>
        textWire(writer, {
          log,
          overrides: { refuse: () => ({ kind: "auth", message: "No key: set FAKE_KEY" }) },
        }),
      ),
    );
    expect(refused).to.include({
      stopReason: "error",
      errorKind: "auth",
      errorMessage: "No key: set FAKE_KEY",
    });
    expect(log).to.deep.equal([]);
  });

  it("fails with bad_request and sends nothing when the payload hook leaves something that is not an object", async () => {
    for (const value of ["a string", null, [1, 2]]) {
      const log: string[] = [];
      const hooks = loggingHooks(log, { payload: async () => value });
      const result = await settled(runProviderRequest(request(hooks), (writer) => textWire(writer, { log })));
      expect(result, String(value)).to.include({ stopReason: "error", errorKind: "bad_request" });
      expect(result.errorMessage).to.match(
        /^A before_provider_request handler returned (a string|null|an array) instead of a payload object/,
      );
      expect(log, "neither the headers hook nor the wire ran").to.deep.equal([]);
    }
  });

  it("reports a failing hook as unknown, naming its event, and sends nothing", async () => {
    const log: string[] = [];
    const hooks = loggingHooks(log, {
      headers: async () => {
        throw new Error("vault locked");
      },
    });
    const result = await settled(runProviderRequest(request(hooks), (writer) => textWire(writer, { log })));
    expect(result).to.include({
      errorKind: "unknown",
      errorMessage: "A before_provider_headers handler failed: vault locked",
    });
    expect(log).to.deep.equal(["payload"]);
  });

  it("ends with aborted at once while a handler keeps the request waiting, and sends nothing afterwards", async () => {
    const log: string[] = [];
    let release: (value: unknown) => void = () => {};
    const hooks = loggingHooks(log, {
      payload: (payload) =>
        new Promise((resolve) => {
          release = () => resolve(payload);
        }),
    });
    const controller = new AbortController();
    const stream = runProviderRequest(request(hooks, { signal: controller.signal }), (writer) =>
      textWire(writer, { log }),
    );
    setTimeout(() => controller.abort(), 10);
    expect(await settled(stream, 1000)).to.include({ stopReason: "aborted", errorKind: "aborted" });
    release(undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).to.deep.equal([]);
  });

  it("times out a wire that stays silent before its answer and between two events", async () => {
    const silentSend = await settled(
      runProviderRequest(request(loggingHooks([])), (writer) =>
        textWire(writer, {
          overrides: {
            timeoutMs: 50,
            send: ({ signal }) =>
              new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
          },
        }),
      ),
    );
    expect(silentSend).to.include({ stopReason: "error", errorKind: "timeout" });
    expect(silentSend.errorMessage).to.equal(
      "Fake sent nothing for 0.05s, so the request timed out (compat.timeoutMs sets the limit)",
    );

    async function* stalls(signal: AbortSignal) {
      yield { type: "start" };
      yield { type: "text", delta: "so far" };
      // Like an SDK stream, ends quietly when its signal aborts.
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
    }
    const silentStream = await settled(
      runProviderRequest(request(loggingHooks([])), (writer) => {
        const wire = textWire(writer, { overrides: { timeoutMs: 50 } });
        return {
          ...wire,
          send: async ({ signal }) => ({ status: 200, headers: {}, events: stalls(signal) }),
        };
      }),
    );
    expect(silentStream).to.include({ stopReason: "error", errorKind: "timeout" });
    expect(silentStream.content).to.deep.equal([{ type: "text", text: "so far" }]);
  });

  it("keeps a stream alive while the wire reports bytes without events", async () => {
    // Four keep-alives 400 ms apart: the stream lasts longer than the 1 s limit, and each gap leaves a loaded
    // machine 600 ms of slack.
    async function* slow(alive: () => void) {
      yield { type: "start" };
      for (let i = 0; i < 4; i++) {
        await new Promise((resolve) => setTimeout(resolve, 400));
        alive(); // a keep-alive comment
      }
      yield { type: "stop" };
    }
    const result = await settled(
      runProviderRequest(request(loggingHooks([])), (writer) => {
        const wire = textWire(writer, { overrides: { timeoutMs: 1000 } });
        return { ...wire, send: async ({ alive }) => ({ status: 200, headers: {}, events: slow(alive) }) };
      }),
      10_000,
    );
    expect(result.stopReason, result.errorMessage).to.equal("stop");
  });

  it("gives the response hook an error answer's status, then ends with the answer's failure", async () => {
    const log: string[] = [];
    const result = await settled(
      runProviderRequest(request(loggingHooks(log)), (writer) =>
        textWire(writer, {
          overrides: {
            send: async () => ({
              status: 429,
              headers: { "retry-after": "2" },
              failure: { kind: "rate_limit", message: "Fake rate limit reached (429)", retryAfterMs: 2000 },
            }),
          },
        }),
      ),
    );
    expect(log).to.deep.equal(["payload", "headers", "response:429"]);
    expect(result).to.include({ errorKind: "rate_limit", retryAfterMs: 2000 });
  });

  it("says what ended a stream early: no terminal event, a malformed event, a normaliser failure", async () => {
    const short = await settled(
      runProviderRequest(request(loggingHooks([])), (writer) =>
        textWire(writer, { events: [{ type: "start" }, { type: "text", delta: "half" }] }),
      ),
    );
    expect(short).to.include({
      errorKind: "network",
      errorMessage: "Fake: the stream ended before the response was complete",
    });
    expect(short.content).to.deep.equal([{ type: "text", text: "half" }]);

    const malformed = await settled(
      runProviderRequest(request(loggingHooks([])), (writer) =>
        textWire(writer, { events: [{ type: "start" }, { type: "surprise" }] }),
      ),
    );
    expect(malformed).to.include({
      errorKind: "unknown",
      errorMessage: "Fake sent a malformed stream event: unexpected event type surprise",
    });

    const broken = await settled(
      runProviderRequest(request(loggingHooks([])), (writer) => ({
        ...textWire(writer),
        handle: () => {
          throw new TypeError("cannot read x of undefined");
        },
      })),
    );
    expect(broken).to.include({
      errorKind: "unknown",
      errorMessage: "Fake: a stream event could not be handled: cannot read x of undefined",
    });
  });

  it("ends with the wire's own failure, and a payload that cannot be built is a bad request", async () => {
    const own = await settled(
      runProviderRequest(request(loggingHooks([])), (writer) =>
        textWire(writer, {
          overrides: {
            send: async () => {
              throw new ProviderRequestError("unknown", "Could not load the fake SDK");
            },
          },
        }),
      ),
    );
    expect(own).to.include({ errorKind: "unknown", errorMessage: "Could not load the fake SDK" });

    const log: string[] = [];
    const unbuildable = await settled(
      runProviderRequest(request(loggingHooks(log)), (writer) =>
        textWire(writer, {
          overrides: {
            buildPayload: () => {
              throw new Error("images of type image/tiff are not supported");
            },
          },
        }),
      ),
    );
    expect(unbuildable).to.include({
      errorKind: "bad_request",
      errorMessage: "Could not build the request for Fake: images of type image/tiff are not supported",
    });
    expect(log).to.deep.equal([]);
  });

  it("in a session, refuses the request when a handler returns a non-object payload, and extension_error names it", async () => {
    const reports: { extensionPath: string; event: string; error: string }[] = [];
    const statuses: number[] = [];
    const session = await createTestSession({
      script: [{ text: "never sent" }],
      extensions: [
        function breaksPayload(kc) {
          kc.on("before_provider_request", () => "not a payload" as never);
        },
        function watches(kc) {
          kc.on("extension_error", (event) => {
            reports.push(event as (typeof reports)[number]);
          });
          kc.on("after_provider_response", (event) => {
            statuses.push(event.status);
          });
        },
      ],
    });
    try {
      await session.prompt("hello");
      const end = session.eventsOfType("message_end").at(-1) as unknown as { message: AssistantMessage };
      expect(end.message).to.include({ stopReason: "error", errorKind: "bad_request" });
      expect(end.message.errorMessage).to.match(
        /^A before_provider_request handler returned a string instead of a payload object, so the request was not sent/,
      );
      expect(reports).to.have.length(1);
      expect(reports[0]).to.include({ extensionPath: "sdk:breaksPayload", event: "before_provider_request" });
      expect(reports[0]!.error).to.equal(end.message.errorMessage);
      expect(statuses, "the provider was never asked").to.deep.equal([]);
    } finally {
      await session.dispose();
    }
  });

  it("in a session, refuses the request when a headers handler returns something other than a headers object", async () => {
    const reports: { extensionPath: string; event: string }[] = [];
    const session = await createTestSession({
      script: [{ text: "never sent" }],
      extensions: [
        function breaksHeaders(kc) {
          kc.on("before_provider_headers", () => "x-team: blue" as never);
        },
        function watches(kc) {
          kc.on("extension_error", (event) => {
            reports.push(event);
          });
        },
      ],
    });
    try {
      await session.prompt("hello");
      const end = session.eventsOfType("message_end").at(-1) as unknown as { message: AssistantMessage };
      expect(end.message).to.include({ stopReason: "error", errorKind: "bad_request" });
      expect(end.message.errorMessage).to.match(
        /^A before_provider_headers handler returned a string instead/,
      );
      expect(reports.map((r) => [r.extensionPath, r.event])).to.deep.equal([
        ["sdk:breaksHeaders", "before_provider_headers"],
      ]);
    } finally {
      await session.dispose();
    }
  });
});

/** A full garbage collection, without starting node with --expose-gc. */
function collectGarbage(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("plugins/kit/provider: PushStream", () => {
  it("resolves result() without iterating, replays events to late iterators and ignores pushes after end", async () => {
    const stream = new PushStream<number, string>();
    stream.push(1);
    setTimeout(() => {
      stream.push(2);
      stream.end("done");
      stream.push(3);
      stream.end("again");
    }, 5);
    expect(await stream.result()).to.equal("done");
    const seen: number[] = [];
    for await (const n of stream) seen.push(n);
    expect(seen).to.deep.equal([1, 2]);
  });

  it("releases the events every consumer has read, so a long stream does not hold them all", async () => {
    // A tool call streamed in a million deltas held a million events (and their snapshots) until the request ended.
    const collect = collectGarbage();
    const stream = new PushStream<{ n: number }, void>();
    const consumer = stream[Symbol.asyncIterator]();
    // Made in a function of its own, so no variable of this test's frame keeps the first event alive.
    const released = (() => {
      const first = { n: 0 };
      stream.push(first);
      return new WeakRef(first);
    })();
    for (let n = 1; n < 5000; n++) stream.push({ n });
    for (let n = 0; n < 5000; n++) expect(((await consumer.next()).value as { n: number }).n).to.equal(n);
    stream.push({ n: 5000 });
    await new Promise((resolve) => setImmediate(resolve));
    collect();
    expect(released.deref(), "the first event, read by the only consumer").to.equal(undefined);
    stream.end();
    expect((await consumer.next()).value).to.deep.equal({ n: 5000 });
  });

  it("delivers events to a consumer waiting before they are pushed", async () => {
    const stream = new PushStream<string, void>();
    const consumed = (async () => {
      const seen: string[] = [];
      for await (const e of stream) seen.push(e);
      return seen;
    })();
    await new Promise((resolve) => setTimeout(resolve, 5));
    stream.push("a");
    stream.push("b");
    stream.end();
    expect(await consumed).to.deep.equal(["a", "b"]);
  });
});

/**
 * builtin:web's `websearch` in real test sessions against local servers that speak Brave Search's and Tavily's wire
 * formats: the provider chosen by tools.json (and switched with /tools mid-session), keys from tools.json or the
 * environment and masked where shown, the results bounded, and each failure a message that says what to do.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";
import { json, type LocalServer, startLocalServer } from "./local-server.js";

const BRAVE_KEY = "BSA-brave-secret-7781";
const TAVILY_KEY = "tvly-dev-secret-4432";

/** Brave's `GET /res/v1/web/search` answer for `results`. */
function braveAnswer(query: string, results: { title: string; url: string; description: string }[]) {
  return {
    type: "search",
    query: { original: query, more_results_available: true },
    mixed: { type: "mixed", main: results.map((_, index) => ({ type: "web", index, all: false })) },
    web: {
      type: "search",
      family_friendly: true,
      results: results.map((r) => ({
        type: "search_result",
        subtype: "generic",
        is_source_local: false,
        is_source_both: false,
        language: "en",
        family_friendly: true,
        profile: { name: "Example", url: r.url, long_name: "example.com", img: "" },
        meta_url: { scheme: "https", netloc: "example.com", hostname: "example.com", path: "" },
        ...r,
      })),
    },
  };
}

/** Tavily's `POST /search` answer. */
function tavilyAnswer(query: string, results: { title: string; url: string; content: string }[]) {
  return {
    query,
    follow_up_questions: null,
    answer: null,
    images: [],
    results: results.map((r, i) => ({ ...r, score: 0.9 - i / 10, raw_content: null })),
    response_time: 0.42,
    request_id: "0d8a9b5e-1c2f-4d7a-9a55-6f1c2e3d4b5a",
  };
}

describe("builtin:web websearch", function () {
  this.timeout(30_000);
  const tmp = useTempDir("kc-websearch-");
  let t: TestSession | undefined;
  let server: LocalServer | undefined;
  const saved: Record<string, string | undefined> = {};
  beforeEach(() => {
    for (const name of ["BRAVE_API_KEY", "TAVILY_API_KEY"]) {
      saved[name] = process.env[name];
      delete process.env[name];
    }
  });
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await server?.close();
    server = undefined;
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const agentDir = (tools: Record<string, unknown>) => {
    const dir = join(tmp.path, "agent");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "tools.json"), JSON.stringify(tools));
    return dir;
  };
  const search = (args: Record<string, unknown>) => [
    { toolCalls: [{ name: "websearch", arguments: args }] },
    { text: "done" },
  ];
  const resultOf = (session: TestSession, index = 0) => {
    const call = session.toolCalls()[index];
    if (!call?.result) throw new Error(`no result for tool call ${index}: ${session.lastAssistantText()}`);
    const text = call.result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    return { call, text, details: call.result.details as Record<string, any> };
  };

  it("is off by default: neither tool is offered, and /tools lists both as off", async () => {
    t = await createTestSession({
      script: [(request) => ({ text: (request.tools ?? []).map((tool) => tool.name).join(",") })],
    });
    await t.prompt("which tools?");
    const offered = (t.lastAssistantText() ?? "").split(",");
    expect(offered).to.include("read");
    expect(offered).not.to.include("websearch").and.not.to.include("webfetch");
    await t.prompt("/tools");
    const shown = t.ui.notifications.map((n) => n.message).join("\n");
    expect(shown)
      .to.match(/websearch {2}off/)
      .and.match(/webfetch {2}off/);
  });

  it("searches Brave Search with the key from tools.json and returns titles, URLs and plain snippets", async () => {
    server = await startLocalServer((_req, res) =>
      json(
        res,
        200,
        braveAnswer("typebox union", [
          {
            title: "TypeBox &amp; <strong>unions</strong>",
            url: "https://github.com/sinclairzx81/typebox",
            description:
              "Build <strong>union</strong> types with Type.Union &#8212; JSON Schema&#39;s anyOf.",
          },
          { title: "Second", url: "https://example.com/2", description: "Another page." },
        ]),
      ),
    );
    t = await createTestSession({
      agentDir: agentDir({
        websearch: {
          enabled: true,
          provider: "brave",
          braveApiKey: BRAVE_KEY,
          braveBaseUrl: `${server.url}/res/v1`,
        },
      }),
      script: [
        {
          toolCalls: [{ name: "websearch", arguments: { query: "typebox union", count: 2 } }],
          expect: { tools: ["websearch"] },
        },
        { text: "done" },
      ],
    });
    await t.prompt("find it");
    const { call, text, details } = resultOf(t);
    expect(call.isError).to.equal(false);
    const [req] = server.seen;
    expect(req!.method).to.equal("GET");
    const url = new URL(req!.url, server.url);
    expect(url.pathname).to.equal("/res/v1/web/search");
    expect(url.searchParams.get("q")).to.equal("typebox union");
    expect(url.searchParams.get("count")).to.equal("2");
    expect(req!.headers["x-subscription-token"]).to.equal(BRAVE_KEY);
    expect(text).to.equal(
      [
        'Results for "typebox union" (Brave Search, 2):',
        "",
        "1. TypeBox & unions",
        "   https://github.com/sinclairzx81/typebox",
        "   Build union types with Type.Union — JSON Schema's anyOf.",
        "",
        "2. Second",
        "   https://example.com/2",
        "   Another page.",
      ].join("\n"),
    );
    expect(details.provider).to.equal("brave");
    expect(details.results).to.have.length(2);
  });

  it("switches to Tavily when /tools sets the provider mid-session, and shows the keys masked", async () => {
    server = await startLocalServer((req, res) => {
      if (req.url.startsWith("/tavily/search"))
        return json(
          res,
          200,
          tavilyAnswer("node streams", [
            {
              title: "Streams",
              url: "https://nodejs.org/api/stream.html",
              content: "Readable and writable.",
            },
          ]),
        );
      return json(
        res,
        200,
        braveAnswer("node streams", [
          { title: "From Brave", url: "https://brave.example/", description: "b" },
        ]),
      );
    });
    t = await createTestSession({
      agentDir: agentDir({
        websearch: {
          enabled: true,
          provider: "brave",
          braveApiKey: BRAVE_KEY,
          braveBaseUrl: `${server.url}/brave`,
          tavilyBaseUrl: `${server.url}/tavily`,
        },
      }),
      script: [...search({ query: "node streams" }), ...search({ query: "node streams", count: 3 })],
    });
    await t.prompt("first");
    expect(resultOf(t, 0).text).to.contain("From Brave");
    await t.prompt(`/tools websearch tavilyApiKey=${TAVILY_KEY}`);
    await t.prompt("/tools websearch provider=tavily");
    await t.prompt("second");
    const second = resultOf(t, 1);
    expect(second.call.isError).to.equal(false);
    expect(second.text)
      .to.contain("(Tavily, 1)")
      .and.contain("https://nodejs.org/api/stream.html")
      .and.contain("Readable and writable.");
    const req = server.seen.at(-1)!;
    expect(req.method).to.equal("POST");
    expect(req.url).to.equal("/tavily/search");
    expect(req.headers.authorization).to.equal(`Bearer ${TAVILY_KEY}`);
    expect(JSON.parse(req.body)).to.include({ query: "node streams", max_results: 3 });

    await t.prompt("/tools websearch");
    const shown = t.ui.notifications.map((n) => n.message).join("\n");
    expect(shown).to.contain("braveApiKey = ****7781").and.contain("tavilyApiKey = ****4432");
    expect(shown).to.contain("provider = tavily");
    expect(shown).not.to.contain("secret");
    expect(JSON.stringify(t.events)).not.to.contain(TAVILY_KEY).and.not.to.contain(BRAVE_KEY);
  });

  it("takes the key from TAVILY_API_KEY when tools.json names no provider and no key", async () => {
    process.env.TAVILY_API_KEY = TAVILY_KEY;
    server = await startLocalServer((_req, res) =>
      json(res, 200, tavilyAnswer("q", [{ title: "T", url: "https://t.example/", content: "c" }])),
    );
    t = await createTestSession({
      agentDir: agentDir({ websearch: { enabled: true, tavilyBaseUrl: server.url } }),
      script: search({ query: "q" }),
    });
    await t.prompt("go");
    expect(resultOf(t).text).to.contain("(Tavily, 1)");
    expect(server.seen[0]!.headers.authorization).to.equal(`Bearer ${TAVILY_KEY}`);
  });

  it("bounds the results: at most 10, each field cut, and the whole text cut at 8 KB with a notice", async () => {
    const long = (c: string, n: number) => c.repeat(n);
    server = await startLocalServer((_req, res) =>
      json(
        res,
        200,
        braveAnswer(
          "big",
          Array.from({ length: 20 }, (_, i) => ({
            title: `${i} ${long("T", 1000)}`,
            url: `https://example.com/${i}/${long("u", 3000)}`,
            description: long("d ", 2000),
          })),
        ),
      ),
    );
    t = await createTestSession({
      agentDir: agentDir({ websearch: { enabled: true, braveApiKey: BRAVE_KEY, braveBaseUrl: server.url } }),
      script: search({ query: "big", count: 10 }),
    });
    await t.prompt("go");
    const { text, details } = resultOf(t);
    expect(new URL(server.seen[0]!.url, server.url).searchParams.get("count")).to.equal("10");
    expect(details.results).to.have.length(10);
    for (const r of details.results) {
      expect(r.title.length).to.be.at.most(200);
      expect(r.url.length).to.be.at.most(500);
      expect(r.snippet.length).to.be.at.most(400);
    }
    expect(details.truncated).to.equal(true);
    expect(Buffer.byteLength(text)).to.be.at.most(8 * 1024 + 200);
    expect(text).to.match(/\[Results cut at 8\.0 KB: \d+ of \d+ lines shown\]$/);
  });

  it("names the setting and the environment variable when there is no key", async () => {
    t = await createTestSession({
      agentDir: agentDir({ websearch: { enabled: true, provider: "brave" } }),
      script: [...search({ query: "q" })],
    });
    await t.prompt("go");
    const { call, text } = resultOf(t);
    expect(call.isError).to.equal(true);
    expect(text)
      .to.contain("no Brave Search API key")
      .and.contain('"braveApiKey"')
      .and.contain("BRAVE_API_KEY");
    expect(text).to.contain(join(t.agentDir, "tools.json"));
  });

  it("refuses an unknown provider and a base URL that is not http(s), by name", async () => {
    t = await createTestSession({
      agentDir: agentDir({ websearch: { enabled: true, provider: "bing", braveApiKey: BRAVE_KEY } }),
      script: [...search({ query: "q" }), ...search({ query: "q" })],
    });
    await t.prompt("go");
    expect(resultOf(t).text).to.contain('the provider "bing"').and.contain("is not one of brave, tavily");
    await t.prompt(`/tools websearch provider=tavily`);
    await t.prompt(`/tools websearch tavilyApiKey=${TAVILY_KEY}`);
    await t.prompt("/tools websearch tavilyBaseUrl=ftp://proxy.example");
    await t.prompt("again");
    expect(resultOf(t, 1).text)
      .to.contain('"tavilyBaseUrl" in')
      .and.contain("is not an http(s) URL: ftp://proxy.example");
  });

  it("reports Brave's rejected key (HTTP 422 SUBSCRIPTION_TOKEN_INVALID) with its message and where the key is", async () => {
    server = await startLocalServer((_req, res) =>
      json(res, 422, {
        type: "ErrorResponse",
        error: {
          id: "5d832250-9396-4f6e-b84a-2a1fe524cd7d",
          status: 422,
          code: "SUBSCRIPTION_TOKEN_INVALID",
          detail: "The provided subscription token is invalid.",
          meta: { component: "authentication" },
        },
        time: 1663072993,
      }),
    );
    t = await createTestSession({
      agentDir: agentDir({ websearch: { enabled: true, braveApiKey: BRAVE_KEY, braveBaseUrl: server.url } }),
      script: search({ query: "q" }),
    });
    await t.prompt("go");
    const { call, text } = resultOf(t);
    expect(call.isError).to.equal(true);
    expect(text).to.contain(
      "Brave Search answered HTTP 422: The provided subscription token is invalid. (SUBSCRIPTION_TOKEN_INVALID)",
    );
    expect(text).to.contain('Check the API key ("braveApiKey"').and.contain("BRAVE_API_KEY");
    expect(text).not.to.contain(BRAVE_KEY);
  });

  it("reports Tavily's 401 and 429 with Tavily's own message and the retry-after", async () => {
    let status = 401;
    server = await startLocalServer((_req, res) =>
      status === 401
        ? json(res, 401, { detail: { error: "Unauthorized: missing or invalid API key." } })
        : json(
            res,
            429,
            { detail: { error: "Your request has been blocked due to excessive requests." } },
            { "retry-after": "30" },
          ),
    );
    t = await createTestSession({
      agentDir: agentDir({
        websearch: { enabled: true, provider: "tavily", tavilyApiKey: TAVILY_KEY, tavilyBaseUrl: server.url },
      }),
      script: [...search({ query: "a" }), ...search({ query: "b" })],
    });
    await t.prompt("one");
    const first = resultOf(t, 0).text;
    expect(first).to.contain("Tavily answered HTTP 401: Unauthorized: missing or invalid API key.");
    expect(first).to.contain('"tavilyApiKey"').and.contain("TAVILY_API_KEY");
    status = 429;
    await t.prompt("two");
    const second = resultOf(t, 1).text;
    expect(second).to.contain(
      "Tavily answered HTTP 429: Your request has been blocked due to excessive requests.",
    );
    expect(second).to.contain("retry after 30 s");
  });

  it("gives up after timeoutSeconds when the provider does not answer", async () => {
    server = await startLocalServer(() => {
      // Never answers.
    });
    t = await createTestSession({
      agentDir: agentDir({
        websearch: { enabled: true, braveApiKey: BRAVE_KEY, braveBaseUrl: server.url, timeoutSeconds: "0.3" },
      }),
      script: search({ query: "q" }),
    });
    const started = Date.now();
    await t.prompt("go");
    expect(Date.now() - started).to.be.below(5_000);
    const { call, text } = resultOf(t);
    expect(call.isError).to.equal(true);
    expect(text).to.contain("Brave Search did not answer within 0.3 s").and.contain('"timeoutSeconds"');
  });

  it("calls a malformed answer what it is: not JSON, or JSON of the wrong shape", async () => {
    let answer = "<html>proxy error</html>";
    server = await startLocalServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(answer);
    });
    t = await createTestSession({
      agentDir: agentDir({ websearch: { enabled: true, braveApiKey: BRAVE_KEY, braveBaseUrl: server.url } }),
      script: [...search({ query: "a" }), ...search({ query: "b" })],
    });
    await t.prompt("one");
    expect(resultOf(t, 0).text).to.contain(
      "Brave Search answered something that is not JSON: <html>proxy error</html>",
    );
    answer = JSON.stringify({ type: "search", web: { type: "search", results: "none" } });
    await t.prompt("two");
    expect(resultOf(t, 1).text).to.contain(
      "Brave Search's answer has an unexpected shape: web.results is not a list",
    );
  });

  it("gives way to a websearch tool of another extension", async () => {
    t = await createTestSession({
      agentDir: agentDir({ websearch: { enabled: true } }),
      extensions: [
        (kc) =>
          kc.registerTool({
            name: "websearch",
            description: "my own search",
            parameters: Type.Object({ query: Type.String() }),
            execute: async (_id, params) => ({
              content: [{ type: "text", text: `mine: ${params.query}` }],
              details: undefined,
            }),
          }),
      ],
      script: search({ query: "q" }),
    });
    await t.prompt("go");
    expect(resultOf(t).text).to.equal("mine: q");
  });
});

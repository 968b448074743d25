/**
 * `websearch` configured over `knightcode app-server` (the built CLI) as the spec does it: `tool/settings/write`
 * turns it on and picks the provider, `tool/settings/read` shows the keys masked, and a thread's model calls the tool
 * against local servers speaking Brave Search's and Tavily's formats, switching provider between turns.
 */
import { expect } from "chai";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness, notifications } from "../../hosts/app-server/harness.js";
import { textStream, toolCallStream } from "../providers/openai-compatible/fixtures.js";
import { json, type LocalServer, startLocalServer } from "./local-server.js";

describe("knightcode app-server: websearch through tool/settings", function () {
  this.timeout(60_000);
  let h: Harness | undefined;
  let search: LocalServer | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    await search?.close();
    search = undefined;
  });
  const tmp = useTempDir("kc-appserver-web-");

  it("turns websearch on, masks its keys, and switches from Brave to Tavily between turns", async () => {
    search = await startLocalServer((req, res) => {
      if (req.url.startsWith("/brave/web/search"))
        return json(res, 200, {
          type: "search",
          web: {
            type: "search",
            results: [{ title: "From Brave", url: "https://brave.example/", description: "b" }],
          },
        });
      return json(res, 200, {
        query: "q",
        results: [{ title: "From Tavily", url: "https://tavily.example/", content: "t", score: 0.9 }],
        response_time: 0.1,
      });
    });
    h = await harness(tmp.path);
    h.model.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_b", "websearch", { query: "q" })),
      (_req, res) => writeSse(res, textStream("one")),
      (_req, res) => writeSse(res, toolCallStream("call_t", "websearch", { query: "q" })),
      (_req, res) => writeSse(res, textStream("two")),
    );
    const server = await h.start({ BRAVE_API_KEY: "", TAVILY_API_KEY: "" });
    const { client } = server;
    await client.initialize();
    const write = (key: string, value: string | boolean) =>
      client.request("tool/settings/write", { name: "websearch", key, value });
    await write("enabled", true);
    await write("braveApiKey", "BSA-app-secret-1234");
    await write("tavilyApiKey", "tvly-app-secret-5678");
    await write("braveBaseUrl", `${search.url}/brave`);
    await write("tavilyBaseUrl", search.url);
    await write("provider", "brave");
    const read = await client.request("tool/settings/read", {});
    expect(read.tools.find((t) => t.name === "websearch")).to.deep.equal({
      name: "websearch",
      enabled: true,
      settings: {
        braveApiKey: "****1234",
        tavilyApiKey: "****5678",
        braveBaseUrl: `${search.url}/brave`,
        tavilyBaseUrl: search.url,
        provider: "brave",
      },
    });
    expect(read.tools.find((t) => t.name === "webfetch")).to.deep.equal({
      name: "webfetch",
      enabled: false,
      settings: {},
    });
    expect(JSON.stringify(read)).not.to.contain("secret");

    const { thread } = await client.request("thread/start", { cwd: h.project });
    const finished = new Set<string>();
    const turn = async (text: string) => {
      const done = client.waitFor("turn/completed", (p) => !finished.has(p.turn.id));
      await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text }] });
      const { turn } = await done;
      finished.add(turn.id);
      expect(turn.status).to.equal("completed");
    };
    await turn("search");
    await write("provider", "tavily");
    await turn("again");
    const result = (id: string) =>
      String(notifications(server, "item/completed").find((n) => n.item.id === id)?.item.result);
    expect(result("call_b")).to.contain("From Brave").and.contain("(Brave Search, 1)");
    expect(result("call_t")).to.contain("From Tavily").and.contain("(Tavily, 1)");
    expect(search.seen.map((r) => r.method)).to.deep.equal(["GET", "POST"]);
    expect(search.seen[0]!.headers["x-subscription-token"]).to.equal("BSA-app-secret-1234");
    expect(search.seen[1]!.headers.authorization).to.equal("Bearer tvly-app-secret-5678");
  });
});

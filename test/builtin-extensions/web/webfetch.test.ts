/**
 * builtin:web's `webfetch` in real test sessions against local HTTP servers: HTML turned into Markdown, the download
 * and the output bounded (the whole text kept in a private temp file), and the refusals: other schemes, private and
 * loopback addresses by default (literal, by name, and after a redirect), too many redirects, non-text pages.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type LocalServer, startLocalServer } from "./local-server.js";

const PAGE = `<!doctype html>
<html><head><title>Streams &amp; pipes</title>
<style>body { color: red }</style>
<script>window.secretTracker = "do-not-show";</script></head>
<body>
<nav><a href="/home">Home</a> | <a href="/about">Site menu item</a></nav>
<h1>Node streams</h1>
<p>Streams move data <strong>piece by piece</strong>. See <a href="/docs/pipeline">pipeline()</a>.</p>
<h2>Example</h2>
<pre><code>const { pipeline } = require("node:stream");</code></pre>
<ul><li>Readable</li><li>Writable</li></ul>
<form><input name="q"><button>Search this site</button></form>
<noscript>Enable JavaScript please</noscript>
</body></html>`;

describe("builtin:web webfetch", function () {
  this.timeout(30_000);
  const tmp = useTempDir("kc-webfetch-");
  let t: TestSession | undefined;
  const servers: LocalServer[] = [];
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  const serve = async (handle: Parameters<typeof startLocalServer>[0]) => {
    const server = await startLocalServer(handle);
    servers.push(server);
    return server;
  };
  const agentDir = (webfetch: Record<string, unknown>) => {
    const dir = join(tmp.path, "agent");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "tools.json"), JSON.stringify({ webfetch: { enabled: true, ...webfetch } }));
    return dir;
  };
  /** The model fetches each URL in turn, one call per request, then answers. */
  const fetches = (...urls: string[]) => [
    ...urls.map((url) => ({ toolCalls: [{ name: "webfetch", arguments: { url } }] })),
    { text: "done" },
  ];
  const resultOf = (session: TestSession, index = 0) => {
    const call = session.toolCalls()[index];
    if (!call?.result) throw new Error(`no result for tool call ${index}: ${session.lastAssistantText()}`);
    const text = call.result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    return { call, text, details: call.result.details as Record<string, any> };
  };

  it("turns an HTML page into Markdown: headings, paragraphs, absolute links and code; no scripts, styles or navigation", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(PAGE);
    });
    t = await createTestSession({
      agentDir: agentDir({ allowHosts: `127.0.0.1:${server.port}` }),
      script: fetches(`${server.url}/guide`),
    });
    await t.prompt("read it");
    const { call, text, details } = resultOf(t);
    expect(call.isError, text).to.equal(false);
    expect(text).to.contain(`URL: ${server.url}/guide`).and.contain("Title: Streams & pipes");
    expect(text).to.contain("# Node streams").and.contain("## Example");
    expect(text).to.contain(
      `Streams move data **piece by piece**. See [pipeline()](${server.url}/docs/pipeline).`,
    );
    expect(text).to.contain('```\nconst { pipeline } = require("node:stream");\n```');
    expect(text).to.match(/-\s+Readable\n-\s+Writable/);
    for (const gone of [
      "secretTracker",
      "color: red",
      "Site menu item",
      "Search this site",
      "Enable JavaScript",
    ])
      expect(text).not.to.contain(gone);
    expect(details).to.include({
      status: 200,
      truncated: false,
      downloadCut: false,
      title: "Streams & pipes",
    });
    expect(server.seen[0]!.headers["user-agent"]).to.match(/KnightCode-webfetch/);
  });

  it("reads compressed and plain-text pages, and refuses a page that is not text", async () => {
    const server = await serve((req, res) => {
      if (req.url === "/gz") {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-encoding": "gzip" });
        res.end(gzipSync("compressed body: héllo"));
      } else {
        res.writeHead(200, { "content-type": "image/png" });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
      }
    });
    t = await createTestSession({
      agentDir: agentDir({ allowPrivate: "true" }),
      script: fetches(`${server.url}/gz`, `${server.url}/png`),
    });
    await t.prompt("read");
    expect(resultOf(t, 0).text).to.contain("compressed body: héllo");
    const png = resultOf(t, 1);
    expect(png.call.isError).to.equal(true);
    expect(png.text).to.contain("is image/png").and.contain("not a text or HTML page");
  });

  it("bounds the download at maxBytes and the text at 50 KB, keeping the whole text in a private temp file", async () => {
    const line = `${"x".repeat(99)}\n`;
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(line.repeat(3000)); // 300,000 bytes
    });
    t = await createTestSession({
      agentDir: agentDir({ allowPrivate: true, maxBytes: "200000" }),
      script: fetches(server.url),
    });
    await t.prompt("read");
    const { call, text, details } = resultOf(t);
    expect(call.isError).to.equal(false);
    expect(details.bytes).to.equal(200_000);
    expect(details.downloadCut).to.equal(true);
    expect(details.truncated).to.equal(true);
    expect(Buffer.byteLength(text)).to.be.below(50 * 1024 + 1024);
    expect(text).to.contain("[Download stopped at 195.3 KB");
    expect(text).to.contain(`The full text is in ${details.fullTextPath}`);
    const path = details.fullTextPath as string;
    try {
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      const full = readFileSync(path, "utf8");
      expect(full).to.contain("x".repeat(99));
      expect(full.length).to.be.above(199_000);
    } finally {
      rmSync(path, { force: true });
    }
  });

  it("shows the beginning of a page that is one long line (minified JSON) rather than nothing", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ items: Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `item-${i}` })) }),
      );
    });
    t = await createTestSession({ agentDir: agentDir({ allowPrivate: true }), script: fetches(server.url) });
    await t.prompt("read");
    const { text, details } = resultOf(t);
    try {
      expect(details.truncated).to.equal(true);
      expect(text).to.contain('{"items":[{"id":0,"name":"item-0"}');
      expect(Buffer.byteLength(text))
        .to.be.above(40 * 1024)
        .and.below(51 * 1024 + 1024);
    } finally {
      rmSync(details.fullTextPath as string, { force: true });
    }
  });

  it("by default refuses loopback and private addresses (literal or by name) and other schemes, without connecting", async () => {
    const server = await serve((_req, res) => {
      res.end("should never be read");
    });
    const dir = agentDir({});
    t = await createTestSession({
      agentDir: dir,
      script: fetches(
        `${server.url}/`,
        `http://localhost:${server.port}/`,
        `http://[::1]:${server.port}/`,
        `http://[::ffff:127.0.0.1]:${server.port}/`,
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
        "file:///etc/passwd",
        "ftp://example.com/file",
      ),
    });
    await t.prompt("try them");
    const texts = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => {
      const r = resultOf(t!, i);
      expect(r.call.isError, r.text).to.equal(true);
      return r.text;
    });
    expect(texts[0]).to.contain(`webfetch refuses ${server.url}/: 127.0.0.1 is a loopback address`);
    expect(texts[0]).to.contain("allowHosts").and.contain("allowPrivate");
    expect(texts[1]).to.match(/localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/);
    expect(texts[2]).to.contain("::1 is a loopback address");
    expect(texts[3]).to.contain("is a loopback address");
    expect(texts[4]).to.contain("169.254.169.254 is a link-local address");
    expect(texts[5]).to.contain("10.1.2.3 is a private address");
    expect(texts[6]).to.contain("webfetch reads only http and https URLs; file: is refused");
    expect(texts[7]).to.contain("ftp: is refused");
    expect(server.seen).to.have.length(0);
  });

  it("refuses a redirect to a private address, even from a host it may reach", async () => {
    const inside = await serve((_req, res) => {
      res.end("internal admin page");
    });
    const outside = await serve((req, res) => {
      const to =
        req.url === "/to-loopback"
          ? `http://127.0.0.1:${inside.port}/admin`
          : req.url === "/to-metadata"
            ? "http://169.254.169.254/latest/meta-data/"
            : req.url === "/to-localhost"
              ? `http://localhost:${inside.port}/admin`
              : "/";
      res.writeHead(302, { location: to });
      res.end();
    });
    t = await createTestSession({
      agentDir: agentDir({ allowHosts: `127.0.0.1:${outside.port}` }),
      script: fetches(
        `${outside.url}/to-loopback`,
        `${outside.url}/to-metadata`,
        `${outside.url}/to-localhost`,
      ),
    });
    await t.prompt("follow");
    expect(resultOf(t, 0).text).to.contain(
      `webfetch refuses http://127.0.0.1:${inside.port}/admin: 127.0.0.1 is a loopback address`,
    );
    expect(resultOf(t, 1).text).to.contain("169.254.169.254 is a link-local address");
    expect(resultOf(t, 2).text).to.match(/localhost resolves to .*, which is a loopback address/);
    expect(inside.seen).to.have.length(0);
  });

  it("follows up to 5 redirects and stops at the sixth", async () => {
    const server = await serve((req, res) => {
      const n = Number(req.url.slice(1));
      if (n >= 10) {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("arrived");
        return;
      }
      res.writeHead(301, { location: `/${req.url === "/0" ? 4 : n + 1}` });
      res.end();
    });
    t = await createTestSession({
      agentDir: agentDir({ allowPrivate: true }),
      script: fetches(`${server.url}/5`, `${server.url}/0`),
    });
    await t.prompt("go");
    const ok = resultOf(t, 0);
    expect(ok.text)
      .to.contain(`URL: ${server.url}/10`)
      .and.contain(`Redirected from: ${server.url}/5`)
      .and.contain("arrived");
    const tooMany = resultOf(t, 1);
    expect(tooMany.call.isError).to.equal(true);
    expect(tooMany.text).to.contain("webfetch stopped after 5 redirects");
  });

  it("reports an HTTP error status with the start of the page, and gives up after timeoutSeconds", async () => {
    const server = await serve((req, res) => {
      if (req.url === "/missing") {
        res.writeHead(404, { "content-type": "text/html" });
        res.end("<h1>Not here</h1><p>The page moved.</p>");
      }
      // /slow never answers.
    });
    t = await createTestSession({
      agentDir: agentDir({ allowPrivate: true, timeoutSeconds: "0.3" }),
      script: fetches(`${server.url}/missing`, `${server.url}/slow`),
    });
    const started = Date.now();
    await t.prompt("go");
    expect(Date.now() - started).to.be.below(5_000);
    expect(resultOf(t, 0).text).to.contain(
      `${server.url}/missing answered HTTP 404 Not Found: # Not here The page moved.`,
    );
    expect(resultOf(t, 1).text).to.contain(`${server.url}/slow did not finish within 0.3 s`);
  });

  it("leaves no temp file behind for a page that fits", async () => {
    const server = await serve((_req, res) => {
      res.end("short");
    });
    t = await createTestSession({ agentDir: agentDir({ allowPrivate: true }), script: fetches(server.url) });
    await t.prompt("go");
    expect(resultOf(t).details.fullTextPath).to.equal(undefined);
    expect(existsSync(join(tmp.path, "agent", "tools.json"))).to.equal(true);
  });

  it("runs under the classifier gate without asking (read-only), and asks when a rule says so", async () => {
    const server = await serve((_req, res) => {
      res.end("gated page");
    });
    const dir = join(tmp.path, "agent");
    mkdirSync(dir, { recursive: true });
    const write = (gate: Record<string, unknown>) =>
      writeFileSync(
        join(dir, "tools.json"),
        JSON.stringify({
          "classifier-gate": { enabled: true, ...gate },
          webfetch: { enabled: true, allowPrivate: true },
        }),
      );
    write({});
    t = await createTestSession({ agentDir: dir, script: [...fetches(server.url), ...fetches(server.url)] });
    await t.prompt("read");
    expect(resultOf(t, 0).text).to.contain("gated page");
    expect(t.dialogs).to.deep.equal([]);
    write({ ask: "webfetch" });
    t.answerDialogs(false);
    await t.prompt("again");
    expect(t.dialogs).to.have.length(1);
    expect(t.dialogs[0]).to.match(/^select: Allow webfetch\?/);
    expect(resultOf(t, 1).call.isError).to.equal(true);
    expect(server.seen).to.have.length(1);
  });
});

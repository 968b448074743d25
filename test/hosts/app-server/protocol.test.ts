/**
 * `knightcode app-server` over stdio, end to end: the handshake and its errors, JSON-RPC framing with and without
 * `"jsonrpc"`, malformed input that leaves the connection serving, and stdout that carries only protocol messages
 * whatever an extension prints.
 */
import { expect } from "chai";
import { AppServerRequestError } from "../../../hosts/sdk/app-server-client.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness } from "./harness.js";

describe("knightcode app-server: protocol", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-");

  async function rejection(promise: Promise<unknown>): Promise<AppServerRequestError> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof AppServerRequestError) return error;
      throw error;
    }
    throw new Error("the request succeeded");
  }

  it("answers notInitialized before the handshake and alreadyInitialized after it", async () => {
    h = await harness(tmp.path);
    const { client } = await h.start();
    const early = await rejection(client.request("thread/list", {}));
    expect(early.code).to.equal(-32600);
    expect(early.data?.code).to.equal("notInitialized");
    const init = await client.initialize("test-client", "1.2.3");
    expect(init.userAgent).to.match(/^test-client\/\d+\.\d+\.\d+/);
    expect(init.serverInfo.name).to.equal("knightcode");
    const again = await rejection(client.request("initialize", { clientInfo: { name: "x", version: "1" } }));
    expect(again.data?.code).to.equal("alreadyInitialized");
    // The connection still serves after both errors.
    expect((await client.request("thread/list", {})).data).to.deep.equal([]);
  });

  it("keeps serving after malformed JSON, invalid requests, unknown methods and wrong params", async () => {
    h = await harness(tmp.path);
    const server = await h.start();
    const { client, child } = server;
    await client.initialize();
    child.stdin.write("{not json\n");
    child.stdin.write("[1,2]\n");
    child.stdin.write(`${JSON.stringify({ jsonrpc: "1.0", id: "old", method: "thread/list" })}\n`);
    child.stdin.write(`${JSON.stringify({ id: { x: 1 }, method: "thread/list" })}\n`);
    const unknown = await rejection(client.request("thread/explode", {}));
    expect(unknown.code).to.equal(-32601);
    expect(unknown.data?.code).to.equal("methodNotFound");
    const wrong = await rejection(client.request("thread/start", { cwd: 42 } as never));
    expect(wrong.code).to.equal(-32602);
    expect(wrong.data).to.include({ code: "invalidParams", path: "/cwd" });
    const errors = client.received.filter((m) => m.error !== undefined);
    const codes = errors.map((m) => [(m.error as any).code, (m.error as any).data.code, m.id]);
    expect(codes.slice(0, 4)).to.deep.equal([
      [-32700, "parseError", null],
      [-32600, "invalidRequest", null],
      [-32600, "invalidRequest", "old"],
      [-32600, "invalidRequest", null],
    ]);
    // With "jsonrpc": "2.0" too, and numeric ids.
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 77, method: "thread/list", params: {} })}\n`);
    const deadline = Date.now() + 10_000;
    while (!client.received.some((m) => m.id === 77) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(client.received.find((m) => m.id === 77)).to.deep.include({ result: { data: [] } });
  });

  it("echoes request ids exactly as sent, numbers past double precision included", async () => {
    h = await harness(tmp.path);
    const server = await h.start();
    let raw = "";
    server.child.stdout.on("data", (d: Buffer | string) => {
      raw += d.toString();
    });
    await server.client.initialize();
    const ids = ["9007199254740993", "-9007199254740993", "12345678901234567890123", "1.0", "2e3", "7"];
    for (const id of ids) {
      server.child.stdin.write(`{"jsonrpc":"2.0","method":"thread/list","params":{},"id":${id}}\n`);
      // An error response echoes the id too.
      server.child.stdin.write(`{"id" : ${id}, "method":"thread/explode"}\n`);
    }
    const lines = () => raw.split("\n").filter((l) => l.trim() !== "");
    const deadline = Date.now() + 10_000;
    while (lines().length < 1 + ids.length * 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const echoed = lines()
      .slice(1)
      .map((line) => /^\{"id":([^,]+),/.exec(line)?.[1])
      .sort();
    expect(echoed).to.deep.equal(ids.flatMap((id) => [id, id]).sort());
    // A nested "id" (in params) is not taken for the request's.
    raw = "";
    server.child.stdin.write(`{"params":{"id":1.5},"id":9007199254740995,"method":"thread/list"}\n`);
    while (lines().length < 1 && Date.now() < deadline + 5_000) await new Promise((r) => setTimeout(r, 20));
    expect(lines()[0]).to.match(/^\{"id":9007199254740995,/);
  });

  it("writes only protocol messages to stdout, whatever an extension prints", async () => {
    h = await harness(tmp.path, {
      "noisy.ts": `export default function (kc: any) {
        console.log("hello from the extension");
        kc.on("session_start", () => { process.stdout.write("stray write\\n"); console.log("started"); });
      }`,
    });
    const server = await h.start();
    let raw = "";
    server.child.stdout.on("data", (d: Buffer | string) => {
      raw += d.toString();
    });
    await server.client.initialize();
    await server.client.request("thread/start", { cwd: h.project });
    await server.stop();
    for (const line of raw.split("\n").filter((l) => l.trim() !== "")) {
      const message = JSON.parse(line) as Record<string, unknown>;
      expect("result" in message || "error" in message || "method" in message, line).to.equal(true);
    }
    expect(server.stderr()).to.contain("stray write");
    expect(server.stderr()).to.contain("hello from the extension");
  });

  it("serves methods another extension adds through appServerService, with the call's connection", async () => {
    h = await harness(tmp.path, {
      "contrib.ts": `import { appServerService, Type, type ExtensionAPI } from "@knightcodeai/cli/kit";
      export default function (kc: ExtensionAPI) {
        kc.services.watch(appServerService, (server) => {
          server?.register(
            "demo/echo",
            {
              description: "Echo",
              params: Type.Object({ text: Type.String() }),
              result: Type.Object({ echoed: Type.String(), connection: Type.String() }),
            },
            (params, call) => {
              call.afterResponse(() => kc.log.warn(\`answered demo/echo on \${call.connectionId}\`));
              return { echoed: params.text.toUpperCase(), connection: call.connectionId };
            },
          );
        });
      }`,
    });
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const echoed = await client.request("demo/echo", { text: "hi" });
    expect(echoed).to.deep.include({ echoed: "HI" });
    const diagnostics = await client.request("server/diagnostics", {});
    expect(diagnostics.connections.map((c) => c.id)).to.include(
      (echoed as { connection: string }).connection,
    );
    const wrong = await rejection(client.request("demo/echo", { text: 1 }));
    expect(wrong.data?.code).to.equal("invalidParams");
    // afterResponse ran once the response was written.
    const deadline = Date.now() + 10_000;
    while (!server.stderr().includes("answered demo/echo") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(server.stderr()).to.contain(
      `answered demo/echo on ${(echoed as { connection: string }).connection}`,
    );
  });
});

/** The method table: every request the protocol defines has exactly one handler, and registration rules. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import { registerAccountMethods } from "../../../builtin-extensions/mode-app-server/methods-account.js";
import { registerConfigMethods } from "../../../builtin-extensions/mode-app-server/methods-config.js";
import { registerEditorMethods } from "../../../builtin-extensions/mode-app-server/methods-editor.js";
import { registerGitMethods } from "../../../builtin-extensions/mode-app-server/methods-git.js";
import { registerMcpMethods } from "../../../builtin-extensions/mode-app-server/methods-mcp.js";
import { registerResourceMethods } from "../../../builtin-extensions/mode-app-server/methods-resources.js";
import { requestSpecs } from "../../../builtin-extensions/mode-app-server/protocol.js";
import { checkParams } from "../../../builtin-extensions/mode-app-server/registry.js";
import { AppServer } from "../../../builtin-extensions/mode-app-server/server.js";
import { createStandaloneHostServices } from "../../../hosts/sdk/session-plugins.js";

describe("app-server method table", () => {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-appserver-table-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function server(): AppServer {
    const s = new AppServer({
      openSession: () => Promise.reject(new Error("no sessions here")),
      agentDir: dir,
      host: createStandaloneHostServices({ agentDir: dir }),
      log: () => {},
    });
    registerConfigMethods(s);
    registerMcpMethods(s);
    registerGitMethods(s);
    registerResourceMethods(s);
    registerEditorMethods(s);
    registerAccountMethods(s);
    return s;
  }

  it("has a handler for every request of the protocol, and nothing undefined", () => {
    const names = server()
      .methods.list()
      .map((m) => m.name)
      .sort();
    expect(names).to.deep.equal(Object.keys(requestSpecs).sort());
  });

  it("refuses a second registration of a name and malformed names; the remover undoes exactly its own", () => {
    const s = server();
    const spec = { description: "demo", params: Type.Object({}), result: Type.Object({}) };
    expect(() => s.methods.register("thread/start", spec, () => ({}))).to.throw(/already registered/);
    expect(() => s.methods.register("Bad Name", spec, () => ({}))).to.throw(/area\/verb/);
    const remove = s.methods.register("demo/ping", spec, () => ({}));
    expect(s.methods.get("demo/ping")).to.not.equal(undefined);
    remove();
    expect(s.methods.get("demo/ping")).to.equal(undefined);
  });

  it("checks params against the schema and names the first problem", () => {
    const spec = requestSpecs["turn/start"];
    expect(() => checkParams(spec, { threadId: "t", input: [] })).to.throw(/\/input/);
    expect(() => checkParams(spec, { threadId: "t", input: [{ type: "audio" }] })).to.throw(/Invalid params/);
    expect(checkParams(spec, { threadId: "t", input: [{ type: "text", text: "hi" }] })).to.deep.include({
      threadId: "t",
    });
  });
});

describe("app-server backpressure", () => {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-appserver-queue-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("answers -32001 while a connection's queue is over the limit, and drops a client four times over", async () => {
    const s = new AppServer({
      openSession: () => Promise.reject(new Error("no sessions here")),
      agentDir: dir,
      host: createStandaloneHostServices({ agentDir: dir }),
      log: () => {},
      queueLimitBytes: 1000,
    });
    const sent: Record<string, any>[] = [];
    let buffered = 0;
    let closed = "";
    const connection = s.connect({
      kind: "stdio",
      write: (text) => sent.push(JSON.parse(text)),
      bufferedBytes: () => buffered,
      close: (reason) => {
        closed = reason;
      },
    });
    s.receive(
      connection,
      JSON.stringify({ id: 1, method: "initialize", params: { clientInfo: { name: "t", version: "1" } } }),
    );
    await s.drain();
    expect(sent[0]!.result.serverInfo.name).to.equal("knightcode");
    buffered = 2000;
    s.receive(connection, JSON.stringify({ id: 2, method: "thread/list", params: {} }));
    await s.drain();
    expect(sent[1]).to.deep.equal({
      id: 2,
      error: { code: -32001, message: "Server overloaded; retry later.", data: { code: "overloaded" } },
    });
    buffered = 10;
    s.receive(connection, JSON.stringify({ id: 3, method: "thread/list", params: {} }));
    await s.drain();
    expect(sent[2]).to.deep.equal({ id: 3, result: { data: [] } });
    buffered = 5000;
    connection.notify("ui/notify", { threadId: "t", message: "x", level: "info" });
    expect(closed).to.match(/stopped reading/);
    expect(s.connections.size).to.equal(0);
    await s.close();
  });
});

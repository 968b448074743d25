/** The method table: every request the protocol defines has exactly one handler, and registration rules. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";
import { registerConfigMethods } from "../../../builtin-extensions/mode-app-server/methods-config.js";
import { requestSpecs } from "../../../builtin-extensions/mode-app-server/protocol.js";
import { checkParams } from "../../../builtin-extensions/mode-app-server/registry.js";
import { AppServer } from "../../../builtin-extensions/mode-app-server/server.js";

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
      log: () => {},
    });
    registerConfigMethods(s, { session: undefined as never });
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
